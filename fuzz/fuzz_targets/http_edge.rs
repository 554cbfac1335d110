//! The reference server's pure Streamable HTTP edge: any method, headers and
//! body. Never a panic; a status a client can read; a JSON body that parses
//! when it says it is JSON.

#![no_main]

use arbitrary::{Arbitrary, Unstructured};
use libfuzzer_sys::fuzz_target;
use mcperr_reference::http_edge::{HttpConfig, HttpEdge};

const METHODS: &[&str] = &["POST", "GET", "DELETE", "PUT", "OPTIONS", "post", ""];
const HEADERS: &[&str] = &[
    "content-type",
    "accept",
    "mcp-protocol-version",
    "mcp-session-id",
    "mcp-method",
    "mcp-name",
    "origin",
    "host",
    "last-event-id",
];
const VALUES: &[&str] = &[
    "application/json",
    "application/json, text/event-stream",
    "text/event-stream",
    "2025-11-25",
    "2026-07-28",
    "tools/call",
    "http://localhost",
    "http://evil.example",
    "127.0.0.1",
];

#[derive(Debug)]
struct Request {
    method: &'static str,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl<'a> Arbitrary<'a> for Request {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        let method = *u.choose(METHODS)?;
        let mut headers = Vec::new();
        for _ in 0..u.int_in_range(0..=6u8)? {
            let name = u.choose(HEADERS)?.to_string();
            let value = if u.ratio(3, 4)? {
                u.choose(VALUES)?.to_string()
            } else {
                String::arbitrary(u)?
            };
            headers.push((name, value));
        }
        let body = match u.int_in_range(0..=2u8)? {
            0 => Vec::arbitrary(u)?,
            1 => {
                let id = u.int_in_range(-3..=3i64)?;
                let method = *u.choose(&[
                    "initialize",
                    "tools/call",
                    "tools/list",
                    "server/discover",
                    "ping",
                    "nope",
                ])?;
                format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{"name":"get_author","arguments":{{"title":"Dune"}},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}}}}"#).into_bytes()
            }
            _ => br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#.to_vec(),
        };
        Ok(Request {
            method,
            headers,
            body,
        })
    }
}

thread_local! {
    static EDGE: HttpEdge = HttpEdge::new(None, HttpConfig {
        sse: false,
        max_body: 1 << 16,
        max_sessions: 64,
        session_idle: std::time::Duration::from_secs(60),
        allowed_hosts: vec![],
        log: false,
        auth: None,
    });
}

fuzz_target!(|req: Request| {
    EDGE.with(|edge| {
        let mut logs = Vec::new();
        let reply = edge.handle(req.method, &req.headers, &req.body, &mut logs);
        assert!(
            (100..600).contains(&reply.status),
            "status {}",
            reply.status
        );
        let json = reply.headers.iter().any(|(k, v)| {
            k.eq_ignore_ascii_case("content-type") && v.starts_with("application/json")
        });
        if json && !reply.body.is_empty() {
            assert!(
                serde_json::from_slice::<serde_json::Value>(&reply.body).is_ok(),
                "a JSON answer that is not JSON: {:?}",
                String::from_utf8_lossy(&reply.body)
            );
        }
    });
});
