//! The Streamable HTTP transport: one request per message, the answer read
//! as JSON or as an SSE stream (decoded incrementally by `eventsource-stream`,
//! stopping at the awaited response), with the headers each era requires.
//!
//! Two backends share everything above the bytes: a real endpoint reached
//! with `reqwest`, and the reference server's pure HTTP edge called in
//! process (no socket), so that HTTP cases and faults run in tests without
//! a server process.
//!
//! A legacy (2025-11-25) connection keeps the `Mcp-Session-Id` minted by
//! `initialize` and ends the session with DELETE on close.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::stream::{self, BoxStream, StreamExt};
use mcperr_cases::plan::Message;
use mcperr_protocol::Era;
use mcperr_reference::http_edge::HttpEdge;
use mcperr_wire::exchange::HttpAnswer;

use super::sse_read::{read_sse, GET_LISTEN};
use serde_json::Value;

/// How to reach an HTTP server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpTarget {
    /// The MCP endpoint URL.
    pub url: String,
    /// Extra headers on every request (`--header K:V`, e.g. auth).
    pub options: super::HttpOptions,
    /// Largest response body read.
    pub max_body: usize,
}

/// Why an HTTP request got no answer at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HttpFailure {
    /// Nothing within the timeout.
    #[error("no answer within the timeout")]
    Timeout,
    /// The connection was refused or dropped.
    #[error("could not connect: {0}")]
    Connect(String),
    /// The body outgrew the cap.
    #[error("the response body exceeds the cap of {0} bytes")]
    TooLarge(usize),
    /// Anything else the HTTP client reported.
    #[error("{0}")]
    Other(String),
}

/// Header overrides for one request: `None` removes the header.
pub type HeaderOverrides = Vec<(String, Option<String>)>;

#[derive(Clone)]
enum Backend {
    Remote(reqwest::Client),
    Memory(Arc<HttpEdge>),
}

/// The tool parameters the server mirrors into `Mcp-Param-{Name}` headers
/// (`x-mcp-header`), by tool name: learnt from `tools/list` at discovery and
/// shared by every connection of a run, so that each 2026-07-28
/// `tools/call` carries them ("conforming clients MUST mirror the
/// designated parameter values into HTTP headers").
pub type MirroredParams =
    Arc<Mutex<std::collections::HashMap<String, Vec<mcperr_protocol::headers::MirroredParam>>>>;

/// Learns the mirrored parameters of `tools` (a `tools/list` result's).
pub fn learn_mirrored(mirrored: &MirroredParams, tools: &[Value]) {
    let mut map = mirrored.lock().unwrap_or_else(|e| e.into_inner());
    for t in tools {
        let (Some(name), Some(schema)) =
            (t.get("name").and_then(Value::as_str), t.get("inputSchema"))
        else {
            continue;
        };
        let params = mcperr_protocol::headers::mirrored_params(schema);
        if !params.is_empty() {
            map.insert(name.to_string(), params);
        }
    }
}

/// The `Mcp-Param-*` headers of a `tools/call` message: one for each
/// mirrored parameter whose argument a header can carry (none for a null
/// or absent one).
fn param_headers(mirrored: &MirroredParams, msg: &Value) -> Vec<(String, String)> {
    if msg.get("method").and_then(Value::as_str) != Some("tools/call") {
        return vec![];
    }
    let Some(name) = msg.pointer("/params/name").and_then(Value::as_str) else {
        return vec![];
    };
    let map = mirrored.lock().unwrap_or_else(|e| e.into_inner());
    let args = msg.pointer("/params/arguments");
    map.get(name)
        .into_iter()
        .flatten()
        .filter_map(|p| {
            let value = mcperr_protocol::headers::param_header_value(p.value(args)?)?;
            Some((p.header(), value))
        })
        .collect()
}

