//! One HTTP request whose answer is judged: the answer read (JSON or an SSE
//! stream), the session id an `initialize` was given kept, and everything
//! that was not the awaited response kept as strays.

use std::time::Instant;

use mcperr_protocol::Id;
use mcperr_wire::exchange::{Ending, Exchange, HttpAnswer, NoResponse, Stray};
use serde_json::Value;

use crate::transport::http::{HeaderOverrides, HttpFailure};

use super::{ending_value, is_response, Client, Conn};

impl Client {
    /// One HTTP request whose answer is judged. `id` is the JSON-RPC id the
    /// answer must carry (`None` for raw bodies and notifications).
    pub async fn http_exchange(
        &mut self,
        id: Option<Id>,
        request: Value,
        method: &str,
        headers: Vec<(String, String)>,
        overrides: &HeaderOverrides,
        body: Option<Vec<u8>>,
    ) -> Exchange {
        let start = Instant::now();
        let Conn::Http(http) = &mut self.conn else {
            unreachable!("http_exchange on a line client")
        };
        let want = id.as_ref().map(Id::to_value);
        let sent = http
            .send(method, headers, overrides, want.as_ref(), body)
            .await;
        let mut strays = std::mem::take(&mut self.pending);
        let (ending, answer) = match sent {
            Err(HttpFailure::Timeout) => (Ending::Timeout, None),
            Err(HttpFailure::TooLarge(cap)) => (Ending::TooLarge(cap), None),
            Err(e) => (Ending::Died(format!("the HTTP request failed: {e}")), None),
            Ok(answer) => {
                if request.get("method").and_then(Value::as_str) == Some("initialize") {
                    if let Some(s) = answer.header("mcp-session-id") {
                        http.session = Some(s.to_string());
                    }
                }
                if answer.not_utf8 {
                    let start: String = answer.body.chars().take(120).collect();
                    strays.push(Stray::NotUtf8(start));
                }
                strays.extend(answer.repeated.iter().cloned());
                let ending = http_ending(&answer, want.as_ref());
                let mut answered = false;
                for other in &answer.messages {
                    if !is_response(other) {
                        // What follows the response on its stream is late.
                        let stray = Stray::of_server_message(other);
                        strays.extend(stray.map(|s| if answered { s.outside() } else { s }));
                    } else if Some(other) != ending_value(&ending) {
                        strays.push(Stray::NullIdResponse(other.clone()));
                    } else {
                        answered = true;
                    }
                }
                (ending, Some(answer))
            }
        };
        Exchange {
            request,
            ending,
            strays,
            duration: start.elapsed(),
            http: answer,
        }
    }
}

/// How an HTTP answer ends an exchange that awaits `want`.
pub(super) fn http_ending(answer: &HttpAnswer, want: Option<&Value>) -> Ending {
    let responses: Vec<&Value> = answer.messages.iter().filter(|m| is_response(m)).collect();
    if let Some(r) = responses
        .iter()
        .find(|r| want.is_some() && r.get("id") == want)
    {
        return Ending::Answered((*r).clone());
    }
    if let Some(r) = responses
        .iter()
        .find(|r| r.get("id").is_some_and(|i| !i.is_null()))
    {
        return Ending::WrongId((*r).clone());
    }
    if let Some(r) = responses.first() {
        // An error with id null: the answer to a request the server could
        // not read (or rejected before reading, over HTTP).
        return Ending::Answered((*r).clone());
    }
    let why = if let Some(p) = &answer.problem {
        NoResponse::Unreadable {
            why: p.clone(),
            sse: answer.sse,
        }
    } else if answer.sse && !answer.body.trim().is_empty() {
        NoResponse::SseEndedEarly
    } else {
        NoResponse::EmptyBody
    };
    Ending::Empty {
        status: answer.status,
        why,
    }
}
