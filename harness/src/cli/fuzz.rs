//! `mcperr fuzz`: parse, start the campaign with a live progress line on a
//! terminal, print each finding (shrunk, with request and response) and a
//! summary, write the JSON report and the saved cases.

use std::io::{self, IsTerminal};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Args;
use mcperr_cases::profile::Profile;
use mcperr_oracle::findings::replay::case_file;
use mcperr_protocol::Era;

use super::{
    check_report_paths, era_choice, load_baseline, out, resolve_target, settings, CliError,
    TargetArgs, Usage,
};
use crate::engine::EngineError;
use crate::fuzz::{fuzz, Budget, FuzzOutcome, FuzzSettings, Stats};
use crate::transport::{InProcess, Target};

#[derive(Debug, Args)]
pub(crate) struct FuzzArgs {
    #[command(flatten)]
    pub(crate) target: TargetArgs,
    /// How long the whole command may take, in seconds: finding the eras,
    /// starting the server, fuzzing, confirming and shrinking (with --era
    /// auto split over the eras the server speaks; each era fuzzes for 70 %
    /// of its share and shrinks in the rest). It ends within about a second
    /// more, closing the server and writing the reports. Default 10.
    #[arg(long, value_name = "N", conflicts_with = "requests")]
    pub(crate) seconds: Option<f64>,
    /// How many requests to send (split between the eras with --era auto).
    #[arg(long, value_name = "N")]
    pub(crate) requests: Option<u64>,
    /// Stop once N distinct findings are recorded (then shrink and report them).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) max_findings: Option<u64>,
    /// The seed of the request stream; printed on every run, so `--seed`
    /// repeats one exactly (with --jobs 1). Default: a fresh one.
    #[arg(long, value_name = "N")]
    pub(crate) seed: Option<u64>,
    /// Server processes to spread the campaign over, each driven by its own
    /// thread (each has its own stream: seed + index); use up to one per core.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=64))]
    pub(crate) jobs: u64,
    /// Requests in flight per server process (JSON-RPC lets a server answer
    /// in any order). Default over stdio: measured; the campaign tries 64,
    /// 32, 16, 8 and 4 for a moment each and keeps the fastest (a Node or
    /// Rust server wants a deep pipe, a Python one a shallow one); over
    /// HTTP, 64 concurrent requests.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub(crate) in_flight: Option<u64>,
    /// How strictly to grade findings: spec (MUST → fail, SHOULD → warn),
    /// model, python-sdk, or a profile TOML file.
    #[arg(long, value_name = "NAME|FILE", default_value = "spec")]
    pub(crate) profile: String,
    /// Turn every warning into a failure.
    #[arg(long)]
    pub(crate) strict: bool,
    /// Only call tools whose name matches this glob (repeatable).
    #[arg(long, value_name = "GLOB")]
    pub(crate) tools: Vec<String>,
    /// Give valid calls (the body runs; at most 16 per era and job) to tools annotated
    /// destructiveHint: false: they write but destroy nothing. Without it,
    /// valid calls go only to tools annotated readOnlyHint: true and to those
    /// named with --tools; every other tool gets only arguments its own
    /// schema rejects.
    #[arg(long)]
    pub(crate) allow_additive: bool,
    /// Also call tools annotated destructiveHint: true, and give valid calls
    /// (at most 16 per era and job) to every tool that may write.
    #[arg(long)]
    pub(crate) allow_destructive: bool,
    /// Known findings (YAML or TOML list of finding ids, or id:rule): they do not fail the run.
    #[arg(long, value_name = "FILE")]
    pub(crate) baseline: Option<String>,
    /// Write the JSON report here.
    #[arg(long, value_name = "PATH")]
    pub(crate) json: Option<PathBuf>,
    /// Write a SARIF 2.1.0 log here: one result per finding, with its rule,
    /// for code-scanning dashboards (one SARIF run per era).
    #[arg(long, value_name = "PATH")]
    pub(crate) sarif: Option<PathBuf>,
    /// Save each finding as a case file in DIR; replay with `mcperr run --cases-dir DIR`.
    #[arg(long, value_name = "DIR")]
    pub(crate) save: Option<PathBuf>,
    /// No progress line.
    #[arg(long, short)]
    pub(crate) quiet: bool,
}

