//! Test-only package: the servers under test as transcripts. Its one test
//! binary (`tests/transcripts.rs`) judges every case against each server
//! (the reference server in process, and the Bookshop of every peer column
//! of fixtures/servers/*/peer.toml over each transport it serves, in both
//! eras: an era it does not speak is noted, not judged),
//! keeps one insta snapshot per case per column in
//! `snapshots/<server>/<transport>-<era>/<case>.snap`, and renders the same
//! run as the matrix page, checked in headless Chromium.
//!
//! It is its own package because cargo-insta finds snapshots only inside a
//! package directory. This library holds what the test needs around it:
//! starting the peers and turning a cell into its transcript.

use std::path::Path;
use std::time::Duration;

use mcperr::engine::RunSettings;
use mcperr::matrix::{Server, ServerTarget};
use mcperr::target;
use mcperr::transport::{InProcess, Target};
use mcperr_protocol::Era;
use mcperr_render::matrix::Cell;
use mcperr_render::snapshot::{Redactions, Snapshot};

/// The repository's root.
pub const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

/// The canary every run plants in crash inputs. Fixed, so transcripts do
/// not change from run to run (mcperr picks a fresh one per run otherwise).
pub const CANARY: &str = "mcperrcanary5eed5eed5eed5eed";

/// Per-request and start-up timeouts: generous, for a loaded 2-core machine.
const TIMEOUT: Duration = Duration::from_secs(10);
const STARTUP: Duration = Duration::from_secs(30);

/// A peer serving Streamable HTTP as a child process; killed when dropped.
pub use mcperr_peers::HttpChild;

/// The eras a peer column does not speak (its manifest's `eras` says which
/// it does): the matrix asks it anyway, and each such target gets a note.
pub fn eras_not_spoken(name: &str) -> Vec<String> {
    let spoken = mcperr_peers::column(Path::new(ROOT), name)
        .map(|c| c.eras().to_vec())
        .unwrap_or_else(|_| ERAS.iter().map(|e| e.to_string()).collect());
    ERAS.iter()
        .map(|e| e.to_string())
        .filter(|e| !spoken.contains(e))
        .collect()
}

/// Every server's name, in column order: the reference, then each peer
/// column of fixtures/servers/*/peer.toml.
pub fn server_names() -> Result<Vec<String>, String> {
    let columns = mcperr_peers::columns(Path::new(ROOT)).map_err(|e| e.to_string())?;
    let mut names = vec!["reference".to_string()];
    names.extend(columns.into_iter().map(|c| c.name));
    Ok(names)
}

fn settings(target: Target) -> RunSettings {
    RunSettings::new(target, TIMEOUT, STARTUP, 1, CANARY.to_string())
}

fn in_process(http: bool) -> ServerTarget {
    let s = settings(Target::InProcess(InProcess {
        http,
        sse: false,
        fault: None,
        auth: false,
    }));
    let info = s.target_info(false);
    ServerTarget::new(s, info)
}

fn stdio(command: &str) -> Result<ServerTarget, String> {
    let t = target::from_command_line(command, Default::default()).map_err(|e| e.to_string())?;
    let s = settings(Target::Stdio(t));
    let info = s.target_info(false);
    Ok(ServerTarget::new(s, info))
}

/// One HTTP child per era: a running server keeps state across requests
/// (the Bookshop's `limited` counter), so each era starts from a fresh one,
/// as each stdio era does, and a transcript does not depend on what the
/// other era ran before it.
fn http_per_era(
    argv: &[String],
    children: &mut Vec<HttpChild>,
) -> Result<Vec<ServerTarget>, String> {
    let mut targets = Vec::new();
    for era in ERAS {
        let child = HttpChild::start(argv).map_err(|e| e.to_string())?;
        let t = target::http(&child.url, Default::default()).map_err(|e| e.to_string())?;
        let s = settings(Target::Http(t));
        let info = s.target_info(false);
        targets.push(ServerTarget {
            settings: s,
            info,
            era: Some(era),
        });
        children.push(child);
    }
    Ok(targets)
}

/// The eras judged, in column order.
pub const ERAS: [Era; 2] = [Era::Modern, Era::Legacy];

/// The servers under test, and the HTTP children to keep alive while they
/// are judged: the reference server (in process, stdio and HTTP), then each
/// peer column of fixtures/servers/*/peer.toml (a child over stdio, where it
/// serves stdio, and one serving HTTP per era, where it serves HTTP).
pub fn servers() -> Result<(Vec<Server>, Vec<HttpChild>), String> {
    let columns = mcperr_peers::columns(Path::new(ROOT)).map_err(|e| e.to_string())?;
    let mut children = Vec::new();
    let mut servers = vec![Server {
        name: "reference".into(),
        targets: vec![in_process(false), in_process(true)],
        baseline: None,
        // One run at a time, as before: the transcripts are the record.
        independent: false,
    }];
    for column in columns {
        let mut targets = Vec::new();
        if column.serves(mcperr_peers::Transport::Stdio) {
            targets.push(stdio(&column.command_line())?);
        }
        if column.serves(mcperr_peers::Transport::Http) {
            targets.extend(http_per_era(&column.argv, &mut children)?);
        }
        servers.push(Server {
            name: column.name,
            targets,
            baseline: None,
            independent: false,
        });
    }
    Ok((servers, children))
}

/// A cell's snapshot: the transcript mcperr writes for a user's server
/// (`mcperr matrix --snapshots`), under this package's folder
/// `<server>/<transport>-<era>/<case id's folders>/<name>.snap`; `None`
/// where the case did not run in this column.
pub fn snapshot(cell: &Cell, redactions: &Redactions) -> Option<Snapshot> {
    let r = cell.result.as_ref()?;
    Some(Snapshot::of(
        Some(&cell.server),
        &cell.transport,
        &cell.era,
        r,
        redactions,
    ))
}
