//! A case's steps, sent before its judged request: each step's answer may
//! give values to later requests (`capture`), one step may be left in
//! flight (to cancel or to listen), and a step that goes unanswered ends
//! the case there (slow, hung, or judged as the case's answer).

use mcperr_cases::plan::{CasePlan, Step};
use mcperr_core::report::CaseResult;
use mcperr_model::rules::AspectId;
use mcperr_model::Verdict;
use mcperr_oracle::Evidence;
use mcperr_wire::exchange::{Ending, Exchange};
use serde_json::Value;

use super::evidence::{start_in_flight, InFlight};
use super::send::{capture, step};
use super::slow::slow_step;
use crate::client::Client;

/// What a case's steps left for its judged request.
pub(super) struct Stepped {
    /// The values the steps' answers gave (`{{task}}`…).
    pub vars: Vec<(String, Value)>,
    /// The request a step left in flight.
    pub in_flight: Option<InFlight>,
    /// The steps' SSE exchanges, kept when the case resumes one of them.
    pub streams: Vec<Exchange>,
}

/// Sends `plan`'s steps; `Err` is the case's result when a step ended it
/// (the bool: whether the server still answers).
pub(super) async fn run(
    client: &mut Client,
    plan: &CasePlan,
    resumes: bool,
    evidence: &Evidence,
) -> Result<Stepped, (CaseResult, bool)> {
    let started = std::time::Instant::now();
    let mut out = Stepped {
        vars: Vec::new(),
        in_flight: None,
        streams: Vec::new(),
    };
    for (index, s) in plan.steps.iter().enumerate() {
        let filled;
        let s = if out.vars.is_empty() {
            s
        } else {
            filled = plan.with_values(&out.vars).steps[index].clone();
            &filled
        };
        if let Step::InFlight(o) = s {
            match start_in_flight(client, plan, o).await {
                Ok(started) => out.in_flight = Some(started),
                Err(skipped) => return Err((skipped, true)),
            }
            continue;
        }
        let sent = step(client, s).await;
        if let Ok(answered) = &sent {
            let answer = answered.as_ref().and_then(Exchange::response).cloned();
            if let Err((skip, why)) = capture(plan, index, answer.as_ref(), &mut out.vars) {
                return Err((not_captured(plan, skip, why, answer), true));
            }
        }
        match sent {
            Ok(answered) => {
                if resumes {
                    out.streams.extend(answered);
                    // Nothing to resume once the first stream is in without
                    // an event id: the other steps need not run.
                    if let Some(why) = (out.streams.len() == 1)
                        .then(|| super::send::unresumable(out.streams.first()))
                        .flatten()
                    {
                        let j = mcperr_oracle::Judgement::new(Verdict::Skip, plan.case.rule, why);
                        let ms = started.elapsed().as_millis() as u64;
                        let r = CaseResult::planned(plan, &plan.citation, j, None, None, ms);
                        return Err((r, true));
                    }
                }
            }
            Err(ex) => return Err(unanswered_step(client, plan, ex, evidence).await),
        }
    }
    Ok(out)
}

/// A step's answer lacked the value a later request needs: a skip, or the
/// case's own deviation when the answer should have carried it.
fn not_captured(plan: &CasePlan, skip: bool, why: String, answer: Option<Value>) -> CaseResult {
    let j = if skip {
        mcperr_oracle::Judgement::new(Verdict::Skip, plan.case.rule, why)
    } else {
        let v = mcperr_model::grading::Violation::new(plan.case.aspect_id(), why);
        let graded = plan.grader().graded(&v, false).into_iter().collect();
        mcperr_oracle::Judgement::of(graded, plan.case.rule, String::new())
    };
    CaseResult::planned(plan, &plan.citation, j, None, answer, 0)
}

/// A step that got no answer ends the case: left unanswered while the
/// server answers a probe, its method is slow (the case runs again with
/// --slow-ms) or hung (J4, its later cases errors at once); otherwise its
/// exchange is judged as the case's answer.
async fn unanswered_step(
    client: &mut Client,
    plan: &CasePlan,
    ex: Exchange,
    evidence: &Evidence,
) -> (CaseResult, bool) {
    let ms = ex.duration.as_millis() as u64;
    if ex.ending == Ending::Timeout && client.probe().await.response().is_some() {
        let method = ex.request["method"].as_str().unwrap_or("?").to_string();
        if slow_step(client, &method, &ex).await {
            // The case again, the step's method now with --slow-ms.
            return Box::pin(super::tries::execute_once(client, plan)).await;
        }
        let lane = crate::pace::lane_of_message(&ex.request);
        client.pace.mark_hung(&lane, &plan.case.id);
        let v = mcperr_model::grading::Violation::new(
            AspectId::J4Main,
            format!(
                "the case's {method} step was never answered (within {} ms) while the server went on answering others; {lane} is hung, later requests like it are not sent",
                client.timeout.as_millis()
            ),
        );
        let graded = plan.grader().graded(&v, false).into_iter().collect();
        let j = mcperr_oracle::Judgement::of(graded, plan.case.rule, String::new());
        let citation = j.citation.clone().unwrap_or_else(|| plan.citation.clone());
        return (
            CaseResult::planned(plan, &citation, j, Some(ex.request), None, ms),
            true,
        );
    }
    let j = mcperr_oracle::judge(plan, &ex, evidence);
    (
        CaseResult::planned(plan, &plan.citation, j, Some(ex.request), None, ms),
        false,
    )
}