fn fresh_seed() -> u64 {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    (t.as_nanos() as u64) ^ u64::from(std::process::id()).rotate_left(32)
}

/// A spinner line on stderr (only on a terminal): elapsed, requests/s, findings.
fn progress(stats: Arc<Stats>, quiet: bool) -> Option<indicatif::ProgressBar> {
    if quiet || !io::stderr().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::new_spinner();
    bar.set_style(
        indicatif::ProgressStyle::with_template("{spinner} {elapsed:>4} {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
    );
    let ticker = bar.clone();
    let start = Instant::now();
    std::thread::spawn(move || loop {
        if ticker.is_finished() {
            return;
        }
        let n = stats.requests.load(Ordering::Relaxed);
        let rate = n as f64 / start.elapsed().as_secs_f64().max(1e-3);
        ticker.set_message(format!(
            "{n} requests · {rate:.0}/s · {} findings",
            stats.findings.load(Ordering::Relaxed)
        ));
        ticker.tick();
        std::thread::sleep(Duration::from_millis(100));
    });
    Some(bar)
}

fn render(outcome: &FuzzOutcome, saved: &[(String, PathBuf)]) -> String {
    use std::fmt::Write as _;
    let r = &outcome.report;
    let mut text = mcperr_cases::select::tool_calls_block(&r.valid_calls, &r.left_out);
    for f in &r.findings {
        let tag = match (f.baselined, f.not_reproduced.is_some()) {
            (true, _) => " (baselined)",
            (false, true) => " (unconfirmed: not counted)",
            _ => "",
        };
        let eras = if f.eras.is_empty() {
            f.era.clone()
        } else {
            f.eras.join(", ")
        };
        let methods = if f.methods.is_empty() {
            String::new()
        } else {
            format!(" in {}", f.methods.join(", "))
        };
        let _ = writeln!(
            text,
            "\n{} {} [{eras}] {}{tag} · {} hit{}{methods}",
            f.verdict.as_str().to_uppercase(),
            f.rule,
            f.id,
            f.hits,
            if f.hits == 1 { "" } else { "s" }
        );
        for line in f.message.lines() {
            let _ = writeln!(text, "  {line}");
        }
        if let Some(more) = mcperr_oracle::findings::group::more_inputs(f) {
            let _ = writeln!(text, "  {more}");
        }
        let sent = mcperr_wire::text::as_sent(&f.request.to_string());
        let _ = writeln!(text, "  request:  {sent}");
        let status = f
            .http_status
            .map(|s| format!("HTTP {s} "))
            .unwrap_or_default();
        let _ = writeln!(text, "  response: {status}{}", f.response);
        if let Some((_, path)) = saved.iter().find(|(id, _)| *id == f.id) {
            let _ = writeln!(text, "  saved:    {}", path.display());
        }
        if let Some(why) = &f.not_reproduced {
            let _ = writeln!(text, "  not saved, not counted: {why}");
        }
    }
    for n in &r.not_fuzzed {
        let _ = writeln!(text, "not fuzzed: {n}");
    }
    for s in &r.slow {
        let _ = writeln!(
            text,
            "slow, not hung [{}]: {} answered after {:.1} s (beyond --timeout-ms; within --slow-ms; J4 slow)",
            s.era,
            s.lane,
            s.took_ms as f64 / 1000.0
        );
    }
    for u in &r.undecided {
        let s = if u.requests == 1 { "" } else { "s" };
        let _ = writeln!(
            text,
            "undecided [{}]: {}: {} request{s} still unanswered after up to {:.1} s when the campaign ended, before --slow-ms: slow or hung is not known, so no verdict (a longer campaign or a shorter --slow-ms decides)",
            u.era,
            u.lane,
            u.requests,
            u.waited_ms as f64 / 1000.0
        );
    }
    // An unconfirmed finding (its request alone did not show it: seen only
    // under load) is listed, not counted.
    let confirmed = || r.findings.iter().filter(|f| f.not_reproduced.is_none());
    let count = |v| confirmed().filter(|f| f.verdict == v).count();
    let unconfirmed = r.findings.len() - confirmed().count();
    let unconfirmed = if unconfirmed == 0 {
        String::new()
    } else {
        format!(", {unconfirmed} unconfirmed not counted")
    };
    let (fails, warns, errors) = (
        count(mcperr_model::Verdict::Fail),
        count(mcperr_model::Verdict::Warn),
        count(mcperr_model::Verdict::Error),
    );
    let _ = writeln!(
        text,
        "\nfuzz: {} requests in {:.1} s ({:.0}/s{}) over {}; {} findings ({fails} fail, {warns} warn, {errors} error{unconfirmed}); {} shrink requests; seed {}{}",
        r.stats.requests,
        r.stats.elapsed_s,
        r.stats.requests_per_s,
        r.stats
            .server_busy
            .map(|b| format!(", the server busy {:.0} % while sent to", b * 100.0))
            .unwrap_or_default(),
        r.eras.join(" and "),
        r.findings.len(),
        r.stats.shrink_requests,
        r.seed,
        match (r.deadline_reached, r.interrupted) {
            (true, _) => " (stopped at --deadline: the rest of the budget not spent, findings not shrunk)",
            (false, true) => " (interrupted: findings not shrunk)",
            _ => "",
        }
    );
    if r.stats.unshrunk > 0 {
        let _ = writeln!(
            text,
            "{} findings stand as found, not shrunk: --seconds was spent first (more --seconds, or --requests, leaves time to shrink)",
            r.stats.unshrunk
        );
    }
    text
}

pub(crate) fn fuzz_main(args: FuzzArgs) -> Result<i32, CliError> {
    let (target, embedded) = resolve_target(&args.target)?;
    // The embedded reference server is fuzzed in process: the stdio edge
    // `mcperr reference` serves, fed each line without a pipe between (a
    // pipe's system calls would cost the campaign more than the server's
    // own work); `--stdio "mcperr reference"` fuzzes it as a process.
    let target = if embedded {
        Target::InProcess(InProcess {
            http: false,
            sse: false,
            fault: None,
            auth: false,
        })
    } else {
        target
    };
    let choice = era_choice(&args.target.era)?;
    let mut profile = Profile::load(&args.profile)?;
    profile.strict = args.strict;
    let selection = mcperr_cases::select::Selection {
        tools: args.tools.clone(),
        allow_destructive: args.allow_destructive,
        allow_additive: args.allow_additive,
        ..Default::default()
    };
    selection.validate()?;
    let baseline = args
        .baseline
        .as_deref()
        .map(|path| load_baseline("--baseline", path))
        .transpose()?;
    check_report_paths(&[
        ("--json", args.json.as_ref()),
        ("--sarif", args.sarif.as_ref()),
    ])?;
    if let Some(dir) = &args.save {
        std::fs::create_dir_all(dir).map_err(|e| CliError::file("--save", dir.display(), e))?;
    }
    let budget = budget(&args)?;
    let seed = args.seed.unwrap_or_else(fresh_seed);
    let stats = Arc::new(Stats::default());
    super::signals::stop_campaign_on_signals(stats.clone());
    let run = settings(&args.target, target, args.jobs, String::new());
    let deadline_hit = stop_at_deadline(run.deadline, &stats);
    let info = run.target_info(embedded);
    eprintln!(
        "mcperr fuzz: {} · seed {seed} · profile {}{} · {}",
        run.target.display(),
        profile.name,
        if args.strict { " (strict)" } else { "" },
        match (budget.time, budget.requests) {
            (Some(t), _) => format!("{:.1} s over the eras it speaks", t.as_secs_f64()),
            (_, Some(r)) => format!("{r} requests over the eras it speaks"),
            _ => String::new(),
        }
    );
    let settings = FuzzSettings {
        run,
        selection,
        profile,
        seed,
        budget,
        in_flight: args.in_flight.unwrap_or(64) as usize,
        tune_in_flight: args.in_flight.is_none(),
        max_findings: args.max_findings,
        baseline,
        stats: stats.clone(),
    };
    let bar = progress(stats, args.quiet);
    // The campaign's setup and shrinking run on this one thread; with
    // --jobs N each job gets a thread and runtime of its own (campaign.rs).
    // A shared multi-thread runtime was slower than one thread (its
    // cross-thread wake-ups for every batch of answers: 18k requests/s on
    // two worker threads, 23-28k on one).
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let outcome = rt.block_on(fuzz(&settings, choice, info));
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let mut outcome = match outcome {
        Ok(o) => o,
        Err(EngineError::Setup(e)) => {
            return Err(Usage(format!(
                "{} (per-request timeout {} ms, start-up timeout {} ms)",
                e.message, args.target.timeout_ms, args.target.startup_timeout_ms
            )))
        }
        Err(e) => return Err(e.into()),
    };
    outcome.report.deadline_reached = deadline_hit.load(Ordering::SeqCst);
    let saved = match &args.save {
        Some(dir) => save_findings(dir, &outcome, seed)?,
        None => Vec::new(),
    };
    out(&render(&outcome, &saved));
    if let Some(path) = &args.json {
        super::write_report("--json", path, &outcome.report.to_json())?;
    }
    if let Some(path) = &args.sarif {
        super::write_report("--sarif", path, &sarif(&outcome.report))?;
    }
    Ok(outcome.report.exit_code())
}

/// The campaign's budget: `--requests`, or `--seconds` (10 by default).
fn budget(args: &FuzzArgs) -> Result<Budget, CliError> {
    if args.seconds.is_some_and(|s| !(s > 0.0 && s.is_finite())) {
        return Err(Usage("--seconds must be a positive number".into()));
    }
    Ok(match (args.seconds, args.requests) {
        (_, Some(r)) => Budget {
            requests: Some(r),
            ..Budget::default()
        },
        (s, None) => Budget {
            time: Some(Duration::from_secs_f64(s.unwrap_or(10.0))),
            ..Budget::default()
        },
    })
}

/// `--deadline` stops the campaign as Ctrl-C does (findings unshrunk, the
/// report written); the flag it returns says, afterwards, that it did.
fn stop_at_deadline(
    deadline: Option<std::time::Instant>,
    stats: &Arc<Stats>,
) -> Arc<std::sync::atomic::AtomicBool> {
    let deadline_hit = Arc::new(std::sync::atomic::AtomicBool::new(false));
    if let Some(at) = deadline {
        let (stats, hit) = (stats.clone(), deadline_hit.clone());
        std::thread::spawn(move || {
            std::thread::sleep(at.saturating_duration_since(std::time::Instant::now()));
            hit.store(true, Ordering::SeqCst);
            stats.stop.store(true, Ordering::SeqCst);
        });
    }
    deadline_hit
}

/// `--save DIR`: each replayable finding as a case file in `dir`, with the
/// path it was written to.
fn save_findings(
    dir: &std::path::Path,
    outcome: &crate::fuzz::FuzzOutcome,
    seed: u64,
) -> Result<Vec<(String, std::path::PathBuf)>, CliError> {
    // A finding its request alone does not show would not replay alike.
    let replayable =
        |f: &&crate::fuzz::Found| !f.input.is_stray_output() && f.finding.not_reproduced.is_none();
    let mut saved = Vec::new();
    for f in outcome.found.iter().filter(replayable) {
        let era: Era = f.finding.era.parse().unwrap_or(Era::Legacy);
        let (name, text) = case_file(&f.finding, &f.input, era, seed, f.counted);
        let path = dir.join(name);
        super::write_report("--save", &path, &text)?;
        saved.push((f.finding.id.clone(), path));
    }
    Ok(saved)
}

/// The campaign as SARIF: per era fuzzed, a run of the findings whose
/// example was found in it.
fn sarif(report: &crate::fuzz::FuzzReport) -> String {
    let runs: Vec<mcperr_core::report::RunReport> = report
        .eras
        .iter()
        .filter_map(|e| e.parse::<Era>().ok())
        .map(|era| {
            let found: Vec<&mcperr_oracle::findings::Finding> = report
                .findings
                .iter()
                .filter(|f| f.era == era.to_string())
                .collect();
            mcperr_core::report::RunReport::of_findings(
                &found,
                era,
                &report.profile,
                report.target.clone(),
                "fuzz",
            )
        })
        .collect();
    mcperr_render::sarif::render_all(&runs, None, &[])
}
