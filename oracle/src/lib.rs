//! mcperr-oracle: judging what a server answered, with no I/O.
//!
//! Where it sits: mcperr-model (rules, grading) → mcperr-wire (the
//! exchange) → mcperr-cases (what was sent and what it expects) → **here**
//! → mcperr-core (the report) → mcperr-render → mcperr. An [`Exchange`] comes
//! in; violations, graded into a [`Verdict`] by the one grading path, go out.
//!
//! Layout:
//! - [`invariants`] and the modules it calls (`strays`, `leaks`, `messages`, `rows`,
//!   [`codes`], [`structured`], [`extensions`], [`mrtr`], [`tasks`],
//!   [`subscriptions`], [`auth`], [`server_asks`]): what every response must
//!   satisfy whatever was asked.
//! - [`judge`] (this file), [`checks`] (with [`stringified`]) and
//!   `regressions`: a scripted case judged on top of the invariants.
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

mod asks;
pub mod auth;
pub mod checks;
pub mod codes;
mod context;
pub mod extensions;
pub mod findings;
pub mod framing;
pub mod invariants;
mod leaks;
mod messages;
pub mod mrtr;
pub mod redact;
mod regressions;
mod rows;
pub mod secrets;
pub mod server_asks;
mod strays;
pub mod stringified;
pub mod structured;
pub mod subscriptions;
pub mod tasks;

use mcperr_cases::pattern;
use mcperr_cases::plan::CasePlan;
use mcperr_wire::exchange::{Ending, Exchange, NoResponse};

pub use mcperr_model::verdict::Verdict;

pub use checks::Evidence;
pub use invariants::{invariants, Context};

pub use mcperr_model::grading::{Graded, Grader, Kind, Violation};
use mcperr_model::rules::AspectId;

/// A verdict with the rule that decided it and a message saying why.
#[derive(Debug, Clone, PartialEq)]
pub struct Judgement {
    /// The verdict.
    pub verdict: Verdict,
    /// The deciding rule (the case's own, or J1/J3/J4/J5/H3/J7 for an invariant).
    pub rule: String,
    /// Why: every violation found, the deciding one first.
    pub message: String,
    /// The deciding aspect's citation from the table, when a violation decided.
    pub citation: Option<String>,
    /// The deciding aspect, when a violation decided.
    pub aspect: Option<AspectId>,
}

impl Judgement {
    /// A judgement with a verdict and message under `rule`.
    pub fn new(verdict: Verdict, rule: &str, message: impl Into<String>) -> Self {
        Judgement {
            verdict,
            rule: rule.to_string(),
            message: message.into(),
            citation: None,
            aspect: None,
        }
    }

    /// The judgement of a set of graded violations: pass if there are none,
    /// else the worst decides (among equals the case's own rule, `pass_rule`,
    /// then the first) and every one is listed.
    pub fn of(violations: Vec<Graded>, pass_rule: &str, pass_message: String) -> Self {
        Judgement::preferring(violations, pass_rule, pass_message, None)
    }

    /// As [`Judgement::of`], but `preferred` decides when one of the
    /// violations has it (a replayed fuzz finding's aspect: `replays`).
    pub fn preferring(
        violations: Vec<Graded>,
        pass_rule: &str,
        pass_message: String,
        preferred: Option<AspectId>,
    ) -> Self {
        let Some(decider) = violations
            .iter()
            .enumerate()
            .max_by_key(|(i, v)| {
                let chosen = Some(v.aspect) == preferred;
                let own = v.aspect.rule().as_str() == pass_rule;
                (chosen, v.verdict.weight(), own, std::cmp::Reverse(*i))
            })
            .map(|(i, _)| i)
        else {
            return Judgement::new(Verdict::Pass, pass_rule, pass_message);
        };
        let first = &violations[decider];
        let mut message = first.message.clone();
        // The same violation seen again (one per malformed line, say) is
        // listed once, with how many times it was seen.
        let mut also: Vec<(String, usize)> = Vec::new();
        for (_, v) in violations.iter().enumerate().filter(|(i, _)| *i != decider) {
            let line = format!("also {} [{}]: {}", v.verdict.as_str(), v.aspect, v.message);
            let same_as_decider = v.aspect == first.aspect && v.message == first.message;
            match also.iter_mut().find(|(l, _)| *l == line) {
                Some((_, n)) => *n += 1,
                None if same_as_decider => {}
                None => also.push((line, 1)),
            }
        }
        for (line, n) in also {
            message.push('\n');
            message.push_str(&line);
            if n > 1 {
                message.push_str(&format!(" ({n} times)"));
            }
        }
        let mut j = Judgement::new(first.verdict, first.aspect.rule().as_str(), message);
        j.citation = Some(first.citation.clone());
        j.aspect = Some(first.aspect);
        j
    }
}

