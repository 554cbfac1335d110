//! The MCP client side: one request at a time, answers matched by id,
//! everything else the server wrote kept as strays for the oracle. The
//! executor of a [`CasePlan`] lives in [`crate::execute`]; this module only
//! sends and collects.

use std::time::{Duration, Instant};

use mcperr_core::exchange::{push_stray, Ending, Exchange, HttpAnswer, NoResponse, Stray};
use mcperr_core::plan;
use mcperr_core::reassemble::{Read, Reassembler};
use mcperr_protocol::jsonrpc;
use mcperr_protocol::{Era, Id};
use serde_json::{json, Value};

use crate::transport::http::{HeaderOverrides, HttpConnection, HttpFailure};
use crate::transport::{LineConn, StderrLog, StdoutEvent};

/// The transport under a client.
pub enum Conn {
    /// Line-framed: a child process over stdio, or the in-process edge.
    Lines(LineConn),
    /// An HTTP endpoint (real or in process).
    Http(HttpConnection),
}

impl Conn {
    /// Closes the connection (reaps the child; ends an HTTP session).
    pub async fn close(self) {
        match self {
            Conn::Lines(c) => c.close().await,
            Conn::Http(c) => {
                c.close().await;
            }
        }
    }
}

/// A connected client for one era.
pub struct Client {
    /// The connection.
    pub conn: Conn,
    /// Strays seen outside a judged exchange (handshake, discovery, steps,
    /// probes, HTTP notifications), handed to the next judged case.
    pending: Vec<Stray>,
    /// Ids already answered (recent ones), to tell a duplicate from a wrong id.
    answered: std::collections::VecDeque<Value>,
    /// An empty log, for transports without a server stderr.
    no_log: StderrLog,
    /// The era the connection speaks.
    pub era: Era,
    /// Per-request timeout.
    pub timeout: Duration,
    /// How fast each method answers, learnt so far (slow and hung methods).
    pub pace: crate::pace::Pace,
    /// Malformed input or a notification was sent in this case: an id-null
    /// error may answer it, so one is a stray, not the answer of the request
    /// in flight. Cleared by [`Client::begin_case`].
    pub unanswerable_sent: bool,
    /// Ids (as JSON text) of requests sent around the client whose answers
    /// may still come: skipped, not taken for another request's answer.
    ignored: std::collections::HashSet<String>,
    /// The `Mcp-Session-Id` of another connection of the run, when this one
    /// was opened for a case of its own: what a freshly minted id must not
    /// repeat (H2 `session-id-random`).
    pub other_session: Option<String>,
    /// Ignored ids (timed-out requests among them) whose answer did come
    /// late, with that answer.
    late_seen: std::collections::HashMap<String, Value>,
    /// Ids (as JSON text) of the requests the server sent on this
    /// connection: one used twice is J1's (`server-request-id-unique`).
    server_request_ids: std::collections::HashSet<String>,
    /// 2025-11-25: the client capabilities this connection's `initialize`
    /// declared; over stdio the server's requests for them are answered
    /// as a willing client would ([`mcperr_core::capture::answer_server_request`]).
    declared: Option<Value>,
    /// Answers to the server's requests kept back while a case holds them
    /// ([`Client::hold_asks`]), sent by [`Client::release_held`].
    held: Option<Vec<Value>>,
    next_id: i64,
}

