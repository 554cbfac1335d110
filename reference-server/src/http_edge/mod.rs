//! The Streamable HTTP edge's decisions, as a pure function of one HTTP
//! request (method, headers, body) → one HTTP reply. The axum glue in
//! [`crate::http`] only moves bytes; everything that makes an answer right or
//! wrong lives here, where tests can reach it without a socket.
//!
//! Era per request, as the MCP Python SDK routes it: an `MCP-Protocol-Version`
//! header of `2026-07-28` (or any version that is not a legacy one) takes the
//! modern stateless path; no header or a legacy version the session path.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use mcperr_protocol::jsonrpc::Message;
use mcperr_protocol::{codes, Era};
use serde_json::{json, Value};

use crate::faults::Fault;
use crate::handler::Handler;
use crate::http_reply::{
    accepts, body_names_modern_version, header, is_loopback_origin, LEGACY_VERSIONS,
};
use crate::log::LogRecord;
use crate::session::Session;

pub use crate::http_reply::HttpReply;

mod modern;
mod replies;

/// Settings of the HTTP edge.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// Answer every request as a `text/event-stream`.
    pub sse: bool,
    /// Largest accepted body.
    pub max_body: usize,
    /// Most legacy sessions alive at once.
    pub max_sessions: usize,
    /// A legacy session idle this long is forgotten.
    pub session_idle: Duration,
    /// Host header values accepted (the bound address and its loopback names).
    pub allowed_hosts: Vec<String>,
    /// Write log records to stderr (the server process's own log); off when
    /// the edge runs inside another program, such as `mcperr run`.
    pub log: bool,
    /// Bearer tokens required of every request (`--auth-token`), if any.
    pub auth: Option<crate::auth::AuthConfig>,
}

/// The HTTP edge: the shared handler, legacy sessions, and the settings.
pub struct HttpEdge {
    handler: Handler,
    config: HttpConfig,
    sessions: Mutex<HashMap<String, Instant>>,
    minted: std::sync::atomic::AtomicU64,
    /// The sessions' SSE streams, for a GET that resumes one.
    streams: crate::resume::Streams,
}

impl HttpEdge {
    /// An edge over a fresh handler with at most one fault.
    pub fn new(fault: Option<Fault>, config: HttpConfig) -> Self {
        HttpEdge {
            handler: Handler::new(fault),
            config,
            sessions: Mutex::new(HashMap::new()),
            minted: 0.into(),
            streams: Default::default(),
        }
    }

    /// Whether its log records go to stderr.
    pub fn logs(&self) -> bool {
        self.config.log
    }

    /// The largest body this edge reads.
    pub fn max_body(&self) -> usize {
        self.config.max_body
    }

    fn fault(&self) -> Option<Fault> {
        self.handler.fault()
    }

    fn mint_session(&self) -> Option<String> {
        let mut sessions = self.sessions.lock().unwrap();
        let now = Instant::now();
        sessions.retain(|_, seen| now.duration_since(*seen) < self.config.session_idle);
        if sessions.len() >= self.config.max_sessions {
            return None;
        }
        use std::hash::{BuildHasher, Hasher};
        let n = self
            .minted
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(n);
        let id = match self.fault() {
            Some(Fault::SessionIdCounter) => (n + 1).to_string(),
            Some(Fault::SessionIdSpaces) => format!("session {:016x}", h.finish()),
            _ => format!("{:016x}{:08x}", h.finish(), n),
        };
        sessions.insert(id.clone(), now);
        Some(id)
    }

    /// `Some(true)` live, `Some(false)` unknown, `None` no id sent.
    fn touch_session(&self, id: Option<&str>) -> Option<bool> {
        let id = id?;
        let mut sessions = self.sessions.lock().unwrap();
        let now = Instant::now();
        match sessions.get_mut(id) {
            Some(seen) if now.duration_since(*seen) < self.config.session_idle => {
                *seen = now;
                Some(true)
            }
            Some(_) => {
                sessions.remove(id);
                Some(false)
            }
            None => Some(false),
        }
    }

