//! A user's own server as insta snapshots on disk: each case's transcript
//! per era × transport column, compared with the accepted `.snap` and, where
//! it changed or is new, written as insta writes it (a pending `.snap.new`
//! beside it), honouring insta's `INSTA_UPDATE` modes. `cargo insta review`
//! and `mcperr review` then accept or reject the very same files.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use mcperr_oracle::redact::Redactor;
use mcperr_render::snapshot::{self as snap, Redactions, Selector, SnapFile, Snapshot};
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

/// `redactions.toml`: each table's keys with where they stand, so that the
/// filters apply in the order written (a TOML table has no order of its
/// own here).
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct RedactionsFile {
    #[serde(default)]
    redactions: std::collections::BTreeMap<toml::Spanned<String>, toml::Value>,
    #[serde(default)]
    filters: std::collections::BTreeMap<toml::Spanned<String>, toml::Value>,
}

/// A table's entries in the order the file wrote them.
fn in_file_order(
    table: std::collections::BTreeMap<toml::Spanned<String>, toml::Value>,
) -> Vec<(String, toml::Value)> {
    let mut entries: Vec<_> = table.into_iter().collect();
    entries.sort_by_key(|(k, _)| k.span().start);
    entries
        .into_iter()
        .map(|(k, v)| (k.into_inner(), v))
        .collect()
}

/// A user's redactions: `DIR/redactions.toml` if there is one (insta
/// selectors under `[redactions]`, regexes under `[filters]`, each with the
/// text it becomes, applied in the order written), then each `--redact
/// SELECTOR[=TEXT]`.
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
        let parsed: RedactionsFile = toml::from_str(&text).map_err(|e| {
            bad(format!(
                "{} (expected [redactions] and [filters] tables)",
                e.message()
            ))
        })?;
        for (pattern, with) in in_file_order(parsed.redactions) {
            let selector = Selector::parse(&pattern).map_err(|e| bad(e.to_string()))?;
            r.redact(selector, serde_json::to_value(with).unwrap_or(Value::Null));
        }
        for (pattern, with) in in_file_order(parsed.filters) {
            let regex = Regex::new(&pattern).map_err(|e| bad(format!("{pattern:?}: {e}")))?;
            let with = with.as_str().ok_or_else(|| {
                bad(format!(
                    "[filters] {pattern:?}: the replacement must be a string"
                ))
            })?;
            r.filter(regex, with);
        }
    }
    for flag in flags {
        // At the first `=` outside a quoted key (`.x["a=b"]=TEXT`).
        let (selector, with) = match flag.find('=').and_then(|_| {
            let parts = snap::split_outside_quotes(flag, '=');
            (parts.len() > 1).then(|| parts[0].len())
        }) {
            Some(at) => (&flag[..at], &flag[at + 1..]),
            None => (flag.as_str(), "[redacted]"),
        };
        let selector = Selector::parse(selector).map_err(|e| SnapshotError::Redaction {
            at: format!("--redact {flag}"),
            reason: e.to_string(),
        })?;
        r.redact(selector, Value::String(with.to_string()));
    }
    Ok(r)
}

/// A run's host and port, redacted as `[endpoint]` (a loopback server's
/// port is the kernel's choice); `None` without a port (a bare host name
/// would match inside other words).
pub fn endpoint(url: Option<&str>) -> Option<String> {
    let rest = url?.split_once("://")?.1;
    let authority = rest.split(['/', '?']).next().unwrap_or(rest);
    let port = authority.rsplit_once(':')?.1;
    (!port.is_empty() && port.bytes().all(|b| b.is_ascii_digit())).then(|| authority.to_string())
}

/// Makes snapshots ready to be written: the run's secrets (its `--env`
/// and `--header` values, secret-shaped text) redacted in the contents and
/// in the description, which quotes the case id (a resource URI may carry
/// a password); a case whose id held one gets its file named by the id's
/// hash instead; and two cases whose ids clean to one file each get one.
pub fn for_disk(mut snaps: Vec<Snapshot>, redactor: &Redactor) -> Vec<Snapshot> {
    for s in &mut snaps {
        s.file.contents = redactor.redact(&s.file.contents);
        let description = redactor.redact(&s.file.description);
        if description != s.file.description {
            s.dir = s.column.clone();
            s.name = format!("redacted-{:016x}", snap::stable_hash(&s.file.description));
            s.file.description = description;
        }
    }
    snap::disambiguate(&mut snaps);
    snaps
}

