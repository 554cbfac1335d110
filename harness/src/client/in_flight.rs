//! Requests left in flight over stdio (a case's cancellation, a
//! subscription): sent without waiting, watched for what comes about them,
//! and their late answers kept for whoever asks.

use std::time::{Duration, Instant};

use mcperr_cases::plan::Message;
use mcperr_protocol::Era;
use mcperr_wire::exchange::{push_stray, Stray};
use serde_json::Value;

use crate::transport::StdoutEvent;

use super::lines::stray_of;
use super::{Client, Conn};

impl Client {
    /// Sends a request and leaves it in flight (a line transport only): it
    /// is not awaited, so that the steps after it (a cancellation) reach the
    /// server while it works. Waits up to `first` for a first sign of work
    /// (a progress notification for its token, which is dropped; a
    /// subscription's first message, kept for the case); `Err`
    /// with the answer when it was answered before that (nothing left in
    /// flight to cancel). Everything else that arrives goes to the next
    /// judged case.
    pub async fn send_in_flight(&mut self, msg: &Message, first: Duration) -> Result<(), Value> {
        let Some(id) = &msg.id else {
            unreachable!("an in-flight step is a request, which has an id")
        };
        let want = id.to_value();
        let token = msg.token.clone();
        let Conn::Lines(conn) = &mut self.conn else {
            unreachable!("in-flight steps are planned over stdio only")
        };
        conn.send_line(&msg.bytes).await;
        self.ignore([want.to_string()]);
        let deadline = Instant::now() + first;
        while let Some(m) = self.next_message(deadline).await {
            if m.get("method").is_none() && m.get("id") == Some(&want) {
                return Err(m);
            }
            let progress =
                m.get("method").and_then(Value::as_str) == Some("notifications/progress");
            if progress
                && token.is_some()
                && mcperr_wire::exchange::progress_token(&m) == token.as_ref()
            {
                return Ok(());
            }
            // A subscription at work: its acknowledgment (or whatever it
            // sent first, which the case judges in order) carries its id.
            let streamed = mcperr_wire::exchange::subscription_id(&m) == Some(&want);
            self.keep_for_next_case(m);
            if streamed {
                return Ok(());
            }
        }
        Ok(())
    }

    /// Sends the era's probe (`ping`, `server/discover`) on a line
    /// transport and reads until its answer, up to the client's timeout.
    /// The answer proves the server has read every line sent before the
    /// probe (stdin is one ordered stream). What came meanwhile about
    /// in-flight request `id` (see [`about_in_flight`]) is returned; the
    /// server may have written it before it read those lines. `Err` with
    /// the same when the probe was not answered.
    pub async fn read_barrier(
        &mut self,
        id: &Value,
        token: Option<&Value>,
    ) -> Result<Vec<Value>, Vec<Value>> {
        let probe_id = self.fresh_id();
        let (method, envelope) = match self.era {
            Era::Legacy => ("ping", false),
            Era::Modern => ("server/discover", true),
        };
        let msg = Message::request(self.era, &probe_id, method, None, envelope);
        let Conn::Lines(conn) = &mut self.conn else {
            unreachable!("in-flight steps are planned over stdio only")
        };
        conn.send_line(&msg.bytes).await;
        let want = probe_id.to_value();
        let deadline = Instant::now() + self.timeout;
        let mut before = Vec::new();
        while let Some(m) = self.next_message(deadline).await {
            if m.get("method").is_none() && m.get("id") == Some(&want) {
                // A second answer to it is a duplicate, never the answer
                // to the next case's request.
                self.remember_answered(want);
                return Ok(before);
            }
            if about_in_flight(&m, id, token) {
                before.push(m);
            } else {
                self.keep_for_next_case(m);
            }
        }
        // Its answer may still come: a late answer, not a stray.
        self.ignore([want.to_string()]);
        Err(before)
    }

    /// The answer to in-flight request `id` that came while other requests
    /// were awaited, if one did.
    pub fn late_answer(&self, id: &Value) -> Option<Value> {
        self.late_seen.get(&id.to_string()).cloned()
    }

    /// Keeps `answer` as in-flight request `id`'s, for [`Client::late_answer`].
    pub fn note_late_answer(&mut self, id: &Value, answer: Value) {
        self.late_seen.insert(id.to_string(), answer);
    }

