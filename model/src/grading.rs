//! The one grading path. Every check (the oracle's invariants, a case's own
//! shape and named checks, the fuzz judge's class rules, replayed findings,
//! the matrix) states *what* is wrong as a [`Violation`] naming the
//! [`AspectId`] it breaks; nothing else. The level of that aspect in the era
//! under test, the sentence a message quotes, `only_over`, `at_most`, the
//! profile's grading and `--strict` are applied here, once, by [`Grader`].

use mcperr_protocol::Era;

use crate::rules::{AspectId, Level, RuleId};
use crate::verdict::Verdict;
use serde::Deserialize;

/// What kind of finding a violation is, before grading.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// The answer deviates from the aspect: graded by its level and the profile.
    Deviation,
    /// A shape a case file itself calls a warning (a `[[warn]]` alternative
    /// without an aspect): a warning under every profile, a failure with `--strict`.
    Warning,
    /// No answer could be judged (timeout, death, garbage): an `error`.
    Unanswered,
}

/// One thing wrong with an exchange: the aspect broken and what was seen.
/// The message says only what is wrong; the citation is the grader's.
#[derive(Debug, Clone, PartialEq)]
pub struct Violation {
    /// The requirement broken (its rule is [`AspectId::rule`]).
    pub aspect: AspectId,
    /// Deviation, warning or no answer.
    pub kind: Kind,
    /// What was expected and what came back, without a spec citation.
    pub message: String,
    /// Judged after a case's own shape (leaks, a result's schema): a case
    /// that breaks its own rule is reported under it, with these listed too.
    pub late: bool,
}

impl Violation {
    /// A deviation from `aspect`.
    pub fn new(aspect: AspectId, message: impl Into<String>) -> Self {
        Violation {
            aspect,
            kind: Kind::Deviation,
            message: message.into(),
            late: false,
        }
    }

    /// No answer to judge, under `aspect`'s rule.
    pub fn unanswered(aspect: AspectId, message: impl Into<String>) -> Self {
        Violation {
            kind: Kind::Unanswered,
            ..Violation::new(aspect, message)
        }
    }

    /// A case file's own warning shape.
    pub fn warning(aspect: AspectId, message: impl Into<String>) -> Self {
        Violation {
            kind: Kind::Warning,
            ..Violation::new(aspect, message)
        }
    }

    /// A request left unanswered while the server went on answering others
    /// is no longer "no answer to judge": it breaks J4 ("When a rpc call is
    /// made, the Server MUST reply with a Response"), a deviation. The same
    /// for a case (the probe after it was answered) and for fuzzing.
    pub fn unanswered_while_alive(mut self) -> Self {
        if self.kind == Kind::Unanswered && self.aspect == AspectId::J4Main {
            self.kind = Kind::Deviation;
            self.message = self.message.replacen(
                "the server stopped answering",
                "this request was never answered while the server went on answering others",
                1,
            );
        }
        self
    }

    /// Judged after a case's own shape.
    pub fn late(mut self) -> Self {
        self.late = true;
        self
    }

    /// The rule broken.
    pub fn rule(&self) -> RuleId {
        self.aspect.rule()
    }
}

/// A violation with its verdict and its message with the citation.
#[derive(Debug, Clone, PartialEq)]
pub struct Graded {
    /// The aspect broken.
    pub aspect: AspectId,
    /// Fail, warn or error.
    pub verdict: Verdict,
    /// What is wrong, then `Spec:` and the table's citation.
    pub message: String,
    /// The table's citation alone.
    pub citation: String,
}

/// How a deviation is graded.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Grading {
    /// By the rule's level in the era under test (the rule table, or the
    /// case's own `levels`): MUST → fail, SHOULD → warn, neither → no verdict.
    Spec,
    /// A deviation from the source documents' error model (an aspect the
    /// table marks `error_model`) fails; any other is graded as by `Spec`.
    #[default]
    Model,
}

/// Grades violations for one run: its era, transport and profile.
#[derive(Debug, Clone, Copy)]
pub struct Grader {
    /// The era under test.
    pub era: Era,
    /// Over Streamable HTTP (some sentences bind only there).
    pub over_http: bool,
    /// The profile's grading.
    pub grading: Grading,
    /// `--strict`: every warn is a failure.
    pub strict: bool,
}

impl Grader {
    /// Whether `aspect`'s sentence binds over another transport only.
    fn elsewhere(&self, aspect: AspectId) -> bool {
        aspect
            .text(self.era)
            .only_over
            .is_some_and(|t| (t == "http") != self.over_http)
    }

    /// `aspect`'s level in this run (`none` where its sentence binds only
    /// over the other transport).
    pub fn level(&self, aspect: AspectId) -> Level {
        if self.elsewhere(aspect) {
            Level::None
        } else {
            aspect.text(self.era).level
        }
    }

