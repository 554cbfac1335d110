//! `mcperr matrix`: the suite against several servers side by side (in
//! parallel: they are independent), written as one self-contained HTML page
//! and a JSON report listing every cell; the terminal gets a summary per
//! column and the cases on which the columns disagree.

use std::path::PathBuf;

use clap::Args;
use mcperr_cases::profile::Profile;
use mcperr_core::baseline::Baseline;
use mcperr_core::report::TargetInfo;
use mcperr_model::verdict::Verdict;
use mcperr_protocol::Era;
use mcperr_render::html;
use mcperr_render::matrix::Matrix;

use super::snapshot_args::SnapshotPlan;
use super::{
    check_report_paths, era_choice, load_baseline, out, runtime, selection, CliError, SelectArgs,
    Usage,
};
use crate::engine::{self, EraChoice, RunSettings};
use crate::matrix::{embedded_http, run_matrix, Server, ServerTarget};
use crate::target;
use crate::transport::Target;
use mcperr_render::snapshot::Snapshot;

#[derive(Debug, Args)]
pub(crate) struct MatrixArgs {
    /// A server under test as NAME=TARGET (repeatable; columns keep this
    /// order). TARGET is `stdio:CMD ARGS…` (a child over stdio, split like a
    /// shell), `http:URL` (a running Streamable HTTP endpoint), or
    /// `reference` (the embedded reference server, over stdio and HTTP). A
    /// NAME given once with stdio: and once with http: is one server over
    /// both. E.g. --server py='stdio:python bookshop.py' --server
    /// py=http:http://127.0.0.1:8765/mcp --server ts=http:http://127.0.0.1:8766/mcp
    #[arg(long = "server", value_name = "NAME=TARGET", required = true)]
    pub(crate) servers: Vec<String>,
    /// Protocol era: auto (every era each server speaks; a stdio server gets
    /// a fresh process per era, an http: endpoint is the one running server;
    /// an era a server does not speak is noted, not failed), 2025-11-25 or
    /// 2026-07-28.
    #[arg(long, value_name = "ERA", default_value = "auto")]
    pub(crate) era: String,
    #[command(flatten)]
    pub(crate) select: SelectArgs,
    /// Per-request timeout in milliseconds.
    #[arg(long, value_name = "N", default_value_t = 5000)]
    pub(crate) timeout_ms: u64,
    /// Timeout of each server's start-up handshake in milliseconds.
    #[arg(long, value_name = "N", default_value_t = 10000)]
    pub(crate) startup_timeout_ms: u64,
    /// Write the page here: cases as rows grouped by rule, servers × era ×
    /// transport as columns, each cell opening its request, response,
    /// expected shape and spec section; filters by rule and verdict.
    #[arg(long, value_name = "PATH")]
    pub(crate) html: Option<PathBuf>,
    /// Write the JSON report here: every column, row and cell.
    #[arg(long, value_name = "PATH")]
    pub(crate) json: Option<PathBuf>,
    /// Known failures of one server, as NAME=FILE (YAML or TOML, as for
    /// `run`; repeatable). A server given a baseline is gated: a failure or
    /// error it does not list, in any of its columns, or an entry that fails
    /// in none of them (stale), makes the exit code 1. Servers without one
    /// are compared, not gated. An empty baseline gates on every failure.
    #[arg(long, value_name = "NAME=FILE")]
    pub(crate) baseline: Vec<String>,
    /// Print only the summary per column.
    #[arg(long, short)]
    pub(crate) quiet: bool,
    #[command(flatten)]
    pub(crate) snapshots: super::snapshot_args::SnapshotArgs,
}

/// What `--server NAME=TARGET` names.
enum Spec {
    Reference,
    One(Target, &'static str),
}

impl Spec {
    /// `stdio` or `http`; both for the reference server.
    fn transport(&self) -> &'static str {
        match self {
            Spec::Reference => "both",
            Spec::One(_, kind) => kind,
        }
    }
}

fn parse_server(arg: &str) -> Result<(String, Spec), CliError> {
    let usage = |why: &str| {
        Usage(format!(
            "--server {arg:?}: {why}; expected NAME=stdio:CMD, NAME=http:URL or NAME=reference"
        ))
    };
    let (name, target) = arg.split_once('=').ok_or_else(|| usage("no '='"))?;
    let name = name.trim();
    if name.is_empty() {
        return Err(usage("the name is empty"));
    }
    let spec = if target == "reference" {
        Spec::Reference
    } else if let Some(cmd) = target.strip_prefix("stdio:") {
        Spec::One(
            Target::Stdio(target::from_command_line(cmd, Default::default())?),
            "stdio",
        )
    } else if let Some(url) = target
        .strip_prefix("http:")
        .filter(|u| !u.starts_with("//"))
    {
        Spec::One(Target::Http(target::http(url, Default::default())?), "http")
    } else if target.starts_with("http://") || target.starts_with("https://") {
        Spec::One(
            Target::Http(target::http(target, Default::default())?),
            "http",
        )
    } else {
        return Err(usage("unknown target"));
    };
    Ok((name.to_string(), spec))
}

