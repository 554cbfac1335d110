//! A finding seen only under load is not claimed: a server that breaks a
//! MUST only while other requests wait in its input (here: a `tools/call`
//! answered with both a result and an error when more lines are pending),
//! and answers the same request sent alone as it should, gives a finding
//! marked unconfirmed, not saved and not counted: it does not fail the
//! campaign, and the summary line counts it apart.

use crate::support::{mcperr, report, scratch};

/// A 2025-11-25 server over stdio that reads its input itself, so that it
/// knows whether more requests are waiting; `echo(text: string)` refuses a
/// text that is not a string, as a validator would.
const BUSY_SERVER: &str = r#"
import json, os, sys
def send(o):
    sys.stdout.write(json.dumps(o) + "\n"); sys.stdout.flush()
def err(i, code, message):
    send({"jsonrpc": "2.0", "id": i, "error": {"code": code, "message": message}})
TOOLS = [{"name": "echo", "annotations": {"readOnlyHint": True},
          "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}},
                          "required": ["text"]}}]
buf = b""
while True:
    chunk = os.read(0, 65536)
    if not chunk:
        break
    buf += chunk
    lines = buf.split(b"\n")
    buf = lines.pop()
    for n, line in enumerate(lines):
        busy = n + 1 < len(lines)
        try:
            m = json.loads(line)
        except Exception:
            continue
        if not isinstance(m, dict) or "id" not in m or "method" not in m:
            continue
        i, meth, p = m["id"], m["method"], m.get("params")
        if meth == "initialize":
            send({"jsonrpc": "2.0", "id": i, "result": {"protocolVersion": "2025-11-25",
                  "capabilities": {"tools": {}}, "serverInfo": {"name": "busy", "version": "1"}}})
        elif meth == "ping":
            send({"jsonrpc": "2.0", "id": i, "result": {}})
        elif meth == "tools/list":
            send({"jsonrpc": "2.0", "id": i, "result": {"tools": TOOLS}})
        elif meth == "tools/call":
            if not isinstance(p, dict) or p.get("name") != "echo" or not isinstance(p.get("arguments", {}), dict):
                err(i, -32602, "Invalid params")
                continue
            text = p.get("arguments", {}).get("text")
            if not isinstance(text, str):
                r = {"content": [{"type": "text", "text": "text: expected a string"}], "isError": True}
            else:
                r = {"content": [{"type": "text", "text": "echo"}]}
            out = {"jsonrpc": "2.0", "id": i, "result": r}
            if busy:
                out["error"] = {"code": -32603, "message": "busy"}
            send(out)
        else:
            err(i, -32601, "Method not found")
"#;

#[test]
fn a_deviation_only_under_load_is_listed_unconfirmed_and_not_counted() {
    let dir = scratch("load-unconfirmed");
    let server = crate::support::python_script(&dir, BUSY_SERVER);
    let json = dir.join("r.json");
    let out = mcperr(&[
        "fuzz",
        "--stdio",
        &server,
        "--era",
        "2025-11-25",
        "--seed",
        "3",
        "--seconds",
        "3",
        "--json",
        json.to_str().unwrap(),
    ]);
    let r = report(&json);
    let findings = r["findings"].as_array().unwrap();
    let both: Vec<_> = findings
        .iter()
        .filter(|f| {
            f["rule"] == "J1"
                && f["response"].get("error").is_some()
                && f["response"].get("result").is_some()
        })
        .collect();
    assert!(
        !both.is_empty(),
        "no finding of the busy answers:\n{}",
        out.stdout
    );
    for f in &both {
        assert!(f["not_reproduced"].is_string(), "{f}");
    }
    assert!(
        out.stdout.contains("(unconfirmed: not counted)"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("unconfirmed not counted"),
        "{}",
        out.stdout
    );
    // Nothing else is wrong with the server: the campaign does not fail.
    let counted: Vec<_> = findings
        .iter()
        .filter(|f| f["not_reproduced"].is_null() && f["verdict"] != "warn")
        .collect();
    assert!(counted.is_empty(), "{counted:?}");
    assert_eq!(out.code, Some(0), "{}", out.stdout);
}
