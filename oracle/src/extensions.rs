//! 2026-07-28 basic/versioning#extension-negotiation: an extension is
//! negotiated through capabilities, and "if one party supports an extension
//! but the other does not, the supporting party **MUST** either revert to
//! core protocol behavior or reject the request with an appropriate error"
//! (L1 `extension-fallback`). Judged on every answer, from what the
//! request's `_meta` clientCapabilities declared: a result only an
//! extension defines is that extension half-applied.

use serde_json::Value;

use crate::seen::Seen;
use crate::Violation;
use mcperr_model::rules::AspectId;
use mcperr_protocol::Era;

/// The Tasks extension's identifier; its `CreateTaskResult` is
/// `resultType: "task"` (docs/extensions/tasks/overview).
pub const TASKS: &str = "io.modelcontextprotocol/tasks";

/// The result types of the core protocol (schema.ts `ResultType`:
/// `"complete" | "input_required" | string`, the open end for extensions).
const CORE_RESULT_TYPES: [&str; 2] = ["complete", "input_required"];

/// The L1 `extension-fallback` violation of a 2026-07-28 `response` to
/// `request`, if it has one: a `resultType` of `"task"` to a request that
/// did not declare the Tasks extension, or any other result type outside
/// the core to one that declared no extension at all.
pub fn unnegotiated(response: &Value, request: &Value) -> Option<Violation> {
    let kind = response.pointer("/result/resultType")?.as_str()?;
    if CORE_RESULT_TYPES.contains(&kind) {
        return None;
    }
    let declared = request
        .pointer("/params/_meta")
        .and_then(|m| m.get(mcperr_protocol::era::META_CLIENT_CAPABILITIES))
        .and_then(|c| c.get("extensions"))
        .and_then(Value::as_object);
    let why = if kind == "task" {
        if declared.is_some_and(|d| d.contains_key(TASKS)) {
            return None;
        }
        format!("the answer is a CreateTaskResult (resultType \"task\", the {TASKS} extension's), but the request's clientCapabilities declared no {TASKS} extension: the server must answer as the core protocol does, or refuse")
    } else {
        if declared.is_some_and(|d| !d.is_empty()) {
            return None;
        }
        format!("the answer's resultType {kind:?} is none of the core protocol's (complete, input_required), so only an extension defines it, and the request's clientCapabilities declared no extension")
    };
    Some(Violation::new(AspectId::L1ExtensionFallback, why))
}

/// The registry's entry point ([`crate::registry::INVARIANTS`]): extensions the client did not negotiate (2026-07-28).
pub(crate) fn unnegotiated_extensions(s: &Seen) -> Vec<Violation> {
    match (s.response, s.ctx.era) {
        (Some(response), Some(Era::Modern)) => {
            unnegotiated(response, s.request).into_iter().collect()
        }
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(extensions: Value) -> Value {
        json!({"method": "tools/call", "params": {"name": "reindex", "_meta": {
            "io.modelcontextprotocol/clientCapabilities": {"extensions": extensions}}}})
    }

    fn answer(kind: &str) -> Value {
        json!({"jsonrpc": "2.0", "id": 1, "result": {"resultType": kind}})
    }

    #[test]
    fn a_task_answers_only_a_request_that_declared_the_tasks_extension() {
        assert!(unnegotiated(&answer("task"), &call(json!({}))).is_some());
        assert!(unnegotiated(&answer("task"), &json!({"method": "tools/call"})).is_some());
        assert!(unnegotiated(&answer("task"), &call(json!({TASKS: {}}))).is_none());
        assert!(unnegotiated(&answer("complete"), &call(json!({}))).is_none());
        assert!(unnegotiated(&answer("input_required"), &call(json!({}))).is_none());
    }

    #[test]
    fn another_result_type_needs_some_extension_declared() {
        assert!(unnegotiated(&answer("ui"), &call(json!({}))).is_some());
        assert!(unnegotiated(&answer("ui"), &call(json!({"io.example/ui": {}}))).is_none());
    }
}
