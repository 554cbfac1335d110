//! The SDK peers, each one manifest: `fixtures/servers/<folder>/peer.toml`
//! says what the folder's Bookshop is (registry, package, pinned version),
//! the eras and transports it speaks, the profiles its baselines exist for
//! and the command of each of its matrix columns. Everything that runs the
//! peers (the `it` tests' baselines, the snapshot package, the fuzz bench,
//! `scripts/test.sh`, `scripts/matrix.sh`, `scripts/official-suite.sh`)
//! reads them here, so adding a column is the SDK's folder and its findings
//! page, nothing else by hand.
//!
//! A command's `{setup}` is what the folder's `setup.sh` printed on its last
//! line (an npm Bookshop's entry, a venv's python, a built binary): the
//! manifest's `setup_env` variable when set, else the file
//! `target/peers/<folder>.setup` that `scripts/test.sh` writes after the
//! installs. `{dir}` is the folder itself.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde::Deserialize;

pub mod findings_table;

/// What can go wrong finding or reading the peers.
#[derive(Debug, thiserror::Error)]
pub enum PeerError {
    /// `fixtures/servers` could not be listed.
    #[error("cannot list {path}: {source}")]
    List {
        /// The folder.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A manifest could not be read or does not parse.
    #[error("{path}: {message}")]
    Manifest {
        /// The manifest.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// A peer's setup has not run (or its variable is unset).
    #[error("the {folder} peer is not installed: run scripts/test.sh, or fixtures/servers/{folder}/setup.sh and {how}")]
    NotInstalled {
        /// The peer's folder under fixtures/servers.
        folder: String,
        /// How to tell the tests where it is.
        how: String,
    },
    /// No column of that name.
    #[error("no peer column named {0:?} (fixtures/servers/*/peer.toml)")]
    NoSuchColumn(String),
    /// A Bookshop asked to serve Streamable HTTP did not start or print
    /// its URL.
    #[error("{command}: {why}")]
    Serve {
        /// The command, as run.
        command: String,
        /// What went wrong.
        why: String,
    },
}

/// How long a Bookshop may take to print its URL once started.
const SERVE_STARTUP: Duration = Duration::from_secs(60);

/// A Bookshop serving Streamable HTTP as a child process (its command with
/// `--http 127.0.0.1:0`, which prints the endpoint URL as its first stdout
/// line once it listens); killed and reaped when dropped.
pub struct HttpChild {
    child: Child,
    /// The endpoint it printed.
    pub url: String,
}

impl HttpChild {
    /// Starts `argv` with `--http 127.0.0.1:0` and waits (at most a
    /// minute) for the URL it prints.
    pub fn start(argv: &[String]) -> Result<HttpChild, PeerError> {
        let failed = |why: String| PeerError::Serve {
            command: format!("{} --http 127.0.0.1:0", argv.join(" ")),
            why,
        };
        let (program, args) = argv
            .split_first()
            .ok_or_else(|| failed("no command".into()))?;
        let mut child = Command::new(program)
            .args(args)
            .args(["--http", "127.0.0.1:0"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| failed(e.to_string()))?;
        let stdout = child.stdout.take().expect("piped");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        // Dropped on every early return below: killed and reaped.
        let mut served = HttpChild {
            child,
            url: String::new(),
        };
        let line = rx
            .recv_timeout(SERVE_STARTUP)
            .map_err(|_| failed(format!("printed no URL within {SERVE_STARTUP:?}")))?;
        served.url = line.trim().to_string();
        if !served.url.starts_with("http://") {
            return Err(failed(format!("printed {:?}, not a URL", served.url)));
        }
        Ok(served)
    }
}

impl Drop for HttpChild {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A transport a Bookshop serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    /// A child process over stdin/stdout.
    Stdio,
    /// Streamable HTTP: the command with `--http 127.0.0.1:0` appended
    /// prints its endpoint URL as its first stdout line once it listens.
    Http,
}

impl Transport {
    /// The name baselines and snapshot folders use.
    pub fn as_str(self) -> &'static str {
        match self {
            Transport::Stdio => "stdio",
            Transport::Http => "http",
        }
    }
}

/// `peer.toml`, as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// Where its columns stand among the others (ascending; without it,
    /// after those with one, by folder name).
    #[serde(default = "last")]
    pub order: u32,
    /// `npm`, `pypi` or `crates.io`.
    pub registry: String,
    /// The framework's package, as its registry names it.
    pub package: String,
    /// The exact version pinned in the folder's lock or requirements.
    pub version: String,
    /// The eras it speaks.
    pub eras: Vec<String>,
    /// The transports it serves.
    pub transports: Vec<Transport>,
    /// One line for the findings table: what its users should know.
    pub summary: String,
    /// The variable that overrides what setup.sh printed.
    #[serde(default)]
    pub setup_env: Option<String>,
    /// The profiles its baselines exist for.
    #[serde(default = "default_profiles")]
    pub profiles: Vec<String>,
    /// Its matrix columns (more than one: the same Bookshop with a switch).
    pub column: Vec<ColumnSpec>,
}

fn last() -> u32 {
    u32::MAX
}

fn default_profiles() -> Vec<String> {
    vec!["spec".into(), "model".into()]
}

/// One `[[column]]` of a manifest.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ColumnSpec {
    /// The column's id: baselines `<name>.<transport>.<era>.<profile>.toml`,
    /// snapshots `snapshots/<name>/`, findings `docs/findings/<name>.md`.
    pub name: String,
    /// The column's heading on the matrix page.
    pub title: String,
    /// The command serving stdio, `{setup}` and `{dir}` replaced.
    pub command: Vec<String>,
}

