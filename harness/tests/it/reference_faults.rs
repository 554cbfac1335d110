//! Every `--fault` really deviates: the same script gives a different
//! transcript than the clean server does. (That each deviation is caught by
//! the rule it names is proven by the `mcperr run` tests.)

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support::{envelope, MCPERR};

/// One request per rule, modern era, numeric and string ids.
fn script() -> String {
    let calls: Vec<(Value, &str, Value)> = vec![
        (
            json!("s1"),
            "tools/call",
            json!({"name": "get_author", "arguments": {"title": "Nothing"}}),
        ),
        (
            json!(2),
            "tools/call",
            json!({"name": "raise_protocol_error", "arguments": {"code": -32000, "message": "m", "data": {"k": 1}}}),
        ),
        (
            json!(3),
            "tools/call",
            json!({"name": "limited", "arguments": {"limit": 999}}),
        ),
        (
            json!(4),
            "tools/call",
            json!({"name": "limited_calls", "arguments": {}}),
        ),
        (
            json!(5),
            "tools/call",
            json!({"name": "nope", "arguments": {}}),
        ),
        (json!(6), "tools/call", json!({"name": 5})),
        (
            json!(7),
            "tools/call",
            json!({"name": "bad_output", "arguments": {}}),
        ),
        (
            json!(8),
            "tools/call",
            json!({"name": "get_author", "arguments": {"title": "Dune"}}),
        ),
        (
            json!(9),
            "resources/read",
            json!({"uri": "books://Nothing"}),
        ),
        (json!(10), "resources/read", json!({"uri": "nope://x"})),
        (json!(11), "resources/read", json!({"uri": "fail://db"})),
        (
            json!(12),
            "resources/read",
            json!({"uri": "crash://s3cr3t"}),
        ),
        (
            json!(13),
            "resources/read",
            json!({"uri": "mcperror://-32001"}),
        ),
        (json!(14), "resources/read", json!({})),
        (json!(15), "prompts/get", json!({"name": "nope"})),
        (
            json!(16),
            "prompts/get",
            json!({"name": "greet", "arguments": {}}),
        ),
        (
            json!(17),
            "prompts/get",
            json!({"name": "crash_prompt", "arguments": {"secret": "s3cr3t"}}),
        ),
        (json!(18), "bookshop/teleport", json!({})),
        (
            json!("19"),
            "tools/call",
            json!({"name": "crash", "arguments": {"secret": "s3cr3t"}}),
        ),
        (json!(20), "prompts/list", json!({})),
        (
            json!(21),
            "tools/list",
            json!({"cursor": "mcperr-never-issued"}),
        ),
        (json!(22), "server/discover", json!({})),
        (json!(23), "resources/read", json!({"uri": "Dune"})),
        (
            json!(24),
            "prompts/get",
            json!({"name": "greet", "arguments": {"name": 42}}),
        ),
        (
            json!(25),
            "completion/complete",
            json!({"ref": {"type": "ref/nonsense"}, "argument": {"name": "name", "value": "D"}}),
        ),
        (
            json!(26),
            "tools/list",
            json!({"_meta": {"io.modelcontextprotocol/logLevel": "loud"}}),
        ),
        (json!(27), "resources/list", json!({})),
        (json!(28), "tools/list", json!({})),
        (
            json!(29),
            "tools/call",
            json!({"name": "slow", "arguments": {"steps": 3}, "_meta": {"progressToken": "p29"}}),
        ),
        // A crash that asks for log messages at debug: its headline only.
        (
            json!(31),
            "tools/call",
            json!({"name": "crash", "arguments": {"secret": "s3cr3t"}, "_meta": {"io.modelcontextprotocol/logLevel": "debug"}}),
        ),
        // Needs the elicitation capability, which the envelope does not declare.
        (
            json!(32),
            "tools/call",
            json!({"name": "confirm_purchase", "arguments": {"title": "Dune"}}),
        ),
        // Multi round-trip requests, from a client that declares elicitation
        // (the envelope's capabilities replaced): the first call asks; the
        // retries bring an altered state, inputResponses that are not an
        // object, a key not asked for, no answer, and a decline.
        (
            json!(33),
            "tools/call",
            json!({"name": "confirm_purchase", "arguments": {"title": "Dune"}, "_meta": elicits()}),
        ),
        (
            json!(34),
            "tools/call",
            json!({"name": "confirm_purchase", "arguments": {"title": "Dune"}, "_meta": elicits(),
                "requestState": "1.00", "inputResponses": {"confirm": {"action": "accept", "content": {"confirm": true}}}}),
        ),
        (
            json!(35),
            "tools/call",
            json!({"name": "confirm_purchase", "arguments": {"title": "Dune"}, "_meta": elicits(), "inputResponses": "yes"}),
        ),
        (
            json!(36),
            "tools/call",
            json!({"name": "confirm_purchase", "arguments": {"title": "Dune"}, "_meta": elicits(), "inputResponses": {"other": {"action": "accept"}}}),
        ),
        (
            json!(37),
            "tools/call",
            json!({"name": "confirm_purchase", "arguments": {"title": "Dune"}, "_meta": elicits(), "inputResponses": {"confirm": {"action": "decline"}}}),
        ),
        (json!(38), "tools/list", json!({"_meta": elicits()})),
        // The cursor of the templates' second page, used twice: the same page.
        (
            json!(40),
            "resources/templates/list",
            json!({"cursor": hex("resources/templates/list#2")}),
        ),
        (
            json!(41),
            "resources/templates/list",
            json!({"cursor": hex("resources/templates/list#2")}),
        ),
        // A completion whose suggester fails: -32603 without its text.
        (
            json!(42),
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "crash_prompt"}, "argument": {"name": "secret", "value": "s3cr3t"}}),
        ),
        // A back-office file name that climbs out of its directory.
        (
            json!(48),
            "resources/read",
            json!({"uri": "file:///bookshop/..%2F..%2Fetc%2Fpasswd"}),
        ),
        // A prompt argument carrying an expression: shown, not evaluated.
        (
            json!(47),
            "prompts/get",
            json!({"name": "greet", "arguments": {"name": "${6*7}"}}),
        ),
        // A 2020-12 slot (prefixItems), and a schema with an unresolvable $ref.
        (
            json!(45),
            "tools/call",
            json!({"name": "shelve_book", "arguments": {"title": "Dune", "slot": ["fiction", 3]}}),
        ),
        (
            json!(46),
            "tools/call",
            json!({"name": "import_catalog", "arguments": {"source": "x"}}),
        ),
        // A subscription (never answered while open), the restock it hears
        // of, and the close that ends it: its result and cancellation.
        (
            json!("sub"),
            "subscriptions/listen",
            json!({"notifications": {"resourceSubscriptions": ["books://Dune"]}}),
        ),
        (
            json!(43),
            "tools/call",
            json!({"name": "restock", "arguments": {"title": "Dune"}}),
        ),
        (
            json!(44),
            "tools/call",
            json!({"name": "close_shop", "arguments": {}}),
        ),
        // The capability declared above is not this request's (statelessness).
        (
            json!(39),
            "tools/call",
            json!({"name": "confirm_purchase", "arguments": {"title": "Dune"}}),
        ),
        // Cancelled by the line after it: never answered by a faithful server.
        (
            json!(30),
            "tools/call",
            json!({"name": "slow", "arguments": {"steps": 3}, "_meta": {"progressToken": "p30"}}),
        ),
    ];
    let mut out = String::new();
    for (i, (id, method, mut params)) in calls.into_iter().enumerate() {
        let id: Value = id;
        // The envelope, with any _meta keys of the call's own on top.
        let own = params.get("_meta").cloned();
        params["_meta"] = envelope();
        if let Some(Value::Object(own)) = own {
            for (k, v) in own {
                params["_meta"][k] = v;
            }
        }
        out.push_str(
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string(),
        );
        out.push('\n');
        if id == json!(30) {
            out.push_str("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":30}}\n");
        }
        if i == 2 {
            out.push_str("{not json\n");
            out.push_str("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":1}}\n");
        }
    }
    out
}

