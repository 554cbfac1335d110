//! Streamable HTTP on both sides: the reference server's HTTP edge judged by
//! `mcperr run --http` in both eras (JSON and SSE), every HTTP-visible fault
//! caught, raw requests answered with the documented statuses (the SDK
//! Bookshops over HTTP against their baselines: tests/cases/peers.rs).

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use crate::support::{assert_clean, mcperr, report, scratch, MCPERR};

/// A server process that printed its URL on stdout; killed on drop.
pub struct HttpServer {
    child: Child,
    pub url: String,
}

impl HttpServer {
    pub fn start(program: &str, args: &[&str]) -> HttpServer {
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("start {program}: {e}"));
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        // Owned before anything can fail, so that a failure still kills it.
        let mut server = HttpServer {
            child,
            url: String::new(),
        };
        server.url = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("the server printed its URL")
            .trim()
            .to_string();
        assert!(
            server.url.starts_with("http://"),
            "not a URL: {:?}",
            server.url
        );
        server
    }

    /// Stops it with SIGTERM, as a host or a shell would, and returns its
    /// exit code once it has exited (within 20 s).
    pub fn terminate(mut self) -> Option<i32> {
        // SAFETY: kill only sends a signal to the process this test started.
        unsafe {
            libc::kill(self.child.id() as i32, libc::SIGTERM);
        }
        let start = std::time::Instant::now();
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                return s.code();
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "it ignored SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn reference(args: &[&str]) -> HttpServer {
        let mut all = vec!["reference", "--http", "127.0.0.1:0"];
        all.extend_from_slice(args);
        HttpServer::start(MCPERR, &all)
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn the_reference_server_over_http_passes_in_both_eras_as_json_and_as_sse() {
    let dir = scratch("http-clean");
    for sse in [false, true] {
        let server = HttpServer::reference(if sse { &["--sse"] } else { &[] });
        for era in ["2026-07-28", "2025-11-25"] {
            let json = dir.join(format!("{era}-{sse}.json"));
            let out = mcperr(&[
                "run",
                "--http",
                &server.url,
                "--era",
                era,
                "--profile",
                "model",
                "--json",
                json.to_str().unwrap(),
            ]);
            assert_eq!(
                out.code,
                Some(0),
                "sse={sse} {era}\n{}{}",
                out.stdout,
                out.stderr
            );
            let r = report(&json);
            assert_clean(&r);
            let cases = r["cases"].as_array().unwrap();
            assert!(cases
                .iter()
                .any(|c| c["id"].as_str().unwrap().starts_with("http/")));
            assert!(
                cases
                    .iter()
                    .all(|c| c["http_status"].is_u64() || c["verdict"] == "skip"),
                "every case carries its HTTP status"
            );
            let rules: BTreeSet<&str> = cases.iter().map(|c| c["rule"].as_str().unwrap()).collect();
            let want: &[&str] = if era == "2026-07-28" {
                &["H1", "J3", "J6"]
            } else {
                &["H2", "J3", "J6"]
            };
            for rule in want {
                assert!(rules.contains(rule), "{era}: no case for {rule}");
            }
        }
    }
}

/// One raw HTTP/1.1 exchange: the status and the whole response text.
pub fn raw(url: &str, request_head: &str, body: &[u8]) -> (u16, String) {
    let addr = url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .to_string();
    let mut stream = TcpStream::connect(&addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let head = request_head
        .replace("{host}", &addr)
        .replace("{len}", &body.len().to_string());
    stream.write_all(head.as_bytes()).unwrap();
    let _ = stream.write_all(body);
    let mut text = Vec::new();
    let _ = stream.read_to_end(&mut text);
    let text = String::from_utf8_lossy(&text).into_owned();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, text)
}

#[test]
fn raw_requests_get_the_documented_statuses() {
    let server = HttpServer::reference(&[]);
    let url = &server.url;
    let post = |extra: &str| {
        format!(
            "POST /mcp HTTP/1.1\r\nHost: {{host}}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
             MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\n{extra}Content-Length: {{len}}\r\nConnection: close\r\n\r\n"
        )
    };
    let call = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_author","arguments":{"title":"Dune"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let (status, text) = raw(url, &post("Mcp-Name: get_author\r\n"), call);
    assert_eq!(status, 200, "{text}");
    assert!(text.contains("Frank Herbert"));
    let (status, text) = raw(
        url,
        &post("Mcp-Name: get_author\r\nOrigin: http://evil.example\r\n"),
        call,
    );
    assert_eq!(status, 403, "{text}");
    let (status, text) = raw(
        url,
        &post("Mcp-Name: get_author\r\nOrigin: http://localhost:3000\r\n"),
        call,
    );
    assert_eq!(status, 200, "a loopback Origin is fine: {text}");
    let (status, text) = raw(url, &post("Mcp-Name: crash\r\n"), call);
    assert_eq!(status, 400, "{text}");
    assert!(
        text.contains("-32020") && text.contains("\"id\":1"),
        "{text}"
    );
    let (status, text) = raw(url, "GET /mcp HTTP/1.1\r\nHost: {host}\r\nMCP-Protocol-Version: 2026-07-28\r\nConnection: close\r\n\r\n", b"");
    assert_eq!(status, 405, "{text}");
    assert!(text.to_ascii_lowercase().contains("allow: post"), "{text}");
    let (status, text) = raw(
        url,
        &post("Mcp-Name: get_author\r\n").replace("Host: {host}", "Host: evil.example:80"),
        call,
    );
    assert_eq!(status, 421, "{text}");
    let big = vec![b'a'; 10 << 20];
    let (status, _) = raw(url, &post("Mcp-Name: get_author\r\n"), &big);
    assert_eq!(status, 413);
    // Still serving after all of that.
    let (status, _) = raw(url, &post("Mcp-Name: get_author\r\n"), call);
    assert_eq!(status, 200);
}

/// A Streamable HTTP server (2025-11-25, JSON bodies) whose `big` tool
/// answers with a body of a million bytes; it prints its URL first.
const OVERSIZED_HTTP: &str = r#"
import json, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a): pass
    def reply(self, status, body):
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Mcp-Session-Id", "s1")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def do_POST(self):
        m = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"null")
        if not isinstance(m, dict) or "id" not in m:
            return self.reply(202, b"")
        i, meth = m["id"], m.get("method")
        if meth == "initialize":
            r = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "big", "version": "1"}}
        elif meth == "tools/list":
            r = {"tools": [{"name": "big", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": True}}]}
        elif meth == "tools/call" and m["params"].get("name") == "big":
            r = {"content": [{"type": "text", "text": "x" * 1000000}]}
        elif meth == "ping":
            r = {}
        else:
            return self.reply(200, json.dumps({"jsonrpc": "2.0", "id": i, "error": {"code": -32601, "message": "Method not found"}}).encode())
        self.reply(200, json.dumps({"jsonrpc": "2.0", "id": i, "result": r}).encode())
    def do_GET(self):
        self.reply(405, b"")
    do_DELETE = do_GET
s = ThreadingHTTPServer(("127.0.0.1", 0), H)
print(f"http://127.0.0.1:{s.server_address[1]}/mcp", flush=True)
s.serve_forever()
"#;

#[test]
fn an_http_answer_over_the_cap_is_an_error_naming_the_cap() {
    let dir = crate::support::scratch("oversized-http");
    let script = dir.join("server.py");
    std::fs::write(&script, OVERSIZED_HTTP).unwrap();
    let server = HttpServer::start("python3", &[script.to_str().unwrap()]);
    let json = dir.join("r.json");
    let out = mcperr(&[
        "run",
        "--http",
        &server.url,
        "--era",
        "2025-11-25",
        "--cases",
        "generated/tools/big/*",
        "--max-line",
        "65536",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(out.code, Some(1), "{}{}", out.stdout, out.stderr);
    let case = &report(&json)["cases"][0];
    assert_eq!(
        (&case["verdict"], &case["rule"]),
        (&serde_json::json!("error"), &serde_json::json!("J1")),
        "{case}"
    );
    assert!(
        case["message"]
            .as_str()
            .unwrap()
            .contains("outgrew --max-line"),
        "{case}"
    );
}
