//! 2026-07-28's `subscriptions/listen` streams (U9; basic/patterns/subscriptions),
//! judged from what the server wrote, in order: each subscription the case
//! opened is acknowledged first, its notifications carry its id and are of
//! the types (and resource URIs) its filter asked for, and no log message
//! travels on it (U8 `request-scoped`). With no subscription open, a
//! notification only a stream may carry asked for nothing. A subscription
//! the server ends is answered with a successful listen result naming it
//! and, over stdio, named by a `notifications/cancelled` of the server's.

use mcperr_protocol::Era;
use serde_json::Value;

use crate::seen::Seen;
use crate::Violation;
use mcperr_model::rules::AspectId;
use mcperr_wire::exchange::{subscription_id, Stray};

const ACKNOWLEDGED: &str = "notifications/subscriptions/acknowledged";

fn method(m: &Value) -> &str {
    m.get("method").and_then(Value::as_str).unwrap_or("")
}

/// Whether the listen request's filter asked for notification `m`.
fn requested(m: &Value, listen: &Value) -> bool {
    let filter = listen.pointer("/params/notifications");
    let asked = |key: &str| filter.and_then(|f| f.get(key)) == Some(&Value::Bool(true));
    match method(m) {
        "notifications/resources/updated" => {
            let uri = m.pointer("/params/uri");
            filter
                .and_then(|f| f.get("resourceSubscriptions"))
                .and_then(Value::as_array)
                .is_some_and(|uris| uri.is_some_and(|u| uris.contains(u)))
        }
        "notifications/tools/list_changed" => asked("toolsListChanged"),
        "notifications/prompts/list_changed" => asked("promptsListChanged"),
        "notifications/resources/list_changed" => asked("resourcesListChanged"),
        _ => false,
    }
}

/// The violations of the subscription notifications among `strays`, given
/// the `subscriptions/listen` requests the case opened.
pub fn strays(strays: &[Stray], listens: &[Value], era: Option<Era>) -> Vec<Violation> {
    if era != Some(Era::Modern) {
        return vec![];
    }
    let mut out = Vec::new();
    let mut acknowledged = vec![false; listens.len()];
    for stray in strays {
        let Stray::Subscription(m) = stray else {
            continue;
        };
        let name = method(m);
        let Some(sid) = subscription_id(m) else {
            let (aspect, why) = match (name, listens.first()) {
                (_, None) => (
                    AspectId::U9OnlyRequested,
                    format!("the server sent a {name} though no subscription asked for it: {m}"),
                ),
                (ACKNOWLEDGED, Some(_)) => (
                    AspectId::U9Main,
                    format!("the acknowledgment carries no io.modelcontextprotocol/subscriptionId: {m}"),
                ),
                (_, Some(_)) => (
                    AspectId::U9SubscriptionId,
                    format!("a {name} without io.modelcontextprotocol/subscriptionId while a subscription was open: {m}"),
                ),
            };
            out.push(Violation::new(aspect, why));
            continue;
        };
        let Some(i) = listens.iter().position(|l| l.get("id") == Some(sid)) else {
            out.push(Violation::new(
                AspectId::U9OnlyRequested,
                format!("a {name} for subscription {sid}, which was never opened: {m}"),
            ));
            continue;
        };
        if !acknowledged[i] && name != ACKNOWLEDGED {
            out.push(Violation::new(
                AspectId::U9Main,
                format!("the first message of subscription {sid} is a {name}, not its acknowledgment: {m}"),
            ));
        }
        if name == ACKNOWLEDGED {
            acknowledged[i] = true;
        } else if name == "notifications/message" {
            out.push(Violation::new(
                AspectId::U8RequestScoped,
                format!("a log message was delivered on subscription {sid}: {m}"),
            ));
        } else if !requested(m, &listens[i]) {
            out.push(Violation::new(
                AspectId::U9OnlyRequested,
                format!("subscription {sid} did not ask for this {name}: {m}"),
            ));
        }
    }
    for (listen, acked) in listens.iter().zip(acknowledged) {
        if !acked {
            out.push(Violation::new(
                AspectId::U9Main,
                format!(
                    "subscription {} was never acknowledged (no notifications/subscriptions/acknowledged carrying its id)",
                    listen.get("id").unwrap_or(&Value::Null)
                ),
            ));
        }
    }
    out
}

/// How a subscription the case left open ended: the answer to its listen
/// request, if one came, and whether the client cancelled it first.
#[derive(Debug, Clone, Default)]
pub struct Ended {
    /// The `subscriptions/listen` request.
    pub listen: Value,
    /// Its response, if the server sent one.
    pub answer: Option<Value>,
    /// The case cancelled it (a response after that is U7's).
    pub cancelled_by_client: bool,
}