    /// Answers one HTTP request to the MCP endpoint. Log records go to `logs`.
    /// Routes a request by its URL path: the MCP endpoint `/mcp`, the
    /// protected-resource metadata at its well-known URIs (a protected
    /// server only), and 404 for anything else.
    pub fn handle_path(
        &self,
        path: &str,
        method: &str,
        headers: &[(String, String)],
        body: &[u8],
        logs: &mut Vec<LogRecord>,
    ) -> HttpReply {
        let well_known = path == crate::auth::WELL_KNOWN
            || path.strip_prefix(crate::auth::WELL_KNOWN) == Some("/mcp");
        match (&self.config.auth, path) {
            (_, "/mcp") => self.handle(method, headers, body, logs),
            (Some(auth), _) if well_known && method == "GET" => {
                auth.metadata(headers, self.fault())
            }
            _ => HttpReply::text(404, "Not Found"),
        }
    }

    /// The `http-refusal-made-up-id` fault: a refusal's JSON-RPC error body
    /// carries an id of the server's own making where it had none to echo.
    fn refusal_id(&self, mut reply: HttpReply) -> HttpReply {
        if self.fault() != Some(Fault::HttpRefusalMadeUpId) || reply.status < 400 {
            return reply;
        }
        if let Ok(mut v) = serde_json::from_slice::<Value>(&reply.body) {
            if v.get("id").is_some_and(Value::is_null) && v.get("error").is_some() {
                v["id"] = json!("server-error");
                reply.body = v.to_string().into_bytes();
            }
        }
        reply
    }

    /// One request to the MCP endpoint: refused first when the server is
    /// protected and the request lacks a token that may do it.
    pub fn handle(
        &self,
        method: &str,
        headers: &[(String, String)],
        body: &[u8],
        logs: &mut Vec<LogRecord>,
    ) -> HttpReply {
        self.refusal_id(self.handle_protected(method, headers, body, logs))
    }

    fn handle_protected(
        &self,
        method: &str,
        headers: &[(String, String)],
        body: &[u8],
        logs: &mut Vec<LogRecord>,
    ) -> HttpReply {
        let Some(auth) = &self.config.auth else {
            return self.handle_endpoint(method, headers, body, logs);
        };
        let rpc_method = serde_json::from_slice::<Value>(body)
            .ok()
            .and_then(|v| v.get("method").and_then(Value::as_str).map(str::to_string));
        let session_known = header(headers, "mcp-session-id")
            .is_some_and(|id| self.sessions.lock().unwrap().contains_key(id));
        let Some(refusal) =
            auth.refusal(headers, rpc_method.as_deref(), session_known, self.fault())
        else {
            return self.handle_endpoint(method, headers, body, logs);
        };
        if self.fault() == Some(Fault::AuthRefusalWithData) {
            // As a server that checks the token after running the request.
            let mut served = self.handle_endpoint(method, headers, body, logs);
            served.status = refusal.status;
            served.headers.extend(
                refusal
                    .headers
                    .into_iter()
                    .filter(|(k, _)| k.eq_ignore_ascii_case("www-authenticate")),
            );
            return served;
        }
        refusal
    }

    /// One request to the MCP endpoint, past authorization: the checks
    /// every request meets in the order a server meets them (origin and
    /// host; the era its version header names; a GET resuming a stream by
    /// `Last-Event-ID`; the HTTP method; the POST's own headers), then its
    /// message.
    fn handle_endpoint(
        &self,
        method: &str,
        headers: &[(String, String)],
        body: &[u8],
        logs: &mut Vec<LogRecord>,
    ) -> HttpReply {
        if let Some(refusal) = self.refused_origin(headers) {
            return refusal;
        }
        let version = header(headers, "mcp-protocol-version");
        let era = match version {
            // No header: a body whose envelope names a modern version is a
            // modern request missing its header (−32020), not a legacy one.
            None if body_names_modern_version(body) => Era::Modern,
            None => Era::Legacy,
            Some(v) if LEGACY_VERSIONS.contains(&v) => Era::Legacy,
            Some(_) => Era::Modern,
        };
        if let Some(body) = self.resumed(era, method, headers) {
            return HttpReply::sse(body);
        }
        if method != "POST" {
            return self.not_post(era, method, headers);
        }
        if let Some(refusal) = self.refused_post(era, headers, body) {
            return refusal;
        }
        let message = match Message::parse(body) {
            Ok(m) => m,
            // −32700 for bad JSON, −32600 for JSON that is not one request.
            Err(_) if self.fault() == Some(Fault::HttpMalformed500) => {
                return HttpReply::rpc_error(500, codes::INTERNAL_ERROR, "Internal error")
            }
            Err(_) if self.fault() == Some(Fault::HttpMalformedPage) => {
                return HttpReply::html_error_page(400)
            }
            Err(e) => return HttpReply::json(400, &e.to_response()),
        };
        let response = matches!(message, Message::Response { .. });
        if response && self.fault() == Some(Fault::HttpResponseAnswered) {
            return HttpReply::json(200, &json!({"jsonrpc": "2.0", "id": null, "result": {}}));
        }
        match era {
            Era::Modern => self.modern(version, headers, message, logs),
            Era::Legacy => self.legacy(headers, message, logs),
        }
    }

