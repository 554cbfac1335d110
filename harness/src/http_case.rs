//! Running an HTTP-only case: the request shaped by its `[http]` table
//! (method, header overrides, session tricks, raw body, notification).

use mcperr_protocol::jsonrpc;
use serde_json::Value;

use crate::case::{Case, HttpSpec};
use crate::client::{Client, Conn, Ending, Exchange};
use crate::oracle::pattern;
use crate::transport::HttpConnection;

const BOGUS_SESSION: &str = "mcperr-bogus-session-0000";

/// A session id that the server minted and then ended with DELETE, or why
/// there is none to test with.
async fn deleted_session(client: &Client) -> Result<String, Ending> {
    let Conn::Http(http) = &client.conn else {
        return Err(Ending::Empty("not an HTTP client".into()));
    };
    let conn = HttpConnection::new(&http.target, client.timeout).map_err(Ending::Empty)?;
    let mut fresh = Client::new(Conn::Http(conn), client.era, client.timeout);
    if crate::runner::legacy_handshake(&mut fresh).await.is_err() {
        return Err(Ending::Empty(
            "a second initialize, to get a session to delete, failed".into(),
        ));
    }
    let Conn::Http(h) = &fresh.conn else {
        unreachable!("built as HTTP")
    };
    let Some(id) = h.session.clone() else {
        return Err(no_sessions());
    };
    match h.close().await {
        Some(s) if (200..300).contains(&s) => Ok(id),
        Some(405) => Err(Ending::NotApplicable(
            "the server does not let clients end sessions (DELETE 405), which the spec allows"
                .into(),
        )),
        Some(s) => Err(Ending::Empty(format!(
            "DELETE of a fresh session was answered {s}"
        ))),
        None => Err(Ending::Empty("DELETE of a fresh session failed".into())),
    }
}

fn no_sessions() -> Ending {
    Ending::NotApplicable(
        "the server minted no Mcp-Session-Id: it runs without sessions, which 2025-11-25 allows"
            .into(),
    )
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
    let has_session = matches!(&client.conn, Conn::Http(h) if h.session.is_some());
    let skip_or_fail = |ending: Ending| Exchange {
        request: msg.clone(),
        ending,
        strays: vec![],
        duration: std::time::Duration::ZERO,
        http: None,
    };
    if spec.session.is_some() && !has_session {
        return skip_or_fail(no_sessions());
    }
    match spec.session.as_deref() {
        Some("none") => overrides.push(("Mcp-Session-Id".into(), None)),
        Some("bogus") => overrides.push(("Mcp-Session-Id".into(), Some(BOGUS_SESSION.into()))),
        Some("deleted") => match deleted_session(client).await {
            Ok(id) => overrides.push(("Mcp-Session-Id".into(), Some(id))),
            Err(ending) => return skip_or_fail(ending),
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
