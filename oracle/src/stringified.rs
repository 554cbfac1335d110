//! T4 `validate-inputs` read from an answer's text: an argument the schema
//! rejects, turned into text by the tool's own code, shows that the body
//! ran on it. A validator names the field and what it expected; it never
//! prints an object the way a language's string conversion does:
//! JavaScript's `String({...})` is `[object Object]`, Go's `fmt` prints a
//! map as `map[key:value]`. Found only where the request sent an object
//! argument and did not itself carry the marker. A success that shows one
//! of the wrong-type values a generated T4 case sends ran its body on it.

use serde_json::Value;

/// JavaScript's `String()` of any object.
const JS_OBJECT: &str = "[object Object]";

/// The whole answer serialized: an error's message and data, or a
/// result's content and structured content (wider than
/// `mcperr_cases::expect::answer_text`, which reads message or texts only).
fn serialized_answer(response: &Value) -> String {
    match response.get("error") {
        Some(e) => e.to_string(),
        None => response
            .get("result")
            .map(Value::to_string)
            .unwrap_or_default(),
    }
}

/// The marker of `value` stringified by code that `text` holds, and which
/// language's conversion it is.
fn stringified(
    text: &str,
    value: &serde_json::Map<String, Value>,
) -> Option<(String, &'static str)> {
    if text.contains(JS_OBJECT) {
        return Some((JS_OBJECT.to_string(), "JavaScript's string of an object"));
    }
    // Go prints map[k1:v1 k2:v2] (keys sorted): its opening and first key.
    let first = value.keys().min()?;
    let go = format!("map[{first}:");
    text.contains(&go).then_some((go, "Go's fmt of a map"))
}

/// T4 `validate-inputs`: the answer to a `tools/call` that sent an object
/// argument shows that object as the tool's code turned it into text.
pub fn body_ran_on_value(response: &Value, request: &Value) -> Option<String> {
    if request.get("method").and_then(Value::as_str) != Some("tools/call") {
        return None;
    }
    let args = request.pointer("/params/arguments")?.as_object()?;
    let sent = request.to_string();
    let text = serialized_answer(response);
    let success = response.get("error").is_none()
        && response.pointer("/result/isError") != Some(&Value::Bool(true));
    if success {
        if let Some(shown) = mcperr_cases::generate::WRONG_TYPE_TEXTS
            .iter()
            .find(|t| text.contains(*t) && sent.contains(*t))
        {
            return Some(format!(
                "a success that shows the wrong-type value sent ({shown:?}): the tool body ran on a value its inputSchema rejects"
            ));
        }
    }
    args.iter()
        .filter_map(|(name, v)| Some((name, v.as_object()?)))
        .find_map(|(name, object)| {
            let (marker, how) = stringified(&text, object)?;
            // What the request carried itself is an echo, not the body's work.
            (!sent.contains(&marker)).then(|| {
                format!(
                    "the answer shows the object sent as {name} as {marker:?}… ({how}): the tool body ran on a value its inputSchema rejects, instead of a validation refusing it before the body"
                )
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(args: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "t", "arguments": args}})
    }

    fn refusal(text: &str) -> Value {
        json!({"jsonrpc": "2.0", "id": 1, "result": {"isError": true, "content": [{"type": "text", "text": text}]}})
    }

    #[test]
    fn an_object_printed_by_javascript_or_go_is_the_body_running() {
        let req = call(json!({"title": {"mcperr": "wrong type"}}));
        for text in [
            "No book titled [object Object] in the catalog.",
            "lookup: no book titled map[mcperr:wrong type]",
        ] {
            let why = body_ran_on_value(&refusal(text), &req).unwrap_or_else(|| panic!("{text}"));
            assert!(why.contains("title"), "{why}");
        }
    }

    #[test]
    fn a_validation_that_names_the_field_is_not() {
        let req = call(json!({"title": {"mcperr": "wrong type"}}));
        for text in [
            "Input validation error: title: Invalid input: expected string, received object",
            "1 validation error for lookupArguments\ntitle\n  Input should be a valid string [type=string_type, input_value={'mcperr': 'wrong type'}, input_type=dict]",
            "title: expected string, got map",
        ] {
            assert_eq!(body_ran_on_value(&refusal(text), &req), None, "{text}");
        }
        // No object was sent: nothing to have stringified.
        let scalar = call(json!({"title": 5}));
        assert_eq!(
            body_ran_on_value(&refusal("got [object Object]"), &scalar),
            None
        );
        // A success that shows the bad value itself ran on it; one that
        // shows only a valid argument did not.
        let wrong = call(json!({"title": "mcperr-not-a-number", "shelf": "A"}));
        let success = |text: &str| json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": text}]}});
        assert!(body_ran_on_value(&success("no book mcperr-not-a-number"), &wrong).is_some());
        assert_eq!(
            body_ran_on_value(&success("shelf A is empty"), &wrong),
            None
        );
        assert_eq!(
            body_ran_on_value(&refusal("title mcperr-not-a-number: not a string"), &wrong),
            None
        );
        // The request carried the marker itself: an echo.
        let echo = call(json!({"title": {"note": "[object Object]"}}));
        assert_eq!(
            body_ran_on_value(&refusal("no [object Object]"), &echo),
            None
        );
    }
}