/// What recording a run's snapshots found and did.
#[derive(Debug, Default)]
pub struct Recorded {
    /// Snapshots equal to the accepted ones (paths under the folder).
    pub unchanged: Vec<PathBuf>,
    /// Snapshots with no accepted file yet (paths under the folder).
    pub new: Vec<PathBuf>,
    /// Snapshots that differ from the accepted file.
    pub changed: Vec<PathBuf>,
    /// The new or changed accepted in place (`always`, `force`, `unseen`
    /// for new ones); the rest are pending or unwritten.
    pub accepted: Vec<PathBuf>,
    /// Accepted snapshots in the recorded columns no case produced.
    pub unreferenced: Vec<PathBuf>,
}

impl Recorded {
    /// Whether a new or changed snapshot was left unaccepted: the run fails,
    /// as a failing snapshot assertion does.
    pub fn failing(&self) -> bool {
        self.new.len() + self.changed.len() > self.accepted.len()
    }

    /// What became of the snapshots in `column` (a folder under the
    /// snapshots folder), for the run's report; `written` says how the
    /// new and changed were written.
    pub fn outcome(
        &self,
        column: &Path,
        written: &str,
    ) -> mcperr_core::report::snapshots::SnapshotOutcome {
        let within = |paths: &[PathBuf]| -> Vec<String> {
            paths
                .iter()
                .filter(|p| p.starts_with(column))
                .map(|p| p.display().to_string())
                .collect()
        };
        let (new, changed) = (within(&self.new), within(&self.changed));
        mcperr_core::report::snapshots::SnapshotOutcome {
            column: column.display().to_string(),
            unchanged: within(&self.unchanged).len(),
            written: if new.is_empty() && changed.is_empty() {
                String::new()
            } else {
                written.to_string()
            },
            new,
            changed,
            accepted: within(&self.accepted).len(),
        }
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
        columns.insert(snap.column.clone());
        let accepted = std::fs::read_to_string(&path)
            .ok()
            .and_then(|t| SnapFile::parse(&t));
        let same = accepted
            .as_ref()
            .is_some_and(|a| a.contents == snap.file.contents);
        if same {
            out.unchanged.push(rel);
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
            out.changed.push(rel.clone());
        } else {
            out.new.push(rel.clone());
        }
        match mode.write(existed, on_ci) {
            Write::InPlace => {
                write_file(&path, &snap.file)?;
                if pending.exists() {
                    std::fs::remove_file(&pending).map_err(|e| io(&pending, e))?;
                }
                out.accepted.push(rel);
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
            // A pending file no case produced: its accepted file is listed
            // above if there is one; else it is listed here.
            for file in files(&dir.join(column), ".snap.new") {
                let rel = file.strip_prefix(dir).unwrap_or(&file).with_extension("");
                if !produced.contains(&rel) && !dir.join(&rel).exists() {
                    out.unreferenced.push(pending_path(&rel));
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
            // Not through a symbolic link: a link to a folder above would
            // loop, and list one file many times.
            if e.file_type().is_ok_and(|t| t.is_dir()) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_apply_in_the_order_the_file_writes_them() {
        let dir = std::env::temp_dir().join(format!("mcperr-redactions-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // Sorted, `a` would go first and `b-[x]` would stay.
        let text = "[filters]\n'b' = 'a'\n'a' = '[x]'\n";
        std::fs::write(dir.join(REDACTIONS_FILE), text).unwrap();
        let r = user_redactions(&dir, &[]).unwrap();
        assert_eq!(r.contents(&serde_json::json!("b")), "\"[x]\"");
        std::fs::write(dir.join(REDACTIONS_FILE), "[filter]\n").unwrap();
        let e = user_redactions(&dir, &[]).unwrap_err().to_string();
        assert!(
            e.contains("redactions.toml") && e.contains("[filters]"),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_redact_flag_splits_at_the_first_equals_sign_outside_a_quoted_key() {
        let flags = [".x[\"a=b\"]=T".to_string()];
        let r = user_redactions(Path::new("/nonexistent"), &flags).unwrap();
        let v = serde_json::json!({"x": {"a=b": 1}});
        assert_eq!(r.contents(&v), "{\n  \"x\": {\n    \"a=b\": \"T\"\n  }\n}");
    }

    #[test]
    fn only_an_endpoint_with_a_port_is_redacted() {
        assert_eq!(
            endpoint(Some("http://127.0.0.1:8000/mcp")).as_deref(),
            Some("127.0.0.1:8000")
        );
        assert_eq!(endpoint(Some("http://server/mcp")), None);
        assert_eq!(endpoint(None), None);
    }
}
