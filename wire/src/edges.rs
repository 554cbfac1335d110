//! One policy per wire edge case, written once and used by every transport
//! and mode (scripted cases, fuzzing, replay), each next to its test:
//!
//! - **Ids a double cannot hold** ([`big_id`]): JSON numbers outside
//!   [-(2^53)+1, 2^53-1]. RFC 8259 §6 lets a parser limit number range and
//!   precision, so a rounded echo, no answer, or an `id: null` parse error are
//!   all the same warning (J1 `big-id`, capped at warn in the table), over
//!   stdio and HTTP alike. The excuse holds only when the same request with a
//!   small id is answered normally: the caller re-sends and passes
//!   `small_id_answered`; without that proof, nothing is excused.
//! - **Lone-surrogate escapes** (`"\ud800"`): valid JSON text (RFC 8259 §8.2
//!   allows it, and says a parser's behaviour is unpredictable). Every decoder
//!   of mcperr accepts them ([`crate::text::decode`]); a server that refuses such a
//!   request may answer with an `id: null` error or, over stdio, stay silent
//!   ([`refused_lone_surrogate`]).
//! - **`id: null` error answers**: allowed only where the request's id could
//!   not be read (basic/index#error-responses); elsewhere J1 `error-id`.
//! - **Duplicate answers**: a second answer to one id is J1 (the invariants'
//!   strays).
//! - **Repeated names in an object** ([`crate::text::repeated_input_requests`]): RFC
//!   8259 §4 says names SHOULD be unique and leaves a reader's choice open;
//!   serde_json keeps the last. One object must have unique names in MCP,
//!   2026-07-28's `inputRequests` (M1 `input-request-keys-unique`), so only
//!   a message that has one is read again, from its text, for names given
//!   twice.

use serde_json::Value;

use crate::exchange::{Ending, Exchange};
use mcperr_model::grading::Violation;
use mcperr_model::rules::AspectId;

/// The largest integer a double holds exactly (2^53 - 1).
const EXACT: u64 = (1 << 53) - 1;

/// Whether `id` is a JSON number a double cannot hold exactly.
pub fn beyond_double(id: &Value) -> bool {
    match id {
        Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => u > EXACT,
            (None, Some(i)) => i.unsigned_abs() > EXACT,
            _ => false,
        },
        _ => false,
    }
}

/// How a server answered a request whose id a double cannot hold, when
/// that is all that went wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BigIdAnswer {
    /// The id came back as the nearest double.
    Rounded,
    /// No answer at all.
    Silent,
    /// An `id: null` error (the parser refused the number).
    NullIdError,
}

/// What `exchange` shows about a request with an id beyond a double: the
/// kind of answer, if it is one the RFC 8259 §6 policy covers.
pub fn big_id_answer(exchange: &Exchange) -> Option<BigIdAnswer> {
    let sent = exchange.request.get("id")?;
    if !beyond_double(sent) {
        return None;
    }
    match &exchange.ending {
        Ending::Timeout => Some(BigIdAnswer::Silent),
        Ending::Answered(r) | Ending::WrongId(r) => {
            let got = r.get("id")?;
            if got.is_null() && r.get("error").is_some() {
                Some(BigIdAnswer::NullIdError)
            } else if got != sent && got.as_f64().is_some() && got.as_f64() == sent.as_f64() {
                Some(BigIdAnswer::Rounded)
            } else {
                None
            }
        }
        _ => None,
    }
}

/// The RFC 8259 §6 policy: the one violation an id beyond a double gives
/// when the same request with a small id is answered normally
/// (`small_id_answered`), replacing the id, silence or id-null faults the
/// invariants found. `None` where the policy does not apply (another fault,
/// or no proof that the id alone was the problem).
pub fn big_id(exchange: &Exchange, small_id_answered: Option<bool>) -> Option<Violation> {
    let answer = big_id_answer(exchange)?;
    // A rounded echo proves the server read and answered the request.
    let proven = answer == BigIdAnswer::Rounded || small_id_answered == Some(true);
    if !proven {
        return None;
    }
    let sent = exchange.request.get("id").cloned().unwrap_or(Value::Null);
    let what = match answer {
        BigIdAnswer::Rounded => "came back rounded",
        BigIdAnswer::Silent => "was never answered (the same request with a small id was)",
        BigIdAnswer::NullIdError => {
            "was refused with an id-null error (the same request with a small id was answered)"
        }
    };
    Some(Violation::new(
        AspectId::J1BigId,
        format!("the request with id {sent}, beyond what a double holds, {what}"),
    ))
}

