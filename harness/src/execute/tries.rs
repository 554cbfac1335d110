//! The tries of a case: one try at its pace ([`execute_once`]), and a case
//! sent again on each argument set it has to try, or rebased on a set the
//! tool accepts: only an accepted call can pass.

use mcperr_cases::plan::CasePlan;
use mcperr_core::report::CaseResult;
use mcperr_model::Verdict;
use serde_json::Value;

use crate::client::Client;

use super::execute_paced;
use super::send::{clip, is_error_result, short_answer};
use super::slow::hung_result;

/// One try of a case: its pacing decided ([`crate::pace::Pace::for_case`]),
/// then [`execute_paced`].
pub(super) async fn execute_once(client: &mut Client, plan: &CasePlan) -> (CaseResult, bool) {
    // Every request of the case (steps included) gets the slowest of their
    // methods' timeouts: --slow-ms once one of them is known slow.
    let normal = client.timeout;
    let paced = match client.pace.for_case(&plan.requests(), normal) {
        Ok(paced) => paced,
        Err((lane, first)) => {
            return (
                hung_result(plan, &lane, &first, client.pace.slow_timeout),
                true,
            )
        }
    };
    client.set_timeout(paced);
    if plan.case.hold_asks {
        client.hold_asks();
    }
    let out = execute_paced(client, plan, normal).await;
    client.release_held().await;
    client.set_timeout(normal);
    out
}

/// [`execute`], with each argument set to try.
pub(super) async fn execute_tries(client: &mut Client, plan: &CasePlan) -> (CaseResult, bool) {
    if let Some(rebase) = &plan.case.rebase {
        return rebased(client, plan, rebase).await;
    }
    let Some(tries) = &plan.case.arguments_to_try else {
        return execute_once(client, plan).await;
    };
    let mut attempt = plan.clone();
    let mut refusals = Vec::new();
    for next in tries.iter().map(Some).chain([None]) {
        let (result, alive) = execute_once(client, &attempt).await;
        let refused = result
            .response
            .as_ref()
            .is_some_and(mcperr_cases::expect::refusal);
        if !alive || result.verdict != Verdict::Pass || !refused {
            return (result, alive);
        }
        refusals.push(short_answer(result.response.as_ref()));
        let Some(args) = next else {
            let mut result = result;
            if plan.case.takes_no_arguments && is_error_result(result.response.as_ref()) {
                // Nothing to vary: the tool ran on its one valid call and
                // reported its own failure. Its answer was judged above (its
                // shape, leaks, strays); but a failure shows no success, so
                // T8 gives no pass: a skip, counted apart.
                result.verdict = Verdict::Skip;
                result.message = format!(
                    "{}, not a refusal of the call, and no success to judge: {}",
                    mcperr_core::report::TOOL_FAILED,
                    refusals.join("; ")
                );
                return (result, alive);
            }
            result.verdict = Verdict::Skip;
            let sets = match refusals.len() {
                1 => "the one schema-derived argument set".to_string(),
                n => format!("all {n} schema-derived argument sets (the last is shown)"),
            };
            result.message = format!(
                "no valid call to judge: the tool refused {sets}; answers: {}",
                refusals.join("; ")
            );
            return (result, alive);
        };
        if let Some(p) = attempt
            .request
            .params
            .as_mut()
            .and_then(Value::as_object_mut)
        {
            p.insert("arguments".into(), args.clone());
        }
    }
    unreachable!("the loop returns on its last set")
}

/// A passing T4 case sent on no set the tool was seen to accept (none may
/// be called, or none was tried): a refusal is the extra property's only
/// when its text names the property. Else the body may have run and failed
/// on its own (a tool whose every call is refused: `crash`, a tool that
/// fails its output), the property silently dropped: a skip that says so.
fn unseen_refusal(mut result: CaseResult, rebase: &mcperr_cases::case::Rebase) -> CaseResult {
    let Some(answer) = result.response.as_ref() else {
        return result;
    };
    let text = mcperr_cases::expect::answer_text(answer);
    let names_it = text.contains(rebase.extra.0.as_str());
    if result.verdict == Verdict::Pass && mcperr_cases::expect::refusal(answer) && !names_it {
        result.verdict = Verdict::Skip;
        result.message = format!(
            "not judged: no valid call of the tool was made to compare with, and its refusal does not name {}: the body may have run and failed on its own (with: {:?}); --tools NAME allows valid calls",
            rebase.extra.0,
            clip(&text)
        );
    }
    result
}

