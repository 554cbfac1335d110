//! mcperr inside a Rust server's own `cargo test`: the conformance cases
//! run against the server (a child over stdio, or an HTTP endpoint the test
//! serves in process on a loopback port), each case's transcript returned
//! as the snapshot `mcperr run --snapshots` would write, for the test to
//! assert with insta. The same files then serve `cargo insta review`.
//!
//! ```ignore
//! // (insta is the test's dev-dependency, not mcperr's: examples/rmcp-bookshop
//! // builds and runs exactly this.)
//! use mcperr::conformance::Conformance;
//!
//! let outcome = Conformance::command(env!("CARGO_BIN_EXE_my-server"), &["--stdio"])
//!     .unwrap()
//!     .cases("tools/*")
//!     .run()
//!     .unwrap();
//! let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots");
//! for snap in outcome.snapshots() {
//!     let mut settings = insta::Settings::clone_current();
//!     settings.set_snapshot_path(root.join(&snap.dir));
//!     settings.set_prepend_module_to_snapshot(false);
//!     settings.set_omit_expression(true);
//!     settings.set_description(&snap.file.description);
//!     settings.bind(|| insta::assert_snapshot!(snap.name.as_str(), &snap.file.contents));
//! }
//! ```

use std::time::Duration;

use mcperr_cases::profile::Profile;
use mcperr_cases::select::Selection;
use mcperr_core::report::{CaseResult, RunReport};
use mcperr_model::Verdict;
use mcperr_protocol::Era;
use mcperr_render::snapshot::{Redactions, Selector, Snapshot};
use regex::Regex;
use serde_json::Value;

use crate::engine::{self, RunSettings};
use crate::matrix::{judge, Server, ServerTarget};
use crate::target;
use crate::transport::Target;

/// Why a conformance run could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ConformanceError {
    /// The command line, URL, era, glob, profile or redaction is wrong.
    #[error("{0}")]
    Input(String),
    /// The server could not be started or spoke no era asked for.
    #[error("the server could not be judged: {0}")]
    Unjudged(String),
}

fn input(e: impl std::fmt::Display) -> ConformanceError {
    ConformanceError::Input(e.to_string())
}

/// A conformance run to make: the server, the eras, the cases, the profile
/// and the redactions of its snapshots. Built with the methods below, made
/// with [`Conformance::run`].
#[derive(Debug, Clone)]
pub struct Conformance {
    target: Target,
    eras: Vec<Era>,
    selection: Selection,
    profile: String,
    timeout: Duration,
    startup: Duration,
    user: Redactions,
}

impl Conformance {
    fn new(target: Target) -> Conformance {
        Conformance {
            target,
            eras: vec![Era::Modern, Era::Legacy],
            selection: Selection::default(),
            profile: "spec".into(),
            timeout: Duration::from_secs(10),
            startup: Duration::from_secs(30),
            user: Redactions::new(),
        }
    }

    /// A server started as a child over stdio, a fresh process per era:
    /// `command_line` is split as a shell would (`"target/debug/my-server
    /// --stdio"`; [`Conformance::command`] takes a program and arguments
    /// as they are).
    pub fn stdio(command_line: &str) -> Result<Conformance, ConformanceError> {
        let t = target::from_command_line(command_line, Default::default()).map_err(input)?;
        Ok(Conformance::new(Target::Stdio(t)))
    }

    /// A server started as a child over stdio: `program` with `args`, as
    /// given (no splitting: a path with spaces, `env!("CARGO_BIN_EXE_…")`
    /// wherever cargo put it).
    pub fn command(program: &str, args: &[&str]) -> Result<Conformance, ConformanceError> {
        if program.is_empty() {
            return Err(input("the server's program is empty"));
        }
        Ok(Conformance::new(Target::Stdio(
            crate::transport::StdioTarget {
                program: program.to_string(),
                args: args.iter().map(|a| a.to_string()).collect(),
                options: Default::default(),
                max_line: target::DEFAULT_MAX_LINE,
            },
        )))
    }

    /// A running Streamable HTTP endpoint (`http://127.0.0.1:PORT/mcp`), for
    /// example the server's router served by the test itself on a loopback
    /// port. One process keeps its state across eras.
    pub fn http(url: &str) -> Result<Conformance, ConformanceError> {
        let t = target::http(url, Default::default()).map_err(input)?;
        Ok(Conformance::new(Target::Http(t)))
    }

