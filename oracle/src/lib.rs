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
//! - [`judge`] (this file, only the order of the steps), `after` (what
//!   came after the request: J4, U7, U9), `case_shape` (the case's own
//!   shape), the [`named`] checks' registry (running [`checks`],
//!   [`structured`] and [`stringified`]) and `regressions`: a scripted case
//!   judged on top of the invariants.
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

mod after;
mod answer_checks;
mod asks;
pub mod auth;
mod case_shape;
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

use mcperr_cases::plan::CasePlan;
use mcperr_wire::exchange::{Ending, Exchange};

pub use mcperr_model::verdict::Verdict;

pub use checks::Evidence;
pub use invariants::{invariants, Context};

use after::after_the_request;
use case_shape::shape;
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
