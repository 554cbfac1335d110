//! The executor: sends what a [`CasePlan`] says, collects the exchange and
//! the evidence around it (counts, the server's log, liveness), and hands
//! them to the oracle. It builds nothing and decides nothing itself.

use mcperr_cases::case::Check;
use mcperr_cases::plan::{CasePlan, IdChoice, Outgoing, Step};
use mcperr_core::report::CaseResult;
use mcperr_model::Verdict;
use mcperr_oracle::Evidence;
use mcperr_wire::exchange::{Ending, Exchange};
use serde_json::Value;

use crate::client::Client;

mod evidence;
mod send;
mod slow;
mod steps;
mod tries;

use evidence::{
    cancelled_by_case, limited_calls, resource_metadata, task_listing, watch_cancelled,
};
use send::{clip_body, get_with_side_post, plain_exchange, resumed_get, shaped_exchange};
use slow::{long_wait_note, unanswered};
use steps::Stepped;

/// Runs one planned case on a live client. The second value is false when
/// the server stopped answering (the caller restarts it).
///
/// A generated valid call with further argument sets to try is sent again
/// with the next set while the tool refuses (an error or an `isError`
/// result that is otherwise well-formed): only an accepted call can pass,
/// and a call none of whose sets is accepted is a skip that says so. Any
/// refusal that breaks a rule (a leak in its text, a wrong shape) is the
/// verdict at once.
///
/// A case whose request left in flight was answered before the case could
/// see what it is about (a lost race: see [`evidence::lost_race`]) is tried
/// again, [`RACE_TRIES`] times in all; the last try's skip stands.
pub async fn execute(client: &mut Client, plan: &CasePlan) -> (CaseResult, bool) {
    let began = std::time::Instant::now();
    let (mut result, mut alive) = tries::execute_tries(client, plan).await;
    for _ in 1..RACE_TRIES {
        if !alive || !evidence::lost_race(&result) {
            break;
        }
        (result, alive) = tries::execute_tries(client, plan).await;
    }
    // The case's own wall time (steps and watches too), not only its
    // judged exchange's; a case not sent (its method hung) took none.
    if result.request.is_some() || result.response.is_some() {
        let ms = u64::try_from(began.elapsed().as_millis()).unwrap_or(u64::MAX);
        result.duration_ms = result.duration_ms.max(ms);
    }
    (result, alive)
}

/// How many times a case is sent while its request left in flight is
/// answered too soon ([`execute`]).
const RACE_TRIES: usize = 3;

/// Whether a case that opens a connection of its own can run beside the
/// run's session without disturbing it or being disturbed: over stdio (a
/// process of its own), sending only what starts or probes a connection
/// (`initialize`, `ping`, `server/discover`; never a tool, a resource or a
/// prompt, which may share state with the session's process).
pub fn runs_beside_the_session(plan: &CasePlan, over_http: bool) -> bool {
    const STARTS: [&str; 3] = ["initialize", "ping", "server/discover"];
    let notifications_only = plan.steps.iter().all(|s| match s {
        Step::Send(o) => o.id == IdChoice::Notification || STARTS.contains(&o.method.as_str()),
        _ => false,
    });
    !plan.case.handshake
        && !over_http
        && !plan.case.hold_asks
        && notifications_only
        && plan
            .requests()
            .iter()
            .all(|o| STARTS.contains(&o.method.as_str()))
}

