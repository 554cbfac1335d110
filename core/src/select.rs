//! Which cases a run makes: the built-in case files plus the cases generated
//! from the server's own schemas, filtered by `--cases`, `--tools`,
//! transport and era, each either to run or skipped with its reason.

use globset::{Glob, GlobSet, GlobSetBuilder};
use mcperr_protocol::Era;
use serde_json::Value;

use crate::case::{self, Case, CaseError};
use crate::discovery::Discovery;
use crate::generate;

/// What the user selected.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// `--cases` globs over case ids (empty: all).
    pub cases: Vec<String>,
    /// `--tools` globs over tool names (empty: all).
    pub tools: Vec<String>,
    /// `--allow-destructive`: call tools annotated `destructiveHint: true`.
    pub allow_destructive: bool,
}

/// A selection that cannot be used (exit code 2).
#[derive(Debug, thiserror::Error)]
pub enum SelectError {
    /// A glob did not parse.
    #[error("{flag} {glob:?}: {message}")]
    BadGlob {
        /// The flag it came from.
        flag: &'static str,
        /// The glob.
        glob: String,
        /// Why.
        message: String,
    },
    /// `--cases` matched nothing.
    #[error("--cases {0:?} matches no case")]
    NoCase(Vec<String>),
    /// A built-in case file is broken.
    #[error(transparent)]
    Case(#[from] CaseError),
}

/// A case of the run: `Ok` to run it, `Err` with the reason to skip it.
pub type Planned = (Case, Result<(), String>);

fn globs(patterns: &[String], flag: &'static str) -> Result<Option<GlobSet>, SelectError> {
    if patterns.is_empty() {
        return Ok(None);
    }
    let mut b = GlobSetBuilder::new();
    for p in patterns {
        b.add(Glob::new(p).map_err(|e| SelectError::BadGlob {
            flag,
            glob: p.clone(),
            message: e.to_string(),
        })?);
    }
    b.build().map(Some).map_err(|e| SelectError::BadGlob {
        flag,
        glob: patterns.join(","),
        message: e.to_string(),
    })
}

impl Selection {
    /// Checks the globs without a server (so a typo fails before anything starts).
    pub fn validate(&self) -> Result<(), SelectError> {
        globs(&self.cases, "--cases")?;
        globs(&self.tools, "--tools")?;
        Ok(())
    }

    /// Whether a `tools/list` entry may be called in this run.
    fn callable(&self, filter: &Option<GlobSet>, tool: &Value) -> bool {
        let name = tool.get("name").and_then(Value::as_str).unwrap_or("");
        let chosen = filter.as_ref().is_none_or(|g| g.is_match(name));
        chosen && (self.allow_destructive || !generate::is_destructive(tool))
    }

    /// Every case id this server could have in a run: the built-in ones and
    /// those generated from its tools (for baselines: an entry naming none is stale).
    pub fn known_ids(discovery: &Discovery) -> Result<Vec<String>, SelectError> {
        Ok(case::builtin_cases()?
            .into_iter()
            .chain(discovery.tools.iter().flat_map(generate::t4_cases))
            .map(|c| c.id)
            .collect())
    }

    /// The cases of a run in order, each to run or skipped with its reason.
    pub fn plan(
        &self,
        discovery: &Discovery,
        era: Era,
        http: bool,
    ) -> Result<Vec<Planned>, SelectError> {
        let case_filter = globs(&self.cases, "--cases")?;
        let tool_filter = globs(&self.tools, "--tools")?;
        let mut cases = case::builtin_cases()?;
        cases.sort_by(|a, b| a.id.cmp(&b.id));
        for tool in discovery
            .tools
            .iter()
            .filter(|t| self.callable(&tool_filter, t))
        {
            cases.extend(generate::t4_cases(tool));
        }
        let excluded: Vec<String> = discovery
            .tools
            .iter()
            .filter(|t| !self.callable(&tool_filter, t))
            .filter_map(|t| {
                t.get("name")
                    .and_then(|n| n.as_str())
                    .map(|n| format!("tool:{n}"))
            })
            .collect();
        let mut out = Vec::new();
        for case in cases {
            if case_filter.as_ref().is_some_and(|g| !g.is_match(&case.id)) {
                continue;
            }
            if case.transport_ok(http).is_err() || !case.eras().unwrap_or_default().contains(&era) {
                continue; // another transport's or era's case: not about this run
            }
            let mut verdict = discovery.applies(&case, era);
            if verdict.is_ok() {
                if let Some(n) = case.needs.iter().find(|n| excluded.contains(n)) {
                    verdict = Err(format!(
                        "{n} is excluded (--tools, or destructiveHint without --allow-destructive)"
                    ));
                }
            }
            out.push((case, verdict));
        }
        if out.is_empty() {
            return Err(SelectError::NoCase(self.cases.clone()));
        }
        Ok(out)
    }
}
