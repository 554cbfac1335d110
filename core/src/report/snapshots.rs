//! What `--snapshots DIR` did with a run's transcripts, kept in the run's
//! JSON report, so that CI (the GitHub Action's job summary) reads the
//! outcome from the report rather than from the terminal or the folder.

use serde::{Deserialize, Serialize};

/// One run's snapshots: how many matched the accepted ones, which were new
/// or changed, and how many of those were accepted in place.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SnapshotOutcome {
    /// The run's column under the snapshots folder (`DIR/stdio-2026-07-28`).
    pub column: String,
    /// Snapshots equal to the accepted ones.
    pub unchanged: usize,
    /// Snapshots with no accepted file yet, relative to the snapshots folder.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub new: Vec<String>,
    /// Snapshots that differ from the accepted file.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changed: Vec<String>,
    /// How the new and changed ones were written (insta's update mode and
    /// what it did: pending `.snap.new` files, accepted in place, or not
    /// written).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub written: String,
    /// How many of the new and changed were accepted in place; the others
    /// fail the run.
    #[serde(default)]
    pub accepted: usize,
}
