//! A raw JSON-lines client for the real `mcperr reference` binary.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use serde_json::{json, Value};

pub const MCPERR: &str = env!("CARGO_BIN_EXE_mcperr");
const WAIT: Duration = Duration::from_secs(10);

/// Which era a test session speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Era {
    Legacy,
    Modern,
}

pub const ERAS: [Era; 2] = [Era::Legacy, Era::Modern];

/// The modern `_meta` envelope.
pub fn envelope() -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
           "io.modelcontextprotocol/clientCapabilities": {}})
}

/// A running `mcperr reference` speaking one era.
pub struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: Arc<Mutex<String>>,
    pub era: Era,
    next_id: i64,
}

impl Server {
    /// Starts the binary with extra args; no handshake.
    pub fn spawn(era: Era, args: &[&str]) -> Server {
        let mut child = Command::new(MCPERR)
            .arg("reference")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start mcperr reference");
        let stdout = child.stdout.take().unwrap();
        let stderr = child.stderr.take().unwrap();
        let (tx, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let log = Arc::new(Mutex::new(String::new()));
        let sink = log.clone();
        thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                let mut s = sink.lock().unwrap();
                s.push_str(&line);
                s.push('\n');
            }
        });
        Server {
            stdin: child.stdin.take(),
            child,
            lines,
            stderr: log,
            era,
            next_id: 100,
        }
    }

    /// Starts the binary and performs the era's handshake (legacy: initialize).
    pub fn start(era: Era, args: &[&str]) -> Server {
        let mut s = Server::spawn(era, args);
        if era == Era::Legacy {
            let r = s.request(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                           "clientInfo": {"name": "test", "version": "0"}}}));
            assert_eq!(r["result"]["protocolVersion"], "2025-11-25", "{r}");
            s.send_line(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        }
        s
    }

    pub fn send_line(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// The next stdout line, parsed; panics on timeout or non-JSON.
    pub fn recv(&mut self) -> Value {
        let line = self
            .lines
            .recv_timeout(WAIT)
            .unwrap_or_else(|e| panic!("no response line ({e:?}); stderr:\n{}", self.stderr()));
        serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}"))
    }

    /// The next stdout line if one arrives within `ms`.
    pub fn try_recv_line(&mut self, ms: u64) -> Option<String> {
        self.lines.recv_timeout(Duration::from_millis(ms)).ok()
    }

    /// Sends a whole message and returns the next response.
    pub fn request(&mut self, msg: Value) -> Value {
        self.send_line(&msg.to_string());
        self.recv()
    }

    /// Sends `method` with `params` (the era's envelope added) and returns the response.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let msg = json!({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": self.params(params)});
        let r = self.request(msg);
        assert_eq!(r["id"], json!(self.next_id), "response id: {r}");
        r
    }

    /// `params` with the modern envelope when this session is modern.
    pub fn params(&self, mut params: Value) -> Value {
        if self.era == Era::Modern {
            params["_meta"] = envelope();
        }
        params
    }

    pub fn tool(&mut self, name: &str, arguments: Value) -> Value {
        self.call("tools/call", json!({"name": name, "arguments": arguments}))
    }

    /// The server's stderr so far.
    pub fn stderr(&self) -> String {
        thread::sleep(Duration::from_millis(50));
        self.stderr.lock().unwrap().clone()
    }

    /// Closes stdin and waits for the exit code.
    pub fn finish(mut self) -> Option<i32> {
        drop(self.stdin.take());
        for _ in 0..200 {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            thread::sleep(Duration::from_millis(25));
        }
        panic!("server did not exit after stdin closed")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Adds `resultType: "complete"` to an expected result in the modern era.
pub fn result(era: Era, mut result: Value) -> Value {
    if era == Era::Modern {
        result["resultType"] = json!("complete");
    }
    result
}

/// What one `mcperr` invocation printed and returned.
pub struct Output {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `mcperr ARGS` to completion (bounded: a hang fails the test).
pub fn mcperr(args: &[&str]) -> Output {
    mcperr_env(args, &[])
}

/// [`mcperr`] with `env` set; `GITHUB_ACTIONS`, `INSTA_UPDATE` and
/// `INSTA_FORCE_PASS` are unset unless `env` sets them, so no run prints
/// workflow commands or picks a snapshot mode by accident.
pub fn mcperr_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(MCPERR);
    cmd.env_remove("GITHUB_ACTIONS");
    // `cargo insta test` sets these for its own assertions; a test of
    // `--snapshots` says which mode it wants.
    cmd.env_remove("INSTA_UPDATE")
        .env_remove("INSTA_FORCE_PASS");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start mcperr");
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let o = thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut out, &mut s).ok();
        s
    });
    let e = thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut err, &mut s).ok();
        s
    });
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > Duration::from_secs(180) {
            let _ = child.kill();
            panic!("mcperr {args:?} hung");
        }
        thread::sleep(Duration::from_millis(10));
    };
    Output {
        code: status.code(),
        stdout: o.join().unwrap(),
        stderr: e.join().unwrap(),
    }
}