/// A cursor as the reference writes it (reference-server/src/pages.rs).
fn hex(text: &str) -> String {
    text.bytes().map(|b| format!("{b:02x}")).collect()
}

/// `_meta` that declares form-mode elicitation.
/// Form elicitation, and sampling without tools or context (the faults that
/// ask for those anyway show on the first call).
fn elicits() -> Value {
    json!({"io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}, "sampling": {}}})
}

/// Runs the script to EOF; returns stdout and the exit code.
fn transcript(args: &[&str]) -> (String, Option<i32>) {
    let mut child = Command::new(MCPERR)
        .arg("reference")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = script();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(input.as_bytes());
    });
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "server {args:?} did not exit at EOF"
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    writer.join().unwrap();
    (without_states(&reader.join().unwrap()), status.code())
}

/// `out` with every requestState the server issued written `[state]`: it
/// is keyed anew in every process.
fn without_states(out: &str) -> String {
    const KEY: &str = "\"requestState\":\"";
    let mut rest = out;
    let mut s = String::with_capacity(out.len());
    while let Some(at) = rest.find(KEY) {
        let value = &rest[at + KEY.len()..];
        let end = value.find('"').unwrap_or(value.len());
        s.push_str(&rest[..at + KEY.len()]);
        s.push_str("[state]");
        rest = &value[end..];
    }
    s.push_str(rest);
    s
}

