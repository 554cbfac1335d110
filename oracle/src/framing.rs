//! J1: a response's JSON-RPC framing (version, id, result or error, the
//! error's fields), every fault of it, each with the aspect it breaks.

use mcperr_model::rules::AspectId;
use serde_json::Value;

fn show(v: Option<&Value>) -> String {
    v.map_or_else(|| "nothing".to_string(), Value::to_string)
}

/// J1: what is wrong with a response's framing, every point of it, each
/// with the aspect it breaks.
pub fn framing(response: &Value, request: &Value) -> Vec<(AspectId, String)> {
    let Some(obj) = response.as_object() else {
        return vec![(
            AspectId::J1FollowsJsonrpc,
            "the response is not a JSON object".into(),
        )];
    };
    let mut out = Vec::new();
    if obj.get("jsonrpc") != Some(&Value::String("2.0".into())) {
        out.push((
            AspectId::J1JsonrpcVersion,
            format!(
                "\"jsonrpc\" must be \"2.0\", got {}",
                show(obj.get("jsonrpc"))
            ),
        ));
    }
    let want = request.get("id").cloned().unwrap_or(Value::Null);
    let is_error = obj.contains_key("error");
    // An id that could not be read (a line that does not parse, a batch):
    // MCP's schema lets the error leave it out (`JSONRPCErrorResponse.id?`,
    // "a JSON-RPC _error response_ that has no `id`"), JSON-RPC 2.0 §5 says
    // null; any other id is JSON-RPC's to refuse, not MCP's error-id
    // sentence, which excepts exactly this case.
    let unreadable = want.is_null() && is_error;
    if unreadable && obj.get("id").is_some_and(|id| !id.is_null()) {
        out.push((
            AspectId::J1FollowsJsonrpc,
            format!(
                "an error to a request whose id could not be read carries the id {}: \"If there was an error in detecting the id in the Request object (e.g. Parse error/Invalid Request), it MUST be Null\" (JSON-RPC 2.0 §5)",
                show(obj.get("id"))
            ),
        ));
    } else if !unreadable && obj.get("id") != Some(&want) {
        let aspect = if is_error {
            AspectId::J1ErrorId
        } else {
            AspectId::J1IdType
        };
        out.push((
            aspect,
            format!(
                "the id must be the request's {want} (same type), got {}",
                show(obj.get("id"))
            ),
        ));
    }
    match (obj.get("result"), obj.get("error")) {
        (Some(_), None) => {}
        (None, Some(e)) => {
            if !e.get("code").is_some_and(|c| c.is_i64() || c.is_u64()) {
                out.push((
                    AspectId::J1IntegerCode,
                    format!("error.code must be an integer, got {}", show(e.get("code"))),
                ));
            }
            if !e.get("message").is_some_and(Value::is_string) {
                out.push((
                    AspectId::J1ErrorFields,
                    format!(
                        "error.message must be a string, got {}",
                        show(e.get("message"))
                    ),
                ));
            }
        }
        (Some(_), Some(_)) => out.push((
            AspectId::J1NotBoth,
            "a response must not carry both result and error".into(),
        )),
        (None, None) => out.push((
            AspectId::J1HasResult,
            "a response must carry result or error".into(),
        )),
    }
    out
}

/// What an HTTP rejection's body breaks, when the case asks only for the
/// status (a missing session's 400, a GET's 405): the transports sections
/// let the body "comprise a JSON-RPC error response" or be anything else,
/// but a JSON-RPC response it does carry must still be framed as one. Its
/// id may be left out or null (the request was refused before it was read)
/// or be the request's own; any other id is made up. `leaks` are the
/// exchange's J7 findings (exception text in the body).
pub(crate) fn rejection_body(
    exchange: &mcperr_wire::exchange::Exchange,
    leaks: &[mcperr_model::grading::Violation],
) -> Vec<mcperr_model::grading::Violation> {
    let Some(body) = exchange.response() else {
        return Vec::new();
    };
    let unread = serde_json::json!({"id": null});
    let against = if body.get("id").is_none_or(Value::is_null) {
        &unread
    } else {
        &exchange.request
    };
    framing(body, against)
        .into_iter()
        .map(|(aspect, why)| {
            mcperr_model::grading::Violation::new(aspect, format!("the refusal's body: {why}"))
        })
        .chain(leaks.iter().cloned())
        .collect()
}

