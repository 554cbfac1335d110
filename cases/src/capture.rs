//! What a case step's `capture` takes from the step's answer: a value at a
//! dotted path, or a value made from it for the next request.
//!
//! A capture is `PATH`, `PATH?` (optional: without it the case is skipped,
//! the server having taken a path the case cannot follow, rather than
//! failed) or `FUNCTION(PATH)`:
//! - `answers(PATH)`: the `InputResponses` that answer every input request
//!   of the `InputRequests` at PATH as a willing client would
//!   (basic/patterns/mrtr): an elicitation accepted with a value for each
//!   field its schema requires, a sampling request with a short assistant
//!   text, `roots/list` with no roots;
//! - `declined(PATH)`: the same with every elicitation declined;
//! - `answers_with_extra(PATH)`: `answers(PATH)` and one key more that was
//!   not asked for ([`EXTRA_KEY`]);
//! - `malformed(PATH)`: every input request answered with a bare string
//!   instead of a result object;
//! - `altered(PATH)`: the string at PATH with one character changed (a
//!   tampered `requestState`).

use serde_json::{json, Map, Value};

use crate::pattern::at_path;

/// The key `answers_with_extra` adds to the answers.
pub const EXTRA_KEY: &str = "mcperr-not-asked";

/// The capture functions.
pub const FUNCTIONS: [&str; 5] = [
    "answers",
    "declined",
    "answers_with_extra",
    "malformed",
    "altered",
];

/// Why a capture found nothing to take.
#[derive(Debug, PartialEq, Eq)]
pub enum Missing {
    /// A required value is absent: the case fails.
    Required(String),
    /// An optional value (`PATH?`) is absent: the case is skipped.
    Optional(String),
}

/// The value `spec` takes from `answer`, or what is missing.
pub fn take(answer: &Value, spec: &str) -> Result<Value, Missing> {
    let (function, inner) = match spec.split_once('(') {
        Some((f, rest)) if rest.ends_with(')') => (Some(f), &rest[..rest.len() - 1]),
        _ => (None, spec),
    };
    let (path, optional) = match inner.strip_suffix('?') {
        Some(p) => (p, true),
        None => (inner, false),
    };
    let found = at_path(answer, path).filter(|v| !v.is_null());
    let missing = |why: String| {
        if optional {
            Missing::Optional(why)
        } else {
            Missing::Required(why)
        }
    };
    let Some(v) = found else {
        return Err(missing(format!("was answered without {path}")));
    };
    match function {
        None => Ok(v.clone()),
        Some("answers") => input_responses(v, false).map_err(missing),
        Some("declined") => input_responses(v, true).map_err(missing),
        Some("answers_with_extra") => {
            let mut answers = input_responses(v, false).map_err(missing)?;
            answers[EXTRA_KEY] = json!({"action": "accept", "content": {"note": "mcperr"}});
            Ok(answers)
        }
        Some("malformed") => match v.as_object() {
            Some(requests) => Ok(Value::Object(
                requests
                    .keys()
                    .map(|k| (k.clone(), json!("mcperr")))
                    .collect(),
            )),
            None => Err(missing(format!("has inputRequests {v}, not an object"))),
        },
        Some("altered") => match v.as_str() {
            Some(s) if !s.is_empty() => Ok(Value::String(altered(s))),
            _ => Err(missing(format!("has {path} {v}, not a string to alter"))),
        },
        Some(other) => Err(Missing::Required(format!(
            "names an unknown capture function {other}(): give one of {}()",
            FUNCTIONS.join("(), ")
        ))),
    }
}

/// Whether `spec` names a known capture (checked when a case file loads).
pub fn valid_spec(spec: &str) -> bool {
    match spec.split_once('(') {
        Some((f, rest)) => FUNCTIONS.contains(&f) && rest.len() > 1 && rest.ends_with(')'),
        None => !spec.is_empty() && !spec.contains(')'),
    }
}

/// One character of `s` changed, in the middle (a MAC or signature changes
/// wherever it sits; a prefix such as a version tag is left alone).
fn altered(s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    let at = chars.len() / 2;
    chars
        .iter()
        .enumerate()
        .map(|(i, c)| match (i == at, c) {
            (false, c) => *c,
            (true, 'a') => 'b',
            (true, '0') => '1',
            (true, c) if c.is_ascii_alphanumeric() => {
                if c.is_ascii_digit() {
                    '0'
                } else {
                    'a'
                }
            }
            (true, _) => 'a',
        })
        .collect()
}

