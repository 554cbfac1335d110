//! Judging servers in every era asked for, over each of their targets: what
//! `mcperr run` does for its one server, and `mcperr matrix` for many at
//! once (independent servers in parallel), collected into a
//! [`Matrix`](mcperr_render::matrix::Matrix).

use std::time::Duration;

use futures_util::future::join_all;
use mcperr_cases::profile::Profile;
use mcperr_cases::select::{SelectError, Selection};
use mcperr_core::baseline::Baseline;
use mcperr_core::report::{RunReport, TargetInfo};
use mcperr_protocol::Era;
use mcperr_render::matrix::Matrix;

use crate::engine::{self, EngineError, EraChoice, RunSettings};

/// A server under test: its name and the targets it is reached at (the
/// embedded reference server has two: stdio and HTTP).
#[derive(Clone)]
pub struct Server {
    /// The name its columns carry.
    pub name: String,
    /// Each target with how reports describe it.
    pub targets: Vec<ServerTarget>,
    /// Its known failures: a server with a baseline is gated (see
    /// [`Matrix::gate`](mcperr_render::matrix::Matrix::gate)).
    pub baseline: Option<Baseline>,
    /// Its targets share nothing, nor do its processes (the embedded
    /// reference server: a child per era over stdio, and a listener of its
    /// own over HTTP): each target, and each era over stdio, is judged
    /// beside the others. A user's server may share state between its
    /// processes (a file, a database), so it is judged one run at a time.
    pub independent: bool,
}

/// One way to reach a server, and the era it is for when it serves only one
/// (a running HTTP endpoint keeps its state across eras; a caller that wants
/// each era on a fresh process starts one per era).
#[derive(Clone)]
pub struct ServerTarget {
    /// How to reach it.
    pub settings: RunSettings,
    /// How reports describe it.
    pub info: TargetInfo,
    /// Only this era (`None`: every era asked for).
    pub era: Option<Era>,
}

impl ServerTarget {
    /// A target for every era asked for.
    pub fn new(settings: RunSettings, info: TargetInfo) -> ServerTarget {
        ServerTarget {
            settings,
            info,
            era: None,
        }
    }
}

/// What judging one server gave.
#[derive(Debug, Default)]
pub struct Judged {
    /// One report per target and era judged.
    pub runs: Vec<RunReport>,
    /// Reports of eras whose setup failed: each holds one `setup/connect` error.
    pub failed_setups: Vec<RunReport>,
    /// Why an era or target could not be judged, one line each.
    pub notes: Vec<String>,
    /// The server could not be started at all: no era was tried after it.
    pub unstartable: Option<String>,
}