/// Judges one exchange of a planned case.
pub fn judge(plan: &CasePlan, exchange: &Exchange, evidence: &Evidence) -> Judgement {
    let case = &plan.case;
    let own_aspect = case.aspect_id();
    let own = |message: String| Violation::new(own_aspect, message);
    match &exchange.ending {
        Ending::NotApplicable(why) => {
            return Judgement::new(Verdict::Skip, &case.rule, why.clone())
        }
        Ending::SetupFailed(why) => {
            return Judgement::new(
                Verdict::Error,
                &case.rule,
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
    let stopped: Vec<Violation> =
        stopped
            .into_iter()
            .chain(slow)
            .chain(cancelled(&evidence.after_cancel))
            .chain(evidence.ended.iter().flat_map(|e| {
                subscriptions::teardown(e, &exchange.strays, exchange.http.is_none())
            }))
            .collect();
    // A GET or DELETE left hanging by a server that still answers others.
    let hung = framing::hung_without_request(case, exchange);
    if let (Some(why), true) = (hung, evidence.answered_after) {
        return conclude(plan, vec![own(why)], String::new());
    }
    // An `[http]` case judges its status (and body) first.
    if let (Some(want), Some(answer)) = (&case.http, &exchange.http) {
        let strays_only = invariants::strays(exchange, &ctx);
        // An auth case (A1) judges the refusal itself, whatever its body
        // (RFC 6750 asks for no JSON-RPC error), once its status is right.
        let auth_case = plan
            .expectation
            .checks
            .iter()
            .any(|c| auth::reads_refusal(*c));
        if auth_case && want.status.contains(&answer.status) {
            let mut v = strays_only;
            v.extend(auth::violations(
                &plan.expectation.checks,
                exchange,
                evidence.metadata.as_ref(),
            ));
            v.extend(stopped);
            return conclude(plan, v, String::new());
        }
        if want.error_status && (400..600).contains(&answer.status) {
            let mut v = strays_only;
            v.extend(stopped);
            return conclude(plan, v, format!("refused with HTTP {}", answer.status));
        }
        if !want.status.is_empty() && !want.status.contains(&answer.status) {
            let mut v = strays_only;
            v.push(own(format!(
                "HTTP status {}, expected {:?}; body: {}",
                answer.status,
                want.status,
                clip(&answer.body)
            )));
            v.extend(stopped);
            return conclude(plan, v, String::new());
        }
        // Checks that read the HTTP answer itself (a GET has no response).
        let http_checks: Vec<Violation> = plan
            .expectation
            .checks
            .iter()
            .filter(|c| c.reads_http_answer())
            .flat_map(|c| checks::http_answer(*c, exchange, evidence))
            .map(|(aspect, why)| Violation::new(aspect, why))
            .collect();
        let status_only = case.expect.as_object().is_some_and(|o| o.is_empty())
            && plan
                .expectation
                .checks
                .iter()
                .all(|c| c.reads_http_answer());
        if want.empty_body || (status_only && !want.status.is_empty()) {
            let mut v = strays_only;
            v.extend(http_checks);
            if !want.empty_body && answer.status >= 400 {
                v.extend(framing::rejection_body(exchange, &leaks));
            }
            if want.empty_body && !answer.body.trim().is_empty() {
                v.push(own(format!("expected no body, got {}", clip(&answer.body))));
            }
            if want.sse_when_ok && (200..300).contains(&answer.status) && !answer.sse {
                let kind = answer.header("content-type").unwrap_or("no content type");
                v.push(own(format!(
                    "HTTP {} with {kind}, not an SSE stream (text/event-stream); body: {}",
                    answer.status,
                    clip(&answer.body)
                )));
            }
            v.extend(stopped);
            return conclude(plan, v, String::new());
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
            v.push(own(format!(
                "HTTP {} as expected, but the body is no JSON-RPC response ({}); expected {}",
                answer.status,
                clip(&answer.body),
                serde_json::to_string(&plan.expectation.pattern).unwrap_or_default()
            )));
            if let Some(marker) = invariants::leak_marker(&answer.body) {
                v.push(
                    Violation::new(AspectId::J7Main, format!("the error body carries {marker}"))
                        .late(),
                );
            }
            v.extend(stopped);
            return conclude(plan, v, String::new());
        }
    }
    let Some(response) = exchange.response() else {
        found.extend(leaks);
        found.extend(stopped);
        return conclude(plan, found, String::new());
    };
    let exp = &plan.expectation;
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
    for check in &exp.checks {
        if let Some(failure) = checks::run(
            *check,
            exchange,
            response,
            &plan.canary,
            plan.case.output_schema.as_ref(),
            evidence,
        ) {
            // Counts that could not be read are no evidence either way.
            let unknown = *check == mcperr_cases::case::Check::BodyNeverRan
                && !matches!(&evidence.counts, Some((Some(_), Some(_))));
            let aspect = checks::aspect(*check, case);
            found.push(if unknown {
                Violation::unanswered(aspect, failure)
            } else {
                Violation::new(aspect, failure)
            });
        }
    }
    let own: Vec<AspectId> = exp.aspects.iter().map(|(a, _)| *a).collect();
    found.extend(rows::dropped_for_case(leaks, &found, &own));
    found.extend(stopped);
    conclude(plan, found, pass_message)
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

/// Grades the violations through the one grading path and concludes: a
/// deviation the profile gives no verdict (the spec says neither MUST nor
/// SHOULD) is a skip when it is the case's own, else a note on a pass.
fn conclude(plan: &CasePlan, found: Vec<Violation>, pass_message: String) -> Judgement {
    let grader = plan.grader();
    let own_rule = plan.case.rule_id();
    let capped = plan.case.at_most.is_some();
    let mut graded = Vec::new();
    let mut unjudged = Vec::new();
    for v in found {
        match grader.graded(&v, capped && v.rule() == own_rule) {
            Some(g) => graded.push(g),
            None => unjudged.push(v),
        }
    }
    let listed: Vec<String> = unjudged
        .iter()
        .map(|v| format!("[{}] {}", v.aspect, grader.message(v)))
        .collect();
    if !graded.is_empty() || unjudged.is_empty() {
        let mut j = Judgement::preferring(
            graded,
            &plan.case.rule,
            pass_message,
            plan.case.replays_aspect(),
        );
        if !listed.is_empty() {
            j.message.push_str(&format!(
                "\nnot judged under {}: {}",
                plan.profile.name,
                listed.join("; ")
            ));
        }
        return j;
    }
    // Whether `model` would judge them: asked of the grader, not re-derived.
    let under_model = mcperr_model::grading::Grader {
        grading: mcperr_model::grading::Grading::Model,
        ..grader
    };
    let model_judges = unjudged
        .iter()
        .all(|v| under_model.grade(v, false).is_some());
    let hint = if model_judges && grader.grading != mcperr_model::grading::Grading::Model {
        "; --profile model judges it"
    } else {
        ""
    };
    let why = format!(
        "no verdict under the {} profile: the {} spec neither requires nor recommends this{hint}. Deviation: {}",
        plan.profile.name,
        plan.era,
        listed.join("; ")
    );
    // No verdict on what the case itself proves is a skip; a pass of it with
    // only other aspects unjudged is a pass, saying what was not judged.
    if unjudged.iter().any(|v| v.aspect == plan.case.aspect_id()) {
        Judgement::new(Verdict::Skip, &plan.case.rule, why)
    } else {
        Judgement::new(Verdict::Pass, &plan.case.rule, why)
    }
}

fn clip(s: &str) -> String {
    if s.len() > 300 {
        format!(
            "{}…",
            &s[..s.char_indices().nth(300).map_or(s.len(), |(i, _)| i)]
        )
    } else {
        s.to_string()
    }
}
