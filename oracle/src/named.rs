//! The registry of the named checks a case can ask for (`checks = [...]`):
//! each [`NamedCheck`] says what it reads, which aspect its failure breaks,
//! and the function that judges; listed once, in [`NAMED_CHECKS`].
//!
//! Why a list: the judge, the HTTP-answer judge, the auth judge and the
//! test that every aspect of the table is used all read the same entry,
//! instead of a `match` on the check in each of them. A check's name and
//! its place in the order are declared once too, in the case format
//! (`mcperr_cases::case::Check`); a test here proves every one of them has
//! exactly one entry.

use serde_json::Value;

use super::checks::{self, Evidence};
use mcperr_cases::case::{Case, Check};
use mcperr_model::rules::AspectId;
use mcperr_wire::exchange::Exchange;

/// What a check that reads a JSON-RPC answer is given.
pub struct Answer<'a> {
    /// The exchange judged.
    pub exchange: &'a Exchange,
    /// Its answer.
    pub response: &'a Value,
    /// The run's canary: a crash's planted secret.
    pub canary: &'a str,
    /// The called tool's `outputSchema`, when it has one.
    pub output_schema: Option<&'a Value>,
    /// What the executor gathered around the exchange.
    pub evidence: &'a Evidence,
}

/// Which aspect a failed check breaks.
pub enum Breaks {
    /// The case's own aspect.
    CaseOwn,
    /// This aspect, whatever the case.
    Aspect(AspectId),
    /// The aspect of this name in the case's rule where it has one (a
    /// check shared by the tools, resources and prompts rows), else the
    /// case's own.
    InCaseRule(&'static str),
}

/// What a check reads, and the function that judges it.
pub enum Reads {
    /// The JSON-RPC answer: `Some(why)` when the check fails.
    Answer(fn(&Answer) -> Option<String>),
    /// The judged HTTP answer itself, a GET's stream, which holds no
    /// JSON-RPC response: each failure with the aspect it breaks.
    HttpAnswer(fn(&Exchange, &Evidence) -> Vec<(AspectId, String)>),
    /// An HTTP refusal (401, 403), judged by [`super::auth::violations`].
    Refusal,
}

/// One named check.
pub struct NamedCheck {
    /// The check, as a case file names it.
    pub check: Check,
    /// The aspect its failure breaks (a refusal's and an HTTP answer's
    /// checks name theirs with each failure).
    pub breaks: Breaks,
    /// What it reads.
    pub reads: Reads,
}

impl NamedCheck {
    /// The aspect a failure of this check breaks in `case`.
    pub fn aspect(&self, case: &Case) -> AspectId {
        match self.breaks {
            Breaks::CaseOwn => case.aspect_id(),
            Breaks::Aspect(aspect) => aspect,
            Breaks::InCaseRule(name) => {
                AspectId::find(case.rule_id(), name).unwrap_or_else(|| case.aspect_id())
            }
        }
    }
}

impl NamedCheck {
    /// What its failure breaks, in words, for the case format's list.
    pub fn breaks_text(&self) -> String {
        match (&self.breaks, &self.reads) {
            (_, Reads::Refusal) => {
                "judged on the HTTP refusal, with the A1 aspect each failure names".into()
            }
            (Breaks::Aspect(aspect), Reads::HttpAnswer(_)) => {
                format!("judged on the HTTP answer; `{aspect}` and the aspects its failures name")
            }
            (Breaks::Aspect(aspect), _) => format!("breaks `{aspect}`"),
            (Breaks::InCaseRule(name), _) => {
                format!(
                    "breaks the case rule's `{name}` aspect where it has one, else the case's own"
                )
            }
            (Breaks::CaseOwn, _) => "breaks the case's own aspect".into(),
        }
    }
}

/// The entry of `check`.
pub fn entry(check: Check) -> &'static NamedCheck {
    NAMED_CHECKS
        .iter()
        .find(|e| e.check == check)
        .expect("every named check has an entry (tested)")
}

