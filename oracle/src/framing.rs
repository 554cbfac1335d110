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
}
