//! A finding's identity: what makes two answers the same deviation. The
//! signature is a member's cause (aspect, kind, verdict, what about the
//! input caused it, what kind of answer came), what shrinking keeps; the
//! group is the deviation a report counts once (the signature without the
//! tool or constraint, or, where only an id style brings it about, the
//! style and the answer). Never the era, an echoed value or message text;
//! the id is a stable digest of the group.

use serde_json::Value;

use mcperr_cases::fuzz::inputs::{Class, FuzzInput, IdStyle};
use mcperr_model::grading::Violation;
use mcperr_model::rules::AspectId;
use mcperr_model::verdict::Verdict;
use mcperr_wire::exchange::{Ending, Exchange};
use mcperr_wire::id_fault::IdFault;

/// A short stable hex digest (FNV-1a) of `s`, for file names.
pub fn digest(s: &str) -> String {
    let h = s.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{:08x}", h as u32)
}

/// A finding's stable id: the saved case's id and what a baseline lists.
pub fn finding_id(rule: &str, target: &str, signature: &str) -> String {
    let slug: String = target
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .take(24)
        .collect();
    format!(
        "fuzz/{}-{}-{}",
        rule.to_lowercase(),
        slug.trim_matches('-'),
        digest(signature)
    )
}

/// The response with its values replaced by their types, except those that
/// say what kind of answer it is (error code, isError, resultType, content types).
pub fn shape(v: &Value) -> String {
    fn walk(v: &Value, key: &str, out: &mut String) {
        match v {
            Value::Object(o) => {
                let mut keys: Vec<&String> = o.keys().collect();
                keys.sort();
                out.push('{');
                for k in keys {
                    out.push_str(k);
                    out.push(':');
                    walk(&o[k], k, out);
                    out.push(',');
                }
                out.push('}');
            }
            Value::Array(a) => {
                out.push('[');
                if let Some(x) = a.first() {
                    walk(x, key, out);
                }
                out.push(']');
            }
            _ if matches!(key, "code" | "isError" | "resultType" | "type" | "jsonrpc") => {
                out.push_str(&v.to_string())
            }
            Value::String(_) => out.push('s'),
            Value::Number(_) => out.push('n'),
            Value::Bool(_) => out.push('b'),
            Value::Null => out.push_str("null"),
        }
    }
    let mut out = String::new();
    walk(v, "", &mut out);
    out
}

/// What kind of answer a violation is told by: for J1 (a shape fault) the
/// answer's whole shape without its id, for any other rule the kind of
/// answer (a result, an `isError` result, an error code), so that a match
/// with hits or without, or an era's extra result fields, is one answer.
fn answer_kind(v: &Violation, exchange: &Exchange) -> String {
    match &exchange.ending {
        Ending::Answered(r) | Ending::WrongId(r) if v.rule() != mcperr_model::rules::RuleId::J1 => {
            match (
                mcperr_wire::edges::at(r, &["error", "code"]),
                mcperr_wire::edges::at(r, &["result", "isError"]),
            ) {
                (Some(code), _) => format!("error {code}"),
                (None, Some(Value::Bool(true))) => "isError result".into(),
                (None, _) if r.get("result").is_some() => "result".into(),
                _ => shape(r),
            }
        }
        // The id's own type is J1's business, not a different finding.
        Ending::Answered(v) | Ending::WrongId(v) => {
            let mut v = v.clone();
            if let Some(o) = v.as_object_mut() {
                o.remove("id");
            }
            shape(&v)
        }
        Ending::Timeout => "no answer".into(),
        Ending::Died(_) => "died".into(),
        other => format!("{other:?}").chars().take(40).collect(),
    }
}

/// A member's identity, its cause: aspect, kind of violation and verdict,
/// what about the input caused it ([`cause`]) and the kind of answer
/// ([`answer_kind`]); never the era, the id's style, an echoed value or
/// message text. Shrinking keeps an input only while it shows the same
/// signature, so a shrunk example stays an example of its own cause.
pub(crate) fn signature(
    v: &Violation,
    verdict: Verdict,
    input: &FuzzInput,
    exchange: &Exchange,
) -> String {
    let tag = format!("{} {:?} {}", v.aspect, v.kind, verdict.as_str());
    // A wrong id is the server's way with ids, whatever was asked: one
    // deviation per transformation (sign dropped, wrapped, rounded,
    // retyped…), whichever request, method or body carried it.
    if let Some(fault) = id_transformation(v, exchange) {
        return format!("ids {fault} {}", verdict.as_str());
    }
    let answer = answer_kind(v, exchange);
    // An error that drops the request's id is the server's error path, not
    // the input's fault: one finding per kind of answer (rmcp answers every
    // request params it cannot take with the same id-less -32600).
    if v.aspect == AspectId::J1ErrorId {
        return format!("{tag} {answer}");
    }
    format!("{tag} {} {answer}", cause(input))
}