/// The `--server` arguments by name: a name given twice, once over stdio
/// and once over HTTP, is one server with both transports (its columns side
/// by side, one baseline).
fn servers_by_name(args: &MatrixArgs) -> Result<Vec<(String, Vec<Spec>)>, CliError> {
    let mut parsed: Vec<(String, Vec<Spec>)> = Vec::new();
    for s in &args.servers {
        let (name, spec) = parse_server(s)?;
        match parsed.iter_mut().find(|(n, _)| *n == name) {
            None => parsed.push((name, vec![spec])),
            Some((_, specs)) => {
                let clash = specs.iter().any(|old| old.transport() == spec.transport())
                    || matches!(spec, Spec::Reference)
                    || specs.iter().any(|old| matches!(old, Spec::Reference));
                if clash {
                    return Err(Usage(format!(
                        "--server: the name {name:?} is given twice over the same transport; a name takes at most one stdio: and one http: target"
                    )));
                }
                specs.push(spec);
            }
        }
    }
    Ok(parsed)
}

/// Each `--baseline NAME=FILE`, read, for a server that is named.
fn baselines_by_name(
    args: &MatrixArgs,
    parsed: &[(String, Vec<Spec>)],
) -> Result<std::collections::HashMap<String, Baseline>, CliError> {
    let mut baselines = std::collections::HashMap::new();
    for b in &args.baseline {
        let (name, path) = b
            .split_once('=')
            .ok_or_else(|| Usage(format!("--baseline {b:?}: expected NAME=FILE")))?;
        if !parsed.iter().any(|(n, _)| n == name) {
            return Err(Usage(format!(
                "--baseline {b:?}: no --server is named {name:?}"
            )));
        }
        let baseline = load_baseline("--baseline", path)?;
        if baselines.insert(name.to_string(), baseline).is_some() {
            return Err(Usage(format!(
                "--baseline: {name:?} has two baselines; merge them into one file"
            )));
        }
    }
    Ok(baselines)
}

pub(crate) fn matrix(args: MatrixArgs) -> Result<i32, CliError> {
    let parsed = servers_by_name(&args)?;
    let mut baselines = baselines_by_name(&args, &parsed)?;
    let eras: Vec<Era> = match era_choice(&args.era)? {
        EraChoice::Pinned(e) => vec![e],
        EraChoice::Auto => vec![Era::Modern, Era::Legacy],
    };
    let mut profile = Profile::load(&args.select.profile)?;
    profile.strict = args.select.strict;
    let selection = selection(&args.select)?;
    check_report_paths(&[
        ("--html", args.html.as_ref()),
        ("--json", args.json.as_ref()),
    ])?;
    let snapshots = args.snapshots.plan()?;
    let canary = engine::canary();
    let settings = |t: Target| {
        RunSettings::new(
            t,
            std::time::Duration::from_millis(args.timeout_ms.max(1)),
            std::time::Duration::from_millis(args.startup_timeout_ms.max(1)),
            1,
            canary.clone(),
        )
    };
    let rt = runtime()?;
    let (matrix, judged) = rt.block_on(async {
        let mut servers = Vec::new();
        for (name, specs) in parsed {
            let mut targets = Vec::new();
            // Only the embedded reference server's runs share nothing.
            let independent = specs.iter().all(|s| matches!(s, Spec::Reference));
            for spec in specs {
                targets.extend(match spec {
                    Spec::Reference => {
                        let url = embedded_http().await.map_err(|e| {
                            Usage(format!(
                            "cannot listen on a loopback port for the embedded HTTP server: {e}"
                        ))
                        })?;
                        let stdio = settings(Target::Stdio(target::embedded()?));
                        let info = stdio.target_info(true);
                        let http = settings(Target::Http(target::http(&url, Default::default())?));
                        let mut http_info = http.target_info(true);
                        http_info.url = Some(url);
                        vec![
                            ServerTarget::new(stdio, info),
                            ServerTarget::new(http, http_info),
                        ]
                    }
                    Spec::One(t, kind) => {
                        let s = settings(t);
                        let info = TargetInfo {
                            kind: kind.to_string(),
                            ..s.target_info(false)
                        };
                        vec![ServerTarget::new(s, info)]
                    }
                });
            }
            let baseline = baselines.remove(&name);
            servers.push(Server {
                name,
                targets,
                baseline,
                independent,
            });
        }
        run_matrix(&servers, &eras, &selection, &profile)
            .await
            .map_err(CliError::from)
    })?;
    if let Some(path) = &args.html {
        super::write_report("--html", path, &html::render_matrix(&matrix))?;
    }
    if let Some(path) = &args.json {
        super::write_report("--json", path, &matrix.to_json())?;
    }
    out(&render_terminal(&matrix, args.quiet));
    let snapshot_code = match &snapshots {
        Some(plan) => record_snapshots(plan, &matrix, &canary, &args.select)?,
        None => 0,
    };
    // A server that could not be judged in any era makes its columns errors
    // only: that is a setup error, as for `mcperr run`. Verdicts are the
    // page's content and do not set the exit code.
    let unjudged: Vec<&str> = judged
        .iter()
        .zip(&args.servers)
        .filter(|(j, _)| j.runs.is_empty())
        .map(|(_, s)| s.as_str())
        .collect();
    if !unjudged.is_empty() {
        return Err(Usage(format!(
            "could not judge {} in any era (see \"not judged\" above; the reports were written)",
            unjudged.join(", ")
        )));
    }
    let gate = matrix.gate();
    if gate.is_empty() {
        return Ok(snapshot_code);
    }
    let mut text = format!("\nThe gate fails ({}):\n", gate.len());
    for g in &gate {
        text.push_str(&format!("  {g}\n"));
    }
    out(&text);
    Ok(1)
}

