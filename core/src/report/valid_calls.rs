//! What became of a run's generated valid calls, counted for its summary.

use serde::{Deserialize, Serialize};

use super::RunReport;
use mcperr_model::verdict::Verdict;

/// How the message of a generated valid call starts when the tool takes
/// no arguments and reported its own failure (written by the executor).
pub const TOOL_FAILED: &str =
    "the tool takes no arguments, so its isError result is its own failure";

/// How many generated valid calls (`generated/tools/<name>/valid-call`)
/// the tool accepted, refused with every argument set tried, or answered in
/// a way that broke a rule, and how many tools got none because the run may
/// not run their bodies.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ValidCallOutcomes {
    /// Accepted: the case passed.
    pub succeeded: usize,
    /// A tool without arguments that ran and reported its own failure (an
    /// `isError` result): its answer judged, nothing to vary, and no T8 pass
    /// (a skip: a failure shows no success).
    pub tool_failed: usize,
    /// Refused every argument set: a skip that says so.
    pub refused: usize,
    /// The answer broke a rule (a fail, warning or error).
    pub judged_wrong: usize,
    /// Tools called with invalid arguments only (not read-only; `--tools`,
    /// `--allow-additive` or `--allow-destructive` changes it).
    pub not_allowed: usize,
}

impl ValidCallOutcomes {
    /// The counts of `report`'s cases and tools.
    pub fn of(report: &RunReport) -> ValidCallOutcomes {
        let mut o = ValidCallOutcomes {
            not_allowed: report.valid_calls.iter().filter(|t| !t.valid).count(),
            ..Default::default()
        };
        let valid_calls = report
            .cases
            .iter()
            .filter(|c| c.id.starts_with("generated/tools/") && c.id.ends_with("/valid-call"));
        for c in valid_calls {
            match c.verdict {
                _ if c.message.starts_with(TOOL_FAILED) => o.tool_failed += 1,
                Verdict::Pass => o.succeeded += 1,
                Verdict::Skip => o.refused += 1,
                _ => o.judged_wrong += 1,
            }
        }
        o
    }
}
