//! The Streamable HTTP transport: one POST per message, the answer read as
//! JSON or as an SSE stream, with the headers each era requires.
//!
//! A legacy (2025-11-25) connection keeps the `Mcp-Session-Id` minted by
//! `initialize` and ends the session with DELETE on close; a modern one sends
//! `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` on every request.

use std::time::Duration;

use mcperr_protocol::headers::encode_header_value;
use mcperr_protocol::Era;
use serde_json::Value;

/// How to reach an HTTP server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpTarget {
    /// The MCP endpoint URL.
    pub url: String,
    /// Extra headers on every request (`--header K:V`, e.g. auth).
    pub headers: Vec<(String, String)>,
    /// Largest response body read.
    pub max_body: usize,
}

/// One HTTP answer, with the JSON-RPC messages it carried.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HttpAnswer {
    /// Status code.
    pub status: u16,
    /// Response headers (lowercase names).
    pub headers: Vec<(String, String)>,
    /// The body as text.
    pub body: String,
    /// JSON-RPC messages found (one JSON body, or each SSE `message` event).
    pub messages: Vec<Value>,
    /// Why the body could not be read as messages, if it could not.
    pub problem: Option<String>,
    /// The body was an SSE stream.
    pub sse: bool,
}

impl HttpAnswer {
    /// A header value by (case-insensitive) name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Parses an SSE body into its `message` events' data (CRLF or LF, comments,
/// multi-line data).
pub fn sse_messages(body: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut event = String::new();
    let mut data: Vec<String> = Vec::new();
    let body = body.replace("\r\n", "\n").replace('\r', "\n");
    for line in body.split('\n') {
        if line.is_empty() {
            if !data.is_empty() && (event.is_empty() || event == "message") {
                out.push(data.join("\n"));
            }
            event.clear();
            data.clear();
            continue;
        }
        if line.starts_with(':') {
            continue;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "event" => event = value.to_string(),
            "data" => data.push(value.to_string()),
            _ => {}
        }
    }
    // A final event without its blank line is incomplete: the stream was cut.
    out
}

/// Whether an SSE body so far holds a complete response event that ends the
/// wait: one with the awaited id, or, with no id awaited (raw bodies) or for
/// a rejection, one with id null.
fn sse_has_response(body: &str, want: Option<&Value>) -> bool {
    sse_messages(body).iter().any(|data| {
        serde_json::from_str::<Value>(data).is_ok_and(|v| {
            let is_response = v.get("method").is_none()
                && (v.get("result").is_some() || v.get("error").is_some());
            let id = v.get("id").unwrap_or(&Value::Null);
            is_response && (want.is_none() || Some(id) == want || id.is_null())
        })
    })
}

/// A connection to an HTTP MCP endpoint.
pub struct HttpConnection {
    client: reqwest::Client,
    /// The target.
    pub target: HttpTarget,
    /// The legacy session id, once `initialize` minted one.
    pub session: Option<String>,
}

/// Header overrides for one request: `None` removes the header.
pub type HeaderOverrides = Vec<(String, Option<String>)>;

impl HttpConnection {
    /// A client with the run's timeout (no request is sent yet).
    pub fn new(target: &HttpTarget, timeout: Duration) -> Result<HttpConnection, String> {
        let client = reqwest::Client::builder()
            .connect_timeout(timeout)
            .timeout(timeout)
            .no_proxy()
            .build()
            .map_err(|e| format!("cannot build an HTTP client: {e}"))?;
        Ok(HttpConnection {
            client,
            target: target.clone(),
            session: None,
        })
    }

    /// The headers a message gets in `era`.
    pub fn headers_for(&self, era: Era, msg: &Value) -> Vec<(String, String)> {
        let mut h = vec![
            (
                "Accept".to_string(),
                "application/json, text/event-stream".to_string(),
            ),
            ("Content-Type".to_string(), "application/json".to_string()),
        ];
        let method = msg.get("method").and_then(Value::as_str).unwrap_or("");
        match era {
            Era::Modern => {
                h.push(("MCP-Protocol-Version".into(), Era::Modern.version().into()));
                if !method.is_empty() {
                    h.push(("Mcp-Method".into(), method.into()));
                }
                let name = match method {
                    "tools/call" | "prompts/get" => msg.pointer("/params/name"),
                    "resources/read" => msg.pointer("/params/uri"),
                    _ => None,
                };
                if let Some(Value::String(n)) = name {
                    h.push(("Mcp-Name".into(), encode_header_value(n)));
                }
            }
            Era::Legacy => {
                if method != "initialize" {
                    h.push(("MCP-Protocol-Version".into(), Era::Legacy.version().into()));
                }
                if let Some(s) = &self.session {
                    h.push(("Mcp-Session-Id".into(), s.clone()));
                }
            }
        }
        h.extend(self.target.headers.iter().cloned());
        h
    }

