//! What any one `input_required` answer must be (2026-07-28
//! basic/patterns/mrtr; L3 and M1), judged on every exchange like the other
//! invariants: asked only on the methods that may ask, carrying
//! `inputRequests` or `requestState`, each input request one of the three
//! kinds, and none for a capability or an elicitation mode the request's
//! `clientCapabilities` did not declare. What takes a retry (the state
//! verified and bound, `inputResponses` validated) is the cases'
//! (fixtures/cases/mrtr).

use serde_json::{Map, Value};

use super::asks::{undeclared_mode, Ask, Aspects};
use crate::seen::Seen;
use crate::Violation;
use mcperr_model::rules::AspectId;

/// The methods that may answer `input_required` (basic/patterns/mrtr#supported-requests).
const MAY_ASK: [&str; 3] = ["tools/call", "resources/read", "prompts/get"];

/// The input request kinds, with the client capability each needs.
const KINDS: [(&str, &str); 3] = [
    ("elicitation/create", "elicitation"),
    ("sampling/createMessage", "sampling"),
    ("roots/list", "roots"),
];

/// Every M1 and L3 violation of one answer to `request`.
pub fn input_required_answer(response: &Value, request: &Value) -> Vec<Violation> {
    let Some(result) = response.get("result").and_then(Value::as_object) else {
        return vec![];
    };
    let declared = request
        .pointer("/params/_meta")
        .and_then(|m| m.get(mcperr_protocol::era::META_CLIENT_CAPABILITIES))
        .and_then(Value::as_object);
    let mut out = Vec::new();
    if let Some(asks) = result.get("inputRequests").and_then(Value::as_object) {
        out.extend(undeclared(asks, declared, result));
        out.extend(asks.iter().filter_map(|(key, r)| kind_fault(key, r)));
        out.extend(undeclared_modes(asks, declared));
        out.extend(undeclared_sampling(asks, declared));
    }
    if result.get("resultType").and_then(Value::as_str) != Some("input_required") {
        return out;
    }
    let method = request.get("method").and_then(Value::as_str).unwrap_or("");
    if !MAY_ASK.contains(&method) {
        out.push(Violation::new(
            AspectId::M1OnlySupportedRequests,
            format!("{method} was answered with an input_required result; only tools/call, resources/read and prompts/get may ask for input"),
        ));
    }
    if !result.contains_key("inputRequests") && !result.contains_key("requestState") {
        out.push(Violation::new(
            AspectId::M1InputRequiredNonempty,
            format!(
                "the input_required result has neither inputRequests nor requestState: {}",
                Value::Object(result.clone())
            ),
        ));
    }
    out
}

/// L3: input requests of a kind whose capability the request did not
/// declare (mcperr declares none unless a case does): "Servers **MUST NOT**
/// send an `inputRequests` that the client has not declared support for in
/// its capabilities."
fn undeclared(
    asks: &Map<String, Value>,
    declared: Option<&Map<String, Value>>,
    result: &Map<String, Value>,
) -> Option<Violation> {
    let undeclared: Vec<&str> = asks
        .values()
        .filter_map(|r| r.get("method").and_then(Value::as_str))
        .filter_map(|m| KINDS.iter().find(|(k, _)| *k == m).map(|(_, cap)| *cap))
        .filter(|cap| !declared.is_some_and(|d| d.contains_key(*cap)))
        .collect();
    (!undeclared.is_empty()).then(|| {
        Violation::new(
            AspectId::L3NoUndeclaredInputRequests,
            format!(
                "the result asks for input the client did not declare it supports ({}): {}",
                undeclared.join(", "),
                Value::Object(result.clone())
            ),
        )
    })
}

/// M1: an input request that is not one of the three kinds.
fn kind_fault(key: &str, r: &Value) -> Option<Violation> {
    let method = r.get("method").and_then(Value::as_str);
    if method.is_some_and(|m| KINDS.iter().any(|(k, _)| *k == m)) {
        return None;
    }
    Some(Violation::new(
        AspectId::M1InputRequestTypes,
        format!("inputRequests[{key:?}] is not an elicitation/create, sampling/createMessage or roots/list request: {r}"),
    ))
}

/// The input requests of `asks`, labelled for a report.
fn labelled(asks: &Map<String, Value>) -> Vec<Ask<'_>> {
    asks.iter()
        .map(|(key, request)| Ask {
            label: format!("inputRequests[{key:?}]"),
            request,
        })
        .collect()
}

/// M1's aspects for what [`super::asks`] finds.
const M1: Aspects = Aspects {
    modes: AspectId::M1ElicitationModesDeclared,
    tools: AspectId::M1SamplingToolsDeclared,
    context: AspectId::M1SamplingContextDeclared,
};