/// What a wrong id shows, for the id aspects: the transformation
/// ([`IdFault`]) that turned the request's id into the answer's, or for an
/// id beyond a double that got no answer, that. `None` for anything else
/// (a null id on an error stays its error path's: [`signature`]).
fn id_transformation(v: &Violation, exchange: &Exchange) -> Option<&'static str> {
    if !matches!(
        v.aspect,
        AspectId::J1IdType | AspectId::J1BigId | AspectId::J1ErrorId
    ) {
        return None;
    }
    let got = match &exchange.ending {
        Ending::Answered(r) | Ending::WrongId(r) => r.get("id"),
        _ if v.aspect == AspectId::J1BigId => return Some("beyond 2^53 never answered"),
        _ => return None,
    };
    let sent = exchange.request.get("id").unwrap_or(&Value::Null);
    match IdFault::of(sent, got) {
        Some(IdFault::Null) if v.aspect == AspectId::J1ErrorId => None,
        Some(IdFault::Null) if v.aspect == AspectId::J1BigId => {
            Some("beyond 2^53 refused with a null id")
        }
        Some(fault) => Some(fault.as_str()),
        None => None,
    }
}

/// A finding's group, what reports count as one finding: the deviation
/// itself (aspect, kind, verdict and the kind of answer, values and ids
/// abstracted) in one method, whatever tool, constraint, template or prompt
/// the input aimed at; those are listed as the group's causes. A broken
/// part of the request's own envelope (`params` an array, `_meta` a string)
/// and an unknown method stay apart: which part is broken is the deviation
/// (and their keys are their signatures, so baselined ids stay).
pub(crate) fn group_key(
    v: &Violation,
    verdict: Verdict,
    input: &FuzzInput,
    exchange: &Exchange,
) -> String {
    match &input.class {
        _ if id_transformation(v, exchange).is_some() => signature(v, verdict, input, exchange),
        Class::Envelope(_) | Class::UnknownMethod => signature(v, verdict, input, exchange),
        _ if matches!(
            v.aspect,
            AspectId::J1IdType | AspectId::J1BigId | AspectId::J1ErrorId
        ) =>
        {
            signature(v, verdict, input, exchange)
        }
        _ => format!(
            "{} {:?} {} {} {}",
            v.aspect,
            v.kind,
            verdict.as_str(),
            input.method,
            answer_kind(v, exchange)
        ),
    }
}

/// The group of a deviation that only an id of one style brings about
/// (the same request with a small counter id shows none of it): one
/// finding per style and answer, whatever rules the answer broke and
/// whatever was asked. `answer`: the response, `null` for none.
pub fn id_group_key(style: IdStyle, answer: &Value) -> String {
    // The kind of answer only (an error's code, an `isError` result, a
    // result), never its body: one id style that breaks a server is one
    // finding, not one per method that answers in its own shape.
    let kind = if answer.is_null() {
        "no answer".to_string()
    } else if let Some(code) = mcperr_wire::edges::at(answer, &["error", "code"]) {
        format!("error {code}")
    } else if mcperr_wire::edges::at(answer, &["result", "isError"]) == Some(&Value::Bool(true)) {
        "isError result".into()
    } else if answer.get("result").is_some() {
        "result".into()
    } else {
        shape(answer)
    };
    format!("ids {style:?} {kind}")
}

/// What about an input a finding is blamed on: the constraint of the
/// tool's schema broken (with the tool), the part of the request's own
/// schema broken (whatever the method, without the value written there),
/// or the kind of request and its target.
pub fn cause(input: &FuzzInput) -> String {
    match &input.class {
        Class::Envelope(what) => {
            let field = what.split(" = ").next().unwrap_or(what);
            format!("request params: {field}")
        }
        Class::UnknownMethod => "an unknown method".into(),
        Class::InvalidCall(what) => format!("{} {}: {what}", input.method, input.target),
        other => format!("{} {} {other:?}", input.method, input.target),
    }
}

/// The target part of a finding's id, stable for its group: a broken
/// envelope is no one tool's (`params`), a server's way with ids or an
/// error path that drops them no one request's (`ids`), and any other
/// group is its method's (`tools-call`), whatever tool it was seen on.
pub fn id_target(aspect: AspectId, input: &FuzzInput) -> &str {
    if matches!(
        aspect,
        AspectId::J1IdType | AspectId::J1BigId | AspectId::J1ErrorId
    ) {
        return "ids";
    }
    match &input.class {
        Class::Envelope(_) => "params",
        Class::UnknownMethod => "unknown-method",
        _ => &input.method,
    }
}
