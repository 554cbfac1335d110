//! 2026-07-28 over HTTP: a stateless request, its headers checked against
//! its body (the protocol version, the method and name mirrored, the
//! `Mcp-Param` headers), then handled with no session.

use mcperr_protocol::era::META_PROTOCOL_VERSION;
use mcperr_protocol::headers::decode_header_value;
use mcperr_protocol::jsonrpc::Message;
use mcperr_protocol::{codes, Era, ErrorObject};
use serde_json::{json, Value};

use crate::faults::Fault;
use crate::http_reply::header;
use crate::log::LogRecord;
use crate::session::Session;

use super::HttpEdge;
use crate::http_reply::HttpReply;

impl HttpEdge {
    pub(super) fn modern(
        &self,
        version: Option<&str>,
        headers: &[(String, String)],
        message: Message,
        logs: &mut Vec<LogRecord>,
    ) -> HttpReply {
        let (method, params, id) = match &message {
            Message::Request(r) => (r.method.clone(), r.params.clone(), r.id.to_value()),
            Message::Notification { method, params } => {
                (method.clone(), params.clone(), Value::Null)
            }
            Message::Response { .. } => {
                return HttpReply::rpc_error(
                    400,
                    codes::INVALID_REQUEST,
                    "Invalid request: a response is not a request",
                )
            }
        };
        if self.fault() == Some(Fault::LastEventIdRefused)
            && header(headers, "last-event-id").is_some()
        {
            return HttpReply::rpc_error(400, codes::INVALID_REQUEST, "Streams are not resumable");
        }
        // Headers are checked for notifications too (SEP-2243 sends them on every POST);
        // the body was read, so a rejection can name the request's id.
        let mismatch = |what: String| {
            HttpReply::json(
                400,
                &json!({"jsonrpc": "2.0", "id": id, "error": {"code": codes::HEADER_MISMATCH, "message": what}}),
            )
        };
        if self.fault() == Some(Fault::HttpHeadersUnchecked) {
            return self.modern_checked(
                version.unwrap_or(Era::Modern.version()),
                id,
                &method,
                message,
                logs,
            );
        }
        let Some(version) = version else {
            return mismatch("Header mismatch: MCP-Protocol-Version header is required".into());
        };
        match header(headers, "mcp-method") {
            Some(m) if m == method => {}
            Some(m) => {
                return mismatch(format!(
                    "Header mismatch: Mcp-Method {m:?} does not match the body's method {method:?}"
                ))
            }
            None => return mismatch("Header mismatch: Mcp-Method header is required".into()),
        }
        let name = match method.as_str() {
            "tools/call" | "prompts/get" => params
                .as_ref()
                .and_then(|p| p.get("name"))
                .and_then(Value::as_str),
            "resources/read" => params
                .as_ref()
                .and_then(|p| p.get("uri"))
                .and_then(Value::as_str),
            _ => None,
        };
        if let Some(name) = name {
            match header(headers, "mcp-name").map(|raw| (raw, decode_header_value(raw))) {
                Some((_, Some(n))) if n == name => {}
                Some((raw, Some(_))) => {
                    return mismatch(format!(
                        "Header mismatch: Mcp-Name {raw:?} does not match the body's {name:?}"
                    ))
                }
                Some((raw, None)) => {
                    return mismatch(format!(
                        "Header mismatch: Mcp-Name {raw:?} is not valid =?base64?…?= text"
                    ))
                }
                None => {
                    return mismatch(format!(
                        "Header mismatch: Mcp-Name header is required for {method}"
                    ))
                }
            }
        }
        if method == "tools/call" {
            if let Some(why) =
                crate::param_headers::for_call(params.as_ref(), headers, self.fault())
            {
                return mismatch(why);
            }
        }
        let body_version = params
            .as_ref()
            .and_then(|p| {
                p.pointer(&format!(
                    "/_meta/{}",
                    META_PROTOCOL_VERSION.replace('/', "~1")
                ))
            })
            .and_then(Value::as_str);
        if let Some(body_version) = body_version.filter(|b| *b != version) {
            return mismatch(format!(
                "Header mismatch: MCP-Protocol-Version {version:?} does not match the body's {body_version:?}"
            ));
        }
        self.modern_checked(version, id, &method, message, logs)
    }

    /// A modern request whose headers agree with its body: the version is
    /// checked, then notifications are accepted and requests answered.
    pub(super) fn modern_checked(
        &self,
        version: &str,
        id: Value,
        method: &str,
        message: Message,
        logs: &mut Vec<LogRecord>,
    ) -> HttpReply {
        if version != Era::Modern.version() && self.fault() != Some(Fault::HttpVersionUnchecked) {
            let error = ErrorObject::with_data(
                codes::UNSUPPORTED_PROTOCOL_VERSION,
                format!("Unsupported protocol version: {version}"),
                json!({"supported": [Era::Modern.version()], "requested": version}),
            );
            return HttpReply::json(
                400,
                &json!({"jsonrpc": "2.0", "id": id, "error": error.to_value()}),
            );
        }
        if let Message::Notification { .. } = message {
            return if self.fault() == Some(Fault::HttpNotificationBody) {
                HttpReply::json(200, &json!({"jsonrpc": "2.0", "id": null, "result": {}}))
            } else {
                HttpReply::empty(202)
            };
        }
        let mut session = Session::pinned(Era::Modern);
        let mut outcome = session.handle(&self.handler, message);
        logs.append(&mut outcome.logs);
        self.reply_outcome(outcome, None, method)
    }
}