/// A fresh scratch directory under the target dir.
pub fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A JSON report written by `mcperr run --json`.
pub fn report(path: &std::path::Path) -> Value {
    // A request or answer with a lone surrogate keeps it as its JSON escape
    // (`\ud800`), which serde_json alone refuses.
    mcperr_wire::text::decode(&std::fs::read(path).expect("report written"))
        .expect("report is JSON")
}

/// Whether a case result is a skip the reference server always gets: a
/// lifecycle case that judges servers without a capability the reference
/// declares (its faults that drop the declaration run those cases). Never a
/// valid call refused for want of a real value: the harvest finds `Dune`
/// through completion/complete on `books://{title}`; `bad_output`, which
/// takes no arguments and fails by design, has its failure judged and T8
/// skipped (no success to judge).
pub fn is_expected_skip(id: &str, verdict: &str, message: &str) -> bool {
    // A case for servers that do not declare what the reference declares;
    // and the valid call of bad_output, which takes no arguments and always
    // fails by design (T7: its output breaks its schema): a failure shows no
    // success, so T8 gives no pass.
    let undeclared =
        id.contains("/undeclared-") && message.ends_with("this case judges a server that does not");
    let fails_by_design = id == "generated/tools/bad_output/valid-call"
        && message.starts_with(mcperr_core::report::TOOL_FAILED);
    verdict == "skip" && (undeclared || fails_by_design)
}

/// Asserts a report of the reference server has no failure, warning or
/// error, and no skip but the expected ones ([`is_expected_skip`]).
pub fn assert_clean(report: &Value) {
    let s = &report["summary"];
    let counts = (s["fail"].as_u64(), s["warn"].as_u64(), s["error"].as_u64());
    assert_eq!(counts, (Some(0), Some(0), Some(0)), "{s}");
    let runs = report["runs"].as_array().cloned().unwrap_or_default();
    let all: Vec<Value> = runs
        .iter()
        .chain([report])
        .flat_map(|r| r["cases"].as_array().cloned().unwrap_or_default())
        .collect();
    for c in all.iter().filter(|c| c["verdict"] == "skip") {
        let (id, m) = (
            c["id"].as_str().unwrap_or(""),
            c["message"].as_str().unwrap_or(""),
        );
        assert!(is_expected_skip(id, "skip", m), "skipped: {id}: {m}");
    }
}

/// The skeleton of a minimal MCP server over stdio in Python (2025-11-25
/// only), for behaviours no fixture has: `{tools}` is its `tools/list`
/// (a Python literal), `{call}` the body of its `tools/call` branch, which
/// has `i` (the id), `m` (the request), `mode` (argv[1]) and `send`.
const PYTHON_STDIO_SERVER: &str = r#"
import json, sys
mode = sys.argv[1]
def send(o):
    sys.stdout.write(json.dumps(o) + "\n"); sys.stdout.flush()
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m:
        continue
    i, meth = m["id"], m["method"]
    if meth == "initialize":
        send({"jsonrpc": "2.0", "id": i, "result": {"protocolVersion": "2025-11-25",
              "capabilities": {"tools": {}}, "serverInfo": {"name": "test", "version": "1"}}})
    elif meth == "tools/list":
        send({"jsonrpc": "2.0", "id": i, "result": {"tools": {tools}}})
    elif meth == "tools/call":
{call}
    else:
        send({"jsonrpc": "2.0", "id": i, "error": {"code": -32601, "message": "Method not found"}})
"#;

/// Writes a Python server's `text` as `server.py` in `dir` and returns the
/// command line that runs it over stdio (`python3 PATH`).
pub fn python_script(dir: &std::path::Path, text: &str) -> String {
    let script = dir.join("server.py");
    std::fs::write(&script, text).unwrap();
    format!("python3 {}", script.display())
}

/// Writes a [`PYTHON_STDIO_SERVER`] with `tools` and `call` into a scratch
/// folder `name`; the command line that runs it in `mode` is `python3 PATH MODE`.
pub fn python_stdio_server(name: &str, tools: &str, call: &str) -> String {
    let text = PYTHON_STDIO_SERVER
        .replace("{tools}", tools)
        .replace("{call}", call);
    python_script(&scratch(name), &text)
}

/// `text` with every run of whitespace one space: the terminal report wraps
/// long lines, and where depends on the length of what they quote (a path).
pub fn words(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