/// What stdout output that arrived outside a judged exchange is: nothing (a
/// blank line, a server-to-client message, or the late answer to an ignored
/// id, noted in `late_seen`) or a stray to judge.
fn stray_of(
    event: StdoutEvent,
    answered: &std::collections::VecDeque<Value>,
    ignored: &std::collections::HashSet<String>,
    late_seen: &mut std::collections::HashMap<String, Value>,
) -> Option<Stray> {
    match event {
        StdoutEvent::Line(l) if l.iter().all(u8::is_ascii_whitespace) => None,
        StdoutEvent::Line(l) => match mcperr_core::text::decode(&l) {
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

fn ending_value(e: &Ending) -> Option<&Value> {
    match e {
        Ending::Answered(v) | Ending::WrongId(v) => Some(v),
        _ => None,
    }
}

impl Client {
    /// Wraps a connection that speaks `era` (handshake done by the caller).
    pub fn new(conn: Conn, era: Era, timeout: Duration) -> Client {
        Client {
            conn,
            era,
            timeout,
            pace: crate::pace::Pace::default(),
            next_id: 0,
            unanswerable_sent: false,
            ignored: Default::default(),
            other_session: None,
            late_seen: Default::default(),
            server_request_ids: Default::default(),
            declared: None,
            held: None,
            pending: vec![],
            answered: Default::default(),
            no_log: StderrLog::default(),
        }
    }

    /// The `Mcp-Session-Id` this connection was given (HTTP, 2025-11-25).
    pub fn session_id(&self) -> Option<String> {
        match &self.conn {
            Conn::Http(h) => h.session.clone(),
            Conn::Lines(_) => None,
        }
    }

    /// Answers with these ids (JSON text) are dropped: requests sent around
    /// the client (a fuzz pipeline) whose answers may still come.
    pub fn ignore(&mut self, ids: impl IntoIterator<Item = String>) {
        if self.ignored.len() > 4096 {
            self.ignored.clear();
            self.late_seen.clear();
        }
        self.ignored.extend(ids);
    }

    /// Whether the answer to `id`, a request that timed out (or was sent
    /// around the client), has arrived since.
    pub fn arrived_late(&self, id: &Value) -> bool {
        self.late_seen.contains_key(&id.to_string())
    }

    /// Sets the per-request timeout (the handshake has its own).
    pub fn set_timeout(&mut self, timeout: Duration) {
        self.timeout = timeout;
        if let Conn::Http(h) = &mut self.conn {
            h.timeout = timeout;
        }
    }

    /// The server's stderr (empty over HTTP: a remote server's log is not ours to read).
    pub fn stderr(&self) -> &StderrLog {
        match &self.conn {
            Conn::Lines(c) => c.stderr(),
            Conn::Http(_) => &self.no_log,
        }
    }

    /// Whether the server's stderr can be read.
    pub fn has_stderr(&self) -> bool {
        matches!(self.conn, Conn::Lines(_))
    }

    /// Waits until stderr stops growing after `mark` (a pipe lags behind
    /// stdout; an in-process server has written it already).
    pub async fn settle_stderr(&self, mark: usize) {
        if matches!(&self.conn, Conn::Lines(c) if c.stderr_is_synchronous()) {
            return;
        }
        let mut last = self.stderr().mark();
        for _ in 0..10 {
            tokio::time::sleep(Duration::from_millis(20)).await;
            let now = self.stderr().mark();
            if now == last && now > mark {
                break;
            }
            last = now;
        }
    }

    /// A fresh request id (numbers; cases may use their own).
    pub fn fresh_id(&mut self) -> Id {
        self.next_id += 1;
        Id::from(self.next_id)
    }

    /// Sends an unjudged request and waits for its answer; what it saw goes
    /// to the next judged case.
    pub async fn request(
        &mut self,
        method: &str,
        params: Option<Value>,
        envelope: bool,
    ) -> Exchange {
        let id = self.fresh_id();
        let msg = jsonrpc::request(&id, method, plan::params_for(self.era, params, envelope));
        let mut ex = self.exchange(id, msg).await;
        let token = mcperr_core::exchange::progress_token(&ex.request).cloned();
        for stray in ex.strays.drain(..) {
            // Its own progress is its business; any other is late for the
            // judged case that gets it.
            let own = matches!(&stray, Stray::Progress(v)
                if token.is_some() && mcperr_core::exchange::progress_token(v) == token.as_ref());
            if !own {
                push_stray(&mut self.pending, stray.outside());
            }
        }
        // Its answer is not judged, but a wrong id in it is the next case's J1.
        if let Ending::WrongId(v) = &ex.ending {
            push_stray(&mut self.pending, Stray::Misanswered(v.clone()));
        }
        ex
    }

    /// Sends a built message with id `id` and waits for its answer. An
    /// id-null error is its answer (one request is in flight), unless
    /// malformed input was sent in this case ([`Client::raw_sent`]).
    pub async fn exchange(&mut self, id: Id, msg: Value) -> Exchange {
        if msg.get("method").and_then(Value::as_str) == Some("initialize") {
            self.declared = msg.pointer("/params/capabilities").cloned();
        }
        if let Conn::Http(http) = &self.conn {
            let headers = http.headers_for(self.era, &msg);
            let body = mcperr_core::text::line(&msg);
            return self
                .http_exchange(Some(id), msg, "POST", headers, &vec![], Some(body))
                .await;
        }
        let null_id_is_stray = self.unanswerable_sent;
        self.line_exchange(id, msg, null_id_is_stray).await
    }

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

    async fn line_exchange(&mut self, id: Id, msg: Value, null_id_is_stray: bool) -> Exchange {
        let Conn::Lines(conn) = &mut self.conn else {
            unreachable!("line_exchange on an HTTP client")
        };
        let start = Instant::now();
        let mut strays = Vec::new();
        conn.send_line(&mcperr_core::text::line(&msg)).await;
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
                            .and_then(|d| mcperr_core::capture::answer_server_request(d, &value));
                        match (reply, &mut self.held) {
                            (Some(reply), Some(held)) => held.push(reply),
                            (Some(reply), None) => {
                                conn.send_line(&mcperr_core::text::line(&reply)).await
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
            self.answered.push_back(want);
            if self.answered.len() > 256 {
                self.answered.pop_front();
            }
        }
        let ending = match ending {
            Ending::Died(_) => Ending::Died(self.death().await),
            other => other,
        };
        Exchange {
            request: msg,
            ending,
            strays,
            duration: start.elapsed(),
            http: None,
        }
    }

    /// Sends a notification. Over HTTP anything but `202` without a body is
    /// kept as a stray for the next exchange (J3).
    pub async fn notify(&mut self, method: &str, params: Option<Value>) {
        self.unanswerable_sent = true;
        let msg = jsonrpc::notification(method, params);
        match &mut self.conn {
            Conn::Lines(c) => c.send_line(msg.to_string().as_bytes()).await,
            Conn::Http(http) => {
                let headers = http.headers_for(self.era, &msg);
                let sent = http
                    .send(
                        "POST",
                        headers,
                        &vec![],
                        None,
                        Some(msg.to_string().into_bytes()),
                    )
                    .await;
                if let Ok(a) = sent {
                    if a.status != 202 || !a.body.trim().is_empty() {
                        let body = a
                            .messages
                            .first()
                            .cloned()
                            .unwrap_or(Value::String(a.body.clone()));
                        let answered = Stray::NotificationAnswered(
                            json!({"httpStatus": a.status, "body": body}),
                        );
                        push_stray(&mut self.pending, answered);
                    }
                }
            }
        }
    }

    /// Sends raw bytes as one line (stdio) or one POST body (HTTP; the answer is not judged).
    pub async fn send_raw(&mut self, line: &str) {
        self.unanswerable_sent = true;
        match &mut self.conn {
            Conn::Lines(c) => c.send_line(line.as_bytes()).await,
            Conn::Http(http) => {
                let headers = http.headers_for(self.era, &json!({}));
                let _ = http
                    .send(
                        "POST",
                        headers,
                        &vec![],
                        None,
                        Some(line.as_bytes().to_vec()),
                    )
                    .await;
            }
        }
    }

    /// Sends a request and leaves it in flight (a line transport only): it
    /// is not awaited, so that the steps after it (a cancellation) reach the
    /// server while it works. Waits up to `first` for a first sign of work
    /// (a progress notification for its token), which is dropped; `Err`
    /// with the answer when it was answered before that (nothing left in
    /// flight to cancel). Everything else that arrives goes to the next
    /// judged case.
    pub async fn send_in_flight(
        &mut self,
        id: &Id,
        msg: &Value,
        first: Duration,
    ) -> Result<(), Value> {
        let want = id.to_value();
        let token = mcperr_core::exchange::progress_token(msg).cloned();
        let Conn::Lines(conn) = &mut self.conn else {
            unreachable!("in-flight steps are planned over stdio only")
        };
        conn.send_line(&mcperr_core::text::line(msg)).await;
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
                && mcperr_core::exchange::progress_token(&m) == token.as_ref()
            {
                return Ok(());
            }
            self.keep_for_next_case(m);
        }
        Ok(())
    }

    /// Over a line transport, closes the server's stdin and waits up to
    /// `wait` for it to exit: `Some(how it ended)`, `Some(None)` while it
    /// still runs; `None` over HTTP. The connection is spent.
    pub async fn close_stdin(&mut self, wait: Duration) -> Option<Option<String>> {
        let Conn::Lines(conn) = &mut self.conn else {
            return None;
        };
        Some(conn.close_stdin(wait).await)
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
        let msg = jsonrpc::request(
            &probe_id,
            method,
            plan::params_for(self.era, None, envelope),
        );
        let Conn::Lines(conn) = &mut self.conn else {
            unreachable!("in-flight steps are planned over stdio only")
        };
        conn.send_line(&mcperr_core::text::line(&msg)).await;
        let want = probe_id.to_value();
        let deadline = Instant::now() + self.timeout;
        let mut before = Vec::new();
        while let Some(m) = self.next_message(deadline).await {
            if m.get("method").is_none() && m.get("id") == Some(&want) {
                return Ok(before);
            }
            if about_in_flight(&m, id, token) {
                before.push(m);
            } else {
                self.keep_for_next_case(m);
            }
        }
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

    /// Watches for `wait` for messages about in-flight request `id` (its
    /// answer, progress for `token`), returning them in order; everything
    /// else goes to the next judged case.
    pub async fn watch_in_flight(
        &mut self,
        id: &Value,
        token: Option<&Value>,
        wait: Duration,
    ) -> Vec<Value> {
        let deadline = Instant::now() + wait;
        let mut about = Vec::new();
        while let Some(m) = self.next_message(deadline).await {
            if about_in_flight(&m, id, token) {
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
    async fn next_message(&mut self, deadline: Instant) -> Option<Value> {
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
                StdoutEvent::Line(l) => match mcperr_core::text::decode(&l) {
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

    /// Keeps a message that arrived outside any exchange for the next case.
    fn keep_for_next_case(&mut self, m: Value) {
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

    /// Notes the ids of the server's own requests among `strays`, adding a
    /// [`Stray::ReusedRequestId`] for each one seen before on this connection.
    pub fn note_server_requests(&mut self, strays: &mut Vec<Stray>) {
        let mut out = Vec::with_capacity(strays.len());
        for s in strays.drain(..) {
            if let Stray::ServerRequest(v) = &s {
                let id = v.get("id").unwrap_or(&Value::Null).to_string();
                if !self.server_request_ids.insert(id) {
                    // Before the request itself: the id is what is judged first.
                    out.push(Stray::ReusedRequestId(v.clone()));
                }
            }
            out.push(s);
        }
        *strays = out;
    }

    /// From now on the answers to the server's requests wait for
    /// [`Client::release_held`] instead of going out as the requests
    /// arrive: a case with `hold_asks` judges its request while the server
    /// still waits for its input.
    pub fn hold_asks(&mut self) {
        self.held.get_or_insert_with(Vec::new);
    }

    /// How many answers [`Client::hold_asks`] keeps back now (`None` when
    /// it holds none back).
    pub fn held(&self) -> Option<usize> {
        self.held.as_ref().map(Vec::len)
    }

    /// Sends the answers [`Client::hold_asks`] kept back, in the order the
    /// requests came, and answers the next ones as they arrive again.
    pub async fn release_held(&mut self) {
        let Some(held) = self.held.take() else {
            return;
        };
        if let Conn::Lines(conn) = &mut self.conn {
            for reply in held {
                conn.send_line(&mcperr_core::text::line(&reply)).await;
            }
        }
    }

    /// Starts a judged case: what arrived since the last one, for its judgement.
    pub fn begin_case(&mut self) -> Vec<Stray> {
        self.unanswerable_sent = false;
        self.drain()
    }

    /// Puts strays back for the next judged case.
    pub fn requeue(&mut self, strays: Vec<Stray>) {
        for s in strays {
            push_stray(&mut self.pending, s);
        }
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

    /// What arrived unasked (between exchanges).
    pub fn drain(&mut self) -> Vec<Stray> {
        let mut out = std::mem::take(&mut self.pending);
        let Conn::Lines(conn) = &mut self.conn else {
            return out;
        };
        let (answered, ignored, late_seen) = (&self.answered, &self.ignored, &mut self.late_seen);
        let fresh: Vec<Stray> = conn
            .pending()
            .into_iter()
            .filter_map(|e| stray_of(e, answered, ignored, late_seen))
            .collect();
        for stray in fresh {
            push_stray(&mut out, stray);
        }
        out
    }

    /// The liveness probe of this era: `ping` (2025-11-25) or `server/discover`
    /// (2026-07-28 has no `ping`). Any response counts as alive.
    pub async fn probe(&mut self) -> Exchange {
        match self.era {
            Era::Legacy => self.request("ping", None, false).await,
            Era::Modern => self.request("server/discover", None, true).await,
        }
    }

    /// A description of how the server died, with its stderr tail.
    pub async fn death(&mut self) -> String {
        let Conn::Lines(conn) = &mut self.conn else {
            return "the HTTP server stopped answering".to_string();
        };
        let status = conn
            .exit_status(Duration::from_millis(500))
            .await
            .unwrap_or_else(|| "closed stdout".to_string());
        let tail = conn.stderr().tail(10);
        if tail.is_empty() {
            format!("the server {status}")
        } else {
            format!("the server {status}; stderr tail:\n{tail}")
        }
    }
}

/// Whether `m` is about in-flight request `id`: its answer, or progress
/// for its `token`.
fn about_in_flight(m: &Value, id: &Value, token: Option<&Value>) -> bool {
    let answer = m.get("method").is_none() && m.get("id") == Some(id);
    let progress = m.get("method").and_then(Value::as_str) == Some("notifications/progress")
        && token.is_some()
        && mcperr_core::exchange::progress_token(m) == token;
    // A subscriptions/listen in flight: its stream's notifications.
    let streamed =
        m.get("method").is_some() && mcperr_core::exchange::subscription_id(m) == Some(id);
    answer || progress || streamed
}

/// The 2025-11-25 handshake: `initialize`, then `notifications/initialized`.
/// Returns the `initialize` result.
pub async fn legacy_handshake(client: &mut Client) -> Result<Value, Exchange> {
    let params = json!({"protocolVersion": Era::Legacy.version(), "capabilities": {},
        "clientInfo": plan::client_info()});
    let ex = client.request("initialize", Some(params), false).await;
    match &ex.ending {
        Ending::Answered(r) | Ending::WrongId(r) if r.get("result").is_some() => {
            client.notify("notifications/initialized", None).await;
            Ok(r["result"].clone())
        }
        _ => Err(ex),
    }
}

pub(crate) fn is_response(m: &Value) -> bool {
    m.get("method").is_none() && (m.get("result").is_some() || m.get("error").is_some())
}

/// How an HTTP answer ends an exchange that awaits `want`.
fn http_ending(answer: &HttpAnswer, want: Option<&Value>) -> Ending {
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
