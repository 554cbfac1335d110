//! Reaching a server: start it, establish the era within the start-up
//! timeout (saying what it printed when it will not), and discover what it
//! offers through its list methods.

use mcperr_cases::discovery::Discovery;
use mcperr_protocol::Era;
use mcperr_wire::exchange::{Ending, Exchange, Stray};
use serde_json::{json, Value};

use crate::client::{legacy_handshake, Client, Conn};
use crate::settings::{EraChoice, RunSettings, SetupError};

fn describe_failure(what: &str, ex: &Exchange) -> String {
    // A protected server: say what to give it, not only what it answered.
    if let Some(status @ (401 | 403)) = ex.http.as_ref().map(|a| a.status) {
        return format!(
            "{what} was refused with HTTP {status}: the server asks for authorization; give its token with --header \"Authorization: Bearer TOKEN\" (and --auth-required to judge how it refuses requests without one)"
        );
    }
    match &ex.ending {
        Ending::Answered(r) | Ending::WrongId(r) => format!("{what} was answered {r}"),
        Ending::Timeout => format!(
            "{what} got no answer within {} ms (raise --startup-timeout-ms for a slow server)",
            ex.duration.as_millis()
        ),
        Ending::Empty { status, why } => {
            format!("{what} got no JSON-RPC answer (HTTP {status}: {why:?})")
        }
        Ending::NotApplicable(why) | Ending::SetupFailed(why) => {
            format!("{what} got no JSON-RPC answer ({why})")
        }
        Ending::Died(how) => format!("{what} got no answer: {how}"),
        Ending::TooLarge(n) => {
            format!("{what} was answered with over {n} bytes, more than --max-line allows")
        }
    }
}

/// What the server printed on stdout that was not JSON-RPC, for setup messages.
fn garbage(strays: &[Stray]) -> Option<String> {
    let lines: Vec<String> = strays
        .iter()
        .filter_map(|s| match s {
            Stray::NotJson(l) => Some(format!("{l:?}")),
            _ => None,
        })
        .take(3)
        .collect();
    (!lines.is_empty()).then(|| lines.join(", "))
}

/// `failure` with what the server printed: non-JSON-RPC stdout lines (J5)
/// and the tail of its stderr, unless the failure already shows it.
fn what_it_printed(
    client: &mut Client,
    mut failure: String,
    rule: &mut mcperr_model::rules::RuleId,
) -> String {
    if let Some(g) = garbage(&client.drain()) {
        *rule = mcperr_model::rules::RuleId::J5;
        failure.push_str(&format!("; it printed non-JSON-RPC lines on stdout: {g}"));
    }
    let tail = client.stderr().tail(5);
    if !tail.is_empty() && !failure.contains("stderr tail") {
        failure.push_str(&format!("; stderr tail: {}", tail.replace('\n', " | ")));
    }
    failure
}

/// Starts the server and establishes `choice`'s era within the start-up
/// timeout. Returns the client (with the run's timeout) and the handshake's
/// result (`server/discover` or `initialize`: serverInfo, capabilities).
pub async fn connect(
    settings: &RunSettings,
    choice: EraChoice,
) -> Result<(Client, Value), SetupError> {
    let mut errors = Vec::new();
    let mut rule = mcperr_model::rules::RuleId::J4;
    let wait = settings.startup_timeout;
    if matches!(choice, EraChoice::Auto | EraChoice::Pinned(Era::Modern)) {
        let mut client = Client::new(settings.spawn(wait)?, Era::Modern, wait);
        let ex = client.request("server/discover", None, true).await;
        match &ex.ending {
            // A wrong id is judged (J1) by every case; it does not stop the run.
            Ending::Answered(r) | Ending::WrongId(r) if r.get("result").is_some() => {
                let info = r["result"].clone();
                client.set_timeout(settings.timeout);
                client.pace =
                    crate::pace::Pace::new(settings.slow_timeout).shared(settings.hung.clone());
                return Ok((client, info));
            }
            _ => {
                let e = format!("2026-07-28: {}", describe_failure("server/discover", &ex));
                errors.push(what_it_printed(&mut client, e, &mut rule));
            }
        }
        client.conn.close().await;
    }
    if matches!(choice, EraChoice::Auto | EraChoice::Pinned(Era::Legacy)) {
        let mut client = Client::new(settings.spawn(wait)?, Era::Legacy, wait);
        match legacy_handshake(&mut client).await {
            Ok(info) if older_version(&info).is_some() && !claims_legacy(settings).await => {
                client.conn.close().await;
                let v = older_version(&info).unwrap_or_default();
                return Err(SetupError {
                    rule: mcperr_model::rules::RuleId::L1,
                    spawn: false,
                    unjudged: true,
                    message: format!(
                        "not judged: the server answered initialize for 2025-11-25 with protocol version {v}, another version it supports, as basic/lifecycle#version-negotiation allows (\"Otherwise, the server MUST respond with another protocol version it supports\"); mcperr judges 2025-11-25 and 2026-07-28 only"
                    ),
                });
            }
            Ok(info) => {
                client.set_timeout(settings.timeout);
                client.pace =
                    crate::pace::Pace::new(settings.slow_timeout).shared(settings.hung.clone());
                return Ok((client, info));
            }
            Err(ex) => {
                let e = format!("2025-11-25: {}", describe_failure("initialize", &ex));
                errors.push(what_it_printed(&mut client, e, &mut rule));
            }
        }
        client.conn.close().await;
    }
    Err(SetupError {
        rule,
        spawn: false,
        unjudged: false,
        message: format!(
            "the server `{}` did not complete a handshake ({})",
            settings.target.display(),
            errors.join("; ")
        ),
    })
}