/// Why a case's GET or DELETE that got no answer at all (not even a status
/// line) within the timeout breaks the case's own sentence: J4's "the
/// Server MUST reply with a Response" is about an rpc call, and these carry
/// none; the transports sections ask such a request for an SSE stream or a
/// status (405, 404 for an ended session). `None` for any other exchange.
pub(crate) fn hung_without_request(
    case: &mcperr_cases::case::Case,
    exchange: &mcperr_wire::exchange::Exchange,
) -> Option<String> {
    let method = case.http.as_ref()?.method.as_deref()?;
    let hung = matches!(exchange.ending, mcperr_wire::exchange::Ending::Timeout);
    (hung && exchange.request.is_null() && method != "POST").then(|| {
        format!(
            "the {method} got no answer within {} ms, not even a status line (neither an SSE stream nor a refusal)",
            exchange.duration.as_millis()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn aspects(response: Value, request: Value) -> Vec<AspectId> {
        framing(&response, &request)
            .into_iter()
            .map(|(a, _)| a)
            .collect()
    }

    /// An error to a request whose id could not be read (a line that does
    /// not parse, a batch) may leave the id out (MCP's schema:
    /// `JSONRPCErrorResponse.id?`) or make it null (JSON-RPC 2.0 §5); a
    /// made-up id breaks JSON-RPC's "it MUST be Null", not MCP's error-id
    /// sentence, which excepts this case. A readable id must come back.
    #[test]
    fn an_unreadable_id_is_answered_null_or_not_at_all() {
        let unreadable = json!({});
        let error = json!({"code": -32700, "message": "Parse error"});
        let absent = json!({"jsonrpc": "2.0", "error": error});
        assert!(aspects(absent.clone(), unreadable.clone()).is_empty());
        let null = json!({"jsonrpc": "2.0", "id": null, "error": error});
        assert!(aspects(null, unreadable.clone()).is_empty());
        let made_up = json!({"jsonrpc": "2.0", "id": "server-error", "error": error});
        assert_eq!(aspects(made_up, unreadable), [AspectId::J1FollowsJsonrpc]);
        let readable = json!({"jsonrpc": "2.0", "id": 3, "method": "ping"});
        assert_eq!(aspects(absent, readable.clone()), [AspectId::J1ErrorId]);
        let result = json!({"jsonrpc": "2.0", "id": null, "result": {}});
        assert_eq!(aspects(result, readable), [AspectId::J1IdType]);
    }

    /// A refusal that asks only for its status (a missing session's 400)
    /// may carry no id or a null one, or the request's own; a made-up id
    /// is the body's fault, as are a bad `jsonrpc` and a code that is no
    /// integer.
    #[test]
    fn a_refusals_body_may_leave_the_id_out_but_not_make_one_up() {
        use mcperr_wire::exchange::{Ending, Exchange};
        let request = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/list"});
        let body = |id: Value| {
            let v = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32000, "message": "Bad Request"}});
            Exchange::bare(request.clone(), Ending::WrongId(v))
        };
        let judged = |ex: Exchange| -> Vec<AspectId> {
            rejection_body(&ex, &[])
                .into_iter()
                .map(|v| v.aspect)
                .collect()
        };
        assert!(judged(body(json!(null))).is_empty());
        assert!(judged(body(json!(7))).is_empty());
        assert_eq!(judged(body(json!("server-error"))), [AspectId::J1ErrorId]);
        let absent = json!({"jsonrpc": "2.0", "error": {"code": "bad", "message": "Bad Request"}});
        assert_eq!(
            judged(Exchange::bare(request.clone(), Ending::Answered(absent))),
            [AspectId::J1IntegerCode]
        );
        let no_body = Exchange::bare(request.clone(), Ending::Timeout);
        assert!(judged(no_body).is_empty());
    }

    /// A GET or DELETE carries no rpc call for J4 to hold to an answer: one
    /// left without even a status line is its own case's finding; a POST
    /// that times out stays J4's.
    #[test]
    fn a_hung_get_is_the_cases_own_finding_not_an_unanswered_call() {
        use mcperr_cases::case::Case;
        use mcperr_wire::exchange::{Ending, Exchange};
        let case = |method: &str| {
            let text = format!(
                "id = \"http/x\"\nrule = \"H1\"\n[http]\nmethod = \"{method}\"\nstatus = [405]\n[request]\nmethod = \"tools/list\"\n"
            );
            Case::parse("http/x.toml", &text).unwrap()
        };
        let hung = Exchange::bare(Value::Null, Ending::Timeout);
        let why = hung_without_request(&case("GET"), &hung).expect("judged as the case's own");
        assert!(why.contains("GET got no answer"), "{why}");
        assert!(hung_without_request(&case("DELETE"), &hung).is_some());
        let post = Exchange::bare(
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
            Ending::Timeout,
        );
        assert!(hung_without_request(&case("POST"), &post).is_none());
        let answered = Exchange::bare(Value::Null, Ending::Answered(json!({})));
        assert!(hung_without_request(&case("GET"), &answered).is_none());
    }
}
