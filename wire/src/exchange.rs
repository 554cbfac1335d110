//! What one judged exchange with a server looked like: the request as sent,
//! how it ended, what else the server wrote, and the HTTP answer. The
//! executor (in the `mcperr` crate) fills these in; the oracle only reads them.

use std::time::Duration;

use serde_json::Value;

/// Something the server wrote that was not the awaited answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Stray {
    /// A stdout line that is not a JSON object (J5).
    NotJson(String),
    /// A stdout line longer than the cap (J5), with its length.
    TooLong(usize),
    /// A response whose id is `null`.
    NullIdResponse(Value),
    /// A response to a request that was already answered (J1: one response each).
    Duplicate(Value),
    /// A response whose id answers no request mcperr sent.
    Unsolicited(Value),
    /// A notification answered with something other than 202 and no body (J3).
    NotificationAnswered(Value),
    /// An unjudged request (a step, a probe, discovery) answered with
    /// another id, `null` included (J1).
    Misanswered(Value),
    /// A message whose bytes are not UTF-8 (J1 `utf8`), read with U+FFFD
    /// for each bad sequence (its start, shown).
    NotUtf8(String),
    /// A message written over this many stdout lines (J5
    /// `no-embedded-newlines`), with its start.
    Split(usize, String),
    /// A notification (a `notifications/…` method) that carries an id (J1
    /// `notification-no-id`).
    NotificationWithId(Value),
    /// A request of the server's own (a method and an id), which 2026-07-28
    /// forbids on stdout and on a response's SSE stream (J5 `no-requests`,
    /// H3 `sse-no-requests`).
    ServerRequest(Value),
    /// A log message (`notifications/message`) that came while the judged
    /// request was awaited: for it (U8), read for secrets (J7 `secret-in-log`).
    Log(Value),
    /// A log message that came outside the judged request's wait: judged
    /// for the capability and for secrets only (U8, J7).
    LogLate(Value),
    /// A `notifications/progress` that came while the judged request was
    /// awaited: its own progress when it names the request's token (U6
    /// judges the order), else a token of no request in flight.
    Progress(Value),
    /// A `notifications/progress` that came outside the judged request's
    /// wait: after its response, or around other requests (U6).
    ProgressLate(Value),
    /// A `notifications/cancelled` of the server's own (U7
    /// `server-sends-no-cancel`, unless it ends a subscription the case
    /// opened: U9).
    ServerCancel(Value),
    /// A request of the server's own whose id it already used for another
    /// in the session (J1 `server-request-id-unique`).
    ReusedRequestId(Value),
    /// A `notifications/tasks/status` (K1: judged for its `_meta`).
    TaskStatus(Value),
    /// A notification of a subscription (2026-07-28 `subscriptions/listen`):
    /// one carrying `io.modelcontextprotocol/subscriptionId`, an
    /// acknowledgment, a resource update or a list change (U9).
    Subscription(Value),
    /// More strays than are kept; this many were dropped.
    More(usize),
    /// A message whose `inputRequests` object names an input request more
    /// than once (its text shows it; the parsed message kept the last):
    /// the message and the names (M1 `input-request-keys-unique`).
    RepeatedNames(Value, Vec<String>),
}

impl Stray {
    /// The names `message`'s text `bytes` gives twice in its
    /// `inputRequests`, as a stray ([`crate::text::repeated_input_requests`]).
    /// Every message a transport reads comes here: only one whose parsed
    /// result has an `inputRequests` object is read again from its text.
    pub fn repeated_names(bytes: &[u8], message: &Value) -> Option<Stray> {
        message.pointer("/result/inputRequests")?.as_object()?;
        let names: Vec<String> = crate::text::repeated_input_requests(bytes)
            .into_iter()
            .map(|(_, name)| name)
            .collect();
        (!names.is_empty()).then(|| Stray::RepeatedNames(message.clone(), names))
    }

