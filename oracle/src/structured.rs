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
}