/// A connection to an HTTP MCP endpoint.
pub struct HttpConnection {
    backend: Backend,
    /// The run's mirrored tool parameters.
    pub mirrored: MirroredParams,
    /// The target.
    pub target: HttpTarget,
    /// The legacy session id, once `initialize` minted one.
    pub session: Option<String>,
    /// How long one request may take, the whole answer read.
    pub timeout: Duration,
    /// Set while a GET's stream is listened to beside a request on a POST
    /// (`get-stream-quiet`): notified once that request's answer is in,
    /// the listening ends soon after (`GET_LISTEN_AFTER`) instead of at
    /// `GET_LISTEN`.
    pub get_heard: Option<Arc<tokio::sync::Notify>>,
    /// Set with `get_heard`: notified once the GET's answer has its status
    /// and headers (the stream is open, or refused), so that the request
    /// beside it goes out then, not after a fixed wait.
    pub get_opened: Option<Arc<tokio::sync::Notify>>,
}

type Bytes = BoxStream<'static, Result<Vec<u8>, HttpFailure>>;

/// Response headers as (name, value) text pairs, as [`HttpAnswer`] keeps them.
pub(crate) fn header_pairs(headers: &reqwest::header::HeaderMap) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_string(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect()
}

/// What a reqwest error means for an exchange, with its causes.
pub(crate) fn describe(e: &reqwest::Error) -> HttpFailure {
    if e.is_timeout() {
        return HttpFailure::Timeout;
    }
    let mut s = e.to_string();
    let mut src = std::error::Error::source(e);
    while let Some(cause) = src {
        s = format!("{s}: {cause}");
        src = cause.source();
    }
    if e.is_connect() {
        HttpFailure::Connect(s)
    } else {
        HttpFailure::Other(s)
    }
}

impl HttpConnection {
    /// A client of a real endpoint with the run's timeout (no request is sent yet).
    pub fn remote(
        target: &HttpTarget,
        timeout: Duration,
    ) -> Result<HttpConnection, super::ConnectError> {
        let client = reqwest::Client::builder()
            .connect_timeout(timeout)
            .no_proxy()
            .build()
            .map_err(|e| super::ConnectError(format!("cannot build an HTTP client: {e}")))?;
        Ok(HttpConnection {
            backend: Backend::Remote(client),
            target: target.clone(),
            session: None,
            timeout,
            mirrored: Default::default(),
            get_heard: None,
            get_opened: None,
        })
    }

    /// A client of the reference server's HTTP edge, called in process.
    pub fn memory(edge: Arc<HttpEdge>, target: &HttpTarget) -> HttpConnection {
        HttpConnection {
            backend: Backend::Memory(edge),
            target: target.clone(),
            session: None,
            timeout: Duration::from_secs(60),
            mirrored: Default::default(),
            get_heard: None,
            get_opened: None,
        }
    }

    /// Another connection to the same server, without a session.
    pub fn fresh(&self) -> HttpConnection {
        HttpConnection {
            backend: self.backend.clone(),
            target: self.target.clone(),
            session: None,
            timeout: self.timeout,
            mirrored: self.mirrored.clone(),
            get_heard: None,
            get_opened: None,
        }
    }

    /// The headers a finished message goes out with in `era`: the era's
    /// (the message's own), then what only this connection knows: the
    /// parameters a tool mirrors into headers, the session's, the user's.
    pub fn headers_for(&self, era: Era, msg: &Message) -> Vec<(String, String)> {
        let mut h = msg.headers.clone();
        if era == Era::Modern {
            h.extend(param_headers(&self.mirrored, &msg.body));
        }
        if era == Era::Legacy {
            if let Some(s) = &self.session {
                h.push(("Mcp-Session-Id".into(), s.clone()));
            }
        }
        h.extend(self.target.options.header_pairs());
        h
    }

