//! The oracle, in two layers.
//!
//! [`invariants`] is what every response must satisfy whatever was asked:
//! callable with no case. [`judge`] sits on top for a scripted case: the
//! invariants first (stray output, no answer, framing, HTTP status, leaks),
//! then the case's own shape (`expect`, `also_pass`, `warn`) and its named
//! checks, then liveness after the case. Every violation found is reported;
//! the worst decides the verdict and the rule the case is reported under.

pub mod checks;
pub mod invariants;

use serde::{Deserialize, Serialize};

use crate::exchange::{Ending, Exchange, NoResponse};
use crate::pattern;
use crate::plan::CasePlan;
use crate::rules;

pub use crate::verdict::Verdict;

pub use checks::Evidence;
pub use invariants::{invariants, Context};

/// One thing wrong with an exchange, under one rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Violation {
    /// The rule broken.
    pub rule: String,
    /// `fail`, `warn`, or `error` (no answer to judge).
    pub verdict: Verdict,
    /// What was expected and what came back, with the spec citation.
    pub message: String,
    /// The level of the requirement, where the check fixes one rather than
    /// the rule (e.g. "the body never runs on invalid input": MUST validate).
    #[serde(skip)]
    pub level: Option<crate::rules::Level>,
    /// Judged after a case's own shape (leaks, a result's schema): a case
    /// that breaks its own rule is reported under it, with these listed too.
    #[serde(skip)]
    pub late: bool,
}

/// A verdict with the rule that decided it and a message saying why.
#[derive(Debug, Clone, PartialEq)]
pub struct Judgement {
    /// The verdict.
    pub verdict: Verdict,
    /// The deciding rule (the case's own, or J1/J3/J4/J5/H3/J7 for an invariant).
    pub rule: String,
    /// Why: every violation found, the deciding one first.
    pub message: String,
}

impl Judgement {
    /// A judgement with a verdict and message under `rule`.
    pub fn new(verdict: Verdict, rule: &str, message: impl Into<String>) -> Self {
        Judgement {
            verdict,
            rule: rule.to_string(),
            message: message.into(),
        }
    }

    /// The judgement of a set of violations: pass if there are none, else the
    /// worst (the first among equals) decides and every one is listed.
    pub fn of(violations: Vec<Violation>, pass_rule: &str, pass_message: String) -> Self {
        let Some(decider) = violations
            .iter()
            .enumerate()
            .max_by_key(|(i, v)| (v.verdict.weight(), std::cmp::Reverse(*i)))
            .map(|(i, _)| i)
        else {
            return Judgement::new(Verdict::Pass, pass_rule, pass_message);
        };
        let first = &violations[decider];
        let mut message = first.message.clone();
        for (_, v) in violations.iter().enumerate().filter(|(i, _)| *i != decider) {
            message.push_str(&format!(
                "\nalso {} [{}]: {}",
                v.verdict.as_str(),
                v.rule,
                v.message
            ));
        }
        Judgement::new(first.verdict, &first.rule, message)
    }
}

