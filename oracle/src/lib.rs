//! mcperr-oracle: judging what a server answered, with no I/O.
//!
//! Where it sits: mcperr-model (rules, grading) → mcperr-wire (the
//! exchange) → mcperr-cases (what was sent and what it expects) → **here**
//! → mcperr-core (the report) → mcperr-render → mcperr. An [`Exchange`] comes
//! in; violations, graded into a [`Verdict`] by the one grading path, go out.
//!
//! Layout:
//! - [`invariants`] and the [`registry`] of always-on checks it runs (each
//!   an entry naming the aspects it judges, from the concern modules
//!   `strays`, `leaks`, `messages`, `rows`, [`codes`], [`framing`],
//!   [`extensions`], [`mrtr`], [`tasks`], [`subscriptions`],
//!   [`server_asks`]): what every response must satisfy whatever was asked.
//! - [`judge`] (this file), the [`named`] checks' registry (running
//!   [`checks`], [`structured`] and [`stringified`]) and `regressions`: a
//!   scripted case judged on top of the invariants.
//! - [`findings`]: fuzz inputs and proxied requests judged into findings,
//!   identified, grouped and replayed as case files.
//! - [`secrets`] and [`redact`]: credentials that leak, and their masking in
//!   what mcperr writes.
//!
//! The oracle works in two layers.
//!
//! [`invariants`] is what every response must satisfy whatever was asked:
//! callable with no case. [`judge`] sits on top for a scripted case: the
//! invariants first (stray output, no answer, framing, HTTP status, leaks),
//! then the case's own shape (`expect`, `also_pass`, `warn`) and its named
//! checks, then liveness after the case. Every violation found is reported;
//! the worst decides the verdict and the rule the case is reported under.

mod answer_checks;
mod asks;
pub mod auth;
pub mod checks;
pub mod codes;
mod context;
pub mod extensions;
pub mod findings;
pub mod framing;
mod http_case;
pub mod invariants;
mod judgement;
mod leaks;
mod messages;
pub mod mrtr;
pub mod named;
pub mod redact;
pub mod registry;
mod regressions;
mod rows;
pub mod secrets;
mod seen;
pub mod server_asks;
mod strays;
pub mod stringified;
pub mod structured;
pub mod subscriptions;
pub mod tasks;

use mcperr_cases::pattern;
use mcperr_cases::plan::CasePlan;
use mcperr_wire::exchange::{Ending, Exchange};

pub use mcperr_model::verdict::Verdict;

pub use checks::Evidence;
pub use invariants::{invariants, Context};

use judgement::conclude;
pub use judgement::Judgement;
pub use mcperr_model::grading::{Graded, Grader, Kind, Violation};
use mcperr_model::rules::AspectId;

/// Judges one exchange of a planned case.
pub fn judge(plan: &CasePlan, exchange: &Exchange, evidence: &Evidence) -> Judgement {
    let case = &plan.case;
    let own_aspect = case.aspect_id();
    let own = |message: String| Violation::new(own_aspect, message);
    match &exchange.ending {
        Ending::NotApplicable(why) => return Judgement::new(Verdict::Skip, case.rule, why.clone()),
        Ending::SetupFailed(why) => {
            return Judgement::new(
                Verdict::Error,
                case.rule,
                format!("the case could not be set up: {why}"),
            )
        }
        _ => {}
    }
    let listens = plan.listens();
    let declared = plan.client_capabilities();
    let task_tokens = plan.task_tokens();
    let raw_ids = plan.raw_ids();
    let ctx = Context {
        task_tokens: &task_tokens,
        raw_ids: &raw_ids,
        listens: &listens,
        client_capabilities: declared.as_ref(),
        era: Some(plan.era),
        canary: None, // the case's own `no-canary` check searches the whole response
        sent_raw: plan.sent_raw(),
        sent_notification: plan.sent_notification(),
        http_rejection_expected: plan.http.is_some(),
        logging_declared: plan.logging_declared,
        tool_tasks_declared: plan.tool_tasks_declared,
        planted: Some(&plan.canary),
    };
    // Leaks (J7) and schema shapes (J1) are judged after the case's own shape: a crash case that
    // leaks is reported under its own rule (T3, R4, P3), with J7 listed too.
    let alive = evidence.answered_after;
    let (leaks, mut found): (Vec<Violation>, Vec<Violation>) = invariants(exchange, &ctx)
        .into_iter()
        .map(|v| if alive { v.unanswered_while_alive() } else { v })
        .partition(|v| v.late);
    // An id beyond a double that came back rounded: the RFC 8259 section 6
    // policy ([`mcperr_wire::edges`]), the same as in fuzzing.
    if let Some(v) = mcperr_wire::edges::big_id(exchange, evidence.small_id_answered) {
        let strays = invariants::strays(exchange, &ctx).len();
        mcperr_wire::edges::apply_big_id(&mut found, strays, v);
    }
    let stopped = after_the_request(plan, exchange, evidence);
    // A GET or DELETE left hanging by a server that still answers others.
    let hung = framing::hung_without_request(case, exchange);
    if let (Some(why), true) = (hung, evidence.answered_after) {
        return conclude(plan, vec![own(why)], String::new());
    }
    // An `[http]` case judges its status (and body) first.
    if let Some(j) = http_case::judge(plan, exchange, evidence, &ctx, &leaks, &stopped) {
        return j;
    }
    let Some(response) = exchange.response() else {
        found.extend(leaks);
        found.extend(stopped);
        return conclude(plan, found, String::new());
    };
    let (shaped, pass_message) = shape(plan, exchange, response, evidence);
    found.extend(shaped);
    let exp = &plan.expectation;
    let case_aspects: Vec<AspectId> = exp.aspects.iter().map(|(a, _)| *a).collect();
    found.extend(rows::dropped_for_case(leaks, &found, &case_aspects));
    found.extend(stopped);
    conclude(plan, found, pass_message)
}

/// What came after the request that the case is judged for too: the
/// server stopped (J4) or answered only late (J4 `slow`), a cancelled
/// request's work went on (U7), a subscription ended wrongly (U9).
fn after_the_request(plan: &CasePlan, exchange: &Exchange, evidence: &Evidence) -> Vec<Violation> {
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

/// The case's own shape on `response`: its expectation (or an `also_pass`
/// shape, whose message it returns, or a `warn` shape), its `[aspects.*]`
/// and its named checks.
fn shape(
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

/// A warn shape's message: its reason, else what its aspect covers.
fn reason_or_what(alt: &mcperr_cases::case::Alternative, plan: &CasePlan) -> String {
    if alt.reason.is_empty() {
        let aspect = plan.case.aspect_named(alt.aspect.as_deref());
        aspect.text(plan.era).what.to_string()
    } else {
        alt.reason.clone()
    }
}
