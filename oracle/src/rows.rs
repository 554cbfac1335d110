//! The seed model's rows, judged on any answer of their kind wherever a run
//! sees it (a scripted or generated case, a fuzz input, a proxied call), not
//! only on the answers of the cases written for them: a tool error is an
//! `isError` result without `structuredContent` (T1 `no-structured-content`),
//! and a read of a value mcperr made up (its fuzz inputs' and generated
//! not-found reads', [`names_made_up_value`]), refused as not found, carries
//! the requested URI as `data.uri` (R1 `data-uri`). Only such a read is
//! known to be of something missing: a −32602 to any other read may be a
//! handler's own error, forwarded verbatim without a `uri` (R5). What the
//! rows ask of the text, that no exception or stack shows, is J7's
//! ([`super::leaks`]). The table gives each aspect its level:
//! both have no sentence in the spec, so only the `model` profile judges them.

use serde_json::Value;

use crate::seen::Seen;
use crate::Violation;
use mcperr_cases::fuzz::inputs::names_made_up_value;
use mcperr_model::rules::AspectId;
use mcperr_protocol::codes;

/// The rows' violations on `response`, the framed answer to `request`.
pub(crate) fn seen(response: &Value, request: &Value) -> Vec<Violation> {
    let mut out = Vec::new();
    match request.get("method").and_then(Value::as_str) {
        Some("tools/call") => out.extend(tool_error_structured(response, request)),
        Some("resources/read") => out.extend(not_found_without_uri(response, request)),
        _ => {}
    }
    out
}

/// The aspects [`seen`] judges: a case that names one of them among its own
/// aspects (`[aspects.data-uri]`) or breaks one judges it itself, so the row
/// check's copy is dropped ([`dropped_for_case`]).
const ROW_ASPECTS: &[AspectId] = &[AspectId::T1NoStructuredContent, AspectId::R1DataUri];

/// `late` without the row violations a case already judges by an aspect of
/// the same name (its own `data-uri`, R1's or R2's):
/// one deviation, reported once, under the case's own rule.
pub(crate) fn dropped_for_case(
    late: Vec<Violation>,
    found: &[Violation],
    case_aspects: &[AspectId],
) -> Vec<Violation> {
    late.into_iter()
        .filter(|v| {
            !ROW_ASPECTS.contains(&v.aspect)
                || !found
                    .iter()
                    .map(|f| f.aspect)
                    .chain(case_aspects.iter().copied())
                    .any(|a| a.name() == v.aspect.name())
        })
        .collect()
}

/// T1 (the source documents' model): a failed call has no return value to
/// structure, so an `isError` result carries no `structuredContent`. A
/// task-augmented call's answer is a `CreateTaskResult`, not this.
fn tool_error_structured(response: &Value, request: &Value) -> Option<Violation> {
    if request
        .pointer("/params/task")
        .is_some_and(Value::is_object)
    {
        return None;
    }
    let result = response.get("result")?;
    if result.get("isError") != Some(&Value::Bool(true)) {
        return None;
    }
    let sc = result.get("structuredContent")?;
    let tool = request
        .pointer("/params/name")
        .and_then(Value::as_str)
        .unwrap_or("?");
    let shown: String = sc.to_string().chars().take(120).collect();
    Some(
        Violation::new(
            AspectId::T1NoStructuredContent,
            format!("{tool}'s isError result carries structuredContent {shown}: a failed call has no return value to structure"),
        )
        .late(),
    )
}

/// R1 (the model; the spec shows it in its example only): a read of a
/// made-up value refused as not found (−32602, or 2025-11-25's −32002)
/// names the requested URI as `data.uri`.
fn not_found_without_uri(response: &Value, request: &Value) -> Option<Violation> {
    let uri = request
        .pointer("/params/uri")
        .and_then(Value::as_str)
        .filter(|u| names_made_up_value(u))?;
    let error = response.get("error")?;
    let code = error.get("code").and_then(codes::Code::of)?;
    if code != codes::INVALID_PARAMS && code != codes::RESOURCE_NOT_FOUND_RETIRED {
        return None;
    }
    let data_uri = error.pointer("/data/uri");
    if data_uri.and_then(Value::as_str) == Some(uri) {
        return None;
    }
    let got = data_uri.map_or_else(|| "no data.uri".to_string(), |u| format!("data.uri {u}"));
    Some(
        Violation::new(
            AspectId::R1DataUri,
            format!("the read of {uri} was refused {code} with {got}: a missing resource's error names the requested URI as data.uri"),
        )
        .late(),
    )
}

