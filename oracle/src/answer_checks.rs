//! The checks of the answer itself, run by the registry's invariants
//! ([`super::registry`]): none came (J4, J1, H3, J6), its result's shape
//! against the era's schema (J1), and the HTTP status that goes with it
//! (H3, L3).

use mcperr_protocol::{codes, Era};
use serde_json::Value;

use super::context::Context;
use crate::seen::Seen;
use crate::Violation;
use mcperr_model::rules::AspectId;
use mcperr_wire::exchange::{Ending, Exchange, NoResponse};

/// The result's (or error's) shape against the era's schema, once the
/// framing holds (J1 `result-shape`, `resultType`); not for a request
/// shaped to be rejected at the HTTP level, whose answer may come from
/// another era's routing (a MAY for a missing version header): the
/// caller asks only then.
pub(crate) fn result_shape(
    exchange: &Exchange,
    response: &Value,
    era: Option<Era>,
) -> Vec<Violation> {
    let mut out = Vec::new();
    if let (Some(era), Some(method)) = (era, exchange.request.get("method").and_then(Value::as_str))
    {
        // "An `initialize` request selects legacy semantics" (2026-07-28
        // basic/versioning): a dual-era server answers it as 2025-11-25.
        let era = if method == "initialize" {
            Era::Legacy
        } else {
            era
        };
        if mcperr_cases::shapes::missing_result_type(era, response) {
            out.push(Violation::new(AspectId::J1ResultType, "the result has no resultType").late());
        }
        // A task-augmented call's CreateTaskResult is K1's to judge.
        let tasked = exchange
            .request
            .pointer("/params/task")
            .is_some_and(Value::is_object);
        let shaped = if tasked && method == "tools/call" {
            None
        } else {
            mcperr_cases::shapes::check(era, method, response)
        };
        if let Some(why) = shaped {
            // schema.ts is "the source of truth for all protocol messages and
            // structures", stated without a keyword: `described` in the table.
            out.push(Violation::new(AspectId::J1ResultShape, why).late());
        }
    }
    out
}

/// What an HTTP answer's framing says beside its body: an SSE stream that
/// went on after the response (H3), and the status that goes with the
/// answer (H3, L3's 400 for -32021), unless the case judges the status.
pub(crate) fn http_answer(exchange: &Exchange, response: &Value, ctx: &Context) -> Vec<Violation> {
    let mut out = Vec::new();
    if let Some(answer) = exchange.http.as_ref().filter(|a| a.open_after_response) {
        let why = format!(
            "the SSE stream went on after the response (HTTP {}): another event came, or it did not end within 250 ms",
            answer.status
        );
        out.push(Violation::new(AspectId::H3SseTerminates, why).late());
    }
    if let (Some(answer), false) = (&exchange.http, ctx.http_rejection_expected) {
        let code = mcperr_wire::edges::error_code(response);
        let modern = ctx.era != Some(Era::Legacy);
        if modern && code == Some(mcperr_protocol::codes::MISSING_CLIENT_CAPABILITY) {
            // The one error whose status the spec fixes (2026-07-28, L3);
            // 2025-11-25 has no -32021, so no status for it either.
            if answer.status != 400 {
                out.push(Violation::new(
                    AspectId::L3Http400,
                    format!("HTTP status {} with -32021; expected 400", answer.status),
                ));
            }
        } else if let Some(why) = http_status(answer.status, response) {
            out.push(Violation::new(AspectId::H3ErrorStatus, why));
        }
    }
    out
}