    /// Only this era (`2025-11-25`, `2026-07-28`); by default every era the
    /// server speaks.
    pub fn era(mut self, era: &str) -> Result<Conformance, ConformanceError> {
        self.eras = vec![era.parse::<Era>().map_err(input)?];
        Ok(self)
    }

    /// Only the cases whose id matches `glob` (repeatable: any of them).
    pub fn cases(mut self, glob: &str) -> Conformance {
        self.selection.cases.push(glob.to_string());
        self
    }

    /// Valid calls (bodies run) to the tools matching `glob`, as `--tools`.
    pub fn tools(mut self, glob: &str) -> Conformance {
        self.selection.tools.push(glob.to_string());
        self
    }

    /// The profile the verdicts are judged under (`spec`, the default, or
    /// `model`, or a profile file's path).
    pub fn profile(mut self, name: &str) -> Conformance {
        self.profile = name.to_string();
        self
    }

    /// The per-request timeout (10 s by default: a test machine is busy).
    pub fn timeout(mut self, timeout: Duration) -> Conformance {
        self.timeout = timeout;
        self
    }

    /// Replaces the value at an insta selector in every snapshot (as
    /// `--redact SELECTOR=TEXT`).
    pub fn redact(mut self, selector: &str, with: &str) -> Result<Conformance, ConformanceError> {
        let selector = Selector::parse(selector).map_err(input)?;
        self.user.redact(selector, Value::String(with.to_string()));
        Ok(self)
    }

    /// Replaces text matching a regex in every snapshot (as a `[filters]`
    /// entry of `redactions.toml`).
    pub fn filter(mut self, pattern: &str, with: &str) -> Result<Conformance, ConformanceError> {
        let regex = Regex::new(pattern).map_err(|e| input(format!("{pattern:?}: {e}")))?;
        self.user.filter(regex, with);
        Ok(self)
    }

    /// Runs the cases in every era asked for (blocking: it starts its own
    /// runtime, so call it from a plain `#[test]`).
    pub fn run(&self) -> Result<Outcome, ConformanceError> {
        let mut profile = Profile::load(&self.profile).map_err(input)?;
        profile.strict = false;
        self.selection.validate().map_err(input)?;
        let canary = engine::canary();
        let settings = RunSettings::new(
            self.target.clone(),
            self.timeout,
            self.startup,
            1,
            canary.clone(),
        );
        let info = settings.target_info(false);
        let server = Server {
            name: String::new(),
            targets: vec![ServerTarget::new(settings, info)],
            baseline: None,
            independent: false,
        };
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(input)?;
        let judged = rt
            .block_on(judge(&server, &self.eras, &self.selection, &profile, None))
            .map_err(input)?;
        if judged.runs.is_empty() {
            let why = judged
                .unstartable
                .unwrap_or_else(|| judged.notes.join("; "));
            return Err(ConformanceError::Unjudged(why));
        }
        let mut snapshots = Vec::new();
        // The secrets mcperr redacts from every file it writes (secret-named
        // environment variables, secret-shaped text), as `run` does.
        let redactor = mcperr_oracle::redact::Redactor::from_env(std::env::vars());
        for r in &judged.runs {
            let endpoint = crate::snapshots::endpoint(r.target.url.as_deref());
            let redactions = self
                .user
                .clone()
                .then(Redactions::standard(&canary, endpoint.as_deref()));
            for c in &r.cases {
                snapshots.push(Snapshot::of(None, &r.transport, &r.era, c, &redactions));
            }
        }
        let snapshots = crate::snapshots::for_disk(snapshots, &redactor);
        Ok(Outcome {
            runs: judged.runs,
            not_judged: judged.notes,
            snapshots,
        })
    }
}

/// What a conformance run gave: a report per era judged, the eras that
/// were not, and every case's snapshot.
#[derive(Debug)]
pub struct Outcome {
    /// One report per era judged.
    pub runs: Vec<RunReport>,
    /// Why an era asked for was not judged, one line each.
    pub not_judged: Vec<String>,
    snapshots: Vec<Snapshot>,
}

impl Outcome {
    /// Every case's snapshot, in run order: assert each with insta under
    /// `snap.dir`, named `snap.name`, holding `snap.file.contents`.
    pub fn snapshots(&self) -> &[Snapshot] {
        &self.snapshots
    }

    /// The cases that failed or could not be judged, each with its run.
    pub fn failures(&self) -> Vec<(&RunReport, &CaseResult)> {
        self.runs
            .iter()
            .flat_map(|r| r.cases.iter().map(move |c| (r, c)))
            .filter(|(_, c)| matches!(c.verdict, Verdict::Fail | Verdict::Error))
            .collect()
    }
}