/// The registry's entry point ([`crate::registry::INVARIANTS`]): the error model's rows.
pub(crate) fn error_model_rows(s: &Seen) -> Vec<Violation> {
    match s.framed_for_shape {
        Some(response) => seen(response, s.request),
        None => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(args: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "convert", "arguments": args}})
    }

    #[test]
    fn a_tool_error_with_structured_content_breaks_t1_wherever_it_is_seen() {
        let failed = json!({"jsonrpc": "2.0", "id": 1, "result": {"isError": true,
            "content": [{"type": "text", "text": "no such unit"}], "structuredContent": {"error": "no such unit"}}});
        let v = seen(&failed, &call(json!({})));
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].aspect, AspectId::T1NoStructuredContent);
        assert!(v[0].late && v[0].message.contains("convert's isError result"));
        // A success may structure its value; a plain tool error is clean.
        let ok =
            json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [], "structuredContent": {}}});
        assert!(seen(&ok, &call(json!({}))).is_empty());
        let plain = json!({"jsonrpc": "2.0", "id": 1, "result": {"isError": true, "content": []}});
        assert!(seen(&plain, &call(json!({}))).is_empty());
    }

    #[test]
    fn a_not_found_read_names_the_uri_it_was_asked_for() {
        let read = json!({"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": {"uri": "recipes://mcperr-nx-nothing"}});
        let refused = |data: Value, code: i64| json!({"jsonrpc": "2.0", "id": 2, "error": {"code": code, "message": "not found", "data": data}});
        let named = refused(json!({"uri": "recipes://mcperr-nx-nothing"}), -32602);
        assert!(seen(&named, &read).is_empty());
        let legacy = refused(json!({"uri": "recipes://mcperr-nx-nothing"}), -32002);
        assert!(seen(&legacy, &read).is_empty());
        for wrong in [json!(null), json!({"uri": "recipes://mcperr-nx-other"})] {
            let v = seen(&refused(wrong, -32602), &read);
            assert_eq!(v[0].aspect, AspectId::R1DataUri, "{v:?}");
        }
        assert_eq!(seen(&refused(json!(null), -32002), &read).len(), 1);
        // A failure that is not "not found" (R3, R4) is not this row's.
        assert!(seen(&refused(json!(null), -32603), &read).is_empty());
        // A read of a URI mcperr did not make up may be refused by the
        // handler's own -32602, forwarded verbatim (R5): not judged.
        let real = json!({"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": {"uri": "recipes://pad-thai"}});
        assert!(seen(&refused(json!(null), -32602), &real).is_empty());
        // A uri that is no string: nothing to name (R6).
        let bad =
            json!({"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": {"uri": 7}});
        assert!(seen(&refused(json!(null), -32602), &bad).is_empty());
    }

    #[test]
    fn a_case_that_judges_the_aspect_itself_keeps_only_its_own_report() {
        let row = || vec![Violation::new(AspectId::R1DataUri, "row").late()];
        // The unknown-resource case (R2) names data-uri among its aspects.
        assert!(dropped_for_case(row(), &[], &[AspectId::R2DataUri]).is_empty());
        let own = [Violation::new(AspectId::R2DataUri, "case")];
        assert!(dropped_for_case(row(), &own, &[]).is_empty());
        // Another case's rows stand, and so does every other late violation.
        assert_eq!(dropped_for_case(row(), &[], &[AspectId::T3Main]).len(), 1);
        let leak = vec![Violation::new(AspectId::J7Main, "leak").late()];
        assert_eq!(dropped_for_case(leak, &own, &[AspectId::J7Main]).len(), 1);
    }
}