/// Judges `server` in each of `eras` over each of its targets, one after
/// another (over stdio each era on a fresh process; an HTTP endpoint is the
/// one running server in every era), or side by side when it is
/// [`Server::independent`], applying `baseline` to each run. A
/// target and era that no selected case applies to is a note; `Err` when
/// none is left at all, or the selection is unusable.
pub async fn judge(
    server: &Server,
    eras: &[Era],
    selection: &Selection,
    profile: &Profile,
    baseline: Option<&Baseline>,
) -> Result<Judged, EngineError> {
    let mut out = Judged::default();
    let mut empty = None;
    // Eras whose handshake failed: (note, era).
    let mut unspoken: Vec<(usize, Era)> = Vec::new();
    let runs: Vec<(&ServerTarget, Era)> = server
        .targets
        .iter()
        .flat_map(|t| {
            eras.iter()
                .filter(move |e| t.era.is_none_or(|x| x == **e))
                .map(move |&e| (t, e))
        })
        .collect();
    let one = |target: &ServerTarget, era: Era| {
        let (settings, info) = (target.settings.clone(), target.info.clone());
        async move { engine::run(&settings, EraChoice::Pinned(era), selection, profile, info).await }
    };
    // Judged beside each other when nothing is shared; else each in turn below.
    let mut ready = if server.independent {
        side_by_side(&runs, &one).await
    } else {
        runs.iter().map(|_| None).collect()
    };
    for (k, &(target, era)) in runs.iter().enumerate() {
        let transport = if target.settings.target.is_http() {
            "http"
        } else {
            "stdio"
        };
        let result = match ready[k].take() {
            Some(done) => done,
            None => one(target, era).await,
        };
        match result {
            Ok(mut o) => {
                if let Some(b) = baseline {
                    let known = o.known_ids.iter().cloned().collect();
                    o.report.stale_baseline = b.apply(&mut o.report.cases, &known);
                }
                out.runs.push(o.report);
            }
            Err((EngineError::Setup(e), report)) => {
                out.failed_setups.extend(report.map(|mut r| {
                    r.era = era.to_string();
                    r
                }));
                if e.spawn {
                    // A server that cannot be started has no other era to try.
                    out.unstartable = Some(e.message.clone());
                    out.notes.push(e.to_string());
                    return Ok(out);
                }
                let note = stderr_once(&format!("{era}: {e}"), &out.notes);
                if !e.unjudged {
                    unspoken.push((out.notes.len(), era));
                }
                out.notes.push(note);
            }
            Err((EngineError::Select(SelectError::NoCase(globs)), _)) => {
                // A saved finding names the eras it was seen in.
                let selected = if globs.is_empty() {
                    String::new()
                } else {
                    format!(" (--cases {})", globs.join(", "))
                };
                out.notes.push(format!(
                    "{era} over {transport}: no selected case is for this era{selected}"
                ));
                empty = Some(SelectError::NoCase(globs));
            }
            Err((e, _)) => return Err(e),
        }
    }
    // With --era auto: pinning the era it speaks saves a start per command.
    for (i, era) in unspoken {
        if let Some(spoken) = out.runs.iter().find(|r| r.era != era.to_string()) {
            let other = &spoken.era;
            out.notes[i].push_str(&format!(
                " (`--era {other}` judges {other} alone, without this attempt)"
            ));
        }
    }
    match empty {
        Some(e) if out.runs.is_empty() && out.failed_setups.is_empty() => Err(e.into()),
        _ => Ok(out),
    }
}

