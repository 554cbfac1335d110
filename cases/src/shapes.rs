//! Response shapes: every result and error checked against what the era's
//! schema defines for its method (fixtures/schemas/<era>.json, written for
//! mcperr from the spec's schema.ts, each definition naming its source).
//! A result of the wrong shape breaks J1's "every result fits the era's
//! schema for its method"; in 2026-07-28 that includes `resultType`.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use mcperr_protocol::Era;
use serde_json::Value;

use crate::case::BUILTIN_SCHEMAS;

/// One era's compiled checks: a validator per method's result, and one for errors.
struct EraShapes {
    results: BTreeMap<String, jsonschema::Validator>,
    error: jsonschema::Validator,
}

fn compile(era: Era) -> EraShapes {
    let path = format!("schemas/{}.json", era.version());
    let (_, text) = BUILTIN_SCHEMAS
        .iter()
        .find(|(p, _)| *p == path)
        .unwrap_or_else(|| panic!("fixtures/{path} is built in"));
    let doc: Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("fixtures/{path}: {e}"));
    let with_defs = |root: &Value| {
        let mut s = root.clone();
        s["$defs"] = doc["$defs"].clone();
        s["$schema"] = doc["$schema"].clone();
        jsonschema::validator_for(&s).unwrap_or_else(|e| panic!("fixtures/{path}: {e}"))
    };
    let results = doc["results"]
        .as_object()
        .map(|m| m.iter().map(|(k, v)| (k.clone(), with_defs(v))).collect())
        .unwrap_or_default();
    EraShapes {
        results,
        error: with_defs(&doc["error"]),
    }
}

fn shapes(era: Era) -> &'static EraShapes {
    static LEGACY: OnceLock<EraShapes> = OnceLock::new();
    static MODERN: OnceLock<EraShapes> = OnceLock::new();
    match era {
        Era::Legacy => LEGACY.get_or_init(|| compile(era)),
        Era::Modern => MODERN.get_or_init(|| compile(era)),
    }
}

/// What is wrong with the shape of `response` to a `method` request in
/// `era`, at most a few points; `None` when it fits (or the method's result
/// has no schema here, as for methods the era does not define).
/// `resultType` itself is not checked here (see [`missing_result_type`]).
pub fn check(era: Era, method: &str, response: &Value) -> Option<String> {
    let s = shapes(era);
    let (is_result, validator, instance) = match (response.get("result"), response.get("error")) {
        (Some(r), None) => (true, s.results.get(method)?, r),
        (None, Some(e)) => (false, &s.error, e),
        _ => return None,
    };
    // 2026-07-28 requires resultType, which `missing_result_type` judges on
    // its own: a result without it is checked here as if it said "complete".
    // (2025-11-25 results have none and allow any extra key: no change.)
    let defaulted;
    let instance = match instance.as_object() {
        Some(obj) if era == Era::Modern && is_result && !obj.contains_key("resultType") => {
            let mut obj = obj.clone();
            obj.insert("resultType".into(), Value::String("complete".into()));
            defaulted = Value::Object(obj);
            &defaulted
        }
        _ => instance,
    };
    // Most answers fit: the yes-or-no check is the cheap path.
    if validator.is_valid(instance) {
        return None;
    }
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .take(3)
        .map(|e| {
            let at = e.instance_path().to_string();
            let at = if at.is_empty() {
                "the top".to_string()
            } else {
                at
            };
            format!("{e} (at {at})")
        })
        .collect();
    let what = if is_result {
        format!("{method} result")
    } else {
        "error object".to_string()
    };
    (!errors.is_empty()).then(|| {
        format!(
            "the {what} does not fit the {era} schema: {}",
            errors.join("; ")
        )
    })
}

/// 2026-07-28: a result without `resultType` (the one shape requirement the
/// schema words as a MUST).
pub fn missing_result_type(era: Era, response: &Value) -> bool {
    era == Era::Modern
        && response
            .get("result")
            .is_some_and(|r| r.is_object() && r.get("resultType").is_none())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn both_eras_compile_and_catch_bad_shapes() {
        for era in Era::ALL {
            let ok = json!({"result": {"content": [{"type": "text", "text": "hi"}], "resultType": "complete"}});
            assert_eq!(check(era, "tools/call", &ok), None, "{era}");
            let no_text =
                json!({"result": {"content": [{"type": "text"}], "resultType": "complete"}});
            assert!(check(era, "tools/call", &no_text).is_some(), "{era}");
            let role = json!({"result": {"messages": [{"role": "system", "content": {"type": "text", "text": "x"}}], "resultType": "complete"}});
            assert!(check(era, "prompts/get", &role).is_some(), "{era}");
            let err = json!({"error": {"code": "x", "message": "m"}});
            assert!(check(era, "tools/call", &err).is_some(), "{era}");
        }
        let bare = json!({"result": {"content": []}});
        assert_eq!(
            check(Era::Modern, "tools/call", &bare),
            None,
            "resultType apart"
        );
        assert!(missing_result_type(Era::Modern, &bare));
        assert!(!missing_result_type(Era::Legacy, &bare));
    }
}