/// Judges one exchange of a planned case.
pub fn judge(plan: &CasePlan, exchange: &Exchange, evidence: &Evidence) -> Judgement {
    let case = &plan.case;
    let spec = &plan.spec;
    // The case's own expectations take its own level in this era, where it
    // sets one (invariants that share its rule id keep the rule's).
    let own_level = case.levels.get(plan.era.version()).copied();
    let own = |verdict: Verdict, message: String| Violation {
        rule: case.rule.clone(),
        verdict,
        message,
        level: own_level,
        late: false,
    };
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
    let ctx = Context {
        era: Some(plan.era),
        canary: None, // the case's own `no-canary` check searches the whole response
        sent_raw: plan.sent_raw(),
        sent_notification: plan.sent_notification(),
        http_rejection_expected: plan.http.is_some(),
    };
    // Leaks (J7) and schema shapes (J1) are judged after the case's own shape: a crash case that
    // leaks is reported under its own rule (T3, R4, P3), with J7 listed too.
    let (leaks, mut found): (Vec<Violation>, Vec<Violation>) =
        invariants(exchange, &ctx).into_iter().partition(|v| v.late);
    let stopped = evidence.stopped.as_ref().map(|how| Violation {
        level: None,
        late: false,
        rule: "J4".into(),
        verdict: Verdict::Fail,
        message: format!(
            "the server stopped answering after this request: {how}. Spec: {}",
            rules::cite("J4", plan.era)
        ),
    });
    // An `[http]` case judges its status (and body) first.
    if let (Some(want), Some(answer)) = (&case.http, &exchange.http) {
        let strays_only = invariants::strays(exchange, &ctx);
        if !want.status.is_empty() && !want.status.contains(&answer.status) {
            let mut v = strays_only;
            v.push(own(
                Verdict::Fail,
                format!(
                    "HTTP status {}, expected {:?}; body: {}. Spec: {spec}",
                    answer.status,
                    want.status,
                    clip(&answer.body)
                ),
            ));
            v.extend(stopped);
            return conclude(plan, v, String::new());
        }
        let status_only =
            case.expect.as_object().is_some_and(|o| o.is_empty()) && case.checks.is_empty();
        if want.empty_body || (status_only && !want.status.is_empty()) {
            let mut v = strays_only;
            if want.empty_body && !answer.body.trim().is_empty() {
                v.push(own(
                    Verdict::Fail,
                    format!("expected no body, got {}. Spec: {spec}", clip(&answer.body)),
                ));
            }
            v.extend(stopped);
            return conclude(plan, v, String::new());
        }
        // The rejection status came, with a body that is no JSON-RPC
        // response (a framework's HTML error page, say). The status is right;
        // the missing error object is the case's own deviation, graded by its
        // rule (the transports sections ask only for the status: the body
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
            v.push(own(
                Verdict::Fail,
                format!(
                    "HTTP {} as expected, but the body is no JSON-RPC response ({}); expected {}. Spec: {spec}",
                    answer.status,
                    clip(&answer.body),
                    serde_json::to_string(&case.expect).unwrap_or_default()
                ),
            ));
            if let Some(marker) = invariants::leak_marker(&answer.body) {
                v.push(Violation {
                    rule: "J7".into(),
                    verdict: Verdict::Fail,
                    message: format!(
                        "the error body carries {marker}. Spec: {}",
                        rules::cite("J7", plan.era)
                    ),
                    level: None,
                    late: true,
                });
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
    let mismatches = pattern::mismatches(&exp.pattern, Some(response));
    if !mismatches.is_empty() {
        let matching = |alts: &[crate::case::Alternative]| {
            alts.iter()
                .find(|a| pattern::matches(&a.pattern, Some(response)).is_ok())
                .map(|a| a.reason.clone())
        };
        if let Some(reason) = matching(&exp.also_pass) {
            pass_message = format!("accepted: {reason}");
        } else if let Some(reason) = matching(&exp.warn) {
            found.push(own(Verdict::Warn, format!("{reason}. Spec: {spec}")));
        } else {
            let list: Vec<String> = mismatches.iter().map(ToString::to_string).collect();
            found.push(own(
                Verdict::Fail,
                format!("{}. Spec: {spec}", list.join("; ")),
            ));
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
            let unknown = *check == crate::case::Check::BodyNeverRan
                && !matches!(&evidence.counts, Some((Some(_), Some(_))));
            let verdict = if unknown {
                Verdict::Error
            } else {
                Verdict::Fail
            };
            let mut v = own(verdict, format!("{failure}. Spec: {spec}"));
            v.level = checks::level(*check).or(v.level);
            found.push(v);
        }
    }
    found.extend(leaks);
    found.extend(stopped);
    conclude(plan, found, pass_message)
}

/// Grades the violations under the plan's profile and concludes: a
/// deviation the profile gives no verdict (the spec says neither MUST nor
/// SHOULD) is a skip when it is the case's own, else a note on a pass.
fn conclude(plan: &CasePlan, found: Vec<Violation>, pass_message: String) -> Judgement {
    let mut graded = Vec::new();
    let mut unjudged = Vec::new();
    for mut v in found {
        let grade = match v.verdict {
            Verdict::Fail => plan.grade(&v.rule, v.level),
            Verdict::Warn if plan.profile.strict => Some(Verdict::Fail),
            other => Some(other),
        };
        match grade {
            Some(g) => {
                v.verdict = g;
                graded.push(v);
            }
            None => unjudged.push(v),
        }
    }
    let listed: Vec<String> = unjudged
        .iter()
        .map(|v| format!("[{}] {}", v.rule, v.message))
        .collect();
    if !graded.is_empty() || unjudged.is_empty() {
        let mut j = Judgement::of(graded, &plan.case.rule, pass_message);
        if !listed.is_empty() {
            j.message.push_str(&format!(
                "\nnot judged under {}: {}",
                plan.profile.name,
                listed.join("; ")
            ));
        }
        return j;
    }
    let why = format!(
        "no verdict under the {} profile: the {} spec neither requires nor recommends this; --profile model judges it. Deviation: {}",
        plan.profile.name,
        plan.era,
        listed.join("; ")
    );
    if unjudged.iter().any(|v| v.rule == plan.case.rule) {
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
