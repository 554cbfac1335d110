//! `--snapshots DIR` on `run` and `matrix`: each case's transcript kept as
//! an insta snapshot of the user's own server, compared with the accepted
//! one, the new and changed left pending for `mcperr review` or `cargo insta
//! review`, and the run failed while any is pending.

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use mcperr_core::report::RunReport;
use mcperr_render::snapshot::{place, Redactions, Snapshot};

use super::{CliError, SelectArgs};
use crate::snapshots::{self, Recorded, UpdateMode};

/// What to do with an accepted snapshot no case produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Unreferenced {
    /// List them (the default).
    Warn,
    /// List them and fail the run.
    Reject,
    /// Delete them.
    Delete,
    /// Say nothing.
    Ignore,
}

#[derive(Debug, Args)]
pub(crate) struct SnapshotArgs {
    /// Keep each case's transcript as an insta snapshot under DIR, one per
    /// case per era and transport (DIR/stdio-2026-07-28/tools/….snap; under
    /// `matrix`, DIR/<server>/…): the request as sent, the answer with its
    /// keys sorted, the HTTP status, the verdict and its rule. What changes
    /// in every run is redacted (versions, request ids, the canary,
    /// timestamps, UUIDs, task ids, requestState, the endpoint's port), and
    /// so are secrets, as in every report. A new or changed
    /// snapshot is written as insta writes it, a .snap.new beside the
    /// accepted .snap, and fails the run (exit 1) until accepted with
    /// `mcperr review DIR` or `cargo insta review`; an unchanged server
    /// writes nothing. insta's INSTA_UPDATE modes apply: auto (the default:
    /// .snap.new, nothing on CI), new, unseen, always, force, no.
    #[arg(long, value_name = "DIR")]
    pub(crate) snapshots: Option<PathBuf>,
    /// Redact more of your server's answers in the snapshots: an insta
    /// selector (`.**.createdAt`, `.response.result._meta["x/id"]`) and
    /// the text to put there (default `[redacted]`). Repeatable; the
    /// [redactions] and [filters] (regex = text) tables of
    /// DIR/redactions.toml apply to every run first.
    #[arg(long, value_name = "SELECTOR[=TEXT]", requires = "snapshots")]
    pub(crate) redact: Vec<String>,
    /// Accepted snapshots that no case produced in a column this run
    /// recorded (a case or tool that went away): warn lists them, reject
    /// also fails the run, delete removes them, ignore says nothing.
    /// Checked only when no --cases, --tools or --cases-dir narrows the
    /// suite.
    #[arg(long, value_name = "MODE", value_enum, default_value_t = Unreferenced::Warn)]
    pub(crate) unreferenced: Unreferenced,
}

/// What recording gave: the lines to print after the run's page, the exit
/// code it asks for, and what it found.
pub(crate) struct Recording {
    /// The summary lines.
    pub(crate) text: String,
    /// 1 while a snapshot is pending (or `--unreferenced reject` fails).
    pub(crate) code: i32,
    /// What was found and done.
    pub(crate) recorded: Recorded,
}

/// The checked settings: read before the run, so that a bad redaction or
/// mode costs no run.
pub(crate) struct SnapshotPlan {
    dir: PathBuf,
    user: Redactions,
    mode: UpdateMode,
    unreferenced: Unreferenced,
}

impl SnapshotArgs {
    /// `None` without `--snapshots`; else the folder (created), the user's
    /// redactions and the update mode, or the one-line error.
    pub(crate) fn plan(&self) -> Result<Option<SnapshotPlan>, CliError> {
        let Some(dir) = &self.snapshots else {
            return Ok(None);
        };
        std::fs::create_dir_all(dir)
            .map_err(|e| CliError::file("--snapshots", dir.display(), e))?;
        Ok(Some(SnapshotPlan {
            dir: dir.clone(),
            user: snapshots::user_redactions(dir, &self.redact)?,
            mode: UpdateMode::from_env()?,
            unreferenced: self.unreferenced,
        }))
    }
}

impl SnapshotPlan {
    /// The redactions of a column: the user's, then the standard ones.
    pub(crate) fn redactions(&self, canary: &str, url: Option<&str>) -> Redactions {
        self.user.clone().then(Redactions::standard(
            canary,
            snapshots::endpoint(url).as_deref(),
        ))
    }