    /// The verdict of `v` (`None`: no verdict, the era's spec says nothing
    /// that `spec` could grade). `capped`: the case caps its own rule at a
    /// warning (`at_most = "warn"`).
    pub fn grade(&self, v: &Violation, capped: bool) -> Option<Verdict> {
        let verdict = match v.kind {
            Kind::Unanswered => return Some(Verdict::Error),
            Kind::Warning => Verdict::Warn,
            Kind::Deviation => match self.grading {
                // A requirement the table marks as another era's alone
                // (`only_in`: 2026-07-28's reserved code ranges, judged on a
                // 2025-11-25 server) carries no verdict here, under any profile.
                Grading::Model if v.aspect.text(self.era).only_in.is_some() => return None,
                // The source documents' error model is exact; every other
                // requirement (framing, HTTP, utilities, a SHOULD about
                // successes) keeps its era's level, as under `spec`.
                Grading::Model if v.aspect.text(self.era).error_model => Verdict::Fail,
                Grading::Model | Grading::Spec => self.level(v.aspect).severity()?,
            },
        };
        let capped = capped || v.aspect.text(self.era).at_most_warn;
        let verdict = match verdict {
            Verdict::Fail if capped => Verdict::Warn,
            other => other,
        };
        Some(match verdict {
            Verdict::Warn if self.strict => Verdict::Fail,
            other => other,
        })
    }

    /// What a deviation from `aspect` gets in this run (`None`: no
    /// verdict), capped by nothing but the table: what explain pages and
    /// the fault sweep ask of the table.
    pub fn deviation(&self, aspect: AspectId) -> Option<Verdict> {
        self.grade(&Violation::new(aspect, ""), false)
    }

    /// The citation of `aspect` in this run, from the table.
    pub fn cite(&self, aspect: AspectId) -> String {
        let mut out = aspect.text(self.era).cite();
        if self.elsewhere(aspect) {
            out.push_str(" (binds only over the other transport)");
        }
        out
    }

    /// `v`'s message with its citation.
    pub fn message(&self, v: &Violation) -> String {
        format!("{}. Spec: {}", v.message, self.cite(v.aspect))
    }

