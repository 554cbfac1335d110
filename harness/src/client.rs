//! The MCP client side of a case: one request at a time, answers matched by
//! id, everything else that came out of the server recorded for the oracle.

use std::time::{Duration, Instant};

use mcperr_protocol::era::{META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_PROTOCOL_VERSION};
use mcperr_protocol::jsonrpc;
use mcperr_protocol::{Era, Id};
use serde_json::{json, Value};

use crate::transport::{StdioConnection, StdoutEvent};

/// Something the server wrote that was not the awaited answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Stray {
    /// A stdout line that is not a JSON object (J5).
    NotJson(String),
    /// A stdout line longer than the cap (J5), with its length.
    TooLong(usize),
    /// A response whose id is `null`.
    NullIdResponse(Value),
}

/// How an exchange ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Ending {
    /// A response with the request's id.
    Answered(Value),
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
    pub conn: StdioConnection,
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
    pub fn new(conn: StdioConnection, era: Era, timeout: Duration) -> Client {
        Client {
            conn,
            era,
            timeout,
            next_id: 0,
        }
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
        self.exchange(id, msg).await
    }

    /// Sends a built message with id `id` and waits for its answer.
    pub async fn exchange(&mut self, id: Id, msg: Value) -> Exchange {
        let start = Instant::now();
        let mut strays = Vec::new();
        self.conn.send_line(msg.to_string().as_bytes()).await;
        let deadline = start + self.timeout;
        let want = id.to_value();
        let ending = loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.conn.next_event(left).await {
                None => break Ending::Timeout,
                Some(StdoutEvent::Eof) => break Ending::Died(self.death().await),
                Some(StdoutEvent::TooLong(n)) => strays.push(Stray::TooLong(n)),
                Some(StdoutEvent::Line(line)) => {
                    if line.iter().all(u8::is_ascii_whitespace) {
                        continue;
                    }
                    let Ok(Value::Object(obj)) = serde_json::from_slice::<Value>(&line) else {
                        strays.push(Stray::NotJson(String::from_utf8_lossy(&line).into_owned()));
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
                        Some(Value::Null) | None => strays.push(Stray::NullIdResponse(value)),
                        Some(_) => break Ending::WrongId(value),
                    }
                }
            }
        };
        Exchange {
            request: msg,
            ending,
            strays,
            duration: start.elapsed(),
        }
    }

    /// Sends a notification.
    pub async fn notify(&mut self, method: &str, params: Option<Value>, envelope: bool) {
        let msg = jsonrpc::notification(method, self.params_for(params, envelope));
        self.conn.send_line(msg.to_string().as_bytes()).await;
    }

    /// Sends raw bytes as one line.
    pub async fn send_raw(&mut self, line: &str) {
        self.conn.send_line(line.as_bytes()).await;
    }

    /// Lines that arrived unasked (between exchanges).
    pub fn drain(&mut self) -> Vec<Stray> {
        self.conn
            .pending()
            .into_iter()
            .filter_map(|e| match e {
                StdoutEvent::Line(l) if l.iter().all(u8::is_ascii_whitespace) => None,
                StdoutEvent::Line(l) => match serde_json::from_slice::<Value>(&l) {
                    Ok(v @ Value::Object(_)) if v.get("method").is_some() => None,
                    Ok(v @ Value::Object(_)) => Some(Stray::NullIdResponse(v)),
                    _ => Some(Stray::NotJson(String::from_utf8_lossy(&l).into_owned())),
                },
                StdoutEvent::TooLong(n) => Some(Stray::TooLong(n)),
                StdoutEvent::Eof => None,
            })
            .collect()
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
        let status = self
            .conn
            .exit_status(Duration::from_millis(500))
            .await
            .map(|s| s.0)
            .unwrap_or_else(|| "closed stdout".to_string());
        let tail = self.conn.stderr.tail(10);
        if tail.is_empty() {
            format!("the server {status}")
        } else {
            format!("the server {status}; stderr tail:\n{tail}")
        }
    }
}