    /// Records each run's snapshots, each run's report saying what became
    /// of its own.
    pub(crate) fn record_runs(
        &self,
        runs: &mut [RunReport],
        canary: &str,
        select: &SelectArgs,
    ) -> Result<Recording, CliError> {
        let mut snaps = Vec::new();
        for r in runs.iter() {
            let redactions = self.redactions(canary, r.target.url.as_deref());
            snaps.extend(
                r.cases
                    .iter()
                    .map(|c| Snapshot::of(None, &r.transport, &r.era, c, &redactions)),
            );
        }
        let recording = self.record(snaps, select)?;
        let written = self.mode.describe(UpdateMode::on_ci());
        for r in runs {
            let (column, _) = place(None, &r.transport, &r.era, "");
            r.snapshots = Some(recording.recorded.outcome(&column, written));
        }
        Ok(recording)
    }

    /// Records `snaps`: compares and writes them, deletes what
    /// `--unreferenced delete` says, and returns what to print and the exit
    /// code it asks for (1 while a snapshot is pending or unwritten, or with
    /// `--unreferenced reject` when one is unreferenced).
    pub(crate) fn record(
        &self,
        snaps: Vec<Snapshot>,
        select: &SelectArgs,
    ) -> Result<Recording, CliError> {
        let snaps = super::redactor()
            .lock()
            .map(|r| snapshots::for_disk(snaps, &r))
            .map_err(|_| CliError::Usage("the secret redactor is poisoned".into()))?;
        let r = snapshots::record(&self.dir, &snaps, self.mode, whole_suite(select))?;
        let mut code = i32::from(r.failing() && !force_pass());
        if self.unreferenced == Unreferenced::Delete {
            for rel in &r.unreferenced {
                let path = self.dir.join(rel);
                std::fs::remove_file(&path)
                    .map_err(|e| CliError::file("--unreferenced delete", path.display(), e))?;
            }
        }
        if self.unreferenced == Unreferenced::Reject && !r.unreferenced.is_empty() {
            code = 1;
        }
        Ok(Recording {
            text: self.summary(&r),
            code,
            recorded: r,
        })
    }

    fn summary(&self, r: &Recorded) -> String {
        let dir = self.dir.display();
        let mut text = format!(
            "\nSnapshots in {dir}: {} unchanged, {} new, {} changed",
            r.unchanged.len(),
            r.new.len(),
            r.changed.len()
        );
        if r.new.is_empty() && r.changed.is_empty() {
            text.push('\n');
        } else {
            text.push_str(&format!(": {}\n", self.mode.describe(UpdateMode::on_ci())));
            text.push_str(&listed("new", &r.new));
            text.push_str(&listed("changed", &r.changed));
            if r.failing() {
                text.push_str(&format!(
                    "  review: mcperr review {dir} (or cargo insta review, in a Cargo package)\n"
                ));
            }
        }
        if !r.unreferenced.is_empty() && self.unreferenced != Unreferenced::Ignore {
            let what = match self.unreferenced {
                Unreferenced::Delete => "deleted",
                Unreferenced::Reject => "fail the run; --unreferenced delete removes them",
                _ => "--unreferenced delete removes them",
            };
            text.push_str(&format!(
                "  {} accepted snapshots no case produced ({what}):\n",
                r.unreferenced.len()
            ));
            text.push_str(&listed("", &r.unreferenced));
        }
        text
    }
}

/// Whether the run ran the whole suite, so that an accepted snapshot no
/// case produced is one that went away: no `--cases`, no `--tools` (which
/// leaves out the generated cases of the other tools), no `--cases-dir`
/// (which replaces the built-in cases).
fn whole_suite(select: &SelectArgs) -> bool {
    select.cases.is_empty() && select.tools.is_empty() && select.cases_dir.is_none()
}

/// `INSTA_FORCE_PASS=1`: snapshots are written but never fail the run.
fn force_pass() -> bool {
    std::env::var("INSTA_FORCE_PASS").is_ok_and(|v| v == "1")
}

/// Up to eight paths on lines of their own, the rest counted.
fn listed(label: &str, paths: &[PathBuf]) -> String {
    const SHOWN: usize = 8;
    let mut text = String::new();
    for p in paths.iter().take(SHOWN) {
        let p = Path::new(p).display();
        text.push_str(&if label.is_empty() {
            format!("    {p}\n")
        } else {
            format!("  {label:<8}{p}\n")
        });
    }
    if paths.len() > SHOWN {
        text.push_str(&format!("    … and {} more\n", paths.len() - SHOWN));
    }
    text
}