#[test]
fn every_fault_changes_the_transcript() {
    let clean = transcript(&[]);
    assert_eq!(clean.1, Some(0));
    assert_eq!(
        clean.0.lines().count(),
        55,
        "one response per request but the cancelled one and the subscription's, three progress notifications, a log message, and the subscription's acknowledgment, update, result and cancellation:\n{}",
        clean.0
    );
    let list = Command::new(MCPERR)
        .args(["reference", "--list-faults"])
        .output()
        .unwrap();
    let list = String::from_utf8(list.stdout).unwrap();
    // HTTP-only faults deviate only over HTTP (tests/it/http.rs covers them);
    // fuzz-only ones only for inputs this transcript never sends (tests/it/fuzz.rs);
    // ping-not-empty, the initialize faults (requests-before-initialized
    // too), unconfirmed-purchase and the task faults (task progress too)
    // only in 2025-11-25, which this
    // 2026-07-28 script is not (tests/it/faults.rs catches them there);
    // initialize-refused-unnamed only on an initialize, which would turn
    // this script's process into a 2025-11-25 one.
    let names: Vec<&str> = list
        .lines()
        .filter(|l| !l.contains("over HTTP:") && !l.contains("fuzz only:"))
        .filter(|l| {
            !l.starts_with("ping-not-empty ")
                && !l.starts_with("initialize-")
                && !l.starts_with("requests-before-initialized ")
                && !l.starts_with("unconfirmed-purchase ")
                && !l.starts_with("task-progress-")
        })
        // Tasks (K1) and a server's own requests for input (E1) are
        // 2025-11-25's too.
        .filter(|l| !matches!(l.split_whitespace().nth(1), Some("K1" | "E1")))
        // A state bound to the wrong title shows only on a retry that brings
        // a state the server issued, which a fixed script cannot.
        .filter(|l| !l.starts_with("mrtr-state-unbound "))
        // A server that stays after EOF is what the script's own wait for
        // the exit would time out on; jsonrpc/stdio-exit-on-eof judges it.
        .filter(|l| !l.starts_with("eof-ignored "))
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert!(names.len() >= 30, "{list}");
    for rule in [
        "T1", "T2", "T3", "T4", "T5", "T6", "T7", "R1", "R2", "R3", "R4", "R5", "P1", "P2", "J1",
        "J2", "J3", "J4", "J5", "U1", "U2", "U3", "U4", "U5", "U6", "U7", "U8", "U9", "L1", "L2",
        "L3", "K1", "M1", "E1",
    ] {
        assert!(
            list.lines()
                .any(|l| l.split_whitespace().nth(1) == Some(rule)),
            "no fault for {rule}"
        );
    }
    for name in names {
        let faulty = transcript(&["--fault", name]);
        assert_ne!(faulty, clean, "--fault {name} changed nothing");
    }
}

#[test]
fn an_unknown_fault_is_a_usage_error() {
    let out = Command::new(MCPERR)
        .args(["reference", "--fault", "bogus"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown fault 'bogus'"), "{err}");
}