/// The violations of a subscription the server ended ("during shutdown"):
/// a successful listen result carrying the subscription's id (SHOULD), and
/// over stdio a `notifications/cancelled` naming it (MUST).
pub fn teardown(ended: &Ended, strays: &[Stray], stdio: bool) -> Vec<Violation> {
    if ended.cancelled_by_client {
        return vec![];
    }
    let id = ended.listen.get("id").unwrap_or(&Value::Null);
    let cancelled = strays
        .iter()
        .any(|s| matches!(s, Stray::ServerCancel(m) if m.pointer("/params/requestId") == Some(id)));
    let mut out = Vec::new();
    match &ended.answer {
        None if cancelled => out.push(Violation::new(
            AspectId::U9TeardownResponse,
            format!("the server ended subscription {id} with notifications/cancelled but sent no subscriptions/listen result"),
        )),
        None => return out,
        Some(a) if a.get("error").is_some() => out.push(Violation::new(
            AspectId::U9TeardownResponse,
            format!("the server ended subscription {id} with an error, not a completion result: {a}"),
        )),
        Some(a) if subscription_id(a) != Some(id) => out.push(Violation::new(
            AspectId::U9TeardownResponse,
            format!("the result that ended subscription {id} does not carry its io.modelcontextprotocol/subscriptionId: {a}"),
        )),
        Some(_) => {}
    }
    if stdio && !cancelled {
        out.push(Violation::new(
            AspectId::U9TeardownCancel,
            format!(
                "the server ended subscription {id} without a notifications/cancelled naming it"
            ),
        ));
    }
    out
}

/// The registry's entry point ([`crate::registry::INVARIANTS`]): the messages of the subscriptions the request opened.
pub(crate) fn subscription_messages(s: &Seen) -> Vec<Violation> {
    strays(&s.exchange.strays, s.ctx.listens, s.ctx.era)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn listen() -> Value {
        json!({"jsonrpc": "2.0", "id": "s", "method": "subscriptions/listen",
            "params": {"notifications": {"resourceSubscriptions": ["books://Dune"]}}})
    }

    fn note(method: &str, sid: Option<&str>, uri: Option<&str>) -> Stray {
        let mut params = json!({});
        if let Some(s) = sid {
            params["_meta"] = json!({"io.modelcontextprotocol/subscriptionId": s});
        }
        if let Some(u) = uri {
            params["uri"] = u.into();
        }
        Stray::Subscription(json!({"jsonrpc": "2.0", "method": method, "params": params}))
    }

    fn aspects(strays: &[Stray]) -> Vec<AspectId> {
        super::strays(strays, &[listen()], Some(Era::Modern))
            .into_iter()
            .map(|v| v.aspect)
            .collect()
    }

    #[test]
    fn an_acknowledged_subscription_gets_what_it_asked_for() {
        let ok = [
            note(ACKNOWLEDGED, Some("s"), None),
            note(
                "notifications/resources/updated",
                Some("s"),
                Some("books://Dune"),
            ),
        ];
        assert!(aspects(&ok).is_empty());
    }

    #[test]
    fn an_update_before_the_acknowledgment_or_none_at_all_breaks_the_main_sentence() {
        let early = [
            note(
                "notifications/resources/updated",
                Some("s"),
                Some("books://Dune"),
            ),
            note(ACKNOWLEDGED, Some("s"), None),
        ];
        assert_eq!(aspects(&early), [AspectId::U9Main]);
        assert_eq!(aspects(&[]), [AspectId::U9Main]);
    }

    #[test]
    fn unrequested_types_missing_ids_and_logs_are_each_named() {
        let s = [
            note(ACKNOWLEDGED, Some("s"), None),
            note("notifications/tools/list_changed", Some("s"), None),
            note(
                "notifications/resources/updated",
                Some("s"),
                Some("books://Emma"),
            ),
            note(
                "notifications/resources/updated",
                None,
                Some("books://Dune"),
            ),
            note("notifications/message", Some("s"), None),
        ];
        assert_eq!(
            aspects(&s),
            [
                AspectId::U9OnlyRequested,
                AspectId::U9OnlyRequested,
                AspectId::U9SubscriptionId,
                AspectId::U8RequestScoped
            ]
        );
        // With nothing open, a list change asked for nothing; 2025-11-25 allows it.
        let change = [note("notifications/tools/list_changed", None, None)];
        let none = super::strays(&change, &[], Some(Era::Modern));
        assert_eq!(none[0].aspect, AspectId::U9OnlyRequested);
        assert!(super::strays(&change, &[], Some(Era::Legacy)).is_empty());
    }

    #[test]
    fn a_server_that_ends_a_subscription_answers_it_and_cancels_it() {
        let cancel = Stray::ServerCancel(
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "s"}}),
        );
        let answer = json!({"jsonrpc": "2.0", "id": "s", "result": {"resultType": "complete",
            "_meta": {"io.modelcontextprotocol/subscriptionId": "s"}}});
        let ended = |answer: Option<Value>| Ended {
            listen: listen(),
            answer,
            cancelled_by_client: false,
        };
        let of = |e: &Ended, strays: &[Stray]| -> Vec<AspectId> {
            teardown(e, strays, true)
                .into_iter()
                .map(|v| v.aspect)
                .collect()
        };
        assert!(of(&ended(Some(answer.clone())), std::slice::from_ref(&cancel)).is_empty());
        assert_eq!(of(&ended(Some(answer)), &[]), [AspectId::U9TeardownCancel]);
        assert_eq!(of(&ended(None), &[cancel]), [AspectId::U9TeardownResponse]);
        assert!(of(&ended(None), &[]).is_empty());
    }
}
