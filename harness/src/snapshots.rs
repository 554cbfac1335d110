//! A user's own server as insta snapshots on disk: each case's transcript
//! per era × transport column, compared with the accepted `.snap` and, where
//! it changed or is new, written as insta writes it (a pending `.snap.new`
//! beside it), honouring insta's `INSTA_UPDATE` modes. `cargo insta review`
//! and `mcperr review` then accept or reject the very same files.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use mcperr_render::snapshot::{Redactions, Selector, SnapFile, Snapshot};
use regex::Regex;
use serde_json::Value;

/// The file beside the snapshots holding a user's own redactions.
pub const REDACTIONS_FILE: &str = "redactions.toml";

/// Why the snapshots folder could not be used.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// A file could not be read or written.
    #[error("{path}: {reason}")]
    Io {
        /// The file or folder.
        path: String,
        /// The OS's reason.
        reason: String,
    },
    /// A redaction did not parse.
    #[error("{at}: {reason}")]
    Redaction {
        /// Where it was written (`--redact`, `snaps/redactions.toml`).
        at: String,
        /// What is wrong with it.
        reason: String,
    },
    /// `INSTA_UPDATE` holds no mode insta knows.
    #[error("INSTA_UPDATE={0:?}: expected auto, always, new, unseen, no or force (insta's modes)")]
    Mode(String),
}

fn io(path: &Path, e: std::io::Error) -> SnapshotError {
    SnapshotError::Io {
        path: path.display().to_string(),
        reason: e.to_string(),
    }
}

/// insta's update modes (`INSTA_UPDATE`), each doing what insta's does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpdateMode {
    /// The default: `.snap.new` files, or nothing on CI (`CI` set).
    Auto,
    /// Every new and changed snapshot written over the `.snap` (accepted).
    Always,
    /// Every new and changed snapshot as a pending `.snap.new`.
    New,
    /// A new snapshot accepted at once, a changed one left pending.
    Unseen,
    /// Nothing written: a changed snapshot only fails the run.
    No,
    /// Like `Always`, and matching snapshots rewritten too.
    Force,
}

/// What a mode does with one snapshot that is new or changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Write {
    InPlace,
    Pending,
    Nothing,
}

impl UpdateMode {
    /// The mode `INSTA_UPDATE` asks for (`auto` when unset or empty).
    pub fn from_env() -> Result<UpdateMode, SnapshotError> {
        let value = std::env::var("INSTA_UPDATE").unwrap_or_default();
        Ok(match value.as_str() {
            "" | "auto" => UpdateMode::Auto,
            "always" | "1" => UpdateMode::Always,
            "new" => UpdateMode::New,
            "unseen" => UpdateMode::Unseen,
            "no" | "0" => UpdateMode::No,
            "force" => UpdateMode::Force,
            other => return Err(SnapshotError::Mode(other.to_string())),
        })
    }

    /// Whether this is a CI machine, as insta decides it (`CI` set and not
    /// `false`, `0` or empty; or Azure's `TF_BUILD`).
    pub fn on_ci() -> bool {
        match std::env::var("CI").ok().as_deref() {
            Some("false") | Some("0") | Some("") => false,
            None => std::env::var_os("TF_BUILD").is_some(),
            Some(_) => true,
        }
    }

    fn write(self, existed: bool, on_ci: bool) -> Write {
        match self {
            UpdateMode::Always | UpdateMode::Force => Write::InPlace,
            UpdateMode::Auto if on_ci => Write::Nothing,
            UpdateMode::Auto | UpdateMode::New => Write::Pending,
            UpdateMode::Unseen if existed => Write::Pending,
            UpdateMode::Unseen => Write::InPlace,
            UpdateMode::No => Write::Nothing,
        }
    }

