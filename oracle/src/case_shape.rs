//! A scripted case's own shape on its answer: its expectation (or an
//! `also_pass` shape, or a `warn` shape), its `[aspects.*]` sub-shapes and
//! the named checks that read the answer.

use mcperr_cases::pattern;
use mcperr_cases::plan::CasePlan;
use mcperr_wire::exchange::Exchange;

use crate::checks::Evidence;
use crate::named;
use crate::Violation;

/// The case's own shape on `response`: its expectation (or an `also_pass`
/// shape, whose message it returns, or a `warn` shape), its `[aspects.*]`
/// and its named checks.
pub(crate) fn shape(
    plan: &CasePlan,
    exchange: &Exchange,
    response: &serde_json::Value,
    evidence: &Evidence,
) -> (Vec<Violation>, String) {
    let case = &plan.case;
    let own_aspect = case.aspect_id();
    let own = |message: String| Violation::new(own_aspect, message);
    let exp = &plan.expectation;
    let mut found = Vec::new();
    let mut pass_message = String::new();
    let mut other_pass = false;
    let mismatches = pattern::mismatches(&exp.pattern, Some(response));
    if !mismatches.is_empty() {
        let matching = |alts: &'_ [mcperr_cases::case::Alternative]| {
            alts.iter()
                .find(|a| pattern::matches(&a.pattern, Some(response)).is_ok())
                .cloned()
        };
        if let Some(alt) = matching(&exp.also_pass) {
            other_pass = true;
            pass_message = match &alt.aspect {
                Some(a) => {
                    let aspect = case.aspect_named(Some(a));
                    format!("accepted: {}", plan.grader().cite(aspect))
                }
                None => format!("accepted: {}", alt.reason),
            };
        } else if let Some(alt) = matching(&exp.warn) {
            found.push(match &alt.aspect {
                Some(a) => Violation::new(case.aspect_named(Some(a)), reason_or_what(&alt, plan)),
                None => Violation::warning(own_aspect, alt.reason.clone()),
            });
        } else {
            let list: Vec<String> = mismatches.iter().map(ToString::to_string).collect();
            found.push(own(list.join("; ")));
        }
    }
    // `[aspects.NAME]` are sub-shapes of the expected answer: an answer
    // that passed as another shape (`also_pass`) is not held to them.
    for (aspect, shape) in exp.aspects.iter().filter(|_| !other_pass) {
        let list: Vec<String> = pattern::mismatches(shape, Some(response))
            .iter()
            .map(ToString::to_string)
            .collect();
        if !list.is_empty() {
            found.push(Violation::new(*aspect, list.join("; ")));
        }
    }
    let answer = named::Answer {
        exchange,
        response,
        canary: &plan.canary,
        output_schema: plan.case.output_schema.as_ref(),
        evidence,
    };
    for check in &exp.checks {
        let entry = named::entry(*check);
        let named::Reads::Answer(run) = entry.reads else {
            continue;
        };
        if let Some(failure) = run(&answer) {
            // Counts that could not be read are no evidence either way.
            let unknown = *check == mcperr_cases::case::Check::BodyNeverRan
                && !matches!(&evidence.counts, Some((Some(_), Some(_))));
            let aspect = entry.aspect(case);
            found.push(if unknown {
                Violation::unanswered(aspect, failure)
            } else {
                Violation::new(aspect, failure)
            });
        }
    }
    (found, pass_message)
}

/// A warn shape's message: its reason, else what its aspect covers.
fn reason_or_what(alt: &mcperr_cases::case::Alternative, plan: &CasePlan) -> String {
    if alt.reason.is_empty() {
        let aspect = plan.case.aspect_named(alt.aspect.as_deref());
        aspect.text(plan.era).what.to_string()
    } else {
        alt.reason.clone()
    }
}
