//! Running an HTTP-only case: the request shaped by its `[http]` table
//! (method, header overrides, session tricks, raw body, notification).

use mcperr_protocol::jsonrpc;
use serde_json::Value;

use crate::case::{Case, HttpSpec};
use crate::client::{Client, Conn, Ending, Exchange};
use crate::oracle::pattern;
use crate::transport::HttpConnection;

const BOGUS_SESSION: &str = "mcperr-bogus-session-0000";

/// A session id that the server minted and then ended with DELETE.
async fn deleted_session(client: &Client) -> Option<String> {
    let Conn::Http(http) = &client.conn else {
        return None;
    };
    let mut fresh = Client::new(
        Conn::Http(HttpConnection::new(&http.target, client.timeout).ok()?),
        client.era,
        client.timeout,
    );
    let params = serde_json::json!({"protocolVersion": mcperr_protocol::Era::Legacy.version(), "capabilities": {},
        "clientInfo": {"name": "mcperr", "version": env!("CARGO_PKG_VERSION")}});
    let ex = fresh.request("initialize", Some(params), false).await;
    if !matches!(ex.ending, Ending::Answered(_)) {
        return None;
    }
    let Conn::Http(h) = &fresh.conn else {
        return None;
    };
    let id = h.session.clone()?;
    h.close().await;
    Some(id)
}

/// Sends the case's judged request over HTTP as its `[http]` table says.
pub async fn exchange(
    client: &mut Client,
    case: &Case,
    spec: &HttpSpec,
    vars: &[(&str, &str)],
) -> Exchange {
    let params = case
        .request
        .params
        .as_ref()
        .map(|p| pattern::substitute(p, vars));
    let params = client.params_for(params, case.envelope);
    let (id, msg) = if spec.notification {
        (None, jsonrpc::notification(&case.request.method, params))
    } else {
        let id = match &case.request.id {
            Some(v) => mcperr_protocol::Id::from_value(v).unwrap_or_else(|| client.fresh_id()),
            None => client.fresh_id(),
        };
        (
            Some(id.clone()),
            jsonrpc::request(&id, &case.request.method, params),
        )
    };
    let method = spec.method.clone().unwrap_or_else(|| "POST".into());
    let mut overrides: Vec<(String, Option<String>)> = spec
        .headers
        .iter()
        .map(|(k, v)| {
            (
                k.clone(),
                (v != "$absent").then(|| {
                    pattern::substitute(&Value::String(v.clone()), vars)
                        .as_str()
                        .unwrap_or_default()
                        .to_string()
                }),
            )
        })
        .collect();
    match spec.session.as_deref() {
        Some("none") => overrides.push(("Mcp-Session-Id".into(), None)),
        Some("bogus") => overrides.push(("Mcp-Session-Id".into(), Some(BOGUS_SESSION.into()))),
        Some("deleted") => match deleted_session(client).await {
            Some(id) => overrides.push(("Mcp-Session-Id".into(), Some(id))),
            None => {
                return Exchange {
                    request: msg,
                    ending: Ending::Empty(
                        "could not open and DELETE a session to test with".into(),
                    ),
                    strays: vec![],
                    duration: std::time::Duration::ZERO,
                    http: None,
                }
            }
        },
        _ => {}
    }
    let (request, body) = match (&case.request.raw, method.as_str()) {
        (_, "GET" | "DELETE") => (Value::Null, None),
        (Some(raw), _) => (Value::String(raw.clone()), Some(raw.clone().into_bytes())),
        (None, _) => (msg.clone(), Some(msg.to_string().into_bytes())),
    };
    let Conn::Http(http) = &client.conn else {
        unreachable!("HTTP cases run on HTTP clients")
    };
    let headers = http.headers_for(client.era, &msg);
    let id = if case.request.raw.is_some() { None } else { id };
    client
        .http_exchange(id, request, &method, headers, &overrides, body)
        .await
}
