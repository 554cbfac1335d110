//! The MCP client side of a case: one request at a time, answers matched by
//! id, everything else that came out of the server recorded for the oracle.

use std::time::{Duration, Instant};

use mcperr_protocol::era::{META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_PROTOCOL_VERSION};
use mcperr_protocol::jsonrpc;
use mcperr_protocol::{Era, Id};
use serde_json::{json, Value};

use crate::transport::http::{HeaderOverrides, HttpAnswer, HttpConnection};
use crate::transport::stdio::StderrLog;
use crate::transport::{StdioConnection, StdoutEvent};

/// The transport under a client.
pub enum Conn {
    /// A child process over stdio.
    Stdio(StdioConnection),
    /// An HTTP endpoint.
    Http(HttpConnection),
}

impl Conn {
    /// Closes the connection (reaps the child; ends an HTTP session).
    pub async fn close(self) {
        match self {
            Conn::Stdio(c) => c.close().await,
            Conn::Http(c) => {
                c.close().await;
            }
        }
    }
}

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
    /// More strays than are kept; this many were dropped.
    More(usize),
}

/// Most strays kept per exchange; a flood is summarised, not stored.
const MAX_STRAYS: usize = 32;

fn push_stray(strays: &mut Vec<Stray>, stray: Stray) {
    if strays.len() < MAX_STRAYS {
        strays.push(stray);
    } else if let Some(Stray::More(n)) = strays.last_mut() {
        *n += 1;
    } else {
        strays.push(Stray::More(1));
    }
}

/// How an exchange ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Ending {
    /// A response with the request's id.
    Answered(Value),
    /// The transport answered without a JSON-RPC response (an HTTP status
    /// without a body, an SSE stream that ended early), and why.
    Empty(String),
    /// The case cannot be asked of this server (a legacy server without
    /// sessions, say), and why: a skip, not a verdict.
    NotApplicable(String),
    /// A response with another id, taken as the answer (only one request is
    /// ever outstanding): a J1 failure.
    WrongId(Value),
    /// Nothing within the timeout.
    Timeout,
    /// stdout closed before an answer came.
    Died(String),
}

/// One request and what came back.
#[derive(Debug, Clone, PartialEq)]
pub struct Exchange {
    /// The request as sent.
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
    next_id: i64,
}

/// The modern `_meta` envelope mcperr sends.
pub fn envelope() -> Value {
    json!({
        META_PROTOCOL_VERSION: Era::Modern.version(),
        META_CLIENT_CAPABILITIES: {},
        META_CLIENT_INFO: {"name": "mcperr", "version": env!("CARGO_PKG_VERSION")},
    })
}

/// `params` with the modern envelope merged in (an object is created if needed).
pub fn with_envelope(params: Option<Value>) -> Value {
    let mut params = match params {
        Some(Value::Object(o)) => Value::Object(o),
        _ => json!({}),
    };
    let meta = params
        .as_object_mut()
        .unwrap()
        .entry("_meta")
        .or_insert_with(|| json!({}));
    if let (Some(meta), Value::Object(env)) = (meta.as_object_mut(), envelope()) {
        for (k, v) in env {
            meta.entry(k).or_insert(v);
        }
    }
    params
}

impl Client {
    /// Wraps a connection that speaks `era` (handshake done by the caller).
    pub fn new(conn: Conn, era: Era, timeout: Duration) -> Client {
        Client {
            conn,
            era,
            timeout,
            next_id: 0,
            pending: vec![],
            answered: Default::default(),
            no_log: StderrLog::default(),
        }
    }

    /// The server's stderr (empty over HTTP: a remote server's log is not ours to read).
    pub fn stderr(&self) -> &StderrLog {
        match &self.conn {
            Conn::Stdio(c) => &c.stderr,
            Conn::Http(_) => &self.no_log,
        }
    }

    /// Whether the server's stderr can be read.
    pub fn has_stderr(&self) -> bool {
        matches!(self.conn, Conn::Stdio(_))
    }