    /// A foreign `Origin` (403) or a `Host` not allowed (421): the DNS
    /// rebinding defence, before anything else is read.
    fn refused_origin(&self, headers: &[(String, String)]) -> Option<HttpReply> {
        if let Some(origin) = header(headers, "origin") {
            if !is_loopback_origin(origin) && self.fault() != Some(Fault::HttpOriginUnchecked) {
                return Some(HttpReply::text(403, "Forbidden: Origin not allowed"));
            }
        }
        let host = header(headers, "host")?;
        let allowed = &self.config.allowed_hosts;
        (!allowed.is_empty() && !allowed.iter().any(|h| h.eq_ignore_ascii_case(host)))
            .then(|| HttpReply::text(421, "Misdirected Request: Host not allowed"))
    }

    /// A request that is not a POST: a 2025-11-25 DELETE ends its session;
    /// every other is 405 with `Allow` (unless a fault serves a GET).
    fn not_post(&self, era: Era, method: &str, headers: &[(String, String)]) -> HttpReply {
        match (era, method) {
            (Era::Legacy, "DELETE") => {
                match self.touch_session(header(headers, "mcp-session-id")) {
                    None => HttpReply::rpc_error(
                        400,
                        codes::INVALID_REQUEST,
                        "Bad Request: Mcp-Session-Id header is required",
                    ),
                    Some(false) => {
                        HttpReply::rpc_error(404, codes::INVALID_REQUEST, "Session not found")
                    }
                    Some(true) => {
                        let id = header(headers, "mcp-session-id").unwrap_or_default();
                        self.sessions.lock().unwrap().remove(id);
                        self.streams.forget(id);
                        HttpReply::empty(200)
                    }
                }
            }
            (Era::Legacy, "GET")
                if matches!(
                    self.fault(),
                    Some(Fault::GetStreamResponse | Fault::StreamBroadcast)
                ) && self.touch_session(header(headers, "mcp-session-id")) == Some(true) =>
            {
                let stray = if self.fault() == Some(Fault::StreamBroadcast) {
                    broadcast_notice()
                } else {
                    json!({"jsonrpc": "2.0", "id": 0, "result": {}})
                };
                HttpReply {
                    status: 200,
                    headers: vec![
                        ("Content-Type".into(), "text/event-stream".into()),
                        ("Cache-Control".into(), "no-cache".into()),
                    ],
                    body: format!("event: message\ndata: {stray}\n\n").into_bytes(),
                }
            }
            (_, "GET" | "DELETE") if self.fault() == Some(Fault::HttpGetOk) => {
                HttpReply::json(200, &json!({}))
            }
            _ => {
                let mut r = HttpReply::rpc_error(405, codes::INVALID_REQUEST, "Method Not Allowed");
                let allow = if era == Era::Legacy {
                    "POST, DELETE"
                } else {
                    "POST"
                };
                r.headers.push(("Allow".into(), allow.into()));
                r
            }
        }
    }

    /// A POST refused on its headers or size before its body is read: a
    /// resources request under `post-split` (404, the fault's own), a body
    /// too large (413), an `Accept` without both types (406), a
    /// `Content-Type` other than JSON (415).
    fn refused_post(
        &self,
        era: Era,
        headers: &[(String, String)],
        body: &[u8],
    ) -> Option<HttpReply> {
        if era == Era::Modern
            && self.fault() == Some(Fault::PostSplit)
            && header(headers, "mcp-method").is_some_and(|m| m.starts_with("resources/"))
        {
            // As a server that routes resources to an endpoint of their own.
            return Some(HttpReply::empty(404));
        }
        if body.len() > self.config.max_body {
            return Some(HttpReply::rpc_error(
                413,
                codes::INVALID_REQUEST,
                "Payload Too Large",
            ));
        }
        let accept = header(headers, "accept").unwrap_or("");
        if !(accepts(accept, "application/json") && accepts(accept, "text/event-stream"))
            && self.fault() != Some(Fault::HttpAcceptUnchecked)
        {
            return Some(HttpReply::rpc_error(
                406,
                codes::INVALID_REQUEST,
                "Not Acceptable: Accept must include application/json and text/event-stream",
            ));
        }
        let content_type = header(headers, "content-type").unwrap_or("");
        let json = content_type
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .eq_ignore_ascii_case("application/json");
        (!json).then(|| {
            HttpReply::rpc_error(
                415,
                codes::INVALID_REQUEST,
                "Unsupported Media Type: Content-Type must be application/json",
            )
        })
    }

