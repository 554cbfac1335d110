//! Which cases a run makes: the built-in case files plus the cases generated
//! from the server's own schemas, filtered by `--cases`, `--tools`,
//! transport and era, each either to run or skipped with its reason.

use globset::{Glob, GlobSet, GlobSetBuilder};
use mcperr_protocol::Era;
use serde_json::Value;

use crate::case::{self, Case, CaseError};
use crate::discovery::Discovery;
use crate::generate;

mod cast;

/// What the user selected.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// `--cases` globs over case ids (empty: all).
    pub cases: Vec<String>,
    /// `--tools` globs over tool names (empty: all).
    pub tools: Vec<String>,
    /// `--allow-destructive`: call tools annotated `destructiveHint: true`,
    /// and give valid calls to every tool that may write.
    pub allow_destructive: bool,
    /// `--allow-additive`: give valid calls to tools annotated
    /// `destructiveHint: false` (they write, but destroy nothing).
    pub allow_additive: bool,
    /// Case files given with `--cases-dir` (saved fuzz findings, a user's
    /// own cases): when there are any, they are the run's cases instead of
    /// the built-in and generated ones.
    pub files: Vec<Case>,
    /// `--auth-required`: the server is protected; the `auth:required`
    /// cases run (A1).
    pub auth_required: bool,
    /// `--auth-limited-header`'s value (`Bearer TOKEN`), a token with too
    /// few scopes: the `auth:limited` cases run, with it as `{{auth_limited}}`.
    pub auth_limited: Option<String>,
    /// The players the user named (`--part`, a parts file): naming a tool
    /// for a part is consent to call it with the arguments given.
    pub parts: crate::parts::Cast,
    /// `--no-probe`: make no probing valid calls; parts come from the
    /// names, the listings and the Bookshop contract alone.
    pub no_probe: bool,
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
    /// A part's named player is not on the server.
    #[error(transparent)]
    Part(#[from] crate::parts::PartError),
}

/// A case of the run: `Ok` to run it, `Err` with the reason to skip it.
pub type Planned = (Case, Result<(), crate::case::Skip>);

/// A tool the run will not call, and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LeftOut {
    /// The tool's name.
    pub name: String,
    /// Why it is not called.
    pub reason: String,
}

/// The block that says which tools get valid calls and which only invalid
/// ones, and why, printed at the start of `run`, `fuzz` and `list`.
pub fn tool_calls_block(calls: &[ToolCalls], left_out: &[LeftOut]) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    if calls.is_empty() && left_out.is_empty() {
        return out;
    }
    let _ = writeln!(out, "Tools:");
    for c in calls {
        let _ = writeln!(out, "  {}: {} ({})", c.name, c.how(), c.reason);
    }
    for l in left_out {
        let _ = writeln!(out, "  {}: not called ({})", l.name, l.reason);
    }
    out
}

/// How a tool that is called at all is called: with valid arguments too
/// (its body runs), or only with invalid ones (rejected before the body, if
/// the server validates), and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ToolCalls {
    /// The tool's name.
    pub name: String,
    /// Whether valid arguments are sent to it.
    pub valid: bool,
    /// Why (its annotation, or the flag), and the flag that changes it.
    pub reason: String,
    /// For a tool that may write and was allowed valid calls: how many a
    /// campaign sends it at most, per era and job (a run sends a few).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid_limit: Option<u64>,
}

impl ToolCalls {
    /// How the tool is called, in words: `valid and invalid calls`,
    /// `invalid calls only`, or with the cap of valid calls a campaign sends.
    pub fn how(&self) -> String {
        match (self.valid, self.valid_limit) {
            (true, Some(n)) => {
                format!("valid calls (at most {n} per era and job in fuzz) and invalid calls")
            }
            (true, None) => "valid and invalid calls".into(),
            (false, _) => "invalid calls only".into(),
        }
    }
}

/// How many valid calls a campaign sends a tool that may write (allowed by
/// `--tools`, `--allow-additive` or `--allow-destructive`), per era and job:
/// enough to judge its answers, not thousands of writes.
pub const WRITE_CALLS_PER_ERA: u64 = 16;