    /// What a message the server sent of its own (one with a `method`) is
    /// to judge: nothing for a notification without an id, else a stray.
    pub fn of_server_message(message: &Value) -> Option<Stray> {
        let method = message.get("method")?.as_str().unwrap_or_default();
        if message.get("id").is_none() {
            if subscription_id(message).is_some() || SUBSCRIPTION_METHODS.contains(&method) {
                return Some(Stray::Subscription(message.clone()));
            }
            return match method {
                "notifications/progress" => Some(Stray::Progress(message.clone())),
                "notifications/cancelled" => Some(Stray::ServerCancel(message.clone())),
                "notifications/tasks/status" => Some(Stray::TaskStatus(message.clone())),
                "notifications/message" => Some(Stray::Log(message.clone())),
                _ => None,
            };
        }
        Some(if method.starts_with("notifications/") {
            Stray::NotificationWithId(message.clone())
        } else {
            Stray::ServerRequest(message.clone())
        })
    }
}

impl Stray {
    /// The message a stray is, when it is one.
    pub fn message(&self) -> Option<&Value> {
        match self {
            Stray::NullIdResponse(v)
            | Stray::Duplicate(v)
            | Stray::Unsolicited(v)
            | Stray::NotificationAnswered(v)
            | Stray::Misanswered(v)
            | Stray::NotificationWithId(v)
            | Stray::ServerRequest(v)
            | Stray::Log(v)
            | Stray::LogLate(v)
            | Stray::Progress(v)
            | Stray::ProgressLate(v)
            | Stray::ServerCancel(v)
            | Stray::ReusedRequestId(v)
            | Stray::TaskStatus(v)
            | Stray::Subscription(v)
            | Stray::RepeatedNames(v, _) => Some(v),
            Stray::NotJson(_)
            | Stray::TooLong(_)
            | Stray::NotUtf8(_)
            | Stray::Split(..)
            | Stray::More(_) => None,
        }
    }

    /// This stray as seen outside the judged request's wait: a progress or
    /// log notification then is late ([`Stray::ProgressLate`], [`Stray::LogLate`]).
    pub fn outside(self) -> Stray {
        match self {
            Stray::Progress(v) => Stray::ProgressLate(v),
            Stray::Log(v) => Stray::LogLate(v),
            other => other,
        }
    }
}

/// The `_meta` key that names the subscription a notification belongs to.
pub const META_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// The notifications 2026-07-28 delivers on a `subscriptions/listen` stream
/// only (2025-11-25 sends them under its capabilities).
pub const SUBSCRIPTION_METHODS: [&str; 5] = [
    "notifications/subscriptions/acknowledged",
    "notifications/resources/updated",
    "notifications/resources/list_changed",
    "notifications/tools/list_changed",
    "notifications/prompts/list_changed",
];

/// The subscription id a message's `_meta` (params' or result's) names.
pub fn subscription_id(message: &Value) -> Option<&Value> {
    message
        .pointer("/params/_meta")
        .or_else(|| message.pointer("/result/_meta"))?
        .get(META_SUBSCRIPTION_ID)
}

/// The `progressToken` a request's `_meta` or a progress notification's
/// params carry.
pub fn progress_token(message: &Value) -> Option<&Value> {
    let params = message.get("params")?;
    params
        .pointer("/_meta/progressToken")
        .or_else(|| params.get("progressToken"))
}

/// Most strays kept per exchange; a flood is summarised, not stored.
pub const MAX_STRAYS: usize = 32;

/// Adds a stray, summarising past [`MAX_STRAYS`].
pub fn push_stray(strays: &mut Vec<Stray>, stray: Stray) {
    if strays.len() < MAX_STRAYS {
        strays.push(stray);
    } else if let Some(Stray::More(n)) = strays.last_mut() {
        *n += 1;
    } else {
        strays.push(Stray::More(1));
    }
}

/// Why an HTTP answer carried no JSON-RPC response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoResponse {
    /// The body was empty (a bare status).
    EmptyBody,
    /// The body could not be read as JSON-RPC messages, and why; `sse`: it
    /// was an event stream (H3's), else a JSON body (J1's).
    Unreadable {
        /// What was wrong.
        why: String,
        /// The body was an SSE stream.
        sse: bool,
    },
    /// An SSE stream ended without the response (H3).
    SseEndedEarly,
}