/// Whether `v` is one of the faults [`big_id`] replaces: the response's own
/// id, or the silence.
fn replaced_by_big_id(v: &Violation) -> bool {
    matches!(
        v.aspect,
        AspectId::J1IdType | AspectId::J1ErrorId | AspectId::J4Main
    )
}

/// Puts the big-id violation `v` in place of the faults it explains in
/// `found`, whose first `strays` entries are stray output of the exchange
/// (other answers: those stay judged).
pub fn apply_big_id(found: &mut Vec<Violation>, strays: usize, v: Violation) {
    let mut i = 0;
    found.retain(|f| {
        i += 1;
        i <= strays || !replaced_by_big_id(f)
    });
    found.push(v);
}

/// Whether an answer is a server's refusal of a line it could not decode
/// (a lone surrogate): an `id: null` error, which "error cases where the ID
/// could not be read due a malformed request" allow.
pub fn refused_lone_surrogate(response: Option<&Value>) -> bool {
    response.is_some_and(|r| r.get("id") == Some(&Value::Null) && r.get("error").is_some())
}

/// The `error.code` of an answer, when it is an integer.
pub fn error_code(v: &serde_json::Value) -> Option<mcperr_protocol::codes::Code> {
    at(v, &["error", "code"]).and_then(mcperr_protocol::codes::Code::of)
}

/// The value at `keys` under `v`, as `v.pointer("/a/b")` finds it without
/// parsing a pointer (which allocates per step: the judge looks up a few
/// paths in every answer of a campaign).
pub fn at<'a>(v: &'a serde_json::Value, keys: &[&str]) -> Option<&'a serde_json::Value> {
    keys.iter().try_fold(v, |v, k| v.get(k))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::time::Duration;

    fn ex(request: Value, ending: Ending) -> Exchange {
        Exchange {
            request,
            ending,
            strays: vec![],
            duration: Duration::ZERO,
            http: None,
        }
    }

    const BIG: u64 = (1 << 53) + 1;

    #[test]
    fn a_rounded_echo_is_the_big_id_warning_without_a_resend() {
        let e = ex(
            json!({"id": BIG}),
            Ending::WrongId(json!({"jsonrpc": "2.0", "id": 9007199254740992u64, "result": {}})),
        );
        assert_eq!(big_id(&e, None).unwrap().aspect, AspectId::J1BigId);
    }

    #[test]
    fn silence_and_id_null_are_excused_only_when_a_small_id_is_answered() {
        let silent = ex(json!({"id": BIG}), Ending::Timeout);
        assert!(big_id(&silent, None).is_none());
        assert!(
            big_id(&silent, Some(false)).is_none(),
            "array params, say: no excuse"
        );
        assert!(big_id(&silent, Some(true)).is_some());
        let refused = ex(
            json!({"id": BIG}),
            Ending::Answered(
                json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "x"}}),
            ),
        );
        assert_eq!(big_id_answer(&refused), Some(BigIdAnswer::NullIdError));
        assert!(big_id(&refused, Some(true)).is_some());
    }

    #[test]
    fn small_ids_and_exact_echoes_are_not_the_policys() {
        let small = ex(json!({"id": 7}), Ending::Timeout);
        assert!(big_id_answer(&small).is_none());
        let exact = ex(
            json!({"id": BIG}),
            Ending::Answered(json!({"jsonrpc": "2.0", "id": BIG, "result": {}})),
        );
        assert!(big_id_answer(&exact).is_none());
        assert!(beyond_double(&json!(-(BIG as i64))) && !beyond_double(&json!(-9)));
    }
}
