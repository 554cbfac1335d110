//! The always-on checks: what every response must satisfy whatever was
//! asked, callable with no case (live fuzzing and `cargo fuzz` call this
//! directly). No answer (J4), framing and type-exact ids (J1), the HTTP
//! status that goes with an answer (H3) are judged here; stray output
//! (J5, J1, J3, U6…) in [`super::strays`], stack traces and secrets (J7) in
//! [`super::leaks`], and the era's own checks in their modules, all called
//! from [`invariants`].

use mcperr_protocol::{codes, Era};
use serde_json::{json, Value};

pub use super::context::Context;
use super::leaks::leak_or_secret;
pub use super::leaks::{leak_marker, searchable};
use super::strays::progress;
pub use super::strays::strays;
use crate::Violation;
use mcperr_model::rules::AspectId;
use mcperr_wire::exchange::{Ending, Exchange, NoResponse};

/// The aspects [`invariants`] judges on every answer a run sees, whatever
/// the case: a run that ran any case over a transport they bind judged them
/// (its coverage counts them; `mcperr_core::report::coverage`).
pub const ON_EVERY_ANSWER: &[AspectId] = &[
    AspectId::J1Main,
    AspectId::J1IdType,
    AspectId::J1ErrorId,
    AspectId::J1ResultShape,
    AspectId::J1ResultType,
    AspectId::J1Utf8,
    AspectId::J1NotificationNoId,
    AspectId::J4Main,
    AspectId::J5Main,
    AspectId::J5NoEmbeddedNewlines,
    AspectId::J7Main,
    AspectId::J7SecretInResult,
    AspectId::J7SecretInToolError,
    AspectId::H3Main,
    AspectId::H3SseRelated,
];

/// Every always-on violation of `exchange`, in the order they decide a verdict.
pub fn invariants(exchange: &Exchange, ctx: &Context) -> Vec<Violation> {
    let mut out = strays(exchange, ctx);
    out.extend(super::subscriptions::strays(
        &exchange.strays,
        ctx.listens,
        ctx.era,
    ));
    out.extend(progress(exchange));
    if let (Some(Era::Legacy), Some(declared)) = (ctx.era, ctx.client_capabilities) {
        let answer = match &exchange.ending {
            Ending::Answered(v) | Ending::WrongId(v) => Some(v),
            _ => None,
        };
        out.extend(super::server_asks::judge(
            &exchange.strays,
            answer,
            &exchange.request,
            declared,
        ));
    }
    let response = match &exchange.ending {
        Ending::Answered(v) | Ending::WrongId(v) => v,
        ending => {
            out.extend(unanswered(ending, exchange, ctx));
            return out;
        }
    };
    // An HTTP rejection's error may leave the id out or make it null.
    let rejected = ctx.http_rejection_expected
        && exchange.http.as_ref().is_some_and(|a| a.status >= 400)
        && response.get("id").is_none_or(Value::is_null);
    let null_id;
    let framed_against = if rejected {
        null_id = json!({"id": null});
        &null_id
    } else {
        &exchange.request
    };
    let framing_faults = crate::framing::framing(response, framed_against);
    let framed = framing_faults.is_empty();
    for (aspect, why) in framing_faults {
        out.push(Violation::new(aspect, why));
    }
    if framed && !ctx.http_rejection_expected {
        out.extend(result_shape(exchange, response, ctx.era));
    }
    if let Some(why) = super::messages::wordy_message(response, &exchange.request) {
        out.push(Violation::new(AspectId::J1MessageConcise, why).late());
    }
    out.extend(http_answer(exchange, response, ctx));
    out.extend(super::mrtr::input_required_answer(
        response,
        &exchange.request,
    ));
    if ctx.era == Some(Era::Modern) {
        out.extend(super::extensions::unnegotiated(response, &exchange.request));
    }
    out.extend(super::codes::code_range(
        response,
        &exchange.request,
        ctx.era,
    ));
    if framed {
        out.extend(super::tasks::task_answers(exchange, ctx.era));
        out.extend(super::tasks::undeclared_tasks(
            exchange,
            ctx.tool_tasks_declared,
        ));
    }
    if let Some(v) = leak_or_secret(response, &exchange.request, ctx.canary) {
        out.push(v.late());
    }
    if framed && !ctx.http_rejection_expected {
        out.extend(super::rows::seen(response, &exchange.request));
    }
    out
}

