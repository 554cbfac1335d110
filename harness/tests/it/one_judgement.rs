//! The proxy sees what `run` sees: on a server written for it (a plain
//! Python server, 2025-11-25), the same deviations are judged the same way
//! whether mcperr asks (`mcperr run`) or a host asks through `mcperr proxy`:
//! a log message from a server that did not declare `logging` (U8, MUST), a
//! structured result whose text is not its JSON (T8 `also-text`, SHOULD)
//! and an unknown prompt answered with code 0 (P1, SHOULD).

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{mcperr, report, scratch, MCPERR};

const SERVER: &str = r#"
import json, sys
def send(o):
    sys.stdout.write(json.dumps(o) + "\n"); sys.stdout.flush()
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if not isinstance(m, dict) or "id" not in m:
        continue
    i, meth, p = m["id"], m.get("method"), m.get("params") or {}
    if meth == "initialize":
        send({"jsonrpc": "2.0", "id": i, "result": {"protocolVersion": "2025-11-25",
              "capabilities": {"tools": {}, "prompts": {}}, "serverInfo": {"name": "shop", "version": "1"}}})
    elif meth == "ping":
        send({"jsonrpc": "2.0", "id": i, "result": {}})
    elif meth == "tools/list":
        send({"jsonrpc": "2.0", "id": i, "result": {"tools": [{"name": "stock_count",
              "annotations": {"readOnlyHint": True}, "inputSchema": {"type": "object"},
              "outputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}}]}})
    elif meth == "tools/call":
        send({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "counting"}})
        send({"jsonrpc": "2.0", "id": i, "result": {"content": [{"type": "text", "text": "one"}],
              "structuredContent": {"n": 1}}})
    elif meth == "prompts/list":
        send({"jsonrpc": "2.0", "id": i, "result": {"prompts": [{"name": "welcome"}]}})
    elif meth == "prompts/get" and p.get("name") == "welcome":
        send({"jsonrpc": "2.0", "id": i, "result": {"messages": [{"role": "user",
              "content": {"type": "text", "text": "Welcome"}}]}})
    elif meth == "prompts/get":
        send({"jsonrpc": "2.0", "id": i, "error": {"code": 0, "message": "Unknown prompt"}})
    else:
        send({"jsonrpc": "2.0", "id": i, "error": {"code": -32601, "message": "Method not found"}})
"#;

/// What a host sends: the handshake, the listings, a call, an unknown prompt.
const HOST: &[&str] = &[
    r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"host","version":"1"}}}"#,
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
    r#"{"jsonrpc":"2.0","id":3,"method":"prompts/list"}"#,
    r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"stock_count","arguments":{}}}"#,
    r#"{"jsonrpc":"2.0","id":5,"method":"prompts/get","params":{"name":"no-such-prompt"}}"#,
];

/// The rule and verdict of each deviation this server has, as `(rule, verdict)`.
const WANTED: [(&str, &str, &str); 3] = [
    ("U8", "fail", "without declaring the logging capability"),
    ("T8", "warn", "none of them that JSON serialized"),
    ("P1", "warn", "-32602"),
];

#[test]
fn run_and_the_proxy_judge_the_same_answers_alike() {
    let dir = scratch("one-judgement");
    let script = dir.join("server.py");
    std::fs::write(&script, SERVER).unwrap();
    let server = format!("python3 {}", script.display());

    // mcperr asks.
    let json = dir.join("run.json");
    let out = mcperr(&[
        "run",
        "--stdio",
        &server,
        "--era",
        "2025-11-25",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(out.code.is_some_and(|c| c < 2), "{}", out.stderr);
    let r = report(&json);
    let messages: Vec<(String, String, String)> = r["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let s = |k: &str| c[k].as_str().unwrap_or_default().to_string();
            (s("rule"), s("verdict"), s("message"))
        })
        .collect();
    for (rule, verdict, says) in WANTED {
        let seen = messages.iter().any(|(r, v, m)| {
            m.contains(says)
                && ((r == rule && v == verdict) || m.contains(&format!("{verdict} [{rule}")))
        });
        assert!(
            seen,
            "run: no {verdict} of {rule} ({says}):\n{}",
            out.stdout
        );
    }

    // A host asks through the proxy.
    let proxy_json = dir.join("proxy.json");
    /// Kills the proxy (and so its server) however the test ends.
    struct Reaped(std::process::Child);
    impl Drop for Reaped {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let child = Command::new(MCPERR)
        .args(["proxy", "--json", proxy_json.to_str().unwrap(), "--"])
        .args(["python3", script.to_str().unwrap()])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut child = Reaped(child);
    let mut stdin = child.0.stdin.take().unwrap();
    for line in HOST {
        writeln!(stdin, "{line}").unwrap();
        // One at a time, as a host waits for each answer.
        std::thread::sleep(Duration::from_millis(150));
    }
    drop(stdin);
    let start = Instant::now();
    while child.0.try_wait().unwrap().is_none() {
        assert!(start.elapsed() < Duration::from_secs(30), "the proxy hung");
        std::thread::sleep(Duration::from_millis(20));
    }
    // The proxy's report is a run report: one case per finding.
    let r = report(&proxy_json);
    let findings: Vec<&Value> = r["cases"].as_array().unwrap().iter().collect();
    for (rule, verdict, says) in WANTED {
        assert!(
            findings.iter().any(|f| f["rule"] == rule
                && f["verdict"] == verdict
                && f["message"].as_str().unwrap_or_default().contains(says)),
            "proxy: no {verdict} of {rule} ({says}): {findings:#?}"
        );
    }
}
