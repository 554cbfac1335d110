//! What a 2025-11-25 server asks of its client with requests of its own
//! (E1; L2 `respect-negotiation`), judged against the capabilities the
//! connection's `initialize` declared: no elicitation, sampling or roots
//! request to a client that declared none of that capability, an
//! elicitation only in a declared mode, sampling with tools or context only
//! if declared; and every `-32042` (`URLElicitationRequiredError`) for its
//! list of URL elicitations, to a client that declared URL mode.

use serde_json::{Map, Value};

use mcperr_protocol::codes::URL_ELICITATION_REQUIRED;

use super::asks::{declared_modes, undeclared_mode, undeclared_sampling, Ask, Aspects};
use super::tasks::RELATED_TASK;
use crate::seen::Seen;
use crate::Violation;
use mcperr_model::rules::AspectId;
use mcperr_protocol::Era;
use mcperr_wire::exchange::Stray;

/// The server requests that need a client capability, with that capability.
const NEEDS: [(&str, &str); 3] = [
    ("elicitation/create", "elicitation"),
    ("sampling/createMessage", "sampling"),
    ("roots/list", "roots"),
];

const E1: Aspects = Aspects {
    modes: AspectId::E1Main,
    tools: AspectId::E1SamplingToolsDeclared,
    context: AspectId::E1SamplingContextDeclared,
};

/// Whether `request` asks for a capability `declared` has (an
/// elicitation, sampling or roots request to a client that declared it).
pub fn invited(request: &Value, declared: &Value) -> bool {
    let method = request.get("method").and_then(Value::as_str);
    NEEDS
        .iter()
        .any(|(m, cap)| Some(*m) == method && declared.get(cap).is_some())
}

/// Every E1 and L2 violation of the server's requests among `strays` and of
/// `response` to `request`, for a client that declared `declared`. A -32042
/// that `request` itself named (`raise_protocol_error`, `mcperror://-32042`)
/// is the caller's, forwarded as asked, and not judged.
pub fn judge(
    strays: &[Stray],
    response: Option<&Value>,
    request: &Value,
    declared: &Value,
) -> Vec<Violation> {
    let asks: Vec<Ask> = strays
        .iter()
        .filter_map(|s| match s {
            Stray::ServerRequest(v) => Some(Ask {
                label: format!(
                    "the server's request {}",
                    v.get("id").unwrap_or(&Value::Null)
                ),
                request: v,
            }),
            _ => None,
        })
        .collect();
    let mut out = Vec::new();
    for ask in &asks {
        let method = ask.request.get("method").and_then(Value::as_str);
        let needs = NEEDS.iter().find(|(m, _)| Some(*m) == method);
        if let Some((method, cap)) = needs.filter(|(_, cap)| declared.get(cap).is_none()) {
            out.push(Violation::new(
                AspectId::L2RespectNegotiation,
                format!(
                    "{} is a {method}, but the client's initialize declared no {cap} capability: {}",
                    ask.label, ask.request
                ),
            ));
        }
    }
    out.extend(task_related(&asks, response, request));
    let elicitation = declared.get("elicitation").and_then(Value::as_object);
    if let Some(modes) = elicitation {
        out.extend(undeclared_mode(&asks, modes, E1.modes));
    }
    if let Some(sampling) = declared.get("sampling") {
        out.extend(undeclared_sampling(&asks, sampling, &E1));
    }
    if let Some(error) = response.and_then(|r| r.get("error")) {
        if error.get("code").and_then(mcperr_protocol::codes::Code::of)
            == Some(URL_ELICITATION_REQUIRED)
            && !super::codes::named_by(URL_ELICITATION_REQUIRED, request)
        {
            out.extend(url_required(error, elicitation));
        }
    }
    out
}

