//! The MCP client side: one request at a time, answers matched by id,
//! everything else the server wrote kept as strays for the oracle. The
//! executor of a [`CasePlan`] lives in [`crate::execute`]; this module only
//! sends and collects.

use std::time::Duration;

use mcperr_cases::plan::{self, Message};
use mcperr_protocol::{Era, Id};
use mcperr_wire::exchange::{push_stray, Ending, Exchange, Stray};
use serde_json::{json, Value};

use crate::transport::http::HttpConnection;
use crate::transport::{LineConn, StderrLog};

mod http;
mod in_flight;
pub use in_flight::WatchEnds;
mod lines;

use lines::stray_of;

/// The transport under a client.
pub enum Conn {
    /// Line-framed: a child process over stdio, or the in-process edge.
    Lines(LineConn),
    /// An HTTP endpoint (real or in process).
    Http(HttpConnection),
}

impl Conn {
    /// The CPU time the server's processes have used so far, where mcperr
    /// started them as a child (over stdio, on Linux).
    pub fn cpu_time(&self) -> Option<std::time::Duration> {
        match self {
            Conn::Lines(c) => c.cpu_time(),
            Conn::Http(_) => None,
        }
    }

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
    /// The ids of requests inside the malformed lines this case sent,
    /// ignored until the next case begins.
    raw_ids: Vec<String>,
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
    /// as a willing client would ([`mcperr_cases::capture::answer_server_request`]).
    declared: Option<Value>,
    /// Answers to the server's requests kept back while a case holds them
    /// ([`Client::hold_asks`]), sent by [`Client::release_held`].
    held: Option<Vec<Value>>,
    next_id: i64,
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
            raw_ids: Vec::new(),
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
        let msg = Message::request(self.era, &id, method, params, envelope);
        let token = msg.token.clone();
        let mut ex = self.exchange(msg).await;
        for stray in ex.strays.drain(..) {
            // Its own progress is its business; any other is late for the
            // judged case that gets it.
            let own = matches!(&stray, Stray::Progress(v)
                if token.is_some() && mcperr_wire::exchange::progress_token(v) == token.as_ref());
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

    /// Sends a finished request and waits for the answer with its id. An
    /// id-null error is its answer (one request is in flight), unless
    /// malformed input was sent in this case ([`Client::raw_sent`]).
    pub async fn exchange(&mut self, msg: Message) -> Exchange {
        let Some(id) = msg.id.clone() else {
            unreachable!("an exchange sends a request, which has an id")
        };
        if msg.body["method"] == "initialize" {
            self.declared = msg.body.pointer("/params/capabilities").cloned();
        }
        if let Conn::Http(http) = &self.conn {
            let headers = http.headers_for(self.era, &msg);
            return self
                .http_exchange(
                    Some(id),
                    msg.body,
                    "POST",
                    headers,
                    &vec![],
                    Some(msg.bytes),
                )
                .await;
        }
        let null_id_is_stray = self.unanswerable_sent;
        self.line_exchange(id, msg, null_id_is_stray).await
    }

    /// Sends a notification. Over HTTP anything but `202` without a body is
    /// kept as a stray for the next exchange (J3).
    pub async fn notify(&mut self, method: &str, params: Option<Value>) {
        self.unanswerable_sent = true;
        let msg = Message::notification(self.era, method, params);
        match &mut self.conn {
            Conn::Lines(c) => c.send_line(&msg.bytes).await,
            Conn::Http(http) => {
                let headers = http.headers_for(self.era, &msg);
                let sent = http
                    .send("POST", headers, &vec![], None, Some(msg.bytes))
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

    /// Sends a raw line ([`Message::raw`]) as one line (stdio) or one POST
    /// body (HTTP; the answer is not judged).
    pub async fn send_raw(&mut self, msg: Message) {
        self.unanswerable_sent = true;
        // An answer carrying the id of a request inside the line (an object
        // with an id, or one in an array), echoed as sent, answers that
        // line: never the next request's answer, a duplicate or a stray.
        // Set aside for this case only ([`Client::begin_case`]).
        let ids: Vec<String> = msg.inner_ids.iter().map(Value::to_string).collect();
        self.raw_ids.extend(ids.iter().cloned());
        self.ignore(ids);
        match &mut self.conn {
            Conn::Lines(c) => c.send_line(&msg.bytes).await,
            Conn::Http(http) => {
                let headers = http.headers_for(self.era, &msg);
                let _ = http
                    .send("POST", headers, &vec![], None, Some(msg.bytes))
                    .await;
            }
        }
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
                conn.send_line(&mcperr_wire::text::line(&reply)).await;
            }
        }
    }

    /// Starts a judged case: what arrived since the last one, for its judgement.
    pub fn begin_case(&mut self) -> Vec<Stray> {
        self.unanswerable_sent = false;
        let strays = self.drain();
        // The last case's malformed lines are answered by now or never:
        // their ids are ordinary ids again (a later answer with one of them
        // is that case's stray, or a wrong id).
        for id in std::mem::take(&mut self.raw_ids) {
            self.ignored.remove(&id);
        }
        strays
    }

    /// Puts strays back for the next judged case.
    pub fn requeue(&mut self, strays: Vec<Stray>) {
        for s in strays {
            push_stray(&mut self.pending, s);
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