/// Every named check, in the case format's order.
pub const NAMED_CHECKS: &[NamedCheck] = &[
    NamedCheck {
        check: Check::NoCanary,
        breaks: Breaks::InCaseRule("exception-text"),
        reads: Reads::Answer(|a| checks::canary_or_stack(a.exchange, a.response, a.canary)),
    },
    NamedCheck {
        check: Check::BodyNeverRan,
        breaks: Breaks::Aspect(AspectId::T4ValidateInputs),
        reads: Reads::Answer(|a| checks::body_never_ran(a.evidence)),
    },
    NamedCheck {
        check: Check::LogNoTraceback,
        breaks: Breaks::CaseOwn,
        reads: Reads::Answer(|a| checks::log_no_traceback(a.evidence)),
    },
    NamedCheck {
        check: Check::LogCrashTraceback,
        breaks: Breaks::CaseOwn,
        reads: Reads::Answer(|a| checks::crash_logged(a.exchange, a.evidence)),
    },
    NamedCheck {
        check: Check::StructuredOutput,
        breaks: Breaks::CaseOwn,
        reads: Reads::Answer(|a| checks::structured_output(a.response, a.output_schema)),
    },
    NamedCheck {
        check: Check::NoEmptyContents,
        breaks: Breaks::InCaseRule("no-empty-contents"),
        reads: Reads::Answer(|a| checks::empty_contents(a.response)),
    },
    NamedCheck {
        check: Check::NoRetiredCode,
        breaks: Breaks::InCaseRule("retired-32002"),
        reads: Reads::Answer(|a| checks::retired_code(a.response)),
    },
    NamedCheck {
        check: Check::SessionIdAscii,
        breaks: Breaks::Aspect(AspectId::H2SessionIdAscii),
        reads: Reads::Answer(|a| checks::session_id_ascii(a.exchange)),
    },
    NamedCheck {
        check: Check::SessionIdRandom,
        breaks: Breaks::Aspect(AspectId::H2SessionIdRandom),
        reads: Reads::Answer(|a| checks::session_id_random(a.exchange, a.evidence)),
    },
    NamedCheck {
        check: Check::BearerChallenge,
        breaks: Breaks::CaseOwn,
        reads: Reads::Refusal,
    },
    NamedCheck {
        check: Check::ChallengeScope,
        breaks: Breaks::CaseOwn,
        reads: Reads::Refusal,
    },
    NamedCheck {
        check: Check::NoResult,
        breaks: Breaks::CaseOwn,
        reads: Reads::Refusal,
    },
    NamedCheck {
        check: Check::ResourceMetadata,
        breaks: Breaks::CaseOwn,
        reads: Reads::Refusal,
    },
    NamedCheck {
        check: Check::ExitOnEof,
        breaks: Breaks::Aspect(AspectId::J5ExitOnEof),
        reads: Reads::Answer(|a| checks::still_running(a.evidence)),
    },
    NamedCheck {
        check: Check::NamesVersions,
        breaks: Breaks::CaseOwn,
        reads: Reads::Answer(|a| checks::names_no_version(a.response)),
    },
    NamedCheck {
        check: Check::NoRequestsBeforeInitialized,
        breaks: Breaks::Aspect(AspectId::L1NoRequestsBeforeInitialized),
        reads: Reads::Answer(|a| checks::request_before_initialized(a.exchange)),
    },
    NamedCheck {
        check: Check::TaskListed,
        breaks: Breaks::Aspect(AspectId::K1Listed),
        reads: Reads::Answer(|a| checks::task_listed(a.evidence)),
    },
    NamedCheck {
        check: Check::AlsoText,
        breaks: Breaks::Aspect(AspectId::T8AlsoText),
        reads: Reads::Answer(|a| super::structured::also_text(a.response, &a.exchange.request)),
    },
    NamedCheck {
        check: Check::ErrorAsSuccess,
        breaks: Breaks::Aspect(AspectId::T9Main),
        reads: Reads::Answer(|a| {
            super::structured::error_as_success(a.response, &a.exchange.request)
        }),
    },
    NamedCheck {
        check: Check::BodyRanOnValue,
        breaks: Breaks::Aspect(AspectId::T4ValidateInputs),
        reads: Reads::Answer(|a| {
            super::stringified::body_ran_on_value(a.response, &a.exchange.request)
        }),
    },
    NamedCheck {
        check: Check::NotUrlRequired,
        breaks: Breaks::Aspect(AspectId::E1UrlRequiredOnlyWhenNeeded),
        reads: Reads::Answer(|a| checks::url_required(a.response)),
    },
    NamedCheck {
        check: Check::ArgumentsInert,
        breaks: Breaks::Aspect(AspectId::P2InputsInert),
        reads: Reads::Answer(|a| checks::arguments_inert(a.response, &a.exchange.request)),
    },
    NamedCheck {
        check: Check::GetStreamQuiet,
        breaks: Breaks::Aspect(AspectId::H1GetStreamNoResponse),
        reads: Reads::HttpAnswer(checks::get_stream),
    },
    NamedCheck {
        check: Check::ResumedOwnStream,
        breaks: Breaks::Aspect(AspectId::H1NoReplayOtherStream),
        reads: Reads::HttpAnswer(checks::resumed_stream),
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_named_check_has_exactly_one_entry_in_the_case_format_s_order() {
        let listed: Vec<Check> = NAMED_CHECKS.iter().map(|e| e.check).collect();
        assert_eq!(listed, Check::ALL);
    }
}