    /// A fresh request id (numbers; cases may use their own).
    pub fn fresh_id(&mut self) -> Id {
        self.next_id += 1;
        Id::from(self.next_id)
    }

    /// The params a request gets in this era.
    pub fn params_for(&self, params: Option<Value>, envelope: bool) -> Option<Value> {
        if self.era == Era::Modern && envelope {
            Some(with_envelope(params))
        } else {
            params
        }
    }

    /// Sends a request and waits for its answer.
    pub async fn request(
        &mut self,
        method: &str,
        params: Option<Value>,
        envelope: bool,
    ) -> Exchange {
        let id = self.fresh_id();
        let msg = jsonrpc::request(&id, method, self.params_for(params, envelope));
        let mut ex = self.exchange(id, msg).await;
        // Not judged itself: what it saw goes to the next judged case.
        for stray in ex.strays.drain(..) {
            push_stray(&mut self.pending, stray);
        }
        ex
    }

    /// Sends a built message with id `id` and waits for its answer.
    pub async fn exchange(&mut self, id: Id, msg: Value) -> Exchange {
        if let Conn::Http(http) = &self.conn {
            let headers = http.headers_for(self.era, &msg);
            let body = msg.to_string().into_bytes();
            return self
                .http_exchange(Some(id), msg, "POST", headers, &vec![], Some(body))
                .await;
        }
        self.stdio_exchange(id, msg).await
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
            unreachable!("http_exchange on a stdio client")
        };
        let want_value = id.as_ref().map(Id::to_value);
        let sent = http
            .send(method, headers, overrides, want_value.as_ref(), body)
            .await;
        let mut strays = std::mem::take(&mut self.pending);
        let (ending, answer) = match sent {
            Err(e) if e == "timeout" => (Ending::Timeout, None),
            Err(e) => (Ending::Died(format!("the HTTP request failed: {e}")), None),
            Ok(answer) => {
                if request.get("method").and_then(Value::as_str) == Some("initialize") {
                    if let Some(s) = answer.header("mcp-session-id") {
                        http.session = Some(s.to_string());
                    }
                }
                let want = id.as_ref().map(Id::to_value);
                let responses: Vec<&Value> = answer
                    .messages
                    .iter()
                    .filter(|m| {
                        m.get("method").is_none()
                            && (m.get("result").is_some() || m.get("error").is_some())
                    })
                    .collect();
                let mine = responses
                    .iter()
                    .find(|r| want.is_some() && r.get("id") == want.as_ref());
                let ending = if let Some(r) = mine {
                    Ending::Answered((*r).clone())
                } else if let Some(r) = responses
                    .iter()
                    .find(|r| r.get("id").is_some_and(|i| !i.is_null()))
                {
                    Ending::WrongId((*r).clone())
                } else if let Some(r) = responses.first() {
                    // An error with id null: the answer to a request the server
                    // could not read (or rejected before reading, over HTTP).
                    Ending::Answered((*r).clone())
                } else if let Some(p) = &answer.problem {
                    Ending::Empty(format!("HTTP {}: {p}", answer.status))
                } else if answer.sse {
                    Ending::Empty(format!(
                        "HTTP {}: the SSE stream ended without the response",
                        answer.status
                    ))
                } else {
                    Ending::Empty(format!(
                        "HTTP {} without a JSON-RPC response",
                        answer.status
                    ))
                };
                for other in responses
                    .iter()
                    .filter(|r| Some(**r) != ending_value(&ending))
                {
                    strays.push(Stray::NullIdResponse((*other).clone()));
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

    async fn stdio_exchange(&mut self, id: Id, msg: Value) -> Exchange {
        let Conn::Stdio(conn) = &mut self.conn else {
            unreachable!("stdio_exchange on an HTTP client")
        };
        let start = Instant::now();
        let mut strays = Vec::new();
        conn.send_line(msg.to_string().as_bytes()).await;
        let deadline = start + self.timeout;
        let want = id.to_value();
        let answered = &self.answered;
        let ending = loop {
            // Checked first: a server that floods stdout must not outrun the timeout.
            let now = Instant::now();
            if now >= deadline {
                break Ending::Timeout;
            }
            match conn.next_event(deadline - now).await {
                None => break Ending::Timeout,
                Some(StdoutEvent::Eof) => break Ending::Died(String::new()),
                Some(StdoutEvent::TooLong(n)) => push_stray(&mut strays, Stray::TooLong(n)),
                Some(StdoutEvent::Line(line)) => {
                    if line.iter().all(u8::is_ascii_whitespace) {
                        continue;
                    }
                    let Ok(Value::Object(obj)) = serde_json::from_slice::<Value>(&line) else {
                        push_stray(
                            &mut strays,
                            Stray::NotJson(String::from_utf8_lossy(&line).into_owned()),
                        );
                        continue;
                    };
                    let value = Value::Object(obj);
                    let is_response = value.get("method").is_none()
                        && (value.get("result").is_some() || value.get("error").is_some());
                    if !is_response {
                        // A server-to-client request or notification: allowed, not ours.
                        continue;
                    }
                    match value.get("id") {
                        Some(got) if *got == want => break Ending::Answered(value),
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
        self.answered.push_back(want);
        if self.answered.len() > 256 {
            self.answered.pop_front();
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
    pub async fn notify(&mut self, method: &str, params: Option<Value>, envelope: bool) {
        let msg = jsonrpc::notification(method, self.params_for(params, envelope));
        match &mut self.conn {
            Conn::Stdio(c) => c.send_line(msg.to_string().as_bytes()).await,
            Conn::Http(http) => {
                let headers = http.headers_for(self.era, &msg);
                if let Ok(a) = http
                    .send(
                        "POST",
                        headers,
                        &vec![],
                        None,
                        Some(msg.to_string().into_bytes()),
                    )
                    .await
                {
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
        match &mut self.conn {
            Conn::Stdio(c) => c.send_line(line.as_bytes()).await,
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

    /// Lines that arrived unasked (between exchanges).
    pub fn drain(&mut self) -> Vec<Stray> {
        let mut out = std::mem::take(&mut self.pending);
        let Conn::Stdio(conn) = &mut self.conn else {
            return out;
        };
        let answered = &self.answered;
        let fresh: Vec<Stray> = conn
            .pending()
            .into_iter()
            .filter_map(|e| match e {
                StdoutEvent::Line(l) if l.iter().all(u8::is_ascii_whitespace) => None,
                StdoutEvent::Line(l) => match serde_json::from_slice::<Value>(&l) {
                    Ok(v @ Value::Object(_)) if v.get("method").is_some() => None,
                    Ok(v @ Value::Object(_)) => Some(match v.get("id") {
                        None | Some(Value::Null) => Stray::NullIdResponse(v),
                        Some(id) if answered.contains(id) => Stray::Duplicate(v),
                        Some(_) => Stray::Unsolicited(v),
                    }),
                    _ => Some(Stray::NotJson(String::from_utf8_lossy(&l).into_owned())),
                },
                StdoutEvent::TooLong(n) => Some(Stray::TooLong(n)),
                StdoutEvent::Eof => None,
            })
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
        let Conn::Stdio(conn) = &mut self.conn else {
            return "the HTTP server stopped answering".to_string();
        };
        let status = conn
            .exit_status(Duration::from_millis(500))
            .await
            .map(|s| s.0)
            .unwrap_or_else(|| "closed stdout".to_string());
        let tail = conn.stderr.tail(10);
        if tail.is_empty() {
            format!("the server {status}")
        } else {
            format!("the server {status}; stderr tail:\n{tail}")
        }
    }
}

fn ending_value(e: &Ending) -> Option<&Value> {
    match e {
        Ending::Answered(v) | Ending::WrongId(v) => Some(v),
        _ => None,
    }
}
