//! T8's `also-text`: a tool result with `structuredContent` also carries it
//! serialized in a text block (server/tools#structured-content: "For
//! backwards compatibility, a tool that returns structured content SHOULD
//! also return the serialized JSON in a TextContent block"). Judged on every
//! `tools/call` answer, as the other invariants are.

use serde_json::Value;

use crate::oracle::Violation;
use crate::rules::AspectId;

/// The `also-text` violation of one answer to `request`, if any. A tool
/// error (`isError`) and a 2026-07-28 result that asks for input are not
/// structured output; "serialized JSON" is compared as JSON, so spacing and
/// key order do not matter.
pub fn also_text(response: &Value, request: &Value) -> Option<Violation> {
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
    let texts: Vec<&str> = result
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|c| c.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|c| c.get("text").and_then(Value::as_str))
        .collect();
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
    Some(Violation::new(
        AspectId::T8AlsoText,
        format!("the result carries structuredContent {structured} but {shown}, none of them that JSON serialized"),
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
        let v = also_text(&r, &call()).expect("a violation");
        assert_eq!(v.aspect, AspectId::T8AlsoText);
        assert!(v.message.contains("\"3\""), "{}", v.message);
        let none = answer(json!({"content": [], "structuredContent": {"count": 3}}));
        assert!(also_text(&none, &call()).is_some());
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