/// The runs of `runs` judged side by side: over HTTP a target's eras one
/// after another (one listener, whose state carries over), each other
/// target and each stdio era beside them.
async fn side_by_side<'a, F, Fut>(
    runs: &[(&'a ServerTarget, Era)],
    one: &F,
) -> Vec<Option<Fut::Output>>
where
    F: Fn(&'a ServerTarget, Era) -> Fut,
    Fut: std::future::Future,
{
    let mut lanes: Vec<Vec<usize>> = Vec::new();
    for (k, (target, _)) in runs.iter().enumerate() {
        let shared = target.settings.target.is_http();
        let lane = shared
            .then(|| {
                lanes
                    .iter_mut()
                    .find(|l| std::ptr::eq(runs[l[0]].0, *target))
            })
            .flatten();
        match lane {
            Some(lane) => lane.push(k),
            None => lanes.push(vec![k]),
        }
    }
    let done = join_all(lanes.into_iter().map(|lane| async move {
        let mut out = Vec::new();
        for k in lane {
            let (target, era) = runs[k];
            out.push((k, one(target, era).await));
        }
        out
    }))
    .await;
    let mut ready: Vec<Option<Fut::Output>> = runs.iter().map(|_| None).collect();
    for (k, result) in done.into_iter().flatten() {
        ready[k] = Some(result);
    }
    ready
}

/// `note` with its server's stderr tail replaced by "as above" when an
/// earlier note already shows the same tail (a server that fails in both
/// eras prints the same start-up error twice).
fn stderr_once(note: &str, earlier: &[String]) -> String {
    const TAIL: &str = "stderr tail:";
    let Some(at) = note.find(TAIL) else {
        return note.to_string();
    };
    // The note ends with the handshake failure's closing parenthesis; the
    // tail follows a space or a line break, as the failure was worded.
    let rest = &note[at + TAIL.len()..];
    let (text, close) = match rest.strip_suffix(')') {
        Some(t) => (t, ")"),
        None => (rest, ""),
    };
    let words = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
    let shown = format!("{TAIL} {}", words(text));
    if earlier.iter().any(|n| words(n).contains(&shown)) {
        format!("{}{TAIL} as above{close}", &note[..at])
    } else {
        note.to_string()
    }
}

/// Judges every server (in parallel: they are independent) and lays the
/// runs out as a matrix, servers in the order given. An era a server could
/// not be judged in is listed in `not_judged`; a server judged in no era
/// shows its `setup/connect` errors as its columns.
pub async fn run_matrix(
    servers: &[Server],
    eras: &[Era],
    selection: &Selection,
    profile: &Profile,
) -> Result<(Matrix, Vec<Judged>), EngineError> {
    let judged = join_all(
        servers
            .iter()
            .map(|s| judge(s, eras, selection, profile, s.baseline.as_ref())),
    )
    .await;
    let mut runs = Vec::new();
    let mut notes = Vec::new();
    let mut all = Vec::new();
    for (server, j) in servers.iter().zip(judged) {
        let j = j?;
        // Columns in the order judged: each target (stdio before HTTP for the
        // embedded reference), each era as asked; failed setups in their place.
        let transports: Vec<&str> = server
            .targets
            .iter()
            .map(|t| {
                if t.settings.target.is_http() {
                    "http"
                } else {
                    "stdio"
                }
            })
            .collect();
        // An era a server could not be set up in is a note (as in `run`: with
        // `--era auto`, an era it does not speak); a server judged in no era
        // at all shows its setup errors as its columns.
        let failed: &[RunReport] = if j.runs.is_empty() {
            &j.failed_setups
        } else {
            &[]
        };
        let mut mine: Vec<&RunReport> = j.runs.iter().chain(failed).collect();
        mine.sort_by_key(|r| {
            (
                transports.iter().position(|t| *t == r.transport),
                eras.iter().position(|e| e.to_string() == r.era),
            )
        });
        runs.extend(mine.into_iter().map(|r| (server.name.clone(), r.clone())));
        notes.extend(j.notes.iter().map(|n| format!("{}: {n}", server.name)));
        all.push(j);
    }
    let title = format!(
        "mcperr matrix: {}",
        servers
            .iter()
            .map(|s| s.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mut matrix = Matrix::from_runs(&title, &profile.name, runs);
    matrix.not_judged = notes;
    matrix.gated = servers
        .iter()
        .filter(|s| s.baseline.is_some())
        .map(|s| s.name.clone())
        .collect();
    Ok((matrix, all))
}

/// Starts the reference server's Streamable HTTP edge on a loopback port in
/// the current runtime; its URL. The embedded reference server is judged
/// over it as well as over stdio.
pub async fn embedded_http() -> std::io::Result<String> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let config = mcperr_reference::http_edge::HttpConfig {
        sse: false,
        max_body: 4 << 20,
        max_sessions: 1024,
        session_idle: Duration::from_secs(600),
        allowed_hosts: vec![],
        log: false,
        auth: None,
    };
    tokio::spawn(mcperr_reference::http::serve(listener, None, config));
    Ok(format!("http://{addr}/mcp"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_stderr_tail_already_shown_is_not_shown_again() {
        // One worded with a line break, the other with a space.
        let first = "2026-07-28: the server `x` did not complete a handshake (2026-07-28: no answer; stderr tail:\nboom)".to_string();
        let second = "2025-11-25: the server `x` did not complete a handshake (2025-11-25: no answer; stderr tail: boom)";
        assert_eq!(
            super::stderr_once(second, &[first]),
            "2025-11-25: the server `x` did not complete a handshake (2025-11-25: no answer; stderr tail: as above)"
        );
    }
}