    /// Status, headers and the body as a stream of chunks.
    async fn exchange_bytes(
        &self,
        method: &str,
        headers: Vec<(String, String)>,
        body: Option<Vec<u8>>,
    ) -> Result<(u16, Vec<(String, String)>, Bytes), HttpFailure> {
        match &self.backend {
            Backend::Remote(client) => {
                let m = reqwest::Method::from_bytes(method.as_bytes())
                    .map_err(|e| HttpFailure::Other(e.to_string()))?;
                let mut req = client.request(m, &self.target.url).timeout(self.timeout);
                for (k, v) in &headers {
                    req = req.header(k.as_str(), v.as_str());
                }
                if let Some(b) = body {
                    req = req.body(b);
                }
                let resp = req.send().await.map_err(|e| describe(&e))?;
                let status = resp.status().as_u16();
                let headers = header_pairs(resp.headers());
                let bytes = resp
                    .bytes_stream()
                    .map(|r| r.map(|b| b.to_vec()).map_err(|e| describe(&e)))
                    .boxed();
                Ok((status, headers, bytes))
            }
            Backend::Memory(edge) => {
                let mut logs = Vec::new();
                let reply =
                    edge.handle(method, &headers, body.as_deref().unwrap_or(&[]), &mut logs);
                let headers = reply
                    .headers
                    .iter()
                    .map(|(k, v)| (k.to_ascii_lowercase(), v.clone()))
                    .collect();
                let bytes = stream::iter([Ok(reply.body)]).boxed();
                Ok((reply.status, headers, bytes))
            }
        }
    }

    /// Sends one HTTP request and reads its answer; `want` is the JSON-RPC id
    /// awaited in an SSE stream. `Err` is a transport failure (refused, timeout).
    pub async fn send(
        &self,
        method: &str,
        headers: Vec<(String, String)>,
        overrides: &HeaderOverrides,
        want: Option<&Value>,
        body: Option<Vec<u8>>,
    ) -> Result<HttpAnswer, HttpFailure> {
        let mut final_headers = headers;
        for (k, v) in overrides {
            final_headers.retain(|(h, _)| !h.eq_ignore_ascii_case(k));
            if let Some(v) = v {
                final_headers.push((k.clone(), v.clone()));
            }
        }
        if tracing::enabled!(tracing::Level::DEBUG) {
            let shown = body
                .as_deref()
                .map(String::from_utf8_lossy)
                .unwrap_or_default();
            tracing::debug!(target: "mcperr::wire", "→ {method} {} {final_headers:?} {shown}", self.target.url);
        }
        let (status, headers, bytes) = self.exchange_bytes(method, final_headers, body).await?;
        if let Some(opened) = self.get_opened.as_ref().filter(|_| method == "GET") {
            opened.notify_one();
        }
        let mut answer = HttpAnswer::head(status, headers);
        let is_sse = answer.sse;
        let max = self.target.max_body;
        // The body as its chunks (no reallocation as it grows), and their total.
        let raw: Arc<Mutex<(Vec<Vec<u8>>, usize)>> = Arc::default();
        if is_sse {
            // The event parser reads a copy of each chunk as it comes.
            let tee = raw.clone();
            let capped = bytes.map(move |chunk| {
                let chunk = chunk?;
                let mut all = tee.lock().expect("one reader");
                if all.1 + chunk.len() > max {
                    // Discarded as it streams: what was kept is freed at once.
                    *all = (Vec::new(), 0);
                    return Err(HttpFailure::TooLarge(max));
                }
                all.1 += chunk.len();
                all.0.push(chunk.clone());
                Ok(chunk)
            });
            let listen = (method == "GET").then(|| (GET_LISTEN, self.get_heard.clone()));
            read_sse(capped, want, &mut answer, listen).await?;
        } else {
            // A JSON body is only kept: each chunk moves in, no copy.
            let mut bytes = bytes;
            while let Some(chunk) = bytes.next().await {
                let chunk = chunk?;
                let mut all = raw.lock().expect("one reader");
                if all.1 + chunk.len() > max {
                    *all = (Vec::new(), 0);
                    return Err(HttpFailure::TooLarge(max));
                }
                all.1 += chunk.len();
                all.0.push(chunk);
            }
        }
        let body = std::mem::take(&mut raw.lock().expect("reader done").0).concat();
        answer.body = match String::from_utf8(body) {
            Ok(text) => text,
            Err(e) => {
                answer.not_utf8 = true;
                String::from_utf8_lossy(e.as_bytes()).into_owned()
            }
        };
        if !is_sse {
            answer.read_json_body();
        }
        tracing::debug!(target: "mcperr::wire", "← {} {}", answer.status, answer.body);
        Ok(answer)
    }