/// Every cell's snapshot under DIR/<server>/<transport>-<era>/, each
/// column with its own redactions (its endpoint's port).
fn record_snapshots(
    plan: &SnapshotPlan,
    matrix: &Matrix,
    canary: &str,
    select: &SelectArgs,
) -> Result<i32, CliError> {
    let mut redactions = std::collections::BTreeMap::new();
    for c in &matrix.columns {
        let key = (c.server.as_str(), c.transport.as_str(), c.era.as_str());
        redactions.insert(key, plan.redactions(canary, c.target.url.as_deref()));
    }
    let mut snaps = Vec::new();
    for cell in &matrix.cells {
        let key = (
            cell.server.as_str(),
            cell.transport.as_str(),
            cell.era.as_str(),
        );
        if let (Some(r), Some(red)) = (&cell.result, redactions.get(&key)) {
            snaps.push(Snapshot::of(Some(key.0), key.1, key.2, r, red));
        }
    }
    let recording = plan.record(snaps, select)?;
    out(&recording.text);
    Ok(recording.code)
}

/// The terminal's view: a line per column, then the cases on which the
/// columns disagree, as a row of verdict marks per case.
fn render_terminal(m: &Matrix, quiet: bool) -> String {
    use std::fmt::Write as _;
    let mut t = String::new();
    let width = m
        .columns
        .iter()
        .map(|c| c.server.len() + c.label().len() + 1)
        .max()
        .unwrap_or(0);
    for c in &m.columns {
        let s = &c.summary;
        let _ = writeln!(
            t,
            "{:<width$}  {} passed, {} failed, {} warned, {} skipped, {} errors",
            format!("{} {}", c.server, c.label()),
            s.pass,
            s.fail,
            s.warn,
            s.skip,
            s.error
        );
    }
    for n in &m.not_judged {
        let _ = writeln!(t, "not judged: {}", n.replace('\n', " "));
    }
    if quiet {
        return t;
    }
    let mark = |v: Option<Verdict>| match v {
        Some(Verdict::Pass) => '.',
        Some(Verdict::Fail) => 'F',
        Some(Verdict::Warn) => 'W',
        Some(Verdict::Skip) => 's',
        Some(Verdict::Error) => 'E',
        None => ' ',
    };
    let mut differing = Vec::new();
    for (r, row) in m.rows.iter().enumerate() {
        let marks: String = (0..m.columns.len())
            .map(|c| mark(m.cell(r, c).verdict))
            .collect();
        let ran: Vec<char> = marks.chars().filter(|c| *c != ' ').collect();
        if ran.windows(2).any(|w| w[0] != w[1]) {
            differing.push(format!("  [{marks}] {:<4} {}", row.rule, row.case));
        }
    }
    let _ = writeln!(
        t,
        "\n{} of {} cases differ between columns (. pass, F fail, W warn, s skip, E error, blank: not run); columns in the order above:",
        differing.len(),
        m.rows.len()
    );
    for d in differing {
        let _ = writeln!(t, "{d}");
    }
    t
}