    fn legacy(
        &self,
        headers: &[(String, String)],
        message: Message,
        logs: &mut Vec<LogRecord>,
    ) -> HttpReply {
        let is_initialize = matches!(&message, Message::Request(r) if r.method == "initialize");
        let method = match &message {
            Message::Request(r) => r.method.clone(),
            _ => String::new(),
        };
        let mut minted = None;
        if is_initialize && self.fault() == Some(Fault::InitializeRefusedUnnamed) {
            // A modern-only server that says nothing of the versions it speaks.
            return HttpReply::rpc_error(400, codes::METHOD_NOT_FOUND, "Method not found");
        }
        if is_initialize {
            match self.mint_session() {
                Some(id) => minted = Some(id),
                None => {
                    return HttpReply::rpc_error(503, codes::INTERNAL_ERROR, "Too many sessions")
                }
            }
        } else if self.fault() != Some(Fault::HttpSessionUnchecked) {
            match self.touch_session(header(headers, "mcp-session-id")) {
                None => {
                    return HttpReply::rpc_error(
                        400,
                        codes::INVALID_REQUEST,
                        "Bad Request: Mcp-Session-Id header is required",
                    )
                }
                Some(false) => {
                    return HttpReply::rpc_error(404, codes::INVALID_REQUEST, "Session not found")
                }
                Some(true) => {}
            }
        }
        if let Message::Notification { .. } = message {
            let mut session = Session::pinned(Era::Legacy);
            logs.extend(session.handle(&self.handler, message).logs);
            return if self.fault() == Some(Fault::HttpNotificationBody) {
                HttpReply::json(200, &json!({"jsonrpc": "2.0", "id": null, "result": {}}))
            } else {
                HttpReply::empty(202)
            };
        }
        let mut session = Session::pinned(Era::Legacy);
        let mut outcome = session.handle(&self.handler, message);
        logs.append(&mut outcome.logs);
        if self.fault() == Some(Fault::StreamBroadcast) && !is_initialize {
            outcome.notifications.insert(0, broadcast_notice());
        }
        let mut reply = self.reply_outcome(outcome, Some(200), &method);
        let session = minted.as_deref().or(header(headers, "mcp-session-id"));
        if let (Some(session), true) = (session, reply.is_sse()) {
            reply.body = self
                .streams
                .record(session, std::mem::take(&mut reply.body));
        }
        if let Some(id) = minted {
            reply.headers.push(("Mcp-Session-Id".into(), id));
        }
        reply
    }

    /// 2025-11-25: the body of the stream a GET with `Last-Event-ID`
    /// resumes in its (live) session, if that id names one of its streams.
    fn resumed(&self, era: Era, method: &str, headers: &[(String, String)]) -> Option<Vec<u8>> {
        let last = header(headers, "last-event-id")?;
        if era != Era::Legacy || method != "GET" {
            return None;
        }
        let session = header(headers, "mcp-session-id")?;
        if self.touch_session(Some(session)) != Some(true) {
            return None;
        }
        self.streams.resume(session, last, self.fault())
    }
}

/// Under `stream-broadcast`: the notice a 2025-11-25 session sends on every
/// stream it has, instead of on one.
fn broadcast_notice() -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/message",
        "params": {"level": "info", "logger": "bookshop", "data": "the shop is open"}})
}

#[cfg(test)]
mod tests {
    use super::accepts;

    #[test]
    fn accept_matching() {
        assert!(accepts(
            "application/json, text/event-stream",
            "text/event-stream"
        ));
        assert!(accepts(
            "Application/JSON, Text/Event-Stream",
            "application/json"
        ));
        assert!(accepts("*/*", "text/event-stream"));
        assert!(accepts("application/*;q=0.5", "application/json"));
        assert!(!accepts(
            "application/json;q=0, text/event-stream",
            "application/json"
        ));
        assert!(!accepts("application/json", "text/event-stream"));
    }
}
