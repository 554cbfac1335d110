//! One request over a line transport (stdio, or the reference in process):
//! lines read until the answer with its id, every other line kept as a
//! stray, the server's own requests answered as the declared capabilities
//! invite (or held back for a case that holds them).

use std::time::Instant;

use mcperr_cases::plan::Message;
use mcperr_protocol::Id;
use mcperr_wire::exchange::{push_stray, Ending, Exchange, Stray};
use mcperr_wire::reassemble::{Read, Reassembler};
use serde_json::Value;

use crate::transport::StdoutEvent;

use super::{is_response, Client, Conn};

impl Client {
    pub(super) async fn line_exchange(
        &mut self,
        id: Id,
        msg: Message,
        null_id_is_stray: bool,
    ) -> Exchange {
        let Conn::Lines(conn) = &mut self.conn else {
            unreachable!("line_exchange on an HTTP client")
        };
        let start = Instant::now();
        let mut strays = Vec::new();
        conn.send_line(&msg.bytes).await;
        let deadline = start + self.timeout;
        let want = id.to_value();
        let answered = &self.answered;
        let mut seen_late = Vec::new();
        let mut reader = Reassembler::default();
        let ending = loop {
            // Checked first: a server that floods stdout must not outrun the timeout.
            let now = Instant::now();
            if now >= deadline {
                break Ending::Timeout;
            }
            match conn.next_event(deadline - now).await {
                None => break Ending::Timeout,
                Some(StdoutEvent::Eof) => break Ending::Died(String::new()),
                // An answer over the cap ends its request at once (its id read
                // from the line's ends), instead of leaving it to time out.
                Some(StdoutEvent::TooLong(o)) if o.id().as_ref() == Some(&want) => {
                    break Ending::TooLarge(o.len)
                }
                Some(StdoutEvent::TooLong(o)) => push_stray(&mut strays, Stray::TooLong(o.len)),
                Some(StdoutEvent::Line(line)) => {
                    if line.iter().all(u8::is_ascii_whitespace) {
                        continue;
                    }
                    let value = match reader.feed(&line) {
                        Read::Message(value, found) => {
                            found.into_iter().for_each(|s| push_stray(&mut strays, s));
                            value
                        }
                        Read::Strays(found) => {
                            found.into_iter().for_each(|s| push_stray(&mut strays, s));
                            continue;
                        }
                        Read::Held => continue,
                    };
                    if !is_response(&value) {
                        // A server-to-client request or notification: not an
                        // answer; judged only where it carries an id. A
                        // request for a capability the client declared is
                        // answered, so that the call waiting on it can end.
                        let reply = self
                            .declared
                            .as_ref()
                            .and_then(|d| mcperr_cases::capture::answer_server_request(d, &value));
                        match (reply, &mut self.held) {
                            (Some(reply), Some(held)) => held.push(reply),
                            (Some(reply), None) => {
                                conn.send_line(&mcperr_wire::text::line(&reply)).await
                            }
                            (None, _) => {}
                        }
                        if let Some(s) = Stray::of_server_message(&value) {
                            push_stray(&mut strays, s);
                        }
                        continue;
                    }
                    match value.get("id") {
                        Some(got) if *got == want => break Ending::Answered(value),
                        Some(got)
                            if !self.ignored.is_empty()
                                && self.ignored.contains(&got.to_string()) =>
                        {
                            seen_late.push((got.to_string(), value.clone()));
                        }
                        // One request in flight: an id-null error can only be its
                        // answer (J1 fails it at once, no need to wait out the timeout).
                        Some(Value::Null) | None
                            if !null_id_is_stray && value.get("error").is_some() =>
                        {
                            break Ending::WrongId(value)
                        }
                        Some(Value::Null) | None => {
                            push_stray(&mut strays, Stray::NullIdResponse(value))
                        }
                        Some(got) if answered.contains(got) => {
                            push_stray(&mut strays, Stray::Duplicate(value))
                        }
                        Some(_) => break Ending::WrongId(value),
                    }
                }
            }
        };
        reader
            .flush()
            .into_iter()
            .for_each(|s| push_stray(&mut strays, s));
        self.late_seen.extend(seen_late);
        if ending == Ending::Timeout {
            // Its answer may still come: a late answer, not a duplicate or an
            // unsolicited one (the caller may ask whether it came).
            self.ignore([want.to_string()]);
        } else {
            self.remember_answered(want);
        }
        let ending = match ending {
            Ending::Died(_) => Ending::Died(self.death().await),
            other => other,
        };
        Exchange {
            request: msg.body,
            ending,
            strays,
            duration: start.elapsed(),
            http: None,
        }
    }
}

/// What stdout output that arrived outside a judged exchange is: nothing (a
/// blank line, a server-to-client message, or the late answer to an ignored
/// id, noted in `late_seen`) or a stray to judge.
pub(super) fn stray_of(
    event: StdoutEvent,
    answered: &std::collections::VecDeque<Value>,
    ignored: &std::collections::HashSet<String>,
    late_seen: &mut std::collections::HashMap<String, Value>,
) -> Option<Stray> {
    match event {
        StdoutEvent::Line(l) if l.iter().all(u8::is_ascii_whitespace) => None,
        StdoutEvent::Line(l) => match mcperr_wire::text::decode(&l) {
            // Between exchanges: a progress notification now is late.
            Ok(v @ Value::Object(_)) if v.get("method").is_some() => {
                Stray::of_server_message(&v).map(Stray::outside)
            }
            Ok(Value::Object(o))
                if o.get("id")
                    .is_some_and(|i| ignored.contains(&i.to_string())) =>
            {
                late_seen.insert(o["id"].to_string(), Value::Object(o));
                None
            }
            Ok(v @ Value::Object(_)) => Some(match v.get("id") {
                None | Some(Value::Null) => Stray::NullIdResponse(v),
                Some(id) if answered.contains(id) => Stray::Duplicate(v),
                Some(_) => Stray::Unsolicited(v),
            }),
            _ => Some(Stray::NotJson(String::from_utf8_lossy(&l).into_owned())),
        },
        StdoutEvent::TooLong(o) => Some(Stray::TooLong(o.len)),
        StdoutEvent::Eof => None,
    }
}