    /// How the run's summary names the mode and what it did.
    pub fn describe(self, on_ci: bool) -> &'static str {
        match self {
            UpdateMode::Auto if on_ci => {
                "not written: on CI insta's default (INSTA_UPDATE=auto) writes nothing; INSTA_UPDATE=new leaves .snap.new files"
            }
            UpdateMode::Auto => "written as .snap.new beside the accepted .snap (INSTA_UPDATE=auto)",
            UpdateMode::New => "written as .snap.new beside the accepted .snap (INSTA_UPDATE=new)",
            UpdateMode::Unseen => "new ones accepted, changed ones written as .snap.new (INSTA_UPDATE=unseen)",
            UpdateMode::Always => "accepted in place (INSTA_UPDATE=always)",
            UpdateMode::Force => "accepted in place, unchanged ones rewritten (INSTA_UPDATE=force)",
            UpdateMode::No => "not written (INSTA_UPDATE=no)",
        }
    }
}

/// A user's redactions: `DIR/redactions.toml` if there is one (insta
/// selectors under `[redactions]`, regexes under `[filters]`, each with the
/// text it becomes), then each `--redact SELECTOR[=TEXT]`.
pub fn user_redactions(dir: &Path, flags: &[String]) -> Result<Redactions, SnapshotError> {
    let mut r = Redactions::new();
    let file = dir.join(REDACTIONS_FILE);
    if file.exists() {
        let text = std::fs::read_to_string(&file).map_err(|e| io(&file, e))?;
        let at = file.display().to_string();
        let bad = |reason: String| SnapshotError::Redaction {
            at: at.clone(),
            reason,
        };
        let table: toml::Table = text
            .parse()
            .map_err(|e: toml::de::Error| bad(e.message().to_string()))?;
        for (key, value) in &table {
            let entries = value
                .as_table()
                .filter(|_| key == "redactions" || key == "filters")
                .ok_or_else(|| {
                    bad(format!(
                        "[{key}]: expected a [redactions] or [filters] table"
                    ))
                })?;
            for (pattern, with) in entries {
                if key == "redactions" {
                    let selector = Selector::parse(pattern).map_err(|e| bad(e.to_string()))?;
                    let with = serde_json::to_value(with).unwrap_or(Value::Null);
                    r.redact(selector, with);
                } else {
                    let regex =
                        Regex::new(pattern).map_err(|e| bad(format!("{pattern:?}: {e}")))?;
                    let with = with.as_str().ok_or_else(|| {
                        bad(format!(
                            "[filters] {pattern:?}: the replacement must be a string"
                        ))
                    })?;
                    r.filter(regex, with);
                }
            }
        }
    }
    for flag in flags {
        let (selector, with) = flag.split_once('=').unwrap_or((flag, "[redacted]"));
        let selector = Selector::parse(selector).map_err(|e| SnapshotError::Redaction {
            at: format!("--redact {flag}"),
            reason: e.to_string(),
        })?;
        r.redact(selector, Value::String(with.to_string()));
    }
    Ok(r)
}

/// A run's host and port, redacted as `[endpoint]` (a loopback server's
/// port is the kernel's choice).
pub fn endpoint(url: Option<&str>) -> Option<String> {
    let rest = url?.split_once("://")?.1;
    Some(rest.split(['/', '?']).next().unwrap_or(rest).to_string())
}

/// What recording a run's snapshots found and did.
#[derive(Debug, Default)]
pub struct Recorded {
    /// Snapshots equal to the accepted ones.
    pub unchanged: usize,
    /// Snapshots with no accepted file yet (paths under the folder).
    pub new: Vec<PathBuf>,
    /// Snapshots that differ from the accepted file.
    pub changed: Vec<PathBuf>,
    /// How many new or changed were accepted in place (`always`, `force`,
    /// `unseen` for new ones); the rest are pending or unwritten.
    pub accepted: usize,
    /// Accepted snapshots in the recorded columns no case produced.
    pub unreferenced: Vec<PathBuf>,
}

impl Recorded {
    /// Whether a new or changed snapshot was left unaccepted: the run fails,
    /// as a failing snapshot assertion does.
    pub fn failing(&self) -> bool {
        self.new.len() + self.changed.len() > self.accepted
    }
}