/// The cases of a run, the tools left out, and the values of the run's
/// placeholders that discovery decides (`{{tool}}`).
#[derive(Debug, Clone)]
pub struct RunPlan {
    /// The cases in order, each to run or skipped with its reason.
    pub cases: Vec<Planned>,
    /// Every tool that is not called, with the reason.
    pub left_out: Vec<LeftOut>,
    /// Every tool that is called, and whether with valid arguments.
    pub tool_calls: Vec<ToolCalls>,
    /// Placeholder values (`tool`: a tool that may be called;
    /// `part.NAME.…`: who plays each part).
    pub vars: Vec<(String, Value)>,
}

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

    /// Why a `tools/list` entry may not be called in this run at all, if it
    /// may not: `--tools` leaves it out, or it is destructive.
    fn not_chosen(&self, filter: &Option<GlobSet>, tool: &Value) -> Option<String> {
        let name = tool.get("name").and_then(Value::as_str).unwrap_or("");
        if filter.as_ref().is_some_and(|g| !g.is_match(name)) {
            return Some("not selected by --tools".into());
        }
        if generate::is_destructive(tool) && !self.allow_destructive {
            return Some(
                "annotated destructiveHint: true (call it with --allow-destructive)".into(),
            );
        }
        None
    }

    /// Why a `tools/list` entry may not be called in this run's generated
    /// calls: [`Selection::not_chosen`], or it may only be called as a task
    /// (the scripted cases of fixtures/cases/tasks call it as one).
    fn left_out(&self, filter: &Option<GlobSet>, tool: &Value) -> Option<String> {
        self.not_chosen(filter, tool).or_else(|| {
            generate::task_required(tool).then(|| {
                "execution.taskSupport is \"required\": it may only be called as a task, which only the tasks/* cases do".into()
            })
        })
    }

    /// How `tool` (not left out) is called. Valid arguments run its body, so
    /// they go to tools annotated `readOnlyHint: true`, and to a tool that
    /// may write only by a stated choice: named with `--tools`, additive
    /// (`destructiveHint: false`: it still writes, e.g. stores an entity)
    /// with `--allow-additive`, any with `--allow-destructive`. The spec
    /// presumes an un-annotated tool destructive. A tool that may write and
    /// was allowed gets at most [`WRITE_CALLS_PER_ERA`] valid calls per era
    /// in a campaign. Every other tool gets only arguments its own schema
    /// rejects.
    fn calls(&self, filter: &Option<GlobSet>, tool: &Value) -> ToolCalls {
        let name = tool
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_string();
        let read_only = generate::is_read_only(tool);
        let additive =
            !read_only && tool.pointer("/annotations/destructiveHint") == Some(&Value::Bool(false));
        let call = |valid: bool, reason: &str| ToolCalls {
            name: name.clone(),
            valid,
            reason: reason.into(),
            valid_limit: (valid && !read_only).then_some(WRITE_CALLS_PER_ERA),
        };
        if read_only {
            call(true, "annotated readOnlyHint: true")
        } else if filter.is_some() {
            call(true, "selected by --tools; it may write")
        } else if additive && self.allow_additive {
            call(
                true,
                "annotated destructiveHint: false (additive: it writes), allowed by --allow-additive",
            )
        } else if self.allow_destructive {
            call(true, "allowed by --allow-destructive; it may write")
        } else if additive {
            call(
                false,
                "annotated destructiveHint: false: additive, it still writes; --allow-additive or --tools NAME runs its body",
            )
        } else {
            call(
                false,
                "not annotated readOnlyHint: true, so the spec presumes it destructive; --tools NAME or --allow-destructive runs its body",
            )
        }
    }

    /// How every tool not left out is called.
    fn all_calls(&self, discovery: &Discovery, filter: &Option<GlobSet>) -> Vec<ToolCalls> {
        discovery
            .tools
            .iter()
            .filter(|t| self.left_out(filter, t).is_none())
            .map(|t| self.calls(filter, t))
            .collect()
    }

    /// Every case id this server could have in a run: the built-in ones and
    /// those generated from what it lists (for baselines: an entry naming
    /// none is stale).
    pub fn known_ids(discovery: &Discovery) -> Result<Vec<String>, SelectError> {
        let all = Selection {
            allow_destructive: true,
            ..Default::default()
        };
        Ok(case::builtin_cases()?
            .into_iter()
            .chain(all.generated(discovery, &None))
            .map(|c| c.id)
            .collect())
    }

    /// The tools a fuzz run may call, how each is called (valid arguments
    /// by consent, [`ToolCalls`]), and those left out with why, by the same
    /// rules as a run.
    #[allow(clippy::type_complexity)]
    pub fn fuzzable_tools(
        &self,
        discovery: &Discovery,
    ) -> Result<(Vec<Value>, Vec<ToolCalls>, Vec<LeftOut>), SelectError> {
        let filter = globs(&self.tools, "--tools")?;
        let mut tools = Vec::new();
        let mut left_out = Vec::new();
        for t in &discovery.tools {
            match self.left_out(&filter, t) {
                None => tools.push(t.clone()),
                Some(reason) => left_out.push(LeftOut {
                    name: t
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or("?")
                        .to_string(),
                    reason,
                }),
            }
        }
        let calls = self.all_calls(discovery, &filter);
        Ok((tools, calls, left_out))
    }

    /// The cases generated from what the server lists.
    fn generated(&self, discovery: &Discovery, tool_filter: &Option<GlobSet>) -> Vec<Case> {
        let mut out = Vec::new();
        for tool in &discovery.tools {
            if self.left_out(tool_filter, tool).is_some() {
                continue;
            }
            // A sample call runs the tool for real: only by consent.
            let valid = self.calls(tool_filter, tool).valid;
            out.extend(generate::t4_cases(tool, valid));
            if valid {
                // Tried with the real values the server named first.
                let tool = generate::harvest::enrich(tool, &discovery.harvest);
                out.extend(generate::valid_call(&tool));
            }
        }
        // A template that plays a part is judged by that part's cases, with
        // the part's own expectation (a crash, a failing backend).
        let builtin = case::builtin_cases().unwrap_or_default();
        let scripted = |t: &Value| {
            let tpl = t.get("uriTemplate").and_then(Value::as_str).unwrap_or("");
            let prefix = &tpl[..tpl.find('{').unwrap_or(tpl.len())];
            let need = format!("template:{tpl}");
            builtin.iter().any(|c| c.needs.contains(&need))
                || discovery.parts.iter().any(|(name, p)| {
                    crate::parts::PartDef::named(name)
                        .is_some_and(|d| d.kind == crate::parts::Kind::Resource)
                        && !prefix.is_empty()
                        && p.plays.starts_with(prefix)
                })
        };
        if let Some(model) = builtin.iter().find(|c| c.id == generate::NOT_FOUND_MODEL) {
            for t in discovery.templates.iter().filter(|t| !scripted(t)) {
                out.extend(generate::template_not_found(t, model));
            }
        }
        for t in &discovery.templates {
            out.extend(generate::template_empty_value(t, &discovery.resources));
        }
        out.extend(discovery.resources.iter().filter_map(generate::static_read));
        out.extend(discovery.prompts.iter().flat_map(generate::prompt_cases));
        out
    }

    /// Whether the run's flags let an `auth:*` case run: `auth:required`
    /// ones are not even listed without `--auth-required` (never guessed).
    fn auth_applies(&self, case: &Case) -> Result<(), crate::case::Skip> {
        if self.auth_limited.is_none() && case.needs.iter().any(|n| n == "auth:limited") {
            return Err(crate::case::Skip(
                "needs a token with too few scopes: --auth-limited-header \"Authorization: Bearer TOKEN\"".into(),
            ));
        }
        Ok(())
    }

    /// The cases of a run in order, each to run or skipped with its reason.
    pub fn plan(
        &self,
        discovery: &Discovery,
        era: Era,
        http: bool,
    ) -> Result<RunPlan, SelectError> {
        let case_filter = globs(&self.cases, "--cases")?;
        let tool_filter = globs(&self.tools, "--tools")?;
        let mut cases = if self.files.is_empty() {
            let mut c = case::builtin_cases()?;
            c.sort_by(|a, b| a.id.cmp(&b.id));
            c.extend(self.generated(discovery, &tool_filter));
            c
        } else {
            self.files.clone()
        };
        // A case file cannot carry a tool's outputSchema: the server's own listing does.
        for case in cases.iter_mut().filter(|c| c.output_schema.is_none()) {
            let wants = case.checks.iter().any(|c| c == "structured-output");
            let name = case
                .request
                .params
                .as_ref()
                .and_then(|p| p.get("name"))
                .and_then(Value::as_str)
                .map(|n| played_by(n, discovery));
            if let (true, Some(name)) = (wants, name) {
                case.output_schema = discovery
                    .tools
                    .iter()
                    .find(|t| t.get("name").and_then(Value::as_str) == Some(name))
                    .and_then(|t| t.get("outputSchema").cloned());
            }
        }
        let listed = |why: &dyn Fn(&Value) -> Option<String>| -> Vec<LeftOut> {
            discovery
                .tools
                .iter()
                .filter_map(|t| {
                    let name = t.get("name").and_then(Value::as_str)?.to_string();
                    why(t).map(|reason| LeftOut { name, reason })
                })
                .collect()
        };
        // Scripted cases may name a tool that only a task may call (tasks/*).
        let not_chosen = listed(&|t| self.not_chosen(&tool_filter, t));
        let left_out = listed(&|t| self.left_out(&tool_filter, t));
        let tool_calls = self.all_calls(discovery, &tool_filter);
        // `{{tool}}`: a tool the run may call, read-only ones first.
        let callable: Vec<&Value> = discovery
            .tools
            .iter()
            .filter(|t| self.left_out(&tool_filter, t).is_none())
            .collect();
        let any_tool = callable
            .iter()
            .find(|t| generate::is_read_only(t))
            .or(callable.first())
            .and_then(|t| t.get("name").and_then(Value::as_str));
        let mut out = Vec::new();
        for case in cases {
            if case_filter.as_ref().is_some_and(|g| !g.is_match(&case.id)) {
                continue;
            }
            if case.transport_ok(http).is_err() || !case.eras().unwrap_or_default().contains(&era) {
                continue; // another transport's or era's case: not about this run
            }
            if !self.auth_required && case.needs.iter().any(|n| n.starts_with("auth:")) {
                continue; // a protected server's case: only with --auth-required
            }
            let mut verdict = discovery.applies(&case, era);
            if verdict.is_ok() {
                verdict = self.auth_applies(&case);
            }
            if verdict.is_ok() {
                let excluded = case.needs.iter().find_map(|n| {
                    let name = n.strip_prefix("tool:")?;
                    not_chosen.iter().find(|l| l.name == name)
                });
                if let Some(why) = cast::part_left_out(&case, discovery, &not_chosen) {
                    verdict = Err(crate::case::Skip(why));
                } else if let Some(l) = excluded {
                    verdict = Err(crate::case::Skip(format!(
                        "tool:{} is left out: {}",
                        l.name, l.reason
                    )));
                } else if case.needs.iter().any(|n| n == "tool:*") && any_tool.is_none() {
                    verdict = Err(crate::case::Skip(
                        "no tool may be called (all are left out)".into(),
                    ));
                }
            }
            out.push((case, verdict));
        }
        if out.is_empty() {
            return Err(SelectError::NoCase(self.cases.clone()));
        }
        let mut vars: Vec<(String, Value)> = any_tool
            .map(|t| vec![("tool".to_string(), Value::from(t))])
            .unwrap_or_default();
        if let Some(limited) = &self.auth_limited {
            vars.push(("auth_limited".into(), Value::from(limited.clone())));
        }
        vars.extend(crate::parts::placeholder_values(&discovery.parts));
        Ok(RunPlan {
            cases: out,
            left_out,
            tool_calls,
            vars,
        })
    }
}

/// The tool a request's `name` names: the player of a part placeholder
/// (`{{part.NAME.tool}}`), or the name itself.
fn played_by<'a>(name: &'a str, discovery: &'a Discovery) -> &'a str {
    name.strip_prefix("{{part.")
        .and_then(|rest| rest.strip_suffix(".tool}}"))
        .and_then(|part| discovery.parts.get(part))
        .map_or(name, |p| p.plays.as_str())
}
