//! J1's error-code ranges (2026-07-28 basic/index#error-codes), judged on
//! every error like the other invariants and by the fuzz judge: the legacy
//! sub-range -32000 to -32019, the MCP sub-range -32020 to -32099 (only its
//! defined codes), the retired -32042, and application codes inside
//! JSON-RPC's reserved range. 2025-11-25 has none of these sentences (the
//! aspects have level none there).
//!
//! A code the request named is the caller's choice, not the server's: the
//! Bookshop's `raise_protocol_error(code)` and `mcperror://CODE` must
//! forward it verbatim (T2, R5), so such a code is not judged here.

use mcperr_protocol::codes::{
    Code, HEADER_MISMATCH, INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND,
    MISSING_CLIENT_CAPABILITY, PARSE_ERROR, RESOURCE_NOT_FOUND_RETIRED,
    UNSUPPORTED_PROTOCOL_VERSION, URL_ELICITATION_REQUIRED,
};
use mcperr_protocol::Era;
use serde_json::Value;

use crate::seen::Seen;
use crate::Violation;
use mcperr_model::rules::AspectId;

/// The codes 2026-07-28 defines in its own sub-range.
const MCP_DEFINED: [Code; 3] = [
    HEADER_MISMATCH,
    MISSING_CLIENT_CAPABILITY,
    UNSUPPORTED_PROTOCOL_VERSION,
];

/// The range violation of an answer's error code, if any.
pub fn code_range(response: &Value, request: &Value, era: Option<Era>) -> Option<Violation> {
    let code = mcperr_wire::edges::error_code(response)?;
    if named_by(code, request) {
        return None;
    }
    let (aspect, why) = match code.0 {
        // 2025-11-25 defines it (client/elicitation#error-handling); E1
        // judges what it lists.
        _ if code == URL_ELICITATION_REQUIRED && era == Some(Era::Legacy) => return None,
        _ if code == URL_ELICITATION_REQUIRED => (
            AspectId::J1No32042,
            "-32042 (URL elicitation required) is 2025-11-25's; a 2026-07-28 server must not emit it",
        ),
        -32099..=-32020 if !MCP_DEFINED.contains(&code) => (
            AspectId::J1McpRangeDefinedOnly,
            "it is in the sub-range -32020 to -32099 that the MCP specification reserves, where it defines only -32020, -32021 and -32022",
        ),
        -32019..=-32000 if code != RESOURCE_NOT_FOUND_RETIRED => (
            AspectId::J1LegacyRangeCode,
            "it is in the legacy sub-range -32000 to -32019, which new implementations should not use",
        ),
        _ if reserved_undefined(code, era.unwrap_or(Era::Modern)) => (
            AspectId::J1ReservedCode,
            "it is in JSON-RPC's reserved range (-32768 to -32000) but is neither a predefined code nor a server error (-32000 to -32099) nor an MCP code",
        ),
        _ => return None,
    };
    Some(Violation::new(aspect, format!("error code {code}: {why}")))
}

/// Whether the request's params name `code` (as a number or in a string):
/// the caller's choice, which a server forwards verbatim (T2, R5).
pub(super) fn named_by(code: Code, request: &Value) -> bool {
    fn walk(v: &Value, code: i64, text: &str) -> bool {
        match v {
            Value::Number(n) => n.as_i64() == Some(code),
            Value::String(s) => s.contains(text),
            Value::Array(a) => a.iter().any(|v| walk(v, code, text)),
            Value::Object(o) => o.values().any(|v| walk(v, code, text)),
            _ => false,
        }
    }
    request
        .get("params")
        .is_some_and(|p| walk(p, code.0, &code.to_string()))
}

/// A code in JSON-RPC's reserved range that no spec of `era` defines.
pub fn reserved_undefined(code: Code, era: Era) -> bool {
    let mcp: &[Code] = match era {
        Era::Legacy => &[RESOURCE_NOT_FOUND_RETIRED, URL_ELICITATION_REQUIRED],
        Era::Modern => &[URL_ELICITATION_REQUIRED],
    };
    (-32768..=-32000).contains(&code.0)
        && !(-32099..=-32000).contains(&code.0)
        && ![
            PARSE_ERROR,
            INVALID_REQUEST,
            METHOD_NOT_FOUND,
            INVALID_PARAMS,
            INTERNAL_ERROR,
        ]
        .contains(&code)
        && !mcp.contains(&code)
}

/// The registry's entry point ([`crate::registry::INVARIANTS`]): the error code's range.
pub(crate) fn error_code_ranges(s: &Seen) -> Vec<Violation> {
    s.response
        .and_then(|r| code_range(r, s.request, s.ctx.era))
        .into_iter()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn aspect(code: i64, request: Value) -> Option<AspectId> {
        code_range(
            &json!({"error": {"code": code, "message": "m"}}),
            &request,
            Some(Era::Modern),
        )
        .map(|v| v.aspect)
    }

    #[test]
    fn each_sub_range_names_its_aspect_and_a_code_the_request_named_is_not_judged() {
        let plain = json!({"method": "tools/call", "params": {"name": "x"}});
        assert_eq!(
            aspect(-32001, plain.clone()),
            Some(AspectId::J1LegacyRangeCode)
        );
        assert_eq!(
            aspect(-32050, plain.clone()),
            Some(AspectId::J1McpRangeDefinedOnly)
        );
        assert_eq!(aspect(-32042, plain.clone()), Some(AspectId::J1No32042));
        let legacy = code_range(
            &json!({"error": {"code": -32042, "message": "m"}}),
            &plain,
            Some(Era::Legacy),
        );
        assert!(legacy.is_none(), "2025-11-25 defines -32042");
        assert_eq!(
            aspect(-32500, plain.clone()),
            Some(AspectId::J1ReservedCode)
        );
        for fine in [-32602, -32021, -32002, -1, 42] {
            assert_eq!(aspect(fine, plain.clone()), None, "{fine}");
        }
        let asked =
            json!({"params": {"name": "raise_protocol_error", "arguments": {"code": -32001}}});
        assert_eq!(aspect(-32001, asked), None);
        let uri = json!({"params": {"uri": "mcperror://-32050"}});
        assert_eq!(aspect(-32050, uri), None);
    }
}
