//! The always-on checks: what every response must satisfy whatever was
//! asked, callable with no case (live fuzzing and `cargo fuzz` call this
//! directly). [`invariants`] runs the registry's list
//! ([`super::registry::INVARIANTS`]); no answer (J4), the result's shape
//! (J1) and the HTTP status that goes with an answer (H3) are judged here;
//! framing in [`super::framing`], stray output (J5, J1, J3, U6…) in
//! [`super::strays`], stack traces and secrets (J7) in [`super::leaks`], and
//! the era's own checks in their modules.

pub use super::answer_checks::http_status;
pub use super::context::Context;
pub use super::leaks::{leak_marker, searchable};
use super::registry::{Invariant, Seen, INVARIANTS};
pub use super::strays::strays;
use crate::Violation;
use mcperr_model::rules::AspectId;
use mcperr_wire::exchange::Exchange;

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

/// Every always-on violation of `exchange`, in the order they decide a
/// verdict: each invariant of the registry ([`super::registry::INVARIANTS`])
/// in turn. A debug build asserts that each reports only the aspects it
/// declares.
pub fn invariants(exchange: &Exchange, ctx: &Context) -> Vec<Violation> {
    run_all(INVARIANTS, exchange, ctx)
}

/// Runs `list` on what is seen of `exchange` (read once), in order,
/// asserting in a debug build that each invariant reports only the aspects
/// it declares.
fn run_all(list: &[Invariant], exchange: &Exchange, ctx: &Context) -> Vec<Violation> {
    let seen = Seen::new(exchange, ctx);
    let mut out = Vec::new();
    for invariant in list {
        let found = (invariant.run)(&seen);
        debug_assert!(
            found.iter().all(|v| invariant.judges.contains(&v.aspect)),
            "the invariant '{}' reported an aspect it does not declare: {:?}",
            invariant.name,
            found.iter().map(|v| v.aspect).collect::<Vec<_>>()
        );
        out.extend(found);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcperr_protocol::Era;
    use mcperr_wire::exchange::{Ending, Stray};
    use serde_json::{json, Value};

    fn answered(request: Value, response: Value) -> Exchange {
        Exchange::bare(request, Ending::Answered(response))
    }

    #[test]
    #[should_panic(expected = "reported an aspect it does not declare")]
    fn an_invariant_that_reports_an_aspect_it_does_not_declare_is_caught() {
        let wrong = [Invariant {
            name: "declares J1, reports J4",
            judges: &[AspectId::J1Main],
            run: |_| vec![Violation::new(AspectId::J4Main, "no answer")],
        }];
        let ex = answered(json!({"id": 1}), json!({"id": 1, "result": {}}));
        let ctx = Context::default();
        run_all(&wrong, &ex, &ctx);
    }

    #[test]
    fn every_invariant_names_itself_once_and_declares_what_it_judges() {
        let mut names: Vec<&str> = INVARIANTS.iter().map(|i| i.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), INVARIANTS.len());
        assert!(INVARIANTS.iter().all(|i| !i.judges.is_empty()));
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
