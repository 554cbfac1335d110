//! The HTTP edge's vocabulary: the reply it builds and the header readings
//! it makes (case-insensitive lookup, `Accept` ranges, loopback `Origin`s,
//! a modern version named in a body). Pure, like the edge itself.

use mcperr_protocol::era::META_PROTOCOL_VERSION;
use serde_json::{json, Value};

/// Protocol versions that take the legacy (session) path.
pub(crate) const LEGACY_VERSIONS: &[&str] =
    &["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// One HTTP answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpReply {
    /// Status code.
    pub status: u16,
    /// Headers to set.
    pub headers: Vec<(String, String)>,
    /// Body bytes.
    pub body: Vec<u8>,
}

impl HttpReply {
    pub(crate) fn empty(status: u16) -> Self {
        HttpReply {
            status,
            headers: vec![],
            body: vec![],
        }
    }

    pub(crate) fn text(status: u16, text: &str) -> Self {
        HttpReply {
            status,
            headers: vec![("Content-Type".into(), "text/plain; charset=utf-8".into())],
            body: text.as_bytes().to_vec(),
        }
    }

    /// A 200 SSE stream with `body`.
    pub(crate) fn sse(body: Vec<u8>) -> Self {
        HttpReply {
            status: 200,
            headers: vec![
                ("Content-Type".into(), "text/event-stream".into()),
                ("Cache-Control".into(), "no-cache".into()),
            ],
            body,
        }
    }

    /// Whether it is an SSE stream.
    pub(crate) fn is_sse(&self) -> bool {
        header(&self.headers, "content-type").is_some_and(|v| v.starts_with("text/event-stream"))
    }

    pub(crate) fn json(status: u16, value: &Value) -> Self {
        HttpReply {
            status,
            headers: vec![("Content-Type".into(), "application/json".into())],
            body: serde_json::to_vec(value).expect("responses serialize"),
        }
    }

    /// A web framework's default error page, stack trace and paths
    /// included (the `http-malformed-page` fault: what express sends for a
    /// body its JSON parser refuses).
    pub(crate) fn html_error_page(status: u16) -> Self {
        let page = "<!DOCTYPE html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\"><title>Error</title></head>\n\
            <body><pre>SyntaxError: Unexpected end of JSON input<br> &nbsp; &nbsp;at JSON.parse (&lt;anonymous&gt;)<br> \
            &nbsp; &nbsp;at parse (/srv/app/node_modules/body-parser/lib/types/json.js:92:19)</pre></body>\n</html>\n";
        HttpReply {
            status,
            headers: vec![("Content-Type".into(), "text/html; charset=utf-8".into())],
            body: page.as_bytes().to_vec(),
        }
    }

    pub(crate) fn rpc_error(
        status: u16,
        code: mcperr_protocol::codes::Code,
        message: &str,
    ) -> Self {
        Self::json(
            status,
            &json!({"jsonrpc": "2.0", "id": null, "error": {"code": code, "message": message}}),
        )
    }
}

/// Case-insensitive header lookup over `(name, value)` pairs.
pub(crate) fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

pub(crate) fn body_names_modern_version(body: &[u8]) -> bool {
    serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|v| {
            v.pointer(&format!(
                "/params/_meta/{}",
                META_PROTOCOL_VERSION.replace('/', "~1")
            ))
            .cloned()
        })
        .and_then(|v| v.as_str().map(|s| !LEGACY_VERSIONS.contains(&s)))
        .unwrap_or(false)
}

/// Whether an `Accept` header admits `wanted` (`type/subtype`), wildcards and
/// case-insensitivity included; `q=0` refuses.
pub(crate) fn accepts(accept: &str, wanted: &str) -> bool {
    let (wtype, _) = wanted.split_once('/').unwrap_or((wanted, ""));
    accept.split(',').any(|item| {
        let mut parts = item.split(';');
        let range = parts.next().unwrap_or("").trim().to_ascii_lowercase();
        let refused = parts.any(|p| {
            let p = p.trim().to_ascii_lowercase();
            p.strip_prefix("q=")
                .is_some_and(|q| q.parse::<f32>().is_ok_and(|q| q == 0.0))
        });
        !refused && (range == wanted || range == "*/*" || range == format!("{wtype}/*"))
    })
}

pub(crate) fn is_loopback_origin(origin: &str) -> bool {
    let origin = origin.to_ascii_lowercase();
    let origin = origin.as_str();
    let rest = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
        .unwrap_or("");
    let host = if rest.starts_with('[') {
        rest.split(']')
            .next()
            .map(|h| format!("{h}]"))
            .unwrap_or_default()
    } else {
        rest.split(':').next().unwrap_or("").to_string()
    };
    matches!(host.as_str(), "localhost" | "127.0.0.1" | "[::1]")
}