/// One folder of `fixtures/servers` with a `peer.toml`.
#[derive(Debug, Clone)]
pub struct Peer {
    /// Its folder's name.
    pub folder: String,
    /// Its folder.
    pub dir: PathBuf,
    /// Its manifest.
    pub manifest: Manifest,
}

/// One column, its command resolved: what a test, the matrix or the
/// snapshots run.
#[derive(Debug, Clone)]
pub struct Column {
    /// The column's id.
    pub name: String,
    /// Its heading.
    pub title: String,
    /// The stdio command, word by word.
    pub argv: Vec<String>,
    /// The peer it belongs to.
    pub peer: Peer,
}

impl Column {
    /// The stdio command as one line for `--stdio`, each word quoted where
    /// a shell would split it.
    pub fn command_line(&self) -> String {
        self.argv
            .iter()
            .map(|w| shell_quote(w))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Whether it serves `transport`.
    pub fn serves(&self, transport: Transport) -> bool {
        self.peer.manifest.transports.contains(&transport)
    }

    /// The eras it speaks.
    pub fn eras(&self) -> &[String] {
        &self.peer.manifest.eras
    }

    /// The profiles its baselines exist for.
    pub fn profiles(&self) -> &[String] {
        &self.peer.manifest.profiles
    }
}

/// A word as a POSIX shell reads it back: as is when it is plain, else in
/// single quotes.
pub fn shell_quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=@+,%".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// The repository's root, seen from this crate.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("peers/ sits in the repository")
        .to_path_buf()
}

/// Every peer under `root/fixtures/servers`, in column order.
pub fn all(root: &Path) -> Result<Vec<Peer>, PeerError> {
    let servers = root.join("fixtures/servers");
    let entries = std::fs::read_dir(&servers).map_err(|source| PeerError::List {
        path: servers.clone(),
        source,
    })?;
    let mut peers = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path().join("peer.toml");
        if !path.is_file() {
            continue;
        }
        let manifest = read_manifest(&path)?;
        peers.push(Peer {
            folder: entry.file_name().to_string_lossy().into_owned(),
            dir: entry.path(),
            manifest,
        });
    }
    peers.sort_by(|a, b| (a.manifest.order, &a.folder).cmp(&(b.manifest.order, &b.folder)));
    Ok(peers)
}

fn read_manifest(path: &Path) -> Result<Manifest, PeerError> {
    let bad = |message: String| PeerError::Manifest {
        path: path.to_path_buf(),
        message,
    };
    let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
    let m: Manifest = toml::from_str(&text).map_err(|e| bad(e.to_string()))?;
    if m.column.is_empty() {
        return Err(bad("no [[column]]".into()));
    }
    if m.transports.is_empty() || m.eras.is_empty() || m.profiles.is_empty() {
        return Err(bad("eras, transports and profiles may not be empty".into()));
    }
    for era in &m.eras {
        if era != "2025-11-25" && era != "2026-07-28" {
            return Err(bad(format!("unknown era {era:?}")));
        }
    }
    for c in &m.column {
        let id = !c.name.is_empty()
            && c.name
                .chars()
                .all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '-');
        if !id || c.command.is_empty() {
            return Err(bad(format!(
                "column {:?}: a name of a-z, 0-9 and - and a command are needed",
                c.name
            )));
        }
    }
    Ok(m)
}

impl Peer {
    /// What its setup.sh printed last: `setup_env` when set, else
    /// `target/peers/<folder>.setup`.
    pub fn setup_output(&self, root: &Path) -> Result<String, PeerError> {
        if let Some(var) = &self.manifest.setup_env {
            if let Ok(v) = std::env::var(var) {
                return Ok(v);
            }
        }
        let file = root
            .join("target/peers")
            .join(format!("{}.setup", self.folder));
        match std::fs::read_to_string(&file) {
            Ok(text) if !text.trim().is_empty() => Ok(text.trim().to_string()),
            _ => Err(PeerError::NotInstalled {
                folder: self.folder.clone(),
                how: match &self.manifest.setup_env {
                    Some(var) => format!("set {var} to its last line"),
                    None => format!("write its last line to {}", file.display()),
                },
            }),
        }
    }