    /// GETs `url` (another resource of the server, such as its
    /// protected-resource metadata) without the run's headers: its status
    /// and body, up to the body cap. `Err`: no answer.
    pub async fn get_url(&self, url: &str) -> Result<(u16, String), HttpFailure> {
        let (status, bytes) = match &self.backend {
            Backend::Remote(client) => {
                let resp = client
                    .get(url)
                    .header("Accept", "application/json")
                    .timeout(self.timeout)
                    .send()
                    .await
                    .map_err(|e| describe(&e))?;
                let status = resp.status().as_u16();
                let bytes = resp.bytes().await.map_err(|e| describe(&e))?;
                (status, bytes.to_vec())
            }
            Backend::Memory(edge) => {
                let path = url
                    .split_once("://")
                    .and_then(|(_, rest)| rest.find('/').map(|i| &rest[i..]))
                    .unwrap_or("/");
                let reply = edge.handle_path(path, "GET", &[], &[], &mut Vec::new());
                (reply.status, reply.body)
            }
        };
        if bytes.len() > self.target.max_body {
            return Err(HttpFailure::TooLarge(self.target.max_body));
        }
        Ok((status, String::from_utf8_lossy(&bytes).into_owned()))
    }

    /// Ends a legacy session with DELETE (with the `--header` headers);
    /// the status, or `None` without a session or on a transport failure.
    pub async fn close(&self) -> Option<u16> {
        let s = self.session.as_ref()?;
        let mut headers = vec![
            ("Mcp-Session-Id".to_string(), s.clone()),
            (
                "MCP-Protocol-Version".to_string(),
                Era::Legacy.version().to_string(),
            ),
        ];
        headers.extend(self.target.options.header_pairs());
        self.exchange_bytes("DELETE", headers, None)
            .await
            .ok()
            .map(|(status, _, _)| status)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn decode(body: &str, want: Option<&Value>) -> HttpAnswer {
        let chunks: Vec<Result<Vec<u8>, HttpFailure>> =
            body.as_bytes().chunks(3).map(|c| Ok(c.to_vec())).collect();
        let mut answer = HttpAnswer::default();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        rt.block_on(read_sse(stream::iter(chunks), want, &mut answer, None))
            .unwrap();
        answer
    }

    #[test]
    fn sse_events_comments_multiline_crlf_and_a_cut_stream() {
        let body = ": hello\r\n\r\nevent: message\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\nevent: other\ndata: x\n\ndata: {\"b\":2}\n\ndata: {\"cut\":";
        let a = decode(body, Some(&json!(9)));
        assert_eq!(a.messages, vec![json!({"a": 1}), json!({"b": 2})]);
        assert!(a.problem.is_none());
    }

    #[test]
    fn a_priming_event_is_no_message_and_event_ids_are_kept_once_each() {
        // 2025-11-25: "an SSE event consisting of an event ID and an empty
        // data field" first; the id goes on to events that set none.
        let body =
            "id: 7-0\ndata:\n\nid: 7-1\nevent: message\ndata: {\"a\":1}\n\ndata: {\"b\":2}\n\n";
        let a = decode(body, Some(&json!(9)));
        assert_eq!(a.messages, vec![json!({"a": 1}), json!({"b": 2})]);
        assert!(a.problem.is_none(), "{:?}", a.problem);
        assert_eq!(a.event_ids, ["7-0", "7-1"]);
    }

    #[test]
    fn reading_stops_at_the_awaited_response() {
        let body = "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\ndata: {\"late\":1}\n\n";
        let a = decode(body, Some(&json!(1)));
        assert_eq!(a.messages.len(), 1);
        // An event after the response: the stream did not end with it (H3).
        assert!(a.open_after_response);
        let ended = decode(
            "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n",
            Some(&json!(1)),
        );
        assert!(!ended.open_after_response);
    }
}