/// The violation of an exchange that ended without an answer to judge: no
/// response at all (J4, or J6 when malformed input killed the server), an
/// HTTP answer without a JSON-RPC response (J1, H1, H3), one too large to
/// read (J1); none for a case that did not apply or could not be set up.
pub(crate) fn unanswered(ending: &Ending, exchange: &Exchange, ctx: &Context) -> Option<Violation> {
    match ending {
        Ending::Answered(_)
        | Ending::WrongId(_)
        | Ending::NotApplicable(_)
        | Ending::SetupFailed(_) => None,
    Ending::Empty { status, why } => {
        let (aspect, why) = match why {
            // 2025-11-25 has a sentence of its own for it (a SHOULD).
            NoResponse::SseEndedEarly => (
                if ctx.era == Some(Era::Legacy) {
                    AspectId::H3SseIncludesResponse
                } else {
                    AspectId::H3Main
                },
                format!("HTTP {status}: the SSE stream ended without the response"),
            ),
            // A POST the endpoint does not take: 2026-07-28 has one
            // endpoint for every request (and no sessions to expire).
            NoResponse::EmptyBody
                if ctx.era == Some(Era::Modern)
                    && matches!(status, 404 | 405)
                    && !exchange.request.is_null()
                    && !ctx.http_rejection_expected =>
            {
                (
                    AspectId::H1SingleEndpoint,
                    format!("HTTP {status} without a JSON-RPC response: the MCP endpoint does not take this POST"),
                )
            }
            NoResponse::EmptyBody => (
                AspectId::J1Main,
                format!("HTTP {status} without a JSON-RPC response"),
            ),
            NoResponse::Unreadable { why, sse: true } => {
                (AspectId::H3Main, format!("HTTP {status}: {why}"))
            }
            NoResponse::Unreadable { why, sse: false } => {
                (AspectId::J1Main, format!("HTTP {status}: {why}"))
            }
        };
        Some(Violation::unanswered(aspect, format!("no response: {why}")))
    }
    Ending::TooLarge(n) => {
        Some(Violation::unanswered(
            AspectId::J1Main,
            format!("the answer (over {n} bytes) outgrew --max-line and was discarded unread, so it cannot be judged: raise --max-line to judge it"),
        ))
    }
    Ending::Timeout => {
        let ms = exchange.duration.as_millis();
        Some(Violation::unanswered(
            AspectId::J4Main,
            format!("the server stopped answering: no response within {ms} ms"),
        ))
    }
    Ending::Died(how) => {
        // The input that killed it is malformed input's rule (J6) when the
        // case sent some; otherwise the session did not survive (J4).
        let aspect = if ctx.sent_raw {
            AspectId::J6Main
        } else {
            AspectId::J4Main
        };
        Some(Violation::unanswered(aspect, format!("no response: {how}")))
    }
    }
}

/// H3: the status that goes with a JSON-RPC answer over HTTP. −32602 may be
/// 400 or 200 (SDKs differ, the spec is silent); −32601 may be 404 or 200;
/// −32603 and results are 200.
pub fn http_status(status: u16, response: &Value) -> Option<String> {
    let allowed: &[u16] = match mcperr_wire::edges::error_code(response) {
        None => &[200],
        Some(codes::INVALID_PARAMS) => &[200, 400],
        Some(codes::METHOD_NOT_FOUND) => &[200, 404],
        Some(codes::INTERNAL_ERROR) => &[200],
        // Any other code (a tool's own, −32002…): a JSON-RPC answer, not a
        // server failure: 200 or a 4xx, never 5xx.
        Some(_) => {
            return (!(status == 200 || (400..500).contains(&status))).then(|| {
                format!("HTTP status {status} with a JSON-RPC error answer; expected 200 or 4xx")
            })
        }
    };
    (!allowed.contains(&status))
        .then(|| format!("HTTP status {status} with this answer; expected one of {allowed:?}"))
}

/// The registry's entry point ([`crate::registry::INVARIANTS`]): a request that got no answer.
pub(crate) fn no_answer(s: &Seen) -> Vec<Violation> {
    unanswered(&s.exchange.ending, s.exchange, s.ctx)
        .into_iter()
        .collect()
}

/// The registry's entry point ([`crate::registry::INVARIANTS`]): the framed answer's shape.
pub(crate) fn answer_shape(s: &Seen) -> Vec<Violation> {
    match s.framed_for_shape {
        Some(response) => result_shape(s.exchange, response, s.ctx.era),
        None => Vec::new(),
    }
}

/// The registry's entry point ([`crate::registry::INVARIANTS`]): the HTTP status that goes with the answer.
pub(crate) fn answer_status(s: &Seen) -> Vec<Violation> {
    match s.response {
        Some(response) => http_answer(s.exchange, response, s.ctx),
        None => Vec::new(),
    }
}