/// K1: the input requests a task-augmented call sent carry the
/// related-task `_meta` (basic/utilities/tasks#input-required-status), and
/// it names the task the call's `CreateTaskResult` gave
/// (#associating-task-related-messages).
fn task_related(asks: &[Ask], response: Option<&Value>, request: &Value) -> Vec<Violation> {
    if request.pointer("/params/task").is_none() {
        return vec![];
    }
    let Some(task) = response.and_then(|r| r.pointer("/result/task/taskId")) else {
        return vec![];
    };
    let key = format!("/params/_meta/{}", RELATED_TASK.replace('/', "~1"));
    asks.iter()
        .filter(|a| {
            let method = a.request.get("method").and_then(Value::as_str);
            NEEDS.iter().any(|(m, _)| Some(*m) == method)
        })
        .filter_map(|a| match a.request.pointer(&key).and_then(|m| m.get("taskId")) {
            None => Some(Violation::new(
                AspectId::K1InputRelatedTask,
                format!("{} asks for the input task {task} needs without the {RELATED_TASK} _meta: {}", a.label, a.request),
            )),
            Some(named) if named != task => Some(Violation::new(
                AspectId::K1InputSharesTaskId,
                format!("{} names task {named} in its {RELATED_TASK} _meta, but the call's task is {task}: {}", a.label, a.request),
            )),
            Some(_) => None,
        })
        .collect()
}

/// client/elicitation#url-elicitation-required-error: a `-32042` lists the
/// URL elicitations to complete, each with its `elicitationId`, and goes
/// only to a client that declared URL mode (it asks for URL elicitations).
fn url_required(error: &Value, elicitation: Option<&Map<String, Value>>) -> Vec<Violation> {
    let mut out = Vec::new();
    if !elicitation.is_some_and(|e| e.contains_key("url")) {
        let declared = elicitation.map_or("no elicitation capability".to_string(), |e| {
            declared_modes(e)
        });
        out.push(Violation::new(
            AspectId::E1Main,
            format!("the answer is -32042, which asks for URL-mode elicitations; the client declared {declared}: {error}"),
        ));
    }
    let listed = error
        .pointer("/data/elicitations")
        .and_then(Value::as_array);
    let Some(listed) = listed.filter(|l| !l.is_empty()) else {
        out.push(Violation::new(
            AspectId::E1UrlRequiredLists,
            format!("the -32042 error has no non-empty data.elicitations list: {error}"),
        ));
        return out;
    };
    for (i, e) in listed.iter().enumerate() {
        let url = e.get("mode").and_then(Value::as_str) == Some("url");
        let id = e.get("elicitationId").is_some_and(Value::is_string);
        if !(url && id) {
            out.push(Violation::new(
                AspectId::E1UrlRequiredUrlMode,
                format!("data.elicitations[{i}] of the -32042 error is not a URL-mode elicitation with an elicitationId: {e}"),
            ));
        }
    }
    out
}