/// The answers to an `InputRequests` map.
fn input_responses(requests: &Value, decline: bool) -> Result<Value, String> {
    let Some(requests) = requests.as_object() else {
        return Err(format!("has inputRequests {requests}, not an object"));
    };
    let mut out = Map::new();
    for (key, r) in requests {
        let Some(answer) = willing_answer(r, decline) else {
            return Err(format!(
                "has inputRequests[{key:?}] {r}, which mcperr cannot answer"
            ));
        };
        out.insert(key.clone(), answer);
    }
    Ok(Value::Object(out))
}

/// The result a willing client gives request `r` (an elicitation, a
/// sampling request, `roots/list`), or `None` for another kind.
fn willing_answer(r: &Value, decline: bool) -> Option<Value> {
    Some(match r.get("method").and_then(Value::as_str)? {
        "elicitation/create" if decline => json!({"action": "decline"}),
        "elicitation/create" => match r.pointer("/params/mode").and_then(Value::as_str) {
            Some("url") => json!({"action": "accept"}),
            _ => json!({"action": "accept",
                    "content": form_content(r.pointer("/params/requestedSchema"))}),
        },
        "sampling/createMessage" => json!({"role": "assistant",
            "content": {"type": "text", "text": "mcperr"},
            "model": "mcperr", "stopReason": "endTurn"}),
        "roots/list" => json!({"roots": []}),
        _ => return None,
    })
}

/// A 2025-11-25 client's response to `message`, a request of the server's
/// own, when the client `declared` the capability it needs: the willing
/// answer of [`take`]'s `answers()`, under the request's id. `None` for a
/// request of another kind or of an undeclared capability (mcperr then
/// leaves it unanswered, as before it learnt to answer).
pub fn answer_server_request(declared: &Value, message: &Value) -> Option<Value> {
    let id = message.get("id").filter(|id| !id.is_null())?;
    let capability = match message.get("method").and_then(Value::as_str)? {
        "elicitation/create" => "elicitation",
        "sampling/createMessage" => "sampling",
        "roots/list" => "roots",
        _ => return None,
    };
    declared.get(capability)?;
    let result = willing_answer(message, false)?;
    Some(json!({"jsonrpc": "2.0", "id": id, "result": result}))
}

/// A value for each required field of a form elicitation's flat schema:
/// its default, else its first `enum`/`oneOf` value, else true, the
/// minimum (or 1) or "mcperr" by type.
fn form_content(schema: Option<&Value>) -> Value {
    let mut content = Map::new();
    let props = schema
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object);
    let required = schema
        .and_then(|s| s.get("required"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str);
    for name in required {
        let p = props.and_then(|p| p.get(name)).unwrap_or(&Value::Null);
        let first = p
            .get("enum")
            .and_then(|e| e.get(0))
            .or_else(|| p.pointer("/oneOf/0/const"));
        let v = match (p.get("default"), first) {
            (Some(d), _) => d.clone(),
            (None, Some(e)) => e.clone(),
            (None, None) => match p.get("type").and_then(Value::as_str) {
                Some("boolean") => json!(true),
                Some("integer" | "number") => p.get("minimum").cloned().unwrap_or(json!(1)),
                Some("array") => json!([]),
                _ => json!("mcperr"),
            },
        };
        content.insert(name.to_string(), v);
    }
    Value::Object(content)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask() -> Value {
        json!({"result": {"resultType": "input_required", "requestState": "17.abcdef",
            "inputRequests": {"confirm": {"method": "elicitation/create", "params": {
                "message": "Buy Dune?", "requestedSchema": {"type": "object",
                "properties": {"confirm": {"type": "boolean"}, "note": {"type": "string"}},
                "required": ["confirm"]}}}}}})
    }

    #[test]
    fn answers_accept_each_elicitation_with_its_required_fields() {
        let got = take(&ask(), "answers(result.inputRequests)").unwrap();
        assert_eq!(
            got,
            json!({"confirm": {"action": "accept", "content": {"confirm": true}}})
        );
        let no = take(&ask(), "declined(result.inputRequests)").unwrap();
        assert_eq!(no, json!({"confirm": {"action": "decline"}}));
    }

    #[test]
    fn altered_changes_one_character_and_a_missing_optional_value_skips() {
        let got = take(&ask(), "altered(result.requestState)").unwrap();
        assert_eq!(got, json!("17.aacdef"));
        assert!(matches!(
            take(&ask(), "result.other?"),
            Err(Missing::Optional(_))
        ));
        assert!(matches!(
            take(&ask(), "result.other"),
            Err(Missing::Required(_))
        ));
        assert!(valid_spec("answers(result.inputRequests)") && !valid_spec("nope(x)"));
        let extra = take(&ask(), "answers_with_extra(result.inputRequests)").unwrap();
        assert_eq!(extra.as_object().unwrap().len(), 2);
        let bad = take(&ask(), "malformed(result.inputRequests)").unwrap();
        assert_eq!(bad, json!({"confirm": "mcperr"}));
    }
}
