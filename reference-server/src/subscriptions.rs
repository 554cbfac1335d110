//! 2026-07-28's `subscriptions/listen` on a stdio connection
//! (basic/patterns/subscriptions). A subscription is its listen request's
//! id and the filter the server agreed to: this server changes none of its
//! lists, so it honours `resourceSubscriptions` only and leaves the
//! list-change types out of the acknowledgment. The acknowledgment is the
//! first message carrying the id; a restocked book's URI is a
//! `notifications/resources/updated` to every subscription that lists it;
//! the client ends one with `notifications/cancelled`; the server ends all
//! of them when the shop closes (as at shutdown): a successful listen
//! result, then a `notifications/cancelled` naming it. Every message of a
//! subscription carries its id under `io.modelcontextprotocol/subscriptionId`.
//! Imports `faults`.

use mcperr_protocol::{codes, jsonrpc, ErrorObject};
use serde_json::{json, Map, Value};

use crate::faults::Fault;

/// The `_meta` key that names a message's subscription.
pub const META_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// A connection's open subscriptions, in the order they were opened.
#[derive(Debug, Default, Clone)]
pub struct Subscriptions {
    open: Vec<(Value, Value)>,
}

fn on(id: &Value, fault: Option<Fault>) -> Value {
    if fault == Some(Fault::SubscriptionIdMissing) {
        json!({})
    } else {
        json!({ META_SUBSCRIPTION_ID: id })
    }
}

fn updated(uri: &str, id: &Value, fault: Option<Fault>) -> Value {
    jsonrpc::notification(
        "notifications/resources/updated",
        Some(json!({"_meta": on(id, fault), "uri": uri})),
    )
}

impl Subscriptions {
    /// Opens the subscription `id` asks for: its acknowledgment, or -32602
    /// for a `notifications` filter that is not an object.
    pub fn listen(
        &mut self,
        id: &Value,
        params: Option<&Value>,
        fault: Option<Fault>,
    ) -> Result<Vec<Value>, ErrorObject> {
        let Some(filter) = params
            .and_then(|p| p.get("notifications"))
            .and_then(Value::as_object)
        else {
            return Err(ErrorObject::new(
                codes::INVALID_PARAMS,
                "Invalid params: \"notifications\" must be an object",
            ));
        };
        let mut agreed = Map::new();
        let uris: Vec<Value> = filter
            .get("resourceSubscriptions")
            .and_then(Value::as_array)
            .map(|u| u.iter().filter(|u| u.is_string()).cloned().collect())
            .unwrap_or_default();
        if !uris.is_empty() {
            agreed.insert("resourceSubscriptions".into(), uris.clone().into());
        }
        let mut out = Vec::new();
        if fault == Some(Fault::SubscriptionUpdateFirst) {
            if let Some(uri) = uris.first().and_then(Value::as_str) {
                out.push(updated(uri, id, None));
            }
        }
        out.push(jsonrpc::notification(
            "notifications/subscriptions/acknowledged",
            Some(json!({"_meta": {META_SUBSCRIPTION_ID: id}, "notifications": agreed})),
        ));
        self.open.push((id.clone(), Value::Object(agreed)));
        Ok(out)
    }

    /// Ends the subscription the client cancelled; whether there was one.
    pub fn cancel(&mut self, request_id: &Value) -> bool {
        let before = self.open.len();
        self.open.retain(|(id, _)| id != request_id);
        self.open.len() != before
    }

    /// What a restock of the resource `uri` sends: an update to every
    /// subscription that lists it.
    pub fn restocked(&self, uri: &str, fault: Option<Fault>) -> Vec<Value> {
        let mut out = Vec::new();
        for (id, agreed) in &self.open {
            let listed = agreed
                .get("resourceSubscriptions")
                .and_then(Value::as_array)
                .is_some_and(|u| u.iter().any(|u| u == uri));
            if listed {
                out.push(updated(uri, id, fault));
            }
            if fault == Some(Fault::SubscriptionUnrequested) {
                out.push(jsonrpc::notification(
                    "notifications/tools/list_changed",
                    Some(json!({"_meta": {META_SUBSCRIPTION_ID: id}})),
                ));
            }
            if fault == Some(Fault::SubscriptionLogs) {
                out.push(jsonrpc::notification(
                    "notifications/message",
                    Some(json!({"_meta": {META_SUBSCRIPTION_ID: id},
                        "level": "info", "logger": "bookshop", "data": format!("restocked {uri}")})),
                ));
            }
        }
        out
    }

    /// What closing the shop sends: for every subscription, the successful
    /// result of its listen request, then a `notifications/cancelled` that
    /// names it. None stays open.
    pub fn close_all(&mut self, fault: Option<Fault>) -> Vec<Value> {
        let mut out = Vec::new();
        for (id, _) in self.open.drain(..) {
            if fault != Some(Fault::TeardownSilent) {
                let Some(rid) = mcperr_protocol::Id::from_value(&id) else {
                    continue;
                };
                out.push(jsonrpc::success(
                    &rid,
                    json!({"resultType": "complete", "_meta": {META_SUBSCRIPTION_ID: id}}),
                ));
            }
            if fault != Some(Fault::TeardownUncancelled) {
                out.push(jsonrpc::notification(
                    "notifications/cancelled",
                    Some(json!({"requestId": id, "reason": "The shop is closing."})),
                ));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listen(s: &mut Subscriptions, id: Value, fault: Option<Fault>) -> Vec<Value> {
        let params = json!({"notifications": {"toolsListChanged": true, "resourceSubscriptions": ["books://Dune"]}});
        s.listen(&id, Some(&params), fault).unwrap()
    }

    #[test]
    fn a_subscription_is_acknowledged_first_with_what_this_server_honours() {
        let mut s = Subscriptions::default();
        let out = listen(&mut s, json!("sub"), None);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0]["method"], "notifications/subscriptions/acknowledged");
        assert_eq!(out[0]["params"]["_meta"][META_SUBSCRIPTION_ID], "sub");
        // No list of this server changes: toolsListChanged is left out.
        assert_eq!(
            out[0]["params"]["notifications"],
            json!({"resourceSubscriptions": ["books://Dune"]})
        );
        assert!(s.listen(&json!(2), Some(&json!({})), None).is_err());
    }

    #[test]
    fn updates_go_to_the_subscriptions_that_list_the_uri_until_cancelled() {
        let mut s = Subscriptions::default();
        listen(&mut s, json!(7), None);
        let out = s.restocked("books://Dune", None);
        assert_eq!(out.len(), 1);
        assert_eq!(
            out[0]["params"],
            json!({"_meta": {META_SUBSCRIPTION_ID: 7}, "uri": "books://Dune"})
        );
        assert!(s.restocked("books://Emma", None).is_empty());
        assert!(s.cancel(&json!(7)));
        assert!(s.restocked("books://Dune", None).is_empty());
    }

    #[test]
    fn closing_answers_and_cancels_every_subscription() {
        let mut s = Subscriptions::default();
        listen(&mut s, json!("a"), None);
        let out = s.close_all(None);
        assert_eq!(out[0]["id"], "a");
        assert_eq!(out[0]["result"]["_meta"][META_SUBSCRIPTION_ID], "a");
        assert_eq!(out[1]["method"], "notifications/cancelled");
        assert_eq!(out[1]["params"]["requestId"], "a");
        assert!(s.close_all(None).is_empty());
    }
}
