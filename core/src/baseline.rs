//! Baselines: known failures that do not fail the run, by `case-id` or
//! `case-id:rule`. A listed case that no longer fails is stale (exit 1), so
//! a baseline can only shrink as a server improves.
//!
//! TOML: `expected = ["id", "id:RULE"]`. YAML (read with `serde_norway`, the
//! maintained fork of the deprecated `serde_yaml`): `expected: [...]`, or a bare list.

use mcperr_model::rules::RuleId;
use serde::Deserialize;

use crate::report::CaseResult;
use mcperr_model::verdict::Verdict;

/// A loaded baseline.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Baseline {
    /// Entries as written.
    pub entries: Vec<String>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Doc {
    Table { expected: Vec<String> },
    List(Vec<String>),
}

/// A baseline file that does not parse (the parser's own message).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BaselineError(pub String);

impl Baseline {
    /// Parses TOML (`.toml`) or YAML (anything else).
    pub fn parse(path: &str, text: &str) -> Result<Baseline, BaselineError> {
        let doc: Doc = if path.ends_with(".toml") {
            toml::from_str(text).map_err(|e| BaselineError(e.to_string()))?
        } else {
            serde_norway::from_str(text).map_err(|e| BaselineError(e.to_string()))?
        };
        let entries = match doc {
            Doc::Table { expected } | Doc::List(expected) => expected,
        };
        Ok(Baseline { entries })
    }

    /// Whether a fuzz finding (`id`, broken `rule`) is listed: by its id,
    /// or as `id:rule`.
    pub fn lists_finding(&self, id: &str, rule: RuleId) -> bool {
        self.entries
            .iter()
            .any(|e| e == id || e.rsplit_once(':') == Some((id, rule.as_str())))
    }

    fn covers(entry: &str, case: &CaseResult) -> bool {
        match entry.rsplit_once(':') {
            Some((id, rule)) if id == case.id && case.rule == rule => true,
            _ => entry == case.id,
        }
    }

    /// Marks baselined failures; returns the stale entries: listed, run and
    /// not failing, or naming no case at all (`known`: every case id there is).
    pub fn apply(
        &self,
        cases: &mut [CaseResult],
        known: &std::collections::HashSet<String>,
    ) -> Vec<String> {
        let mut stale = Vec::new();
        for entry in &self.entries {
            let id = entry.rsplit_once(':').map_or(entry.as_str(), |(id, _)| id);
            if !known.contains(id) && !known.contains(entry.as_str()) {
                stale.push(crate::report::stale::names_no_case(entry));
                continue;
            }
            let mut ran = false;
            let mut failing = false;
            for c in cases
                .iter_mut()
                .filter(|c| c.id == entry.as_str() || c.id == id)
            {
                ran |= c.verdict != Verdict::Skip;
                if matches!(c.verdict, Verdict::Fail | Verdict::Error) && Self::covers(entry, c) {
                    c.baselined = true;
                    failing = true;
                }
            }
            if ran && !failing {
                stale.push(entry.clone());
            }
        }
        stale
    }
}