/// M1: an elicitation in a mode the client did not declare (a client that
/// declared no elicitation at all is L3's).
fn undeclared_modes(
    asks: &Map<String, Value>,
    declared: Option<&Map<String, Value>>,
) -> Option<Violation> {
    let modes = declared?.get("elicitation")?.as_object()?;
    undeclared_mode(&labelled(asks), modes, M1.modes)
}

/// M1: a sampling input request that uses what the client's `sampling`
/// capability did not declare (a client that declared no sampling at all
/// is L3's).
fn undeclared_sampling(
    asks: &Map<String, Value>,
    declared: Option<&Map<String, Value>>,
) -> Vec<Violation> {
    match declared.and_then(|d| d.get("sampling")) {
        Some(sampling) => super::asks::undeclared_sampling(&labelled(asks), sampling, &M1),
        None => vec![],
    }
}

/// The registry's entry point ([`crate::registry::INVARIANTS`]): the input requests an answer carries.
pub(crate) fn input_requests(s: &Seen) -> Vec<Violation> {
    match s.response {
        Some(response) => input_required_answer(response, s.request),
        None => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn request(method: &str, elicitation: Value) -> Value {
        json!({"method": method, "params": {"_meta": {
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": elicitation}}}})
    }

    fn aspects(response: Value, request: &Value) -> Vec<AspectId> {
        input_required_answer(&response, request)
            .into_iter()
            .map(|v| v.aspect)
            .collect()
    }

    #[test]
    fn a_form_elicitation_on_a_tool_call_from_a_client_that_declared_it_is_fine() {
        let ask = json!({"result": {"resultType": "input_required", "requestState": "s",
            "inputRequests": {"confirm": {"method": "elicitation/create", "params": {"message": "?"}}}}});
        assert!(aspects(ask, &request("tools/call", json!({}))).is_empty());
    }

    #[test]
    fn an_input_required_list_an_empty_one_and_a_foreign_kind_are_each_named() {
        let list = json!({"result": {"resultType": "input_required", "requestState": "s"}});
        assert_eq!(
            aspects(list, &request("tools/list", json!({}))),
            [AspectId::M1OnlySupportedRequests]
        );
        let empty = json!({"result": {"resultType": "input_required"}});
        assert_eq!(
            aspects(empty, &request("tools/call", json!({}))),
            [AspectId::M1InputRequiredNonempty]
        );
        let foreign = json!({"result": {"resultType": "input_required",
            "inputRequests": {"x": {"method": "tools/list"}}}});
        assert_eq!(
            aspects(foreign, &request("tools/call", json!({}))),
            [AspectId::M1InputRequestTypes]
        );
    }

    #[test]
    fn a_url_elicitation_needs_the_url_mode_declared() {
        let url = json!({"result": {"resultType": "input_required",
            "inputRequests": {"pay": {"method": "elicitation/create", "params": {"mode": "url"}}}}});
        assert_eq!(
            aspects(url.clone(), &request("tools/call", json!({"form": {}}))),
            [AspectId::M1ElicitationModesDeclared]
        );
        assert_eq!(
            aspects(url.clone(), &request("tools/call", json!({}))),
            [AspectId::M1ElicitationModesDeclared]
        );
        assert!(aspects(url, &request("tools/call", json!({"url": {}}))).is_empty());
    }

    #[test]
    fn sampling_with_tools_or_context_needs_those_declared() {
        let sample = |params: Value| {
            json!({"result": {"resultType": "input_required",
                "inputRequests": {"s": {"method": "sampling/createMessage", "params": params}}}})
        };
        let caps = |sampling: Value| {
            json!({"method": "tools/call", "params": {"_meta": {
                "io.modelcontextprotocol/clientCapabilities": {"sampling": sampling}}}})
        };
        let tools = sample(json!({"messages": [], "maxTokens": 9, "tools": []}));
        assert_eq!(
            aspects(tools.clone(), &caps(json!({}))),
            [AspectId::M1SamplingToolsDeclared]
        );
        assert!(aspects(tools, &caps(json!({"tools": {}}))).is_empty());
        let context =
            sample(json!({"messages": [], "maxTokens": 9, "includeContext": "allServers"}));
        assert_eq!(
            aspects(context.clone(), &caps(json!({}))),
            [AspectId::M1SamplingContextDeclared]
        );
        assert!(aspects(context, &caps(json!({"context": {}}))).is_empty());
        let none = sample(json!({"messages": [], "maxTokens": 9, "includeContext": "none"}));
        assert!(aspects(none, &caps(json!({}))).is_empty());
    }
}