/// Compares `snapshots` with the accepted files under `dir`, writes the new
/// and changed ones as `mode` says, removes a stale `.snap.new` whose case
/// matches again, and (with `whole_columns`) lists accepted snapshots in the
/// recorded columns that no case produced.
pub fn record(
    dir: &Path,
    snapshots: &[Snapshot],
    mode: UpdateMode,
    whole_columns: bool,
) -> Result<Recorded, SnapshotError> {
    let on_ci = UpdateMode::on_ci();
    let mut out = Recorded::default();
    let mut produced = BTreeSet::new();
    let mut columns = BTreeSet::new();
    for snap in snapshots {
        let rel = snap.path();
        let path = dir.join(&rel);
        let pending = pending_path(&path);
        produced.insert(rel.clone());
        if let Some(column) = snap.dir.components().next() {
            columns.insert(PathBuf::from(column.as_os_str()));
        }
        let accepted = std::fs::read_to_string(&path)
            .ok()
            .and_then(|t| SnapFile::parse(&t));
        let same = accepted
            .as_ref()
            .is_some_and(|a| a.contents == snap.file.contents);
        if same {
            out.unchanged += 1;
            if pending.exists() {
                std::fs::remove_file(&pending).map_err(|e| io(&pending, e))?;
            }
            if mode == UpdateMode::Force {
                write_file(&path, &snap.file)?;
            }
            continue;
        }
        let existed = accepted.is_some();
        if existed {
            out.changed.push(rel);
        } else {
            out.new.push(rel);
        }
        match mode.write(existed, on_ci) {
            Write::InPlace => {
                write_file(&path, &snap.file)?;
                if pending.exists() {
                    std::fs::remove_file(&pending).map_err(|e| io(&pending, e))?;
                }
                out.accepted += 1;
            }
            Write::Pending => write_file(&pending, &snap.file)?,
            Write::Nothing => {}
        }
    }
    if whole_columns {
        for column in &columns {
            for file in files(&dir.join(column), ".snap") {
                let rel = file.strip_prefix(dir).unwrap_or(&file).to_path_buf();
                if !produced.contains(&rel) {
                    out.unreferenced.push(rel);
                }
            }
        }
    }
    Ok(out)
}

fn write_file(path: &Path, file: &SnapFile) -> Result<(), SnapshotError> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| io(parent, e))?;
    }
    std::fs::write(path, file.to_text()).map_err(|e| io(path, e))
}

/// `x.snap` → `x.snap.new`.
pub fn pending_path(snap: &Path) -> PathBuf {
    let mut s = snap.as_os_str().to_os_string();
    s.push(".new");
    PathBuf::from(s)
}

/// Every file under `dir` whose name ends with `suffix`, sorted.
pub fn files(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else if p.to_str().is_some_and(|s| s.ends_with(suffix)) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// A pending snapshot: the `.snap.new` and what it would replace.
#[derive(Debug)]
pub struct Pending {
    /// The `.snap.new` file.
    pub new_path: PathBuf,
    /// The `.snap` it becomes when accepted.
    pub path: PathBuf,
    /// The pending file.
    pub new: SnapFile,
    /// The accepted file, if there is one.
    pub old: Option<SnapFile>,
}

/// The pending snapshots under `dir`, sorted by path. A `.snap.new` that is
/// not a snapshot file is an error naming it.
pub fn pending(dir: &Path) -> Result<Vec<Pending>, SnapshotError> {
    let mut out = Vec::new();
    for new_path in files(dir, ".snap.new") {
        let text = std::fs::read_to_string(&new_path).map_err(|e| io(&new_path, e))?;
        let new = SnapFile::parse(&text).ok_or_else(|| SnapshotError::Io {
            path: new_path.display().to_string(),
            reason: "not an insta snapshot (no `---` header)".into(),
        })?;
        let path = new_path.with_extension("");
        let old = std::fs::read_to_string(&path)
            .ok()
            .and_then(|t| SnapFile::parse(&t));
        out.push(Pending {
            new_path,
            path,
            new,
            old,
        });
    }
    Ok(out)
}

impl Pending {
    /// Accepts it: the `.snap.new` becomes the `.snap`.
    pub fn accept(&self) -> Result<(), SnapshotError> {
        std::fs::rename(&self.new_path, &self.path).map_err(|e| io(&self.new_path, e))
    }

    /// Rejects it: the `.snap.new` goes, the `.snap` stays as it was.
    pub fn reject(&self) -> Result<(), SnapshotError> {
        std::fs::remove_file(&self.new_path).map_err(|e| io(&self.new_path, e))
    }
}
