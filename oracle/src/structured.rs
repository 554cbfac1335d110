//! T8's `also-text`: a tool result with `structuredContent` also carries it
//! serialized in a text block (server/tools#structured-content: "For
//! backwards compatibility, a tool that returns structured content SHOULD
//! also return the serialized JSON in a TextContent block"). A named check
//! of T8's own cases and the generated valid calls, not an invariant: a
//! server that always answers so would otherwise fail every case that calls
//! a tool, one deviation as dozens of findings.

use serde_json::Value;

/// What breaks `also-text` in one answer to `request`, if anything. A tool
/// error (`isError`) and a 2026-07-28 result that asks for input are not
/// structured output; "serialized JSON" is compared as JSON, so spacing and
/// key order do not matter.
pub fn also_text(response: &Value, request: &Value) -> Option<String> {
    if request.get("method").and_then(Value::as_str) != Some("tools/call") {
        return None;
    }
    also_text_of_result(response)
}

/// [`also_text`] for an answer known to be a `tools/call`'s.
pub fn also_text_of_result(response: &Value) -> Option<String> {
    let result = response.get("result")?.as_object()?;
    let structured = result.get("structuredContent")?;
    if result.get("isError") == Some(&Value::Bool(true))
        || result
            .get("resultType")
            .is_some_and(|t| t != &Value::String("complete".into()))
    {
        return None;
    }
    let blocks: Vec<&Value> = result
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|c| c.get("type").and_then(Value::as_str) == Some("text"))
        .collect();
    // A text block without its text is a malformed result, J1's to judge.
    let texts = blocks
        .iter()
        .map(|c| c.get("text").and_then(Value::as_str))
        .collect::<Option<Vec<&str>>>()?;
    let serialized = |t: &&str| serde_json::from_str::<Value>(t).is_ok_and(|v| &v == structured);
    if texts.iter().any(serialized) {
        return None;
    }
    let shown = match texts.as_slice() {
        [] => "no text block".to_string(),
        some => format!(
            "text blocks {}",
            some.iter()
                .map(|t| format!("{t:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    Some(format!(
        "the result carries structuredContent {structured} but {shown}, none of them that JSON serialized"
    ))
}

/// How a text opens when it reports a failure, lower-cased: the words
/// SDKs and hand-written servers put first ("Error: …", "Error executing
/// tool …", "Failed to …", a Python traceback). Only the opening is read:
/// a text that mentions an error further on may well be a success.
const FAILURE_OPENINGS: &[&str] = &[
    "error:",
    "error -",
    "error executing",
    "error calling",
    "error while",
    "exception:",
    "traceback (most recent call last)",
    "failed:",
    "failed to ",
    "failure:",
];

/// Whether a JSON object says, at its top level, that the call failed
/// (`"success": false`, `"isError": true`). Not `"ok"` or `"status"`: a
/// health check or a job's status may well report those as its data.
fn object_says_failed(v: &Value) -> Option<String> {
    let o = v.as_object()?;
    for (key, failed) in [
        ("success", Value::Bool(false)),
        ("isError", Value::Bool(true)),
    ] {
        if o.get(key) == Some(&failed) {
            return Some(format!("\"{key}\": {failed}"));
        }
    }
    None
}

/// What makes a `tools/call` result an error returned as a success (T9),
/// if anything: `isError` absent or false while a text block opens like a
/// failure report, or the text's JSON or the `structuredContent` says at
/// its top level that the call failed. Not judged on anything but a complete
/// tool result.
pub fn error_as_success(response: &Value, request: &Value) -> Option<String> {
    if request.get("method").and_then(Value::as_str) != Some("tools/call") {
        return None;
    }
    tool_result_says_failed(response)
}

/// [`error_as_success`] for an answer known to be a `tools/call`'s.
pub fn tool_result_says_failed(response: &Value) -> Option<String> {
    let result = response.get("result")?.as_object()?;
    if result.get("isError") == Some(&Value::Bool(true))
        || result
            .get("resultType")
            .is_some_and(|t| t != &Value::String("complete".into()))
    {
        return None;
    }
    let flag = match result.get("isError") {
        Some(v) => format!("isError {v}"),
        None => "isError absent".into(),
    };
    if let Some(what) = result.get("structuredContent").and_then(object_says_failed) {
        return Some(format!(
            "a success ({flag}) whose structuredContent says {what}: an error returned as a success"
        ));
    }
    for text in result
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| c.get("text").and_then(Value::as_str))
    {
        // Run on every valid call a campaign makes: only the opening is
        // lower-cased (the longest opening is 33 characters), and only a
        // text that opens an object is parsed.
        let text = text.trim_start();
        let opening: String = text.chars().take(40).collect::<String>().to_lowercase();
        if FAILURE_OPENINGS.iter().any(|o| opening.starts_with(o)) {
            let shown: String = text.chars().take(80).collect();
            return Some(format!(
                "a success ({flag}) whose text reads like a failure ({shown:?}): an error returned as a success"
            ));
        }
        if let Some(what) = text
            .starts_with('{')
            .then(|| serde_json::from_str::<Value>(text).ok())
            .flatten()
            .as_ref()
            .and_then(object_says_failed)
        {
            return Some(format!(
                "a success ({flag}) whose text's JSON says {what}: an error returned as a success"
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call() -> Value {
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "limited_calls"}})
    }

    fn answer(result: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": 1, "result": result})
    }

    #[test]
    fn structured_content_serialized_in_a_text_block_passes_whatever_its_spacing() {
        let r = answer(
            json!({"content": [{"type": "text", "text": "{ \"count\" : 3 }"}],
            "structuredContent": {"count": 3}}),
        );
        assert!(also_text(&r, &call()).is_none());
    }

    #[test]
    fn a_text_block_that_is_not_the_serialized_json_is_named() {
        let r = answer(json!({"content": [{"type": "text", "text": "3"}],
            "structuredContent": {"count": 3}}));
        let why = also_text(&r, &call()).expect("a violation");
        assert!(why.contains("\"3\""), "{why}");
        let none = answer(json!({"content": [], "structuredContent": {"count": 3}}));
        assert!(also_text(&none, &call()).is_some());
        // A text block without text is J1's (the result's shape), not this.
        let malformed =
            answer(json!({"content": [{"type": "text"}], "structuredContent": {"count": 3}}));
        assert!(also_text(&malformed, &call()).is_none());
    }

    #[test]
    fn tool_errors_input_requests_and_other_methods_are_not_judged() {
        let error = answer(json!({"isError": true, "content": [], "structuredContent": {}}));
        assert!(also_text(&error, &call()).is_none());
        let asks = answer(json!({"resultType": "input_required", "structuredContent": {}}));
        assert!(also_text(&asks, &call()).is_none());
        let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
        assert!(also_text(&answer(json!({"structuredContent": {}})), &list).is_none());
    }

    #[test]
    fn a_success_that_says_it_failed_is_an_error_returned_as_a_success() {
        let said = |result: Value| error_as_success(&answer(result), &call());
        let text = |t: &str| json!({"content": [{"type": "text", "text": t}]});
        assert!(said(text("Error: stats backend unavailable")).is_some());
        assert!(said(text("  error executing tool x")).is_some());
        assert!(said(text("Failed to open the store")).is_some());
        assert!(said(text(r#"{"success": false, "reason": "quota"}"#)).is_some());
        assert!(said(json!({"content": [], "structuredContent": {"isError": true}})).is_some());
        // A health check's or a job's own data is no failure of the call.
        assert!(said(json!({"content": [], "structuredContent": {"ok": false}})).is_none());
        assert!(said(text(r#"{"status": "failed", "job": 7}"#)).is_none());
        let flagged_false =
            json!({"content": [{"type": "text", "text": "Error: x"}], "isError": false});
        assert!(said(flagged_false).unwrap().contains("isError false"));
        // A success that mentions errors, and a flagged tool error, are not.
        assert!(said(text("0 errors found")).is_none());
        assert!(said(text("Errors are logged to /var/log")).is_none());
        assert!(said(text(r#"{"success": true}"#)).is_none());
        let flagged = json!({"content": [{"type": "text", "text": "Error: x"}], "isError": true});
        assert!(said(flagged).is_none());
    }
}
