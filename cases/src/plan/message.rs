//! A message finished for the wire. Everything the era adds to a message
//! (the 2026-07-28 `_meta` envelope with version, capabilities and client
//! info; the Streamable HTTP headers) and what the client watches it by (its
//! id, its progress token) is settled here, once, so that the client and the
//! transports send it as it is and never call back into planning for it.
//! What only the connection knows (the session id, the parameters a tool
//! mirrors into headers, the user's `--header`s) the transport adds.

use mcperr_protocol::era::{META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_PROTOCOL_VERSION};
use mcperr_protocol::headers::encode_header_value;
use mcperr_protocol::{jsonrpc, Era, Id};
use serde_json::{json, Value};

/// Which id a message carries.
#[derive(Debug, Clone, PartialEq)]
pub enum IdChoice {
    /// A fresh number from the connection.
    Fresh,
    /// The case's own id (string or number).
    Given(Id),
    /// None: a notification.
    Notification,
}

/// A message to send, fully built except for a fresh id.
#[derive(Debug, Clone, PartialEq)]
pub struct Outgoing {
    /// Its id.
    pub id: IdChoice,
    /// The method.
    pub method: String,
    /// The params, envelope included.
    pub params: Option<Value>,
}

impl Outgoing {
    /// The JSON-RPC message with `id` (ignored for notifications).
    pub fn message(&self, id: Option<&Id>) -> Value {
        match (&self.id, id) {
            (IdChoice::Notification, _) | (_, None) => {
                mcperr_protocol::jsonrpc::notification(&self.method, self.params.clone())
            }
            (_, Some(id)) => {
                mcperr_protocol::jsonrpc::request(id, &self.method, self.params.clone())
            }
        }
    }
}

/// The ids (not null) of the requests inside a malformed line: an object
/// with an id, or each one in an array. An answer carrying one answers
/// that line, as the server read it.
pub fn raw_line_ids(line: &str) -> Vec<Value> {
    let Ok(v) = serde_json::from_str::<Value>(line) else {
        return vec![];
    };
    let items = match &v {
        Value::Array(a) => a.iter().collect(),
        other => vec![other],
    };
    items
        .into_iter()
        .filter_map(|i| i.get("id"))
        .filter(|id| !id.is_null())
        .cloned()
        .collect()
}

/// One JSON-RPC message, finished: what goes out and what it is known by.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    /// The id its answer must carry; `None` for a notification or a raw line.
    pub id: Option<Id>,
    /// The message as sent (a raw line's text as a JSON string).
    pub body: Value,
    /// The bytes sent: one stdio line, without its newline, or one POST body.
    pub bytes: Vec<u8>,
    /// Its progress token (`params._meta.progressToken`), if it asks for progress.
    pub token: Option<Value>,
    /// The headers the era gives it over Streamable HTTP.
    pub headers: Vec<(String, String)>,
    /// The ids of the requests inside a raw line (see [`raw_line_ids`]):
    /// an answer carrying one answers that line.
    pub inner_ids: Vec<Value>,
}

impl Message {
    /// A JSON-RPC message already built (its id, if any, read from it).
    pub fn of(era: Era, body: Value) -> Message {
        let id = body.get("id").and_then(Id::from_value);
        Message::with_id(era, id, body)
    }

    /// A JSON-RPC message already built, whose id is known.
    fn with_id(era: Era, id: Option<Id>, body: Value) -> Message {
        let token = mcperr_wire::exchange::progress_token(&body).cloned();
        let headers = http_headers(era, &body);
        let bytes = mcperr_wire::text::line(&body);
        Message {
            id,
            body,
            bytes,
            token,
            headers,
            inner_ids: Vec::new(),
        }
    }

    /// A request with `id` (`envelope`: the 2026-07-28 `_meta` envelope is
    /// merged into its params in that era).
    pub fn request(
        era: Era,
        id: &Id,
        method: &str,
        params: Option<Value>,
        envelope: bool,
    ) -> Message {
        let body = jsonrpc::request(id, method, params_for(era, params, envelope));
        Message::with_id(era, Some(id.clone()), body)
    }

    /// A notification.
    pub fn notification(era: Era, method: &str, params: Option<Value>) -> Message {
        Message::of(era, jsonrpc::notification(method, params))
    }

    /// Bytes sent as they are (a malformed line): no id, the era's headers
    /// with no method to name.
    pub fn raw(era: Era, line: &str) -> Message {
        Message {
            id: None,
            body: Value::String(line.to_string()),
            bytes: line.as_bytes().to_vec(),
            token: None,
            headers: http_headers(era, &Value::Null),
            inner_ids: raw_line_ids(line),
        }
    }
}

impl Outgoing {
    /// This message finished for `era` with `id` (ignored for notifications).
    pub fn finish(&self, era: Era, id: Option<&Id>) -> Message {
        let id = id.filter(|_| self.id != IdChoice::Notification);
        Message::with_id(era, id.cloned(), self.message(id))
    }
}

/// The client's name and version in `clientInfo`.
pub fn client_info() -> Value {
    json!({"name": "mcperr", "version": env!("CARGO_PKG_VERSION")})
}

/// The modern `_meta` envelope mcperr sends.
pub fn envelope() -> Value {
    json!({
        META_PROTOCOL_VERSION: Era::Modern.version(),
        META_CLIENT_CAPABILITIES: {},
        META_CLIENT_INFO: client_info(),
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
        .expect("made an object above")
        .entry("_meta")
        .or_insert_with(|| json!({}));
    // Built once: a campaign wraps every 2026-07-28 request.
    static ENVELOPE: std::sync::LazyLock<Value> = std::sync::LazyLock::new(envelope);
    if let (Some(meta), Value::Object(env)) = (meta.as_object_mut(), &*ENVELOPE) {
        for (k, v) in env {
            if !meta.contains_key(k) {
                meta.insert(k.clone(), v.clone());
            }
        }
    }
    params
}

/// The params a request gets in `era` (`envelope`: add the modern envelope).
pub fn params_for(era: Era, params: Option<Value>, envelope: bool) -> Option<Value> {
    if era == Era::Modern && envelope {
        Some(with_envelope(params))
    } else {
        params
    }
}

/// The headers a JSON-RPC message gets over Streamable HTTP in `era`, before
/// the connection adds its session id and the user's `--header`s.
pub fn http_headers(era: Era, msg: &Value) -> Vec<(String, String)> {
    let mut h = vec![
        (
            "Accept".to_string(),
            "application/json, text/event-stream".to_string(),
        ),
        ("Content-Type".to_string(), "application/json".to_string()),
    ];
    let method = msg.get("method").and_then(Value::as_str).unwrap_or("");
    match era {
        Era::Modern => {
            h.push(("MCP-Protocol-Version".into(), Era::Modern.version().into()));
            if !method.is_empty() {
                h.push(("Mcp-Method".into(), method.into()));
            }
            let name = match method {
                "tools/call" | "prompts/get" => msg.pointer("/params/name"),
                "resources/read" => msg.pointer("/params/uri"),
                _ => None,
            };
            if let Some(Value::String(n)) = name {
                h.push(("Mcp-Name".into(), encode_header_value(n)));
            }
        }
        Era::Legacy => {
            if method != "initialize" {
                h.push(("MCP-Protocol-Version".into(), Era::Legacy.version().into()));
            }
        }
    }
    h
}