/// One case at the paced timeout; `normal` is --timeout-ms, beyond which an
/// answer is slow: its steps, its judged request, the evidence the named
/// checks read, the liveness probe, then the judgement.
async fn execute_paced(
    client: &mut Client,
    plan: &CasePlan,
    normal: std::time::Duration,
) -> (CaseResult, bool) {
    let early = client.begin_case();
    let mark = client.stderr().mark();
    let before = if plan.wants_counts() {
        limited_calls(client).await
    } else {
        None
    };
    let mut evidence = Evidence {
        other_session: client.other_session.clone(),
        ..Evidence::default()
    };
    let resumes = plan.checks(Check::ResumedOwnStream);
    let Stepped {
        vars,
        in_flight,
        streams,
    } = match steps::run(client, plan, resumes, &evidence).await {
        Ok(stepped) => stepped,
        Err(ended) => return ended,
    };
    let with_values;
    let plan = if vars.is_empty() {
        plan
    } else {
        with_values = plan.with_values(&vars);
        &with_values
    };
    if let Some(started) = &in_flight {
        evidence.after_cancel = match watch_cancelled(client, plan, started).await {
            Ok(after) => after,
            Err(raced) => return (raced, true),
        };
        let id = started.id();
        // A subscription left in flight: how it ended, if the server ended it.
        if let Some(listen) = plan.listens().into_iter().find(|l| l.get("id") == Some(id)) {
            evidence.ended = Some(mcperr_oracle::subscriptions::Ended {
                listen,
                answer: client.late_answer(id),
                cancelled_by_client: cancelled_by_case(plan, id),
            });
        }
    }
    let mut ex = judged_exchange(client, plan, &streams, &mut evidence).await;
    ex.strays.splice(
        0..0,
        early.into_iter().map(mcperr_wire::exchange::Stray::outside),
    );
    // hold_asks judges the server while it waits for input it asked for:
    // one that asked nothing by its answer waits for nothing.
    if client.held() == Some(0) && ex.response().is_some() {
        ex.ending = Ending::NotApplicable(format!(
            "the server sent no request of its own (no elicitation, sampling or roots request) before it answered {}, so it waited for no input",
            plan.request.method
        ));
    }
    gather(client, plan, &ex, (&vars, before), &mut evidence).await;
    // Log checks need the server's stderr: only a line server's is ours to read.
    if client.has_stderr() && plan.wants_log() {
        client.settle_stderr(mark).await;
        evidence.stderr = Some(client.stderr().since(mark));
    }
    let (alive, long_wait) = liveness(client, plan, &mut ex, &mut evidence, normal).await;
    let mut judgement = mcperr_oracle::judge(plan, &ex, &evidence);
    if let Some(w) = long_wait {
        judgement
            .message
            .push_str(&long_wait_note(w, client.pace.slow_timeout));
    }
    if judgement.verdict == Verdict::Error && client.has_stderr() {
        let tail = client.stderr().tail(10);
        if !tail.is_empty() && !judgement.message.contains("stderr tail") {
            judgement.message = format!("{}; stderr tail:\n{tail}", judgement.message);
        }
    }
    (result_of(plan, &ex, judgement), alive)
}

/// Sends the case's judged request: over HTTP as the case shapes it (a GET
/// held open beside a POST, a GET resuming a step's stream), else plainly.
async fn judged_exchange(
    client: &mut Client,
    plan: &CasePlan,
    streams: &[Exchange],
    evidence: &mut Evidence,
) -> Exchange {
    if plan.http.is_some() && plan.checks(Check::GetStreamQuiet) {
        let (ex, side) = get_with_side_post(client, plan).await;
        evidence.side_post = Some(side);
        ex
    } else if plan.http.is_some() && plan.checks(Check::ResumedOwnStream) {
        let (ex, resumption) = resumed_get(client, plan, streams).await;
        evidence.resumption = resumption;
        ex
    } else if plan.http.is_some() {
        shaped_exchange(client, plan).await
    } else {
        plain_exchange(client, &plan.request).await
    }
}