/// The result's (or error's) shape against the era's schema, once the
/// framing holds (J1 `result-shape`, `resultType`); not for a request
/// shaped to be rejected at the HTTP level, whose answer may come from
/// another era's routing (a MAY for a missing version header): the
/// caller asks only then.
fn result_shape(exchange: &Exchange, response: &Value, era: Option<Era>) -> Vec<Violation> {
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
fn http_answer(exchange: &Exchange, response: &Value, ctx: &Context) -> Vec<Violation> {
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
fn unanswered(ending: &Ending, exchange: &Exchange, ctx: &Context) -> Option<Violation> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use mcperr_wire::exchange::Stray;

    fn answered(request: Value, response: Value) -> Exchange {
        Exchange::bare(request, Ending::Answered(response))
    }

    #[test]
    fn a_clean_answer_violates_nothing() {
        let ex = answered(
            json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
            json!({"jsonrpc": "2.0", "id": 1, "result": {}}),
        );
        assert!(invariants(&ex, &Context::default()).is_empty());
    }

    #[test]
    fn every_framing_fault_is_reported_not_only_the_first() {
        let ex = answered(
            json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
            json!({"jsonrpc": "1.0", "id": "1", "error": {"code": "x"}}),
        );
        let v = invariants(&ex, &Context::default());
        assert_eq!(v.len(), 4, "{v:?}");
        assert!(v
            .iter()
            .all(|v| v.rule() == mcperr_model::rules::RuleId::J1));
    }

    #[test]
    fn silence_is_j4_and_a_leak_in_an_error_is_j7() {
        let mut ex = answered(json!({"id": 1}), json!(null));
        ex.ending = Ending::Timeout;
        let v = invariants(&ex, &Context::default());
        assert_eq!(
            (v[0].aspect, v[0].kind),
            (AspectId::J4Main, mcperr_model::grading::Kind::Unanswered)
        );
        let ex = answered(
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call"}),
            json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32603, "message": "boom SECRET"}}),
        );
        let ctx = Context {
            canary: Some("SECRET"),
            ..Context::default()
        };
        assert_eq!(invariants(&ex, &ctx)[0].aspect, AspectId::J7Main);
        // An error may quote the request's own arguments: not a leak.
        let ex = answered(
            json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "t", "arguments": {"title": "at f (a.js:1:2)"}}}),
            json!({"jsonrpc": "2.0", "id": 4, "result": {"isError": true, "content": [{"type": "text", "text": "No book titled 'at f (a.js:1:2)'"}]}}),
        );
        assert!(invariants(&ex, &Context::default()).is_empty());
        // A success may quote code: not searched.
        let ex = answered(
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call"}),
            json!({"jsonrpc": "2.0", "id": 3, "result": {"content": [{"type": "text", "text": "at f (a.js:1:2)"}]}}),
        );
        assert!(invariants(&ex, &Context::default()).is_empty());
    }

    #[test]
    fn a_re_escaped_echo_of_a_canary_argument_is_no_leak_and_text_beyond_it_is() {
        let canary = "mcperrcanary0123456789abcdef";
        let arg = |c: &str| format!("{c}x\nTraceback (most recent call last):");
        let call = |c: &str| {
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                   "params": {"name": "get_author", "arguments": {"title": arg(c)}}})
        };
        // Python's repr of the argument: the newline as a backslash and an n.
        let repr = |c: &str| format!("'{}'", arg(c).replace('\n', "\\n"));
        let answer = |extra: &str, c: &str| {
            json!({"jsonrpc": "2.0", "id": 1, "result": {"isError": true,
                   "content": [{"type": "text", "text": format!("No book titled {}{extra}", repr(c))}]}})
        };
        let j7 = |req: Value, resp: Value| {
            invariants(&answered(req, resp), &Context::default())
                .iter()
                .any(|v| v.rule() == mcperr_model::rules::RuleId::J7)
        };
        assert!(!j7(call(canary), answer("", canary)), "an echo");
        assert!(
            j7(
                call(canary),
                answer(": File \"/srv/app.py\", line 3", canary)
            ),
            "a traceback beyond the echo"
        );
        // Without the canary the re-escaped echo cannot be told from a leak.
        assert!(j7(call("plain"), answer("", "plain")));
        // An unquoted, changed echo loses only the canary: a stack after it
        // in the same string is still found.
        let lowered = json!({"jsonrpc": "2.0", "id": 1, "result": {"isError": true, "content": [{"type": "text",
            "text": format!("no book {}dune\n    at getBook (/srv/server.js:12:3)", canary)}]}});
        let dune = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "get_author", "arguments": {"title": format!("{canary}Dune")}}});
        assert!(j7(dune, lowered), "a stack after an unquoted echo");
    }

    #[test]
    fn secret_shaped_text_the_request_did_not_carry_is_j7_on_either_side() {
        let dsn = "postgres://app:s3cret@db.internal:5432/shop";
        let req =
            json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "env"}});
        let aspects = |result: Value, request: Value| -> Vec<AspectId> {
            let ex = answered(
                request,
                json!({"jsonrpc": "2.0", "id": 4, "result": result}),
            );
            invariants(&ex, &Context::default())
                .into_iter()
                .map(|v| v.aspect)
                .collect()
        };
        let text = |t: &str| json!([{"type": "text", "text": t}]);
        assert_eq!(
            aspects(json!({"content": text(dsn)}), req.clone()),
            [AspectId::J7SecretInResult]
        );
        // A tool's isError result is its output (the tools MUST "Sanitize
        // tool outputs"); a JSON-RPC error is J7's own aspect.
        assert_eq!(
            aspects(json!({"content": text(dsn), "isError": true}), req.clone()),
            [AspectId::J7SecretInToolError]
        );
        let ex = answered(
            req.clone(),
            json!({"jsonrpc": "2.0", "id": 4, "error": {"code": -32603, "message": dsn}}),
        );
        let on_error: Vec<AspectId> = invariants(&ex, &Context::default())
            .into_iter()
            .map(|v| v.aspect)
            .collect();
        assert_eq!(on_error, [AspectId::J7Main]);
        // A log message with a credential, sent during the exchange.
        let log = json!({"jsonrpc": "2.0", "method": "notifications/message",
                         "params": {"level": "error", "data": format!("pool {dsn}")}});
        let stray = Stray::of_server_message(&log).expect("log messages are kept");
        let mut ex = answered(
            req,
            json!({"jsonrpc": "2.0", "id": 4, "result": {"content": []}}),
        );
        ex.strays.push(stray);
        let found = strays(&ex, &Context::default());
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].aspect, AspectId::J7SecretInLog);
        assert!(!found[0].message.contains("s3cret"), "{}", found[0].message);
        // A plain log message is no J7 matter (U8 judges who may send it).
        let plain = json!({"jsonrpc": "2.0", "method": "notifications/message",
                           "params": {"level": "info", "data": "started"}});
        ex.strays = vec![Stray::of_server_message(&plain).unwrap()];
        assert!(strays(&ex, &Context::default()).is_empty());
        // U8: without the capability, unasked in 2026-07-28, or carrying
        // the planted secret; a late message is judged for the capability only.
        let ctx = Context {
            era: Some(Era::Modern),
            logging_declared: Some(false),
            planted: Some("mcperrcanary1"),
            ..Context::default()
        };
        let planted = json!({"jsonrpc": "2.0", "method": "notifications/message",
                             "params": {"level": "error", "data": "args mcperrcanary1"}});
        ex.strays = vec![Stray::of_server_message(&planted).unwrap()];
        let during: Vec<AspectId> = strays(&ex, &ctx).iter().map(|v| v.aspect).collect();
        assert_eq!(
            during,
            [
                AspectId::U8Main,
                AspectId::U8OnlyWhenRequested,
                AspectId::U8RemoveSensitive
            ]
        );
        ex.strays = vec![Stray::of_server_message(&plain).unwrap().outside()];
        let late: Vec<AspectId> = strays(&ex, &ctx).iter().map(|v| v.aspect).collect();
        assert_eq!(late, [AspectId::U8Main]);
        // An echo of what the request sent is no leak.
        let echoing = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "env", "arguments": {"url": dsn}}});
        assert!(aspects(json!({"content": text(dsn), "isError": true}), echoing).is_empty());
    }
}
