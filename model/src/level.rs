//! How strongly the spec words a requirement, and the verdict a deviation
//! from it gets under the `spec` profile.

use serde::Deserialize;

use crate::verdict::Verdict;

/// How strongly the spec text words a requirement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum Level {
    /// MUST.
    #[serde(rename = "MUST")]
    Must,
    /// MUST NOT.
    #[serde(rename = "MUST NOT")]
    MustNot,
    /// SHOULD.
    #[serde(rename = "SHOULD")]
    Should,
    /// SHOULD NOT.
    #[serde(rename = "SHOULD NOT")]
    ShouldNot,
    /// MAY.
    #[serde(rename = "MAY")]
    May,
    /// The era's spec states the behaviour as fact, without an RFC 2119
    /// keyword ("unknown tools … are returned as standard JSON-RPC errors").
    #[serde(rename = "described")]
    Described,
    /// The text says neither.
    #[serde(rename = "none")]
    None,
}

impl Level {
    /// The verdict a deviation gets under the `spec` profile: MUST → fail,
    /// SHOULD and `described` → warn, anything weaker → no verdict (`None`).
    pub fn severity(self) -> Option<Verdict> {
        match self {
            Level::Must | Level::MustNot => Some(Verdict::Fail),
            Level::Should | Level::ShouldNot | Level::Described => Some(Verdict::Warn),
            Level::May | Level::None => None,
        }
    }

    /// The level as the table writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Must => "MUST",
            Level::MustNot => "MUST NOT",
            Level::Should => "SHOULD",
            Level::ShouldNot => "SHOULD NOT",
            Level::May => "MAY",
            Level::Described => "described",
            Level::None => "none",
        }
    }
}