/// The registry's entry point ([`crate::registry::INVARIANTS`]): the server's own requests, against what the client declared (2025-11-25).
pub(crate) fn servers_own_requests(s: &Seen) -> Vec<Violation> {
    match (s.ctx.era, s.ctx.client_capabilities) {
        (Some(Era::Legacy), Some(declared)) => {
            judge(&s.exchange.strays, s.response, s.request, declared)
        }
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn aspects(strays: &[Stray], response: Option<Value>, declared: Value) -> Vec<AspectId> {
        let request = json!({"method": "tools/call", "params": {"name": "confirm_purchase"}});
        judge(strays, response.as_ref(), &request, &declared)
            .into_iter()
            .map(|v| v.aspect)
            .collect()
    }

    fn asked(method: &str, params: Value) -> Stray {
        Stray::ServerRequest(
            json!({"jsonrpc": "2.0", "id": "ask-1", "method": method, "params": params}),
        )
    }

    #[test]
    fn a_form_elicitation_to_a_client_that_declared_form_is_fine_and_a_url_one_is_not() {
        let form = asked(
            "elicitation/create",
            json!({"mode": "form", "message": "?"}),
        );
        let url = asked(
            "elicitation/create",
            json!({"mode": "url", "message": "?",
            "url": "https://x.example", "elicitationId": "e"}),
        );
        assert!(aspects(&[form], None, json!({"elicitation": {}})).is_empty());
        assert_eq!(
            aspects(
                std::slice::from_ref(&url),
                None,
                json!({"elicitation": {"form": {}}})
            ),
            [AspectId::E1Main]
        );
        assert!(aspects(&[url], None, json!({"elicitation": {"url": {}}})).is_empty());
    }

    #[test]
    fn a_request_for_a_capability_nobody_declared_breaks_the_negotiation() {
        let roots = asked("roots/list", json!({}));
        let ping = asked("ping", json!({}));
        assert_eq!(
            aspects(&[roots, ping], None, json!({})),
            [AspectId::L2RespectNegotiation]
        );
    }

    #[test]
    fn sampling_with_tools_or_context_needs_them_declared() {
        let tools = asked(
            "sampling/createMessage",
            json!({"messages": [], "maxTokens": 9, "toolChoice": {"mode": "auto"}}),
        );
        let context = asked(
            "sampling/createMessage",
            json!({"messages": [], "maxTokens": 9, "includeContext": "thisServer"}),
        );
        assert_eq!(
            aspects(
                &[tools.clone(), context.clone()],
                None,
                json!({"sampling": {}})
            ),
            [
                AspectId::E1SamplingToolsDeclared,
                AspectId::E1SamplingContextDeclared
            ]
        );
        let both = json!({"sampling": {"tools": {}, "context": {}}});
        assert!(aspects(&[tools, context], None, both).is_empty());
    }

    #[test]
    fn a_32042_lists_url_elicitations_to_a_client_that_declared_url_mode() {
        let error = |elicitations: Value| {
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32042, "message": "m",
                "data": {"elicitations": elicitations}}})
        };
        let good = error(
            json!([{"mode": "url", "elicitationId": "e", "url": "https://x.example", "message": "m"}]),
        );
        let url = json!({"elicitation": {"url": {}}});
        assert!(aspects(&[], Some(good.clone()), url.clone()).is_empty());
        assert_eq!(
            aspects(&[], Some(good), json!({"elicitation": {}})),
            [AspectId::E1Main]
        );
        assert_eq!(
            aspects(&[], Some(error(json!([]))), url.clone()),
            [AspectId::E1UrlRequiredLists]
        );
        assert_eq!(
            aspects(
                &[],
                Some(error(json!([{"mode": "form", "message": "m"}]))),
                url
            ),
            [AspectId::E1UrlRequiredUrlMode]
        );
    }

    #[test]
    fn an_elicitation_for_a_task_names_that_task() {
        let request = json!({"method": "tools/call", "params": {"name": "confirm_purchase",
            "arguments": {"title": "Dune"}, "task": {"ttl": 1000}}});
        let created = json!({"jsonrpc": "2.0", "id": 1, "result": {"task": {"taskId": "t1"}}});
        let ask = |meta: Value| {
            Stray::ServerRequest(
                json!({"jsonrpc": "2.0", "id": "a", "method": "elicitation/create",
                "params": {"message": "?", "_meta": meta}}),
            )
        };
        let declared = json!({"elicitation": {}});
        let judged = |meta: Value| -> Vec<AspectId> {
            judge(&[ask(meta)], Some(&created), &request, &declared)
                .into_iter()
                .map(|v| v.aspect)
                .collect()
        };
        let related = |id: &str| json!({"io.modelcontextprotocol/related-task": {"taskId": id}});
        assert!(judged(related("t1")).is_empty());
        assert_eq!(judged(related("t0")), [AspectId::K1InputSharesTaskId]);
        assert_eq!(judged(json!({})), [AspectId::K1InputRelatedTask]);
    }
}
