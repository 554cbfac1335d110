//! A case's verdict: the [`Judgement`] the graded violations come to, and
//! [`conclude`], which grades them through the one grading path.

use mcperr_cases::plan::CasePlan;
use mcperr_model::rules::{AspectId, RuleId};

use crate::{Graded, Verdict, Violation};

/// A verdict with the rule that decided it and a message saying why.
#[derive(Debug, Clone, PartialEq)]
pub struct Judgement {
    /// The verdict.
    pub verdict: Verdict,
    /// The deciding rule (the case's own, or J1/J3/J4/J5/H3/J7 for an invariant).
    pub rule: RuleId,
    /// Why: every violation found, the deciding one first.
    pub message: String,
    /// The deciding aspect's citation from the table, when a violation decided.
    pub citation: Option<String>,
    /// The deciding aspect, when a violation decided.
    pub aspect: Option<AspectId>,
}

impl Judgement {
    /// A judgement with a verdict and message under `rule`.
    pub fn new(verdict: Verdict, rule: RuleId, message: impl Into<String>) -> Self {
        Judgement {
            verdict,
            rule,
            message: message.into(),
            citation: None,
            aspect: None,
        }
    }

    /// The judgement of a set of graded violations: pass if there are none,
    /// else the worst decides (among equals the case's own rule, `pass_rule`,
    /// then the first) and every one is listed.
    pub fn of(violations: Vec<Graded>, pass_rule: RuleId, pass_message: String) -> Self {
        Judgement::preferring(violations, pass_rule, pass_message, None)
    }

    /// As [`Judgement::of`], but `preferred` decides when one of the
    /// violations has it (a replayed fuzz finding's aspect: `replays`).
    pub fn preferring(
        violations: Vec<Graded>,
        pass_rule: RuleId,
        pass_message: String,
        preferred: Option<AspectId>,
    ) -> Self {
        let Some(decider) = violations
            .iter()
            .enumerate()
            .max_by_key(|(i, v)| {
                let chosen = Some(v.aspect) == preferred;
                let own = v.aspect.rule() == pass_rule;
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
        let mut j = Judgement::new(first.verdict, first.aspect.rule(), message);
        j.citation = Some(first.citation.clone());
        j.aspect = Some(first.aspect);
        j
    }
}

/// Grades the violations through the one grading path and concludes: a
/// deviation the profile gives no verdict (the spec says neither MUST nor
/// SHOULD) is a skip when it is the case's own, else a note on a pass.
pub(crate) fn conclude(plan: &CasePlan, found: Vec<Violation>, pass_message: String) -> Judgement {
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
            plan.case.rule,
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
        Judgement::new(Verdict::Skip, plan.case.rule, why)
    } else {
        Judgement::new(Verdict::Pass, plan.case.rule, why)
    }
}

pub(crate) fn clip(s: &str) -> String {
    if s.len() > 300 {
        format!(
            "{}…",
            &s[..s.char_indices().nth(300).map_or(s.len(), |(i, _)| i)]
        )
    } else {
        s.to_string()
    }
}