    /// Watches until `until` for messages about in-flight request `id` (its
    /// answer, progress for `token`), returning them in order; everything
    /// else goes to the next judged case. The watch ends sooner once what
    /// it watches for is known (`ends`).
    pub async fn watch_in_flight(
        &mut self,
        id: &Value,
        token: Option<&Value>,
        until: Instant,
        ends: WatchEnds,
    ) -> Vec<Value> {
        let mut about = Vec::new();
        let mut answered = ends.answered;
        loop {
            if answered && (!ends.and_cancelled || self.server_cancelled(id)) {
                break;
            }
            let Some(m) = self.next_message(until).await else {
                break;
            };
            if about_in_flight(&m, id, token) {
                answered |= m.get("method").is_none();
                about.push(m);
            } else {
                self.keep_for_next_case(m);
            }
        }
        // Its answer, if it comes later still, is not a stray.
        self.late_seen.remove(&id.to_string());
        about
    }

    /// The next JSON message on a line transport before `deadline` (lines
    /// that are not one are kept as strays), or `None`.
    pub(super) async fn next_message(&mut self, deadline: Instant) -> Option<Value> {
        loop {
            let now = Instant::now();
            let Conn::Lines(conn) = &mut self.conn else {
                return None;
            };
            if now >= deadline {
                return None;
            }
            match conn.next_event(deadline - now).await? {
                StdoutEvent::Eof => return None,
                StdoutEvent::Line(l) => match mcperr_wire::text::decode(&l) {
                    Ok(v @ Value::Object(_)) => return Some(v),
                    _ => {
                        let stray = stray_of(
                            StdoutEvent::Line(l),
                            &self.answered,
                            &self.ignored,
                            &mut self.late_seen,
                        );
                        self.requeue(stray.into_iter().collect());
                    }
                },
                other => {
                    let stray = stray_of(other, &self.answered, &self.ignored, &mut self.late_seen);
                    self.requeue(stray.into_iter().collect());
                }
            }
        }
    }

    /// Keeps `id` among the recently answered ids, so that a second answer
    /// to it is told as a duplicate.
    pub(super) fn remember_answered(&mut self, id: Value) {
        self.answered.push_back(id);
        if self.answered.len() > 256 {
            self.answered.pop_front();
        }
    }

    /// Whether a `notifications/cancelled` naming request `id` arrived and
    /// waits for the next case.
    pub fn server_cancelled(&self, id: &Value) -> bool {
        self.pending.iter().any(
            |s| matches!(s, Stray::ServerCancel(m) if m.pointer("/params/requestId") == Some(id)),
        )
    }

    /// Keeps a message that arrived outside any exchange for the next case.
    pub(super) fn keep_for_next_case(&mut self, m: Value) {
        let Some(line) = serde_json::to_vec(&m).ok() else {
            return;
        };
        let stray = stray_of(
            StdoutEvent::Line(line),
            &self.answered,
            &self.ignored,
            &mut self.late_seen,
        );
        self.requeue(stray.into_iter().collect());
    }

    /// Waits up to `grace` for the late answer to `id` (a request that timed
    /// out), keeping whatever else arrives for the next judged case: the
    /// answer, if it came (the server is slow, not leaving it unanswered).
    pub async fn await_late(&mut self, id: &Value, grace: Duration) -> Option<Value> {
        let key = id.to_string();
        let deadline = Instant::now() + grace;
        loop {
            if let Some(v) = self.late_seen.get(&key) {
                return Some(v.clone());
            }
            let now = Instant::now();
            let Conn::Lines(conn) = &mut self.conn else {
                return None;
            };
            if now >= deadline {
                return None;
            }
            let event = match conn.next_event(deadline - now).await {
                None | Some(StdoutEvent::Eof) => return None,
                Some(e) => e,
            };
            let stray = stray_of(event, &self.answered, &self.ignored, &mut self.late_seen);
            if let Some(s) = stray {
                push_stray(&mut self.pending, s);
            }
        }
    }
}

/// When a watch of a request in flight may end before its bound: its
/// answer has come (`answered`: before the watch), and, with
/// `and_cancelled`, a `notifications/cancelled` naming it too (a
/// subscription the server ends sends both). After that nothing more can
/// come about it that the case does not know already.
#[derive(Debug, Clone, Copy, Default)]
pub struct WatchEnds {
    /// Its answer came before the watch.
    pub answered: bool,
    /// The answer alone does not end the watch: the server's
    /// `notifications/cancelled` naming the request must have come too.
    pub and_cancelled: bool,
}

/// Whether `m` is about in-flight request `id`: its answer, or progress
/// for its `token`.
pub(super) fn about_in_flight(m: &Value, id: &Value, token: Option<&Value>) -> bool {
    let answer = m.get("method").is_none() && m.get("id") == Some(id);
    let progress = m.get("method").and_then(Value::as_str) == Some("notifications/progress")
        && token.is_some()
        && mcperr_wire::exchange::progress_token(m) == token;
    // A subscriptions/listen in flight: its stream's notifications.
    let streamed =
        m.get("method").is_some() && mcperr_wire::exchange::subscription_id(m) == Some(id);
    answer || progress || streamed
}