/// A T4 case sent on an argument set the tool is first seen to accept
/// ([`mcperr_cases::case::Rebase`]): valid sets go unjudged (their strays
/// go to the case) until one is accepted, then the case's call is that set
/// with its change. When the tool refuses every set, the case is sent on the
/// last one and its passing refusal counts only if it says something the
/// set's own refusal did not, beyond the extra property's name and value
/// (else the tool failed for another reason, perhaps quoting its
/// arguments): a skip.
async fn rebased(
    client: &mut Client,
    plan: &CasePlan,
    rebase: &mcperr_cases::case::Rebase,
) -> (CaseResult, bool) {
    let tool = plan
        .case
        .request
        .params
        .as_ref()
        .and_then(|p| p.get("name"))
        .cloned();
    let with_args = |args: Value| {
        let mut attempt = plan.clone();
        if let Some(p) = attempt
            .request
            .params
            .as_mut()
            .and_then(Value::as_object_mut)
        {
            p.insert("arguments".into(), args);
        }
        attempt
    };
    // A hung tools/call: the case is an error at once, as any of its cases.
    if client
        .pace
        .hung(&crate::pace::lane_of_outgoing(&plan.request))
        .is_some()
    {
        return execute_once(client, plan).await;
    }
    let mark = client.stderr().mark();
    let mut last = None;
    let mut accepted = None;
    let normal = client.timeout;
    client.set_timeout(client.pace.timeout_for("tools/call", normal));
    for set in &rebase.sets {
        let params = serde_json::json!({"name": tool, "arguments": set});
        let ex = client.request("tools/call", Some(params), true).await;
        let Some(answer) = ex.response() else {
            // No answer to a valid call: not the extra property's doing.
            client.set_timeout(normal);
            let alive = client.probe().await.response().is_some();
            let j = mcperr_oracle::Judgement::new(
                Verdict::Error,
                plan.case.rule,
                format!(
                    "not judged: the valid call this case stands on got no answer ({:?}): arguments {set}",
                    ex.ending
                ),
            );
            return (
                CaseResult::planned(plan, &plan.citation, j, Some(ex.request), None, 0),
                alive,
            );
        };
        if !mcperr_cases::expect::refusal(answer) {
            accepted = Some(set);
            break;
        }
        last = Some((set, mcperr_cases::expect::answer_text(answer)));
    }
    client.set_timeout(normal);
    // What the unjudged calls logged is not the case's (a crash's traceback
    // would break a log check): it is let through before the case's mark.
    if client.has_stderr() && plan.wants_log() {
        client.settle_stderr(mark).await;
    }
    if let Some(set) = accepted {
        return execute_once(client, &with_args(rebase.apply(set))).await;
    }
    let Some((set, refused)) = last else {
        let (result, alive) = execute_once(client, plan).await;
        return (unseen_refusal(result, rebase), alive);
    };
    let (result, alive) = execute_once(client, &with_args(rebase.apply(set))).await;
    let case_text = result
        .response
        .as_ref()
        .map(mcperr_cases::expect::answer_text)
        .unwrap_or_default();
    if result.verdict != Verdict::Pass
        || mcperr_cases::expect::refusal_says_more(&case_text, &refused, rebase)
    {
        return (result, alive);
    }
    let mut result = result;
    result.verdict = Verdict::Skip;
    result.message = format!(
        "not judged: the tool refused every valid argument set ({} tried), and its refusal of the extra property says nothing its refusal of the same set without it did not (without: {:?}; with: {:?}): it may have failed for another reason",
        rebase.sets.len(),
        clip(&refused),
        clip(&case_text)
    );
    (result, alive)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcperr_cases::case::{Case, Rebase};
    use serde_json::json;

    fn passed_with(answer: Value) -> CaseResult {
        let text = "id = \"t/x\"\nrule = \"T4\"\n[request]\nmethod = \"tools/call\"\n";
        let case = Case::parse("t/x.toml", text).unwrap();
        let mut r = CaseResult::skipped(&case, "", String::new());
        r.verdict = Verdict::Pass;
        r.response = Some(answer);
        r
    }

    fn tool_error(text: &str) -> Value {
        json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": text}], "isError": true}})
    }

    /// With no valid call of the tool to compare with, a refusal of the
    /// call with an extra property is that property's only when it names
    /// it: otherwise the body may have run and failed on its own.
    #[test]
    fn a_refusal_seen_on_no_valid_call_counts_only_when_it_names_the_property() {
        let rebase = Rebase {
            sets: vec![],
            extra: ("mcperr_extra".into(), json!(1)),
        };
        let named = tool_error("Unexpected property 'mcperr_extra'");
        assert_eq!(
            unseen_refusal(passed_with(named), &rebase).verdict,
            Verdict::Pass
        );
        let protocol = json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "mcperr_extra is not allowed"}});
        assert_eq!(
            unseen_refusal(passed_with(protocol), &rebase).verdict,
            Verdict::Pass
        );
        let other = unseen_refusal(passed_with(tool_error("database unavailable")), &rebase);
        assert_eq!(other.verdict, Verdict::Skip);
        assert!(
            other.message.contains("does not name mcperr_extra"),
            "{}",
            other.message
        );
        // A success is not a refusal: the case's own verdict stands.
        let ok = json!({"jsonrpc": "2.0", "id": 1, "result": {"content": []}});
        assert_eq!(
            unseen_refusal(passed_with(ok), &rebase).verdict,
            Verdict::Pass
        );
    }
}