/// How an exchange ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Ending {
    /// A response with the request's id.
    Answered(Value),
    /// A response with another id (`null` included), taken as the answer:
    /// only one request is ever outstanding, so it can answer no other (J1).
    WrongId(Value),
    /// The transport answered without a JSON-RPC response, with the HTTP status.
    Empty {
        /// The HTTP status.
        status: u16,
        /// What was wrong with the body.
        why: NoResponse,
    },
    /// The case cannot be asked of this server (a legacy server without
    /// sessions, say), and why: a skip, not a verdict.
    NotApplicable(String),
    /// Nothing within the timeout: the server stopped answering (J4).
    Timeout,
    /// The answer came but outgrew the size cap (`--max-line`), so it was
    /// discarded unread and cannot be judged; its size in bytes, at least.
    TooLarge(usize),
    /// What the case needed before its request failed (a second session
    /// to delete, say), and why: an `error` under the case's own rule.
    SetupFailed(String),
    /// The server went away before an answer came (stdout closed, the
    /// connection refused), and how.
    Died(String),
}

/// One request and what came back.
#[derive(Debug, Clone, PartialEq)]
pub struct Exchange {
    /// The request as sent (`null` for a bodiless HTTP request, a string for a raw body).
    pub request: Value,
    /// How it ended.
    pub ending: Ending,
    /// Lines seen while waiting that were not the answer.
    pub strays: Vec<Stray>,
    /// Wall time.
    pub duration: Duration,
    /// The HTTP answer, over HTTP.
    pub http: Option<HttpAnswer>,
}

impl Exchange {
    /// The response, if one arrived (with the right id or not).
    pub fn response(&self) -> Option<&Value> {
        match &self.ending {
            Ending::Answered(v) | Ending::WrongId(v) => Some(v),
            _ => None,
        }
    }

    /// An exchange that ended as `ending` with nothing else seen: no strays,
    /// no time, no HTTP answer. One that never reached the server, or one
    /// message judged alone (a regression replayed, a unit test).
    pub fn bare(request: Value, ending: Ending) -> Exchange {
        Exchange {
            request,
            ending,
            strays: vec![],
            duration: Duration::ZERO,
            http: None,
        }
    }
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
    /// The body's bytes were not UTF-8: `body` holds them read with U+FFFD
    /// for each bad sequence (J1 `utf8`).
    pub not_utf8: bool,
    /// An SSE stream that went on after the awaited response (another
    /// event, or no end within a moment): H3 `sse-terminates`.
    pub open_after_response: bool,
    /// The last event ids the SSE stream's message events came with, in
    /// order and without repeats: what a client resumes the stream from
    /// with `Last-Event-ID`.
    pub event_ids: Vec<String>,
    /// Messages whose text repeats a name in `inputRequests`
    /// ([`Stray::RepeatedNames`]).
    pub repeated: Vec<Stray>,
}

impl HttpAnswer {
    /// The status and headers of an answer, its body not read yet, and
    /// whether they announce an SSE stream (where the HTTP transport starts
    /// reading, and what each message the proxy judges from it carries).
    pub fn head(status: u16, headers: Vec<(String, String)>) -> HttpAnswer {
        let mut answer = HttpAnswer {
            status,
            headers,
            ..Default::default()
        };
        answer.sse = answer
            .header("content-type")
            .is_some_and(|v| v.to_ascii_lowercase().starts_with("text/event-stream"));
        answer
    }

    /// A header value by (case-insensitive) name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Reads a complete body: JSON, SSE `message` events, or why neither.
    /// (The executor decodes SSE incrementally; this is for whole bodies.)
    pub fn read_json_body(&mut self) {
        if self.body.trim().is_empty() {
            return;
        }
        let content_type = self
            .header("content-type")
            .unwrap_or("")
            .to_ascii_lowercase();
        if content_type.starts_with("application/json") {
            match crate::text::decode(self.body.as_bytes()) {
                Ok(v) => {
                    self.repeated
                        .extend(Stray::repeated_names(self.body.as_bytes(), &v));
                    self.messages.push(v)
                }
                Err(e) => {
                    self.problem = Some(format!("the application/json body is not JSON ({e})"))
                }
            }
        } else if !content_type.starts_with("text/event-stream") && self.status < 300 {
            self.problem = Some(format!(
                "a {} answer with Content-Type {content_type:?}, not application/json or text/event-stream",
                self.status
            ));
        }
    }
}