    /// Grades `v`: its verdict and cited message, or `None` for no verdict.
    pub fn graded(&self, v: &Violation, capped: bool) -> Option<Graded> {
        Some(Graded {
            aspect: v.aspect,
            verdict: self.grade(v, capped)?,
            message: self.message(v),
            citation: self.cite(v.aspect),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The built-in profiles' gradings: `spec` grades by level, `model`
    /// fails every deviation (their files are the cases crate's, whose tests
    /// check that they load to these).
    fn grade(profile: &str, era: Era, over_http: bool, v: &Violation) -> Option<Verdict> {
        let grading = match profile {
            "spec" => Grading::Spec,
            _ => Grading::Model,
        };
        Grader {
            era,
            over_http,
            grading,
            strict: false,
        }
        .grade(v, false)
    }

    #[test]
    fn the_level_comes_from_the_aspect_in_the_era_under_test() {
        let must = Violation::new(AspectId::T4ValidateInputs, "ran");
        assert_eq!(
            grade("spec", Era::Legacy, false, &must),
            Some(Verdict::Fail)
        );
        let should = Violation::new(AspectId::T1Main, "x");
        assert_eq!(
            grade("spec", Era::Modern, false, &should),
            Some(Verdict::Warn)
        );
        let none = Violation::new(AspectId::R1DataUri, "no data.uri");
        assert_eq!(grade("spec", Era::Modern, false, &none), None);
        assert_eq!(
            grade("model", Era::Modern, false, &none),
            Some(Verdict::Fail)
        );
    }

    #[test]
    fn a_sentence_only_another_era_has_gives_no_verdict_under_any_profile() {
        // 2026-07-28 reserves -32020..-32099 but its own codes; 2025-11-25 says nothing.
        let v = Violation::new(AspectId::J1McpRangeDefinedOnly, "-32050");
        assert_eq!(grade("model", Era::Legacy, false, &v), None);
        assert_eq!(grade("spec", Era::Legacy, false, &v), None);
        assert_eq!(grade("model", Era::Modern, false, &v), Some(Verdict::Fail));
        // The error model's own additions (no sentence in any era) still fail under model.
        let uri = Violation::new(AspectId::R1DataUri, "no data.uri");
        assert_eq!(
            grade("model", Era::Legacy, false, &uri),
            Some(Verdict::Fail)
        );
    }

    #[test]
    fn model_escalates_the_error_model_and_leaves_every_other_aspect_at_its_level() {
        // The text mirror of structuredContent is a SHOULD about successes.
        let mirror = Violation::new(AspectId::T8AlsoText, "text is not the JSON");
        for profile in ["spec", "model"] {
            assert_eq!(
                grade(profile, Era::Modern, false, &mirror),
                Some(Verdict::Warn),
                "{profile}"
            );
        }
        // A cursor the server never issued, answered with the first page.
        let cursor = Violation::new(AspectId::U2Main, "first page");
        assert_eq!(
            grade("model", Era::Legacy, false, &cursor),
            Some(Verdict::Warn)
        );
        // 2025-11-25 says nothing of -32601 for an unknown method: no verdict.
        let unknown = Violation::new(AspectId::J2Main, "-32600");
        assert_eq!(grade("model", Era::Legacy, true, &unknown), None);
        // The error model's rows fail, whatever their era's level.
        for a in [
            AspectId::T1Main,
            AspectId::R3Main,
            AspectId::P1Main,
            AspectId::J7Main,
        ] {
            assert_eq!(
                grade("model", Era::Modern, false, &Violation::new(a, "x")),
                Some(Verdict::Fail),
                "{a}"
            );
        }
        // A crash's text in a completion is the table's addition to the model.
        let completion = Violation::new(AspectId::U4ExceptionText, "KeyError");
        assert_eq!(grade("spec", Era::Modern, false, &completion), None);
        assert_eq!(
            grade("model", Era::Modern, false, &completion),
            Some(Verdict::Fail)
        );
    }

    #[test]
    fn described_warns_and_at_most_caps_every_profile_but_strict() {
        let described = Violation::new(AspectId::T5Main, "isError result");
        assert_eq!(
            grade("spec", Era::Modern, false, &described),
            Some(Verdict::Warn)
        );
        let capped = Violation::new(AspectId::T4InvalidParamsCode, "-32602");
        assert_eq!(
            grade("model", Era::Legacy, false, &capped),
            Some(Verdict::Warn)
        );
        let g = Grader {
            era: Era::Legacy,
            over_http: false,
            grading: Grading::Model,
            strict: true,
        };
        assert_eq!(g.grade(&capped, false), Some(Verdict::Fail));
    }

    #[test]
    fn a_sentence_that_binds_over_http_gives_no_verdict_over_stdio() {
        let v = Violation::new(AspectId::J2Main, "-32600");
        assert_eq!(grade("spec", Era::Modern, true, &v), Some(Verdict::Fail));
        assert_eq!(grade("spec", Era::Modern, false, &v), None);
    }

    #[test]
    fn changing_one_aspects_level_changes_exactly_the_verdicts_of_that_aspect() {
        let verdicts = || -> Vec<Option<Verdict>> {
            let mut out = Vec::new();
            for era in Era::ALL {
                for over_http in [false, true] {
                    let g = Grader {
                        era,
                        over_http,
                        grading: Grading::Spec,
                        strict: false,
                    };
                    for a in AspectId::ALL {
                        out.push(g.grade(&Violation::new(*a, "x"), false));
                    }
                }
            }
            out
        };
        let before = verdicts();
        for (i, a) in AspectId::ALL.iter().enumerate() {
            let era = Era::ALL[i % 2];
            let now = a.text(era).level;
            let other = if now.severity().is_some() {
                Level::None
            } else {
                Level::Must
            };
            crate::rules::LEVEL_OVERRIDE.set(Some((*a, era, other)));
            let after = verdicts();
            crate::rules::LEVEL_OVERRIDE.set(None);
            let changed: Vec<usize> = (0..before.len())
                .filter(|k| before[*k] != after[*k])
                .collect();
            let n = AspectId::ALL.len();
            let era_index = Era::ALL.iter().position(|e| *e == era).unwrap();
            let mine = |k: &usize| k % n == i && k / (2 * n) == era_index;
            assert!(!changed.is_empty(), "{a} in {era}: no verdict changed");
            assert!(
                changed.iter().all(mine),
                "{a} in {era}: other verdicts changed: {changed:?}"
            );
        }
    }

    #[test]
    fn a_json_rpc_sentence_is_quoted_as_json_rpc_s_bound_by_the_mcp_section() {
        for era in Era::ALL {
            let cite = crate::rules::RuleId::J4.cite(era);
            let want = format!(
                "JSON-RPC 2.0 §5 (bound by {era} basic/index#messages): \"When a rpc call is made"
            );
            assert!(cite.starts_with(&want), "{cite}");
            let own = AspectId::J1ErrorId.text(era).cite();
            assert!(own.starts_with(&format!("{era} ")), "MCP's own: {own}");
        }
    }

    #[test]
    fn a_stand_in_sentence_is_quoted_as_the_nearest_eras() {
        // No aspect of today's table needs a stand-in; the mechanism is kept
        // for an era whose page is not stored.
        let t = crate::rules::AspectText {
            era: Era::Modern,
            what: "x",
            level: crate::rules::Level::Should,
            sentence: "Servers **SHOULD** do x.",
            section: "basic/x#y",
            note: "",
            from_era: Some("2025-11-25"),
            quoted_from: None,
            at_most_warn: false,
            only_over: None,
            only_in: None,
            error_model: false,
        };
        let cite = t.cite();
        assert!(
            cite.starts_with("2025-11-25 basic/x#y: \"Servers"),
            "{cite}"
        );
        assert!(cite.contains("the 2026-07-28 page is not stored"), "{cite}");
    }
}
