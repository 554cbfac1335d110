//! Reports of a run: the terminal, JSON (DESIGN.md §5), JUnit XML and HTML.

pub mod html;
pub mod junit;
pub mod terminal;

use serde::Serialize;
use serde_json::{json, Value};

use crate::oracle::Verdict;
use crate::runner::CaseResult;

/// Everything a run found.
#[derive(Debug, Clone, Serialize)]
pub struct RunReport {
    /// What was tested (`{"kind": "stdio", "command": ...}`).
    pub target: Value,
    /// The negotiated era.
    pub era: String,
    /// The profile's name.
    pub profile: String,
    /// One result per case.
    pub cases: Vec<CaseResult>,
    /// Baseline entries that no longer fail.
    #[serde(skip)]
    pub stale_baseline: Vec<String>,
}

/// Counts per verdict.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// Passing cases.
    pub pass: usize,
    /// Failing cases (baselined ones included).
    pub fail: usize,
    /// Warnings.
    pub warn: usize,
    /// Skipped cases.
    pub skip: usize,
    /// Cases that could not be judged.
    pub error: usize,
}

impl RunReport {
    /// Counts per verdict.
    pub fn summary(&self) -> Summary {
        let mut s = Summary::default();
        for c in &self.cases {
            match c.verdict {
                Verdict::Pass => s.pass += 1,
                Verdict::Fail => s.fail += 1,
                Verdict::Warn => s.warn += 1,
                Verdict::Skip => s.skip += 1,
                Verdict::Error => s.error += 1,
            }
        }
        s
    }

    /// Failures and errors that are not baselined.
    pub fn unexpected(&self) -> impl Iterator<Item = &CaseResult> {
        self.cases
            .iter()
            .filter(|c| matches!(c.verdict, Verdict::Fail | Verdict::Error) && !c.baselined)
    }

    /// The process exit code: 0 clean, 1 an unexpected failure or a stale baseline entry.
    pub fn exit_code(&self) -> i32 {
        if self.unexpected().next().is_some() || !self.stale_baseline.is_empty() {
            1
        } else {
            0
        }
    }

    /// The JSON report (DESIGN.md §5).
    pub fn to_json(&self) -> Value {
        let mut v = serde_json::to_value(self).expect("reports serialize");
        v["summary"] = serde_json::to_value(self.summary()).expect("summary serializes");
        for (c, out) in self
            .cases
            .iter()
            .zip(v["cases"].as_array_mut().expect("cases array"))
        {
            if c.baselined {
                out["baselined"] = json!(true);
            }
        }
        if !self.stale_baseline.is_empty() {
            v["stale_baseline"] = json!(self.stale_baseline);
        }
        v
    }
}
