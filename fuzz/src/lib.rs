//! What the fuzz targets share: the reference server in process, set up once
//! per thread (compiling its schemas is the expensive part), what it offers
//! (for mcperr-cases' request generator), and one request sent through its pure
//! stdio edge.

use mcperr_cases::discovery::Discovery;
use mcperr_protocol::Era;
use mcperr_reference::stdio::StdioEdge;
use mcperr_reference::Handler;
use serde_json::{json, Value};

/// The secret the `dispatch` target plants in crash inputs: it must never come back.
pub const CANARY: &str = "mcperr-fuzz-canary-5e1f";

/// The `initialize` exchange that opens a 2025-11-25 session.
pub fn handshake(handler: &Handler, edge: &mut StdioEdge) {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "fuzz", "version": "0"}}});
    edge.feed(handler, init.to_string().as_bytes());
    edge.feed(
        handler,
        br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
}

/// Sends one message through a fresh or given edge; the response, if one came.
pub fn answer(handler: &Handler, edge: &mut StdioEdge, line: &[u8]) -> Option<Value> {
    let out = edge.feed(handler, line);
    out.stdout
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .filter_map(|l| mcperr_cases::fuzz::inputs::parse_line(l).ok())
        .next_back()
}

/// What the reference server lists, as `mcperr` would discover it.
pub fn discovery(handler: &Handler) -> Discovery {
    let mut edge = StdioEdge::new();
    handshake(handler, &mut edge);
    let list = |edge: &mut StdioEdge, method: &str, key: &str| -> Vec<Value> {
        let msg = json!({"jsonrpc": "2.0", "id": 1, "method": method});
        answer(handler, edge, msg.to_string().as_bytes())
            .and_then(|r| r.pointer(&format!("/result/{key}")).cloned())
            .and_then(|v| v.as_array().cloned())
            .unwrap_or_default()
    };
    Discovery {
        tools: list(&mut edge, "tools/list", "tools"),
        resources: list(&mut edge, "resources/list", "resources"),
        templates: list(&mut edge, "resources/templates/list", "resourceTemplates"),
        prompts: list(&mut edge, "prompts/list", "prompts"),
        server_info: Value::Null,
        capabilities: json!({"tools": {}, "resources": {}, "prompts": {}}),
        ..Discovery::default()
    }
}

/// Both eras, in a fixed order (the first input byte picks one).
pub const ERAS: [Era; 2] = [Era::Legacy, Era::Modern];
