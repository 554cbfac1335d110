//! An `[http]` case's answer judged at the HTTP level first: its status,
//! an auth refusal's own checks, a refusal's body, a body that should be
//! empty or an SSE stream. What is left (a JSON-RPC answer to judge as a
//! case's) falls through to [`crate::judge`].

use crate::judgement::{clip, conclude};
use crate::{auth, framing, invariants, named, Context, Evidence, Judgement, Violation};
use mcperr_cases::plan::CasePlan;
use mcperr_model::rules::AspectId;
use mcperr_wire::exchange::{Ending, Exchange, NoResponse};

/// The judgement of an `[http]` case decided by its HTTP answer, if that
/// decides it; `leaks` are the invariants' late violations (a refusal's
/// body is searched with them), `stopped` what came after the request.
pub(crate) fn judge(
    plan: &CasePlan,
    exchange: &Exchange,
    evidence: &Evidence,
    ctx: &Context,
    leaks: &[Violation],
    stopped: &[Violation],
) -> Option<Judgement> {
    let case = &plan.case;
    let (Some(want), Some(answer)) = (&case.http, &exchange.http) else {
        return None;
    };
    let strays_only = invariants::strays(exchange, ctx);
    // An auth case (A1) judges the refusal itself, whatever its body
    // (RFC 6750 asks for no JSON-RPC error), once its status is right.
    let auth_case = plan
        .expectation
        .checks
        .iter()
        .any(|c| matches!(named::entry(*c).reads, named::Reads::Refusal));
    if auth_case && want.status.contains(&answer.status) {
        let mut v = strays_only;
        v.extend(auth::violations(
            &plan.expectation.checks,
            exchange,
            evidence.metadata.as_ref(),
        ));
        v.extend(stopped.iter().cloned());
        return Some(conclude(plan, v, String::new()));
    }
    if want.error_status && (400..600).contains(&answer.status) {
        let mut v = strays_only;
        v.extend(stopped.iter().cloned());
        return Some(conclude(
            plan,
            v,
            format!("refused with HTTP {}", answer.status),
        ));
    }
    if !want.status.is_empty() && !want.status.contains(&answer.status) {
        let mut v = strays_only;
        v.push(Violation::new(
            plan.case.aspect_id(),
            format!(
                "HTTP status {}, expected {:?}; body: {}",
                answer.status,
                want.status,
                clip(&answer.body)
            ),
        ));
        v.extend(stopped.iter().cloned());
        return Some(conclude(plan, v, String::new()));
    }
    // Checks that read the HTTP answer itself (a GET has no response).
    let http_checks: Vec<Violation> = plan
        .expectation
        .checks
        .iter()
        .filter_map(|c| match named::entry(*c).reads {
            named::Reads::HttpAnswer(run) => Some(run),
            _ => None,
        })
        .flat_map(|run| run(exchange, evidence))
        .map(|(aspect, why)| Violation::new(aspect, why))
        .collect();
    let status_only = case.expect.as_object().is_some_and(|o| o.is_empty())
        && plan
            .expectation
            .checks
            .iter()
            .all(|c| matches!(named::entry(*c).reads, named::Reads::HttpAnswer(_)));
    if want.empty_body || (status_only && !want.status.is_empty()) {
        let mut v = strays_only;
        v.extend(http_checks);
        v.extend(status_answer(plan, exchange, leaks));
        v.extend(stopped.iter().cloned());
        return Some(conclude(plan, v, String::new()));
    }
    // The rejection status came, with a body that is no JSON-RPC
    // response (a framework's HTML error page, say). The status is right;
    // the missing error object is the case's own deviation, graded by its
    // aspect (the transports sections ask only for the status: the body
    // "MAY comprise a JSON-RPC error response"), not an unanswered request.
    // (Only a body that is no JSON at all: an `application/json` body
    // that does not parse stays a J1 error, judged with the invariants.)
    let rejected_without_rpc = matches!(
        &exchange.ending,
        Ending::Empty {
            why: NoResponse::EmptyBody,
            ..
        }
    );
    if rejected_without_rpc && !want.status.is_empty() {
        let mut v = strays_only;
        v.push(Violation::new(
            plan.case.aspect_id(),
            format!(
                "HTTP {} as expected, but the body is no JSON-RPC response ({}); expected {}",
                answer.status,
                clip(&answer.body),
                serde_json::to_string(&plan.expectation.pattern).unwrap_or_default()
            ),
        ));
        if let Some(marker) = invariants::leak_marker(&answer.body) {
            v.push(
                Violation::new(AspectId::J7Main, format!("the error body carries {marker}")).late(),
            );
        }
        v.extend(stopped.iter().cloned());
        return Some(conclude(plan, v, String::new()));
    }
    None
}

/// What a case that asks only for a status (or for an empty body) finds in
/// the answer beyond its status: a refusal's body framed wrongly or leaking
/// (judged with `leaks`), a body where none belongs, a success that is not
/// the SSE stream the case asks for.
fn status_answer(plan: &CasePlan, exchange: &Exchange, leaks: &[Violation]) -> Vec<Violation> {
    let (Some(want), Some(answer)) = (&plan.case.http, &exchange.http) else {
        return Vec::new();
    };
    let mut v = Vec::new();
    if !want.empty_body && answer.status >= 400 {
        v.extend(framing::rejection_body(exchange, leaks));
    }
    if want.empty_body && !answer.body.trim().is_empty() {
        v.push(Violation::new(
            plan.case.aspect_id(),
            format!("expected no body, got {}", clip(&answer.body)),
        ));
    }
    if want.sse_when_ok && (200..300).contains(&answer.status) && !answer.sse {
        let kind = answer.header("content-type").unwrap_or("no content type");
        v.push(Violation::new(
            plan.case.aspect_id(),
            format!(
                "HTTP {} with {kind}, not an SSE stream (text/event-stream); body: {}",
                answer.status,
                clip(&answer.body)
            ),
        ));
    }
    v
}
