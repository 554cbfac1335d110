//! The verdicts a case can get. A leaf module: the rule table, profiles,
//! the oracle and the reports all name verdicts.

use serde::{Deserialize, Serialize};

/// A case's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// The rule holds.
    Pass,
    /// A SHOULD is broken, or a known ambiguity.
    Warn,
    /// A MUST or the profile's exact rule is broken.
    Fail,
    /// The server lacks what the case needs; never counted as a pass.
    Skip,
    /// No answer could be judged.
    Error,
}

impl Verdict {
    /// The lowercase name used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Warn => "warn",
            Verdict::Fail => "fail",
            Verdict::Skip => "skip",
            Verdict::Error => "error",
        }
    }

    /// How strongly a violation with this verdict decides a case: a
    /// failure outranks an unanswered request, which outranks a warning.
    pub fn weight(self) -> u8 {
        match self {
            Verdict::Fail => 3,
            Verdict::Error => 2,
            Verdict::Warn => 1,
            Verdict::Pass | Verdict::Skip => 0,
        }
    }
}
