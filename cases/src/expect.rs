//! The expected answer of each kind of request, stated once: the fuzz
//! judge's class rules call the `*_violations` functions, and a saved
//! finding's case file (replay) and the generated cases use the matching
//! [`Shape`], so an answer gets the same aspect, and so the same verdict,
//! whichever path judges it.
//!
//! - a **tool rejection** (T4): an `isError` result; a JSON-RPC −32602 breaks
//!   T4 `invalid-params-code` (a warning under every profile, from the
//!   table); any other answer breaks T4's central sentence;
//! - a **prompt error** (P1, P2): a JSON-RPC −32602;
//! - a **made-up resource read** (R1): a JSON-RPC error, never an `isError`
//!   result; empty `contents` breaks R1 `no-empty-contents`; −32002 breaks
//!   R1 `retired-32002`.

use serde_json::{json, Value};

use mcperr_model::grading::Violation;
use mcperr_model::rules::AspectId;

/// A case file's shape for one kind of expected answer: the `[expect]`
/// pattern, and `[[warn]]` shapes each graded by an aspect.
#[derive(Debug, Clone, PartialEq)]
pub struct Shape {
    /// The passing shape.
    pub expect: Value,
    /// Shapes graded by their aspect's level (aspect name, pattern).
    pub warn: Vec<(&'static str, Value)>,
}

/// T4: what a tool rejection must look like.
pub fn tool_rejection_shape() -> Shape {
    Shape {
        expect: json!({"error": "$absent", "result": {"isError": true}}),
        warn: vec![(
            "invalid-params-code",
            json!({"error": {"code": mcperr_protocol::codes::INVALID_PARAMS}}),
        )],
    }
}

/// T4: what is wrong with the answer to invalid arguments (`what`: the
/// constraint broken), if anything.
pub fn tool_rejection(r: &Value, what: &str) -> Option<Violation> {
    let code = mcperr_wire::edges::error_code(r);
    let result = r.get("result");
    let is_error = result.and_then(|x| x.get("isError")) == Some(&Value::Bool(true));
    match (result, code) {
        (Some(_), _) if !is_error => Some(Violation::new(
            AspectId::T4Main,
            format!("invalid arguments ({what}) were accepted: a result without isError"),
        )),
        (_, Some(mcperr_protocol::codes::INVALID_PARAMS)) => Some(Violation::new(
            AspectId::T4InvalidParamsCode,
            format!("invalid arguments ({what}) answered as JSON-RPC -32602, not as an isError tool result the model can read"),
        )),
        (_, Some(c)) => Some(Violation::new(
            AspectId::T4Main,
            format!("invalid arguments ({what}) answered as JSON-RPC error {c}, not an isError tool result"),
        )),
        _ => None,
    }
}

/// P1/P2: a prompt error is −32602.
pub fn prompt_error_shape() -> Shape {
    Shape {
        expect: json!({"result": "$absent", "error": {"code": mcperr_protocol::codes::INVALID_PARAMS}}),
        warn: vec![],
    }
}

/// P1/P2 (`aspect`): what is wrong with the answer to a prompt request that
/// must fail (`what` it was), if anything: a rendered prompt, or an error
/// code other than −32602 (the Python SDK answers code 0).
pub fn prompt_error(aspect: AspectId, r: &Value, what: &str) -> Option<Violation> {
    if r.get("result").is_some() {
        return Some(Violation::new(
            aspect,
            format!("{what} was rendered instead of failing with -32602"),
        ));
    }
    match mcperr_wire::edges::at(r, &["error", "code"]) {
        Some(c) if *c == mcperr_protocol::codes::INVALID_PARAMS => None,
        Some(c) => Some(Violation::new(
            aspect,
            format!("{what} was answered with error code {c}, not -32602"),
        )),
        None => None,
    }
}

/// R1 for a read of a value mcperr made up: any JSON-RPC error.
pub fn made_up_read_shape() -> Shape {
    Shape {
        expect: json!({"error": "$present", "result": "$absent"}),
        warn: vec![],
    }
}

/// R1: what is wrong with the answer to a read of a value mcperr made up.
/// The value might exist (a template that serves any value), so only what no
/// answer may be is judged: an `isError` result (resources have none), empty
/// `contents` (R1 `no-empty-contents`, as the scripted case judges it) and
/// the retired −32002 (R1 `retired-32002`); the table gives each its level
/// per era.
pub fn made_up_read(r: &Value) -> Vec<Violation> {
    let result = r.get("result");
    let mut out = Vec::new();
    if result.and_then(|x| x.get("isError")) == Some(&Value::Bool(true)) {
        out.push(Violation::new(
            AspectId::R1Main,
            "a read of a value that cannot exist came back as an isError result; resources have no isError, a missing resource is a JSON-RPC error",
        ));
    }
    let empty = result
        .and_then(|x| x.get("contents"))
        .and_then(Value::as_array)
        .is_some_and(Vec::is_empty);
    if empty {
        out.push(Violation::new(
            AspectId::R1NoEmptyContents,
            "a read of a value mcperr made up (it should not exist) came back with empty contents",
        ));
    }
    if mcperr_wire::edges::error_code(r) == Some(mcperr_protocol::codes::RESOURCE_NOT_FOUND_RETIRED)
    {
        out.push(Violation::new(
            AspectId::R1Retired32002,
            "a missing resource answered -32002",
        ));
    }
    out
}

/// A tool's refusal of a call: a JSON-RPC error or an `isError` result.
pub fn refusal(response: &Value) -> bool {
    response.get("error").is_some()
        || mcperr_wire::edges::at(response, &["result", "isError"]) == Some(&Value::Bool(true))
}

/// An answer's text: the error's message, or the result's text content.
pub fn answer_text(answer: &Value) -> String {
    if let Some(m) = mcperr_wire::edges::at(answer, &["error", "message"]).and_then(Value::as_str) {
        return m.to_string();
    }
    answer
        .pointer("/result/content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| c.get("text").and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join(" ")
}

/// T4 with an extra property, on a tool that refuses every valid argument
/// set mcperr can build: whether its refusal of the call with the extra
/// property (`with`) says more than its refusal of the same set without it
/// (`without`), i.e. holds a word that neither that refusal nor the extra
/// property's name and value hold. Only then is the refusal about the extra
/// property, and the case judged; otherwise the tool may have failed for
/// another reason and the case is a skip. Numbers and hex runs with a digit
/// (a request id, a counter, a timestamp) are not words: they change by
/// themselves.
pub fn refusal_says_more(with: &str, without: &str, rebase: &crate::case::Rebase) -> bool {
    fn words(s: &str) -> std::collections::HashSet<String> {
        let counter = |w: &&str| {
            w.chars().any(|c| c.is_ascii_digit()) && w.chars().all(|c| c.is_ascii_hexdigit())
        };
        s.split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty() && !counter(w))
            .map(str::to_lowercase)
            .collect()
    }
    let mut known = words(without);
    known.extend(words(&rebase.extra.0));
    known.extend(words(&rebase.extra.1.to_string()));
    words(with).iter().any(|w| !known.contains(w))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rebase() -> crate::case::Rebase {
        crate::case::Rebase {
            sets: vec![json!({"title": "x"})],
            extra: ("unexpected_flag".into(), json!(true)),
        }
    }

    #[test]
    fn a_refusal_of_the_extra_property_says_more_than_the_plain_refusal() {
        let without = "No book titled 'x' in the catalog (request 4f2a1)";
        // The same refusal, another request id: it says nothing more.
        assert!(!refusal_says_more(
            "No book titled 'x' in the catalog (request 9c3e7)",
            without,
            &rebase()
        ));
        // Naming the extra property says nothing new either: the case names it.
        assert!(!refusal_says_more(
            "No book titled 'x' in the catalog; unexpected_flag true",
            without,
            &rebase()
        ));
        // A word of its own: the extra property was looked at.
        assert!(refusal_says_more(
            "Additional properties are not allowed",
            without,
            &rebase()
        ));
    }

    #[test]
    fn a_refusal_is_an_error_or_an_is_error_result_and_its_text_is_read_from_either() {
        let error = json!({"error": {"code": -32602, "message": "bad"}});
        let result = json!({"result": {"content": [{"type": "text", "text": "no"}, {"type": "text", "text": "way"}], "isError": true}});
        let success = json!({"result": {"content": [{"type": "text", "text": "ok"}]}});
        assert!(refusal(&error) && refusal(&result) && !refusal(&success));
        assert_eq!(answer_text(&error), "bad");
        assert_eq!(answer_text(&result), "no way");
    }

    #[test]
    fn a_prompt_error_with_code_zero_is_a_p1_deviation() {
        let zero =
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": 0, "message": "Unknown prompt"}});
        let v = prompt_error(AspectId::P1Main, &zero, "an unknown prompt name").unwrap();
        assert!(v.message.contains("error code 0"), "{}", v.message);
        let right = json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "x"}});
        assert!(prompt_error(AspectId::P1Main, &right, "x").is_none());
    }

    #[test]
    fn a_tool_rejection_by_minus_32602_is_its_own_aspect() {
        let r = json!({"error": {"code": -32602, "message": "bad"}});
        assert_eq!(
            tool_rejection(&r, "x").unwrap().aspect,
            AspectId::T4InvalidParamsCode
        );
        let ok = json!({"result": {"isError": true, "content": []}});
        assert!(tool_rejection(&ok, "x").is_none());
        let shape = tool_rejection_shape();
        assert!(crate::pattern::matches(&shape.expect, Some(&ok)).is_ok());
        assert!(crate::pattern::matches(&shape.warn[0].1, Some(&r)).is_ok());
    }
}