/// The further requests some checks need, made after the judged one: the
/// same request with a small id (after silence or an id-null error to an
/// id beyond a double: the RFC 8259 section 6 policy, as in fuzzing), the
/// body-run count (against `before`, counted before the case), the task
/// listing (of the steps' `vars`), the protected resource's metadata.
async fn gather(
    client: &mut Client,
    plan: &CasePlan,
    ex: &Exchange,
    (vars, before): (&[(String, Value)], Option<Value>),
    evidence: &mut Evidence,
) {
    if plan.http.is_none()
        && matches!(
            mcperr_wire::edges::big_id_answer(ex),
            Some(
                mcperr_wire::edges::BigIdAnswer::Silent
                    | mcperr_wire::edges::BigIdAnswer::NullIdError
            )
        )
    {
        let small = Outgoing {
            id: IdChoice::Fresh,
            ..plan.request.clone()
        };
        let again = plain_exchange(client, &small).await;
        evidence.small_id_answered = Some(matches!(again.ending, Ending::Answered(_)));
    }
    if plan.wants_counts() {
        evidence.counts = Some((before, limited_calls(client).await));
    }
    if plan.checks(Check::TaskListed) {
        if let Some((_, task)) = vars.iter().find(|(k, _)| k == "task") {
            evidence.listing = Some(task_listing(client, ex, task.clone()).await);
        }
    }
    if plan.checks(Check::ResourceMetadata) {
        evidence.metadata = resource_metadata(client, ex).await;
    }
}

/// The liveness probe, run before judging so that whatever the server
/// wrote during the case (steps, counts, probe included) is judged with
/// it: whether the server still answers, and how long a late answer was
/// waited for in vain, when that wait was long. Last, as it ends the
/// connection: whether the server exits at end of input.
async fn liveness(
    client: &mut Client,
    plan: &CasePlan,
    ex: &mut Exchange,
    evidence: &mut Evidence,
    normal: std::time::Duration,
) -> (bool, Option<std::time::Duration>) {
    let mut alive = ex.response().is_some() || ex.http.is_some();
    let mut long_wait = None;
    // A method already known slow is waited for up to --slow-ms: its answer
    // beyond --timeout-ms is slow again, noted as the first one was.
    if ex.response().is_some() && ex.duration > normal {
        evidence.slow = Some((ex.duration, normal));
    }
    if ex.ending == Ending::Timeout {
        // No answer: does the server still answer others? Then this request
        // is slow (answered within --slow-ms) or left unanswered (J4, and
        // its method hung), not the server lost. An `[http]` case's request
        // (a raw body, a GET) is not sent again: it was left unanswered.
        let probe = client.probe().await;
        if probe.response().is_some() {
            alive = true;
            if plan.http.is_none() {
                long_wait = unanswered(client, plan, ex, evidence).await;
            } else {
                evidence.answered_after = true;
            }
            let strays = client.drain();
            ex.strays.extend(strays);
        }
    } else if alive {
        let probe = client.probe().await;
        if probe.response().is_none() {
            alive = false;
            evidence.stopped = Some(match &probe.ending {
                Ending::Died(how) => how.clone(),
                _ => "it gave no answer to the next request".to_string(),
            });
        }
    }
    let late = client.drain();
    ex.strays
        .extend(late.into_iter().map(mcperr_wire::exchange::Stray::outside));
    client.note_server_requests(&mut ex.strays);
    if plan.checks(Check::ExitOnEof) {
        evidence.eof_exit = client.close_stdin(mcperr_oracle::checks::EOF_WAIT).await;
        alive = false;
    }
    (alive, long_wait)
}

/// The case's result: its judgement with the citation of the aspect that
/// decided (the table's, else the case's own), what was sent and answered.
fn result_of(plan: &CasePlan, ex: &Exchange, judgement: mcperr_oracle::Judgement) -> CaseResult {
    let ms = ex.duration.as_millis() as u64;
    let citation = judgement
        .citation
        .clone()
        .unwrap_or_else(|| plan.citation.clone());
    let mut result = CaseResult::planned(
        plan,
        &citation,
        judgement,
        Some(ex.request.clone()),
        ex.response().cloned(),
        ms,
    );
    result.http_status = ex.http.as_ref().map(|a| a.status);
    if result.response.is_none() {
        result.body = ex
            .http
            .as_ref()
            .filter(|a| !a.body.trim().is_empty())
            .map(|a| clip_body(&a.body));
    }
    result
}