    /// Sends one HTTP request. `Err` is a transport failure (refused, timeout).
    pub async fn send(
        &self,
        method: &str,
        headers: Vec<(String, String)>,
        overrides: &HeaderOverrides,
        want: Option<&Value>,
        body: Option<Vec<u8>>,
    ) -> Result<HttpAnswer, String> {
        let method = reqwest::Method::from_bytes(method.as_bytes()).map_err(|e| e.to_string())?;
        let mut req = self.client.request(method, &self.target.url);
        let mut final_headers = headers;
        for (k, v) in overrides {
            final_headers.retain(|(h, _)| !h.eq_ignore_ascii_case(k));
            if let Some(v) = v {
                final_headers.push((k.clone(), v.clone()));
            }
        }
        for (k, v) in &final_headers {
            req = req.header(k.as_str(), v.as_str());
        }
        if let Some(b) = body {
            req = req.body(b);
        }
        let mut resp = req.send().await.map_err(describe)?;
        let status = resp.status().as_u16();
        let headers: Vec<(String, String)> = resp
            .headers()
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().to_string(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect();
        let is_sse = headers.iter().any(|(k, v)| {
            k.eq_ignore_ascii_case("content-type")
                && v.to_ascii_lowercase().starts_with("text/event-stream")
        });
        let mut bytes = Vec::new();
        while let Some(chunk) = resp.chunk().await.map_err(describe)? {
            bytes.extend_from_slice(&chunk);
            // A server SHOULD close the stream after the response, but need not:
            // stop reading once the awaited response has arrived whole.
            if is_sse && sse_has_response(&String::from_utf8_lossy(&bytes), want) {
                break;
            }
            if bytes.len() > self.target.max_body {
                return Err(format!(
                    "the response body exceeds the cap of {} bytes",
                    self.target.max_body
                ));
            }
        }
        let body = String::from_utf8_lossy(&bytes).into_owned();
        let mut answer = HttpAnswer {
            status,
            headers,
            body,
            ..Default::default()
        };
        let content_type = answer
            .header("content-type")
            .unwrap_or("")
            .to_ascii_lowercase();
        if answer.body.trim().is_empty() {
            return Ok(answer);
        }
        if content_type.starts_with("text/event-stream") {
            answer.sse = true;
            for data in sse_messages(&answer.body) {
                match serde_json::from_str::<Value>(&data) {
                    Ok(v) => answer.messages.push(v),
                    Err(_) => {
                        answer.problem = Some(format!("an SSE message event is not JSON: {data:?}"))
                    }
                }
            }
        } else if content_type.starts_with("application/json") {
            match serde_json::from_str::<Value>(&answer.body) {
                Ok(v) => answer.messages.push(v),
                Err(e) => {
                    answer.problem = Some(format!("the application/json body is not JSON ({e})"))
                }
            }
        } else if status < 300 {
            answer.problem = Some(format!("a {status} answer with Content-Type {content_type:?}, not application/json or text/event-stream"));
        }
        Ok(answer)
    }

    /// Ends a legacy session with DELETE (with the `--header` headers);
    /// the status, or `None` without a session or on a transport failure.
    pub async fn close(&self) -> Option<u16> {
        let s = self.session.as_ref()?;
        let mut req = self
            .client
            .delete(&self.target.url)
            .header("Mcp-Session-Id", s)
            .header("MCP-Protocol-Version", Era::Legacy.version());
        for (k, v) in &self.target.headers {
            req = req.header(k.as_str(), v.as_str());
        }
        req.send().await.ok().map(|r| r.status().as_u16())
    }
}

fn describe(e: reqwest::Error) -> String {
    if e.is_timeout() {
        "timeout".to_string()
    } else if e.is_connect() {
        format!("could not connect: {e}")
    } else {
        let mut s = e.to_string();
        let mut src = std::error::Error::source(&e);
        while let Some(cause) = src {
            s = format!("{s}: {cause}");
            src = cause.source();
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::sse_messages;

    #[test]
    fn sse_events_comments_multiline_and_crlf() {
        let body = ": hello\r\n\r\nevent: message\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\nevent: other\ndata: x\n\ndata: {\"b\":2}\n\ndata: {\"cut\":";
        assert_eq!(
            sse_messages(body),
            vec!["{\"a\":\n1}".to_string(), "{\"b\":2}".to_string()]
        );
    }
}
