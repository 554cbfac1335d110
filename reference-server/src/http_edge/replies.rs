//! The HTTP form of a handled request: one JSON body, or an SSE stream of
//! the notifications for the client and then the response, with the status
//! each era gives it, and the stream faults that bend it.

use mcperr_protocol::codes;
use serde_json::{json, Value};

use crate::faults::Fault;

use super::HttpEdge;
use crate::http_reply::HttpReply;

impl HttpEdge {
    /// The HTTP form of a handled request: [`HttpEdge::reply`], except that a
    /// request with notifications for the client (log messages, a slow call's
    /// progress) is an SSE stream of them and then its response. The body is one reply, so the
    /// steps are not paced here (nor cancellable: that needs a stream the
    /// client can close).
    pub(super) fn reply_outcome(
        &self,
        outcome: crate::session::Outcome,
        status: Option<u16>,
        method: &str,
    ) -> HttpReply {
        let Some(response) = &outcome.response else {
            return self.reply(outcome.response, status, method);
        };
        let paced = outcome.steps > 0 && outcome.progress_token.is_some();
        if !paced && outcome.notifications.is_empty() {
            return self.reply(outcome.response, status, method);
        }
        let steps = if paced { outcome.steps } else { 0 };
        let token = outcome.progress_token.as_ref().filter(|_| paced);
        let mut messages = outcome.notifications.clone();
        messages.extend(crate::work::at_once(
            response.clone(),
            token,
            steps,
            self.fault(),
        ));
        let mut body = String::from(": mcperr reference\n\n");
        for m in &messages {
            body.push_str(&format!("event: message\ndata: {m}\n\n"));
        }
        HttpReply {
            status: status_for(response, status),
            headers: vec![
                ("Content-Type".into(), "text/event-stream".into()),
                ("Cache-Control".into(), "no-cache".into()),
            ],
            body: body.into_bytes(),
        }
    }

    /// The HTTP form of a JSON-RPC response. `status`: a fixed status (legacy),
    /// or `None` for the modern mapping (−32602 → 400, −32601 → 404, else 200).
    pub(super) fn reply(
        &self,
        response: Option<Value>,
        status: Option<u16>,
        method: &str,
    ) -> HttpReply {
        let mut reply = self.reply_utf8(response, status, method);
        if self.fault() == Some(Fault::Latin1Messages) {
            reply.body = crate::faults::as_latin1(&reply.body);
        }
        reply
    }

    pub(super) fn reply_utf8(
        &self,
        response: Option<Value>,
        status: Option<u16>,
        method: &str,
    ) -> HttpReply {
        let Some(response) = response else {
            // The silent-tool fault: the request is accepted and never answered.
            return HttpReply::empty(202);
        };
        let mut status = status_for(&response, status);
        let missing = response
            .pointer("/error/code")
            .and_then(mcperr_protocol::codes::Code::of)
            == Some(codes::MISSING_CLIENT_CAPABILITY);
        if missing && self.fault() == Some(Fault::MissingCapability200) {
            status = 200;
        }
        let truncated = self.fault() == Some(Fault::HttpSseTruncated) && method == "tools/call";
        let lingers = self.fault() == Some(Fault::SseAfterResponse) && method == "tools/call";
        let foreign = self.fault() == Some(Fault::SseForeignProgress) && method == "tools/call";
        // A client that polls with tasks/get wants no stream: "Where possible,
        // servers SHOULD NOT upgrade to an SSE stream in response to a
        // tasks/get request" (2025-11-25 basic/utilities/tasks).
        let sse = match method {
            "tasks/get" => self.fault() == Some(Fault::TaskGetSse),
            _ => self.config.sse,
        };
        if sse || truncated || lingers || foreign {
            let data = serde_json::to_string(&response).expect("responses serialize");
            let mut body = if truncated {
                ": the stream ends before the response\n\n".to_string()
            } else {
                format!(": mcperr reference\n\nevent: message\ndata: {data}\n\n")
            };
            if foreign {
                // Progress of a request the client never sent, before the response.
                let other = json!({"jsonrpc": "2.0", "method": "notifications/progress",
                    "params": {"progressToken": "reference-other-request", "progress": 1}});
                body.insert_str(0, &format!("event: message\ndata: {other}\n\n"));
            }
            if lingers {
                // An event of another type: the stream goes on after the response.
                body.push_str("event: ping\ndata: {}\n\n");
            }
            return HttpReply {
                status,
                headers: vec![
                    ("Content-Type".into(), "text/event-stream".into()),
                    ("Cache-Control".into(), "no-cache".into()),
                ],
                body: crate::mrtr::as_written(body.into_bytes(), self.fault()),
            };
        }
        let mut reply = HttpReply::json(status, &response);
        reply.body = crate::mrtr::as_written(reply.body, self.fault());
        reply
    }
}

/// The status of a JSON-RPC response: `fixed` (legacy), or the modern
/// mapping (−32602 → 400, −32601 → 404, else 200).
pub(super) fn status_for(response: &Value, fixed: Option<u16>) -> u16 {
    fixed.unwrap_or_else(|| {
        match response
            .pointer("/error/code")
            .and_then(mcperr_protocol::codes::Code::of)
        {
            // basic/index#meta: "On HTTP, the response status MUST be 400".
            Some(codes::INVALID_PARAMS | codes::MISSING_CLIENT_CAPABILITY) => 400,
            Some(codes::METHOD_NOT_FOUND) => 404,
            _ => 200,
        }
    })
}
