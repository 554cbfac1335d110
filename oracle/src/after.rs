//! What came after a case's request that the case is judged for too: the
//! server stopped or answered only late (J4), a cancelled request's work
//! went on (U7), a subscription ended wrongly (U9). Read from the evidence
//! the executor gathered after the answer.

use mcperr_cases::plan::CasePlan;
use mcperr_model::rules::AspectId;
use mcperr_wire::exchange::Exchange;

use crate::checks::Evidence;
use crate::subscriptions;
use crate::Violation;

/// What came after the request that the case is judged for too: the
/// server stopped (J4) or answered only late (J4 `slow`), a cancelled
/// request's work went on (U7), a subscription ended wrongly (U9).
pub(crate) fn after_the_request(
    plan: &CasePlan,
    exchange: &Exchange,
    evidence: &Evidence,
) -> Vec<Violation> {
    let stopped = evidence.stopped.as_ref().map(|how| {
        Violation::new(
            AspectId::J4Main,
            format!("the server stopped answering after this request: {how}"),
        )
    });
    let slow = evidence.slow.map(|(took, timeout)| {
        Violation::new(
            AspectId::J4Slow,
            format!(
                "answered only after {:.1} s, beyond --timeout-ms {} while the server answered others: {} is slow, not hung (its later requests get --slow-ms)",
                took.as_secs_f64(),
                timeout.as_millis(),
                plan.request.method
            ),
        )
    });
    stopped
        .into_iter()
        .chain(slow)
        .chain(cancelled(&evidence.after_cancel))
        .chain(
            evidence.ended.iter().flat_map(|e| {
                subscriptions::teardown(e, &exchange.strays, exchange.http.is_none())
            }),
        )
        .collect()
}

/// U7: what a request cancelled while in flight should not have had after
/// its cancellation: a response (the main sentence), progress (its
/// processing did not cease), and over stdio in 2026-07-28 any message at all.
fn cancelled(after: &[serde_json::Value]) -> Vec<Violation> {
    let mut out = Vec::new();
    let answered = after.iter().find(|m| m.get("method").is_none());
    let progress = after.iter().find(|m| m.get("method").is_some());
    if let Some(r) = answered {
        out.push(Violation::new(
            AspectId::U7Main,
            format!("the cancelled request was answered after its cancellation: {r}"),
        ));
    }
    if let Some(p) = progress {
        out.push(Violation::new(
            AspectId::U7ProcessingCeases,
            format!("the cancelled request's work went on: a progress notification after its cancellation: {p}"),
        ));
    }
    if let Some(first) = after.first() {
        out.push(Violation::new(
            AspectId::U7NoFurtherMessages,
            format!(
                "{} message(s) about the cancelled request came after its cancellation, the first: {first}",
                after.len()
            ),
        ));
    }
    out
}
