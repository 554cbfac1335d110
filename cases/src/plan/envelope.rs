//! What every message of a run carries for its era before the case's own
//! params: the 2026-07-28 `_meta` envelope (version, capabilities, client
//! info) and the Streamable HTTP headers.

use mcperr_protocol::era::{META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_PROTOCOL_VERSION};
use mcperr_protocol::headers::encode_header_value;
use mcperr_protocol::Era;
use serde_json::{json, Value};

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
