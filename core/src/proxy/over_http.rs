//! The observer over Streamable HTTP: each POST the host sends is its own
//! channel, answered in its own HTTP response (one JSON body, or an SSE
//! stream of messages), so a request's fate is known when that response
//! ends: answered, refused at the HTTP level, cut, or left by the host.

use std::time::Instant;

use super::{Observer, Sent};
use mcperr_wire::exchange::{Ending, Exchange, HttpAnswer, NoResponse, Stray};

/// How one HTTP response (a channel) ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChannelEnd {
    /// The server sent the whole response.
    Complete,
    /// The connection to the server broke before the response was whole
    /// (the server went away), and how.
    Broken(String),
    /// The host went away first (a client may drop a stream: that is not
    /// a cancellation, and says nothing of the server).
    Abandoned,
}

impl Observer {
    /// Judges as over Streamable HTTP, where the HTTP status of each answer
    /// is judged too (H3).
    pub fn over_http(mut self) -> Observer {
        self.judge.over_http = true;
        self
    }

    /// The whole JSON body of the HTTP response on `channel` (`answer` with
    /// its status, headers and body): its messages are judged, then the
    /// channel ends.
    pub fn http_body(&mut self, channel: u64, mut answer: HttpAnswer, now: Instant) {
        answer.read_json_body();
        let messages = std::mem::take(&mut answer.messages);
        for repeated in std::mem::take(&mut answer.repeated) {
            self.record_stray(repeated);
        }
        if let Some(problem) = answer.problem.clone() {
            self.problems.insert(channel, problem);
        }
        for v in messages {
            self.server_value(channel, v, Some(&answer), now);
        }
        self.end_channel(channel, &answer, ChannelEnd::Complete, now);
    }

    /// One SSE event of the response on `channel` (`answer`: its status and
    /// headers): a `message` event's data is a JSON-RPC message; other
    /// events are not MCP's.
    pub fn sse_event(
        &mut self,
        channel: u64,
        event: &str,
        data: &str,
        answer: &HttpAnswer,
        now: Instant,
    ) {
        if !(event.is_empty() || event == "message") {
            return;
        }
        let data = data.strip_suffix('\n').unwrap_or(data);
        // A priming event (an id and empty data) carries no message.
        if data.is_empty() {
            return;
        }
        match mcperr_wire::text::decode(data.as_bytes()) {
            Ok(v) => {
                if let Some(repeated) = Stray::repeated_names(data.as_bytes(), &v) {
                    self.record_stray(repeated);
                }
                self.server_value(channel, v, Some(answer), now)
            }
            Err(_) => {
                self.problems.insert(
                    channel,
                    format!("an SSE message event is not JSON: {data:?}"),
                );
            }
        }
    }

    /// The response on `channel` ended (`answer`: its status and headers):
    /// each request of that POST still unanswered is judged by how it
    /// ended. A status of 400 or more without the answer is the server
    /// refusing the input at the HTTP level ("If the server cannot accept
    /// the input, it MUST return an HTTP error status code", Streamable
    /// HTTP): counted, not judged, as the proxy cannot know the input was
    /// acceptable.
    pub fn end_channel(
        &mut self,
        channel: u64,
        answer: &HttpAnswer,
        end: ChannelEnd,
        now: Instant,
    ) {
        let problem = self.problems.remove(&channel);
        let mut left: Vec<Sent> = self
            .pending
            .extract_if(|(c, _), _| *c == channel)
            .map(|(_, sent)| sent)
            .collect();
        left.sort_by_key(|s| s.seq);
        for sent in left {
            let ending = match &end {
                ChannelEnd::Abandoned => {
                    self.seen.unanswered += 1;
                    continue;
                }
                ChannelEnd::Complete if answer.status >= 400 => {
                    self.seen.rejected += 1;
                    continue;
                }
                ChannelEnd::Complete => Ending::Empty {
                    status: answer.status,
                    why: match problem.clone() {
                        Some(why) => NoResponse::Unreadable {
                            why,
                            sse: answer.sse,
                        },
                        None if answer.sse => NoResponse::SseEndedEarly,
                        None => NoResponse::EmptyBody,
                    },
                },
                ChannelEnd::Broken(how) => Ending::Died(how.clone()),
            };
            let exchange = Exchange {
                request: sent.msg.clone(),
                ending,
                strays: vec![],
                duration: now.saturating_duration_since(sent.at),
                http: Some(answer.clone()),
            };
            self.judge_exchange(&sent.msg, &exchange, false);
        }
    }
}