/// The older protocol version an `initialize` result names, if it names
/// one of [`mcperr_protocol::era::OLDER_VERSIONS`].
fn older_version(info: &Value) -> Option<&str> {
    let v = info.get("protocolVersion").and_then(Value::as_str)?;
    mcperr_protocol::era::OLDER_VERSIONS
        .contains(&v)
        .then_some(v)
}

/// Whether the server claims 2025-11-25 elsewhere: its `server/discover`
/// (on a process of its own, within the start-up timeout) lists it among
/// `supportedVersions`. Then answering `initialize` for 2025-11-25 with an
/// older version breaks "If the server supports the requested protocol
/// version, it MUST respond with the same version" (L1 judges it).
async fn claims_legacy(settings: &RunSettings) -> bool {
    let wait = settings.startup_timeout;
    let Ok(conn) = settings.spawn(wait) else {
        return false;
    };
    let mut client = Client::new(conn, Era::Modern, wait);
    let ex = client.request("server/discover", None, true).await;
    client.conn.close().await;
    ex.response()
        .and_then(|r| r.pointer("/result/supportedVersions"))
        .and_then(Value::as_array)
        .is_some_and(|vs| vs.iter().any(|v| v == Era::Legacy.version()))
}

async fn list_all(client: &mut Client, method: &str, key: &str) -> Vec<Value> {
    let mut out = Vec::new();
    let mut cursor: Option<Value> = None;
    for _ in 0..100 {
        let params = cursor.take().map(|c| json!({"cursor": c}));
        let ex = client.request(method, params, true).await;
        // Discovery tolerates wrong ids: the cases judge them (J1).
        let Some(result) = ex.response().and_then(|r| r.get("result")) else {
            break;
        };
        out.extend(
            result
                .get(key)
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default(),
        );
        match result.get("nextCursor") {
            Some(c) if !c.is_null() => cursor = Some(c.clone()),
            _ => break,
        }
    }
    out
}

/// The versions a `server/discover` result lists in `supportedVersions`
/// (none from an `initialize` result), each as written.
pub(crate) fn listed_versions(handshake: &Value) -> Vec<String> {
    handshake
        .get("supportedVersions")
        .and_then(Value::as_array)
        .map(|vs| {
            vs.iter()
                .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Lists what the server offers, following pagination cursors; the
/// handshake's result gives its `serverInfo` and `capabilities`.
pub async fn discover(client: &mut Client, handshake: Value) -> Discovery {
    // 2026-07-28 moved serverInfo into the result's _meta.
    let server_info = handshake
        .get("serverInfo")
        .or_else(|| handshake.pointer("/_meta/io.modelcontextprotocol~1serverInfo"))
        .cloned()
        .unwrap_or(Value::Null);
    let capabilities = handshake
        .get("capabilities")
        .cloned()
        .unwrap_or(Value::Null);
    let tools = list_all(client, "tools/list", "tools").await;
    // Before any tools/call: their x-mcp-header parameters go into headers.
    if let Conn::Http(h) = &client.conn {
        crate::transport::http::learn_mirrored(&h.mirrored, &tools);
    }
    let mut d = Discovery {
        capabilities,
        tools,
        resources: list_all(client, "resources/list", "resources").await,
        templates: list_all(client, "resources/templates/list", "resourceTemplates").await,
        prompts: list_all(client, "prompts/list", "prompts").await,
        server_info,
        versions: listed_versions(&handshake),
        harvest: Default::default(),
        parts: Default::default(),
    };
    d.harvest = harvest(client, &d).await;
    d
}

/// Real values for valid calls: from the listing, then from
/// `completion/complete` where the server declares completions.
async fn harvest(client: &mut Client, d: &Discovery) -> mcperr_cases::discovery::Harvest {
    use mcperr_cases::generate::harvest;
    let mut h = harvest::from_listing(d);
    for (name, params) in harvest::completion_requests(d) {
        let ex = client
            .request("completion/complete", Some(params), true)
            .await;
        for v in ex
            .response()
            .map(harvest::completion_values)
            .unwrap_or_default()
        {
            harvest::add(&mut h, &name, v);
        }
    }
    h
}
