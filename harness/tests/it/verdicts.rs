//! No verdict the sentence does not carry, on a server written for it (a
//! plain Python server, 2025-11-25 only): an answer to a request inside a
//! malformed line, its id echoed as sent, is not "answered more than once";
//! an invalid-cursor case on a list method the server does not implement
//! (-32601) is a skip, as the cursor-stable cases are; an error code in the
//! range only 2026-07-28 reserves gives no verdict on a 2025-11-25 server,
//! under any profile.

use serde_json::Value;

use crate::support::{mcperr, report, scratch};

/// Declares tools and resources, implements resources/list but not
/// resources/templates/list; answers every request it can read, malformed
/// ones with -32600 and their id as sent (an object id too, and each
/// request inside an array); `lookup` fails with -32050.
const SERVER: &str = r#"
import json, sys
def send(o):
    sys.stdout.write(json.dumps(o) + "\n"); sys.stdout.flush()
def bad(i):
    send({"jsonrpc": "2.0", "id": i, "error": {"code": -32600, "message": "Invalid Request"}})
def handle(m):
    if not isinstance(m, dict) or "id" not in m:
        return
    i, meth = m["id"], m.get("method")
    if not isinstance(i, (str, int)) or isinstance(i, bool):
        return bad(i)
    if meth == "initialize":
        send({"jsonrpc": "2.0", "id": i, "result": {"protocolVersion": "2025-11-25",
              "capabilities": {"tools": {}, "resources": {}}, "serverInfo": {"name": "edges", "version": "1"}}})
    elif meth == "ping":
        send({"jsonrpc": "2.0", "id": i, "result": {}})
    elif meth == "tools/list":
        if (m.get("params") or {}).get("cursor"):
            return send({"jsonrpc": "2.0", "id": i, "error": {"code": -32602, "message": "bad cursor"}})
        send({"jsonrpc": "2.0", "id": i, "result": {"tools": [{"name": "lookup",
              "annotations": {"readOnlyHint": True},
              "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}}]}})
    elif meth == "tools/call":
        send({"jsonrpc": "2.0", "id": i, "error": {"code": -32050, "message": "lookup backend busy"}})
    elif meth == "resources/list":
        if (m.get("params") or {}).get("cursor"):
            return send({"jsonrpc": "2.0", "id": i, "error": {"code": -32602, "message": "bad cursor"}})
        send({"jsonrpc": "2.0", "id": i, "result": {"resources": []}})
    else:
        send({"jsonrpc": "2.0", "id": i, "error": {"code": -32601, "message": "Method not found"}})
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if isinstance(m, list):
        for x in m:
            if isinstance(x, dict) and "id" in x:
                bad(x["id"])
        continue
    handle(m)
"#;

fn run(name: &str, args: &[&str]) -> (Value, String) {
    let dir = scratch(name);
    let server = crate::support::python_script(&dir, SERVER);
    let json = dir.join("r.json");
    let mut all = vec!["run", "--stdio", &server, "--era", "2025-11-25"];
    all.extend_from_slice(args);
    all.extend(["--json", json.to_str().unwrap()]);
    let out = mcperr(&all);
    assert!(out.code.is_some_and(|c| c < 2), "{}", out.stderr);
    (report(&json), out.stdout)
}

fn case<'a>(r: &'a Value, id: &str) -> &'a Value {
    r["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("no case {id}: {r}"))
}

#[test]
fn an_echoed_malformed_request_a_missing_list_method_and_another_eras_codes_get_no_verdict() {
    let (r, stdout) = run(
        "verdicts-edges",
        &[
            "--cases",
            "jsonrpc/malformed-lines",
            "--cases",
            "*/invalid-cursor*",
        ],
    );
    // The id-null, object-id and batch answers are the malformed lines'
    // own: nothing was answered twice.
    let lines = case(&r, "jsonrpc/malformed-lines");
    assert_eq!(lines["verdict"], "pass", "{lines}\n{stdout}");
    assert!(
        !crate::support::words(&stdout).contains("more than once"),
        "{stdout}"
    );
    // resources/templates/list is not implemented: nothing to judge.
    let templates = case(&r, "resources/invalid-cursor-templates");
    assert_eq!(templates["verdict"], "skip", "{templates}\n{stdout}");
    assert_eq!(case(&r, "tools/invalid-cursor")["verdict"], "pass");
    assert_eq!(case(&r, "resources/invalid-cursor")["verdict"], "pass");

    // -32050 is in the sub-range 2026-07-28 reserves; 2025-11-25 says
    // nothing of it: no verdict of that aspect under model either (under
    // spec a sentence-less aspect never has one).
    for profile in ["model"] {
        let (r, stdout) = run(
            &format!("verdicts-range-{profile}"),
            &["--cases", "generated/tools/*", "--profile", profile],
        );
        let cases = r["cases"].as_array().unwrap();
        assert!(!cases.is_empty(), "{stdout}");
        for c in cases {
            let m = c["message"].as_str().unwrap_or_default();
            assert!(
                !c["aspect"].as_str().unwrap_or_default().contains("range")
                    && !m.contains("fail [J1.mcp-range")
                    && !m.contains("warn [J1.mcp-range"),
                "{profile}: {c}"
            );
        }
    }
}

#[test]
fn a_server_that_negotiates_an_older_version_is_not_judged_as_2025_11_25() {
    // It answers initialize for 2025-11-25 with 2025-03-26, another version
    // it supports: "Otherwise, the server MUST respond with another protocol
    // version it supports" (basic/lifecycle#version-negotiation). Neither
    // failed for it nor graded as a 2025-11-25 server: not judged, saying so.
    let dir = scratch("verdicts-older-version");
    let older = SERVER.replace("\"2025-11-25\"", "\"2025-03-26\"");
    let server = crate::support::python_script(&dir, &older);
    let json = dir.join("r.json");
    for command in ["run", "list"] {
        let mut args = vec![command, "--stdio", &server, "--era", "2025-11-25"];
        if command == "run" {
            args.extend(["--json", json.to_str().unwrap()]);
        }
        let out = mcperr(&args);
        assert_eq!(out.code, Some(2), "{command}: {}", out.stdout);
        let last = out.stderr.lines().last().unwrap_or_default();
        assert!(
            last.contains("not judged")
                && last.contains("protocol version 2025-03-26")
                && last.contains("another version it supports"),
            "{command}: {}",
            out.stderr
        );
        assert!(!out.stdout.contains("FAIL"), "{command}: {}", out.stdout);
    }
    // The report says so too: a skip, not an error of the server's.
    let r = report(&json);
    let case = &r["cases"][0];
    assert_eq!(
        (&case["rule"], &case["verdict"]),
        (&"L1".into(), &"skip".into()),
        "{r}"
    );
    assert_eq!(r["summary"]["error"], 0, "{r}");
}
