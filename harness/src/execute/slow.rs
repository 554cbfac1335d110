//! A request that timed out while the server went on answering others: its
//! late answer within `--slow-ms`, or the step's method marked slow; and
//! the result of a case whose method was found hung before it ran.

use mcperr_cases::plan::CasePlan;
use mcperr_wire::exchange::{Ending, Exchange};
use serde_json::Value;

use crate::client::{Client, Conn};

use mcperr_core::report::CaseResult;
use mcperr_model::Verdict;

use super::send::plain_exchange;

/// The answer to a request that timed out while the server answered a
/// probe, if it comes within `--slow-ms` (counted from when it was sent),
/// with the time it took. Over a line transport the answer is awaited;
/// over HTTP, where the timed-out POST is gone, the same request is sent
/// once more with `--slow-ms` as its timeout. A method already known slow
/// had its `--slow-ms`: nothing more is waited for.
async fn slow_answer(
    client: &mut Client,
    plan: &CasePlan,
    ex: &Exchange,
) -> Option<(Exchange, std::time::Duration)> {
    let slow = client.pace.slow_timeout;
    let lane = crate::pace::lane_of_outgoing(&plan.request);
    if !client
        .pace
        .worth_waiting(&plan.request.method, &lane, client.timeout)
    {
        return None;
    }
    if matches!(client.conn, Conn::Http(_)) {
        let normal = client.timeout;
        client.set_timeout(slow);
        let again = plain_exchange(client, &plan.request).await;
        client.set_timeout(normal);
        let elapsed = again.duration;
        return again.response().is_some().then_some((again, elapsed));
    }
    let (answer, elapsed) = late_answer(client, ex).await?;
    let mut answered = ex.clone();
    answered.ending = Ending::Answered(answer);
    Some((answered, elapsed))
}

/// A wait for a late answer long enough that the case says which flag
/// shortens it.
const LONG_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// A request that timed out while the server answered a probe: its late
/// answer within the case's own wait (`slow_ms`, at most `--slow-ms`)
/// makes it slow and takes its place in `ex`; none leaves its lane hung
/// (J4 judges it). Returns how long it waited in vain, when that was long.
pub(super) async fn unanswered(
    client: &mut Client,
    plan: &CasePlan,
    ex: &mut Exchange,
    evidence: &mut mcperr_oracle::Evidence,
) -> Option<std::time::Duration> {
    let slow = client.pace.slow_timeout;
    if let Some(ms) = plan.case.slow_ms {
        client.pace.slow_timeout = slow.min(std::time::Duration::from_millis(ms));
    }
    let waited = std::time::Instant::now();
    let late = slow_answer(client, plan, ex).await;
    client.pace.slow_timeout = slow;
    match late {
        Some((answer, elapsed)) => {
            client.pace.mark_slow(&plan.request.method, elapsed);
            evidence.slow = Some((elapsed, client.timeout));
            ex.ending = answer.ending;
            ex.request = answer.request;
            ex.duration = elapsed;
            None
        }
        None => {
            let lane = crate::pace::lane_of_outgoing(&plan.request);
            client.pace.mark_hung(&lane, &plan.case.id);
            evidence.answered_after = true;
            Some(waited.elapsed()).filter(|w| *w >= LONG_WAIT)
        }
    }
}

/// The line a case's reason gets after a long wait in vain: the flag that
/// shortens it.
pub(super) fn long_wait_note(waited: std::time::Duration, slow: std::time::Duration) -> String {
    format!(
        "\n(mcperr waited {:.1} s more for a late answer, up to --slow-ms {} ms after sending: `--slow-ms MS` shortens that wait)",
        waited.as_secs_f64(),
        slow.as_millis()
    )
}

/// Over a line transport: the late answer to `ex`'s timed-out request if it
/// comes within `--slow-ms` of its sending, with the time it took in all.
pub(super) async fn late_answer(
    client: &mut Client,
    ex: &Exchange,
) -> Option<(Value, std::time::Duration)> {
    let id = ex.request.get("id").cloned().unwrap_or(Value::Null);
    let started = std::time::Instant::now();
    let wait = client.pace.slow_timeout.saturating_sub(ex.duration);
    let answer = client.await_late(&id, wait).await?;
    Some((answer, ex.duration + started.elapsed()))
}

/// Whether a step request that timed out (while the server answered a
/// probe) is slow rather than hung, marking its method slow if so: its
/// answer comes within `--slow-ms` over a line transport; over HTTP, where
/// the POST is gone, the case is tried once more with `--slow-ms` (a method
/// already slow is hung when that times out too).
pub(super) async fn slow_step(client: &mut Client, method: &str, ex: &Exchange) -> bool {
    let lane = crate::pace::lane_of_message(&ex.request);
    if !client.pace.worth_waiting(method, &lane, client.timeout) {
        return false;
    }
    if matches!(client.conn, Conn::Http(_)) {
        client.pace.mark_slow(method, client.timeout);
        return true;
    }
    match late_answer(client, ex).await {
        Some((_, elapsed)) => {
            client.pace.mark_slow(method, elapsed);
            true
        }
        None => false,
    }
}

/// The error result of a case not sent because a request like it (its
/// lane, [`crate::pace::lane`]) is hung.
pub(super) fn hung_result(
    plan: &CasePlan,
    lane: &str,
    first: &str,
    slow: std::time::Duration,
) -> CaseResult {
    // An error of J4 (the first request's unanswered deviation), not of the
    // case's own rule, which this case could not test.
    let j = mcperr_oracle::Judgement::new(
        Verdict::Error,
        mcperr_model::rules::RuleId::J4,
        format!(
            "not sent: {lane} is hung on this server: its request in case {first} got no answer within --slow-ms {} while the server answered others",
            slow.as_millis()
        ),
    );
    CaseResult::planned(plan, &plan.citation, j, None, None, 0)
}