    /// Its columns, `{setup}` and `{dir}` resolved.
    pub fn columns(&self, root: &Path) -> Result<Vec<Column>, PeerError> {
        let needs_setup = self
            .manifest
            .column
            .iter()
            .any(|c| c.command.iter().any(|w| w.contains("{setup}")));
        let setup = if needs_setup {
            self.setup_output(root)?
        } else {
            String::new()
        };
        let dir = self.dir.display().to_string();
        Ok(self
            .manifest
            .column
            .iter()
            .map(|c| Column {
                name: c.name.clone(),
                title: c.title.clone(),
                argv: c
                    .command
                    .iter()
                    .map(|w| w.replace("{setup}", &setup).replace("{dir}", &dir))
                    .collect(),
                peer: self.clone(),
            })
            .collect())
    }
}

/// Every column of every peer, in order.
pub fn columns(root: &Path) -> Result<Vec<Column>, PeerError> {
    let mut all_columns = Vec::new();
    for peer in all(root)? {
        all_columns.extend(peer.columns(root)?);
    }
    Ok(all_columns)
}

/// The column called `name`.
pub fn column(root: &Path, name: &str) -> Result<Column, PeerError> {
    for peer in all(root)? {
        if peer.manifest.column.iter().any(|c| c.name == name) {
            return peer
                .columns(root)?
                .into_iter()
                .find(|c| c.name == name)
                .ok_or_else(|| PeerError::NoSuchColumn(name.into()));
        }
    }
    Err(PeerError::NoSuchColumn(name.into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_word_with_a_space_or_a_quote_is_quoted_for_the_shell() {
        assert_eq!(shell_quote("/a/b.py"), "/a/b.py");
        assert_eq!(shell_quote("/my dir/b.py"), "'/my dir/b.py'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote(""), "''");
    }

    #[test]
    fn every_committed_manifest_reads_and_names_its_columns_once() {
        let peers = all(&root()).unwrap();
        assert!(peers.len() >= 7, "{peers:?}");
        let mut names: Vec<&str> = peers
            .iter()
            .flat_map(|p| p.manifest.column.iter().map(|c| c.name.as_str()))
            .collect();
        let count = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), count, "a column name is used twice");
    }

    /// The manifest's version is the one its folder's own files pin (npm's
    /// package.json, pip's requirements.txt, the crate's Cargo.toml), and
    /// every column's title names it: the matrix's headings say what ran.
    #[test]
    fn every_manifest_states_the_version_its_folder_pins() {
        for peer in all(&root()).unwrap() {
            let m = &peer.manifest;
            let (file, pin) = match m.registry.as_str() {
                "npm" => (
                    "package.json",
                    format!("\"{}\": \"{}\"", m.package, m.version),
                ),
                "pypi" => ("requirements.txt", format!("{}=={}", m.package, m.version)),
                "crates.io" => (
                    "Cargo.toml",
                    format!("{} = {{ version = \"={}\"", m.package, m.version),
                ),
                other => panic!("{}: unknown registry {other}", peer.folder),
            };
            let text = std::fs::read_to_string(peer.dir.join(file)).unwrap();
            assert!(
                text.contains(&pin),
                "{}/{file} does not pin {pin}",
                peer.folder
            );
            for c in &m.column {
                assert!(
                    c.title.contains(&m.version),
                    "{}: {:?}",
                    peer.folder,
                    c.title
                );
            }
        }
    }

    #[test]
    fn a_manifest_without_columns_or_with_an_unknown_era_is_refused() {
        let dir = std::env::temp_dir().join(format!("mcperr-peers-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("peer.toml");
        let head = "registry = \"npm\"\npackage = \"p\"\nversion = \"1\"\ntransports = [\"stdio\"]\nsummary = \"s\"\n";
        std::fs::write(&path, format!("{head}eras = [\"2025-11-25\"]\n")).unwrap();
        assert!(read_manifest(&path)
            .unwrap_err()
            .to_string()
            .contains("column"));
        std::fs::write(
            &path,
            format!("{head}eras = [\"2024-01-01\"]\n[[column]]\nname = \"p\"\ntitle = \"p\"\ncommand = [\"x\"]\n"),
        )
        .unwrap();
        assert!(read_manifest(&path)
            .unwrap_err()
            .to_string()
            .contains("unknown era"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
