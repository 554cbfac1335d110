//! `mcperr run`: judge every era the server speaks (each on a fresh
//! process) or the one `--era` pins; with no target, the embedded reference
//! server over stdio and over Streamable HTTP on a loopback port. Prints a
//! report per run and a summary line per era and transport; writes the
//! JSON, JUnit and HTML reports, also when setup fails.

use std::io::{self, IsTerminal};

use mcperr_cases::profile::Profile;
use mcperr_core::report::RunSet;
use mcperr_protocol::Era;
use mcperr_render::{markdown, terminal};

use super::{
    check_auth, era_choice, load_baseline, out, resolve_target, runtime, selection, settings,
    CliError, RunArgs, Usage,
};
use crate::engine::{self, EraChoice};
use crate::matrix::{embedded_http, judge, Judged, Server, ServerTarget};
use crate::target;
use crate::transport::Target;

/// GitHub Actions workflow commands: an `::error` per failure or error
/// that is not baselined and a `::warning` per warning, so each shows as an
/// annotation on the run (printed only when `GITHUB_ACTIONS=true`).
pub(crate) fn github_annotations(runs: &[mcperr_core::report::RunReport]) -> String {
    // The workflow-command escapes: %, CR and LF in data; also : and , in properties.
    let data = |s: &str| {
        s.replace('%', "%25")
            .replace('\r', "%0D")
            .replace('\n', "%0A")
    };
    let prop = |s: &str| data(s).replace(':', "%3A").replace(',', "%2C");
    let mut text = String::new();
    for r in runs {
        for c in &r.cases {
            let kind = match c.verdict {
                mcperr_model::Verdict::Fail | mcperr_model::Verdict::Error if !c.baselined => {
                    "error"
                }
                mcperr_model::Verdict::Warn => "warning",
                _ => continue,
            };
            let title = prop(&format!(
                "mcperr {} {} ({} {})",
                c.rule, c.id, r.era, r.transport
            ));
            text.push_str(&format!(
                "::{kind} title={title}::{}\n",
                data(&format!(
                    "{}\n{}\nReproduce: {}",
                    c.message.trim(),
                    c.spec,
                    markdown::reproduce(r, c)
                ))
            ));
        }
    }
    text
}

pub(crate) fn run(args: RunArgs) -> Result<i32, CliError> {
    let (target, embedded) = resolve_target(&args.target)?;
    let choice = era_choice(&args.target.era)?;
    let mut profile = Profile::load(&args.select.profile)?;
    profile.strict = args.select.strict;
    check_auth(&args.select, &target)?;
    let selection = selection(&args.select)?;
    let baseline = args
        .baseline
        .as_deref()
        .map(|path| load_baseline("--baseline", path))
        .transpose()?;
    args.reports.check()?;
    let snapshots = args.snapshots.plan()?;
    let eras: Vec<Era> = match choice {
        EraChoice::Pinned(e) => vec![e],
        EraChoice::Auto => vec![Era::Modern, Era::Legacy],
    };
    let canary = engine::canary();
    let rt = runtime()?;
    let judged = rt.block_on(async {
        let mut targets = vec![target];
        if embedded {
            let url = embedded_http().await.map_err(|e| {
                Usage(format!(
                    "cannot listen on a loopback port for the embedded HTTP server: {e}"
                ))
            })?;
            targets.push(Target::Http(target::http(&url, Default::default())?));
        }
        let targets = targets
            .into_iter()
            .map(|t| {
                let settings = settings(&args.target, t, args.jobs, canary.clone());
                let mut info = settings.target_info(embedded);
                if embedded && settings.target.is_http() {
                    info.url = Some(settings.target.display());
                }
                ServerTarget::new(settings, info)
            })
            .collect();
        let server = Server {
            name: String::new(),
            targets,
            baseline: None, // applied by `judge` below, per run
            independent: embedded,
        };
        judge(&server, &eras, &selection, &profile, baseline.as_ref())
            .await
            .map_err(CliError::from)
    })?;
    // A server that cannot be started at all: its one message says why
    // (after an era it was judged in, the judged runs are kept instead).
    if let (Some(message), true) = (&judged.unstartable, judged.runs.is_empty()) {
        args.reports.write(&RunSet::new(judged.failed_setups))?;
        return Err(Usage(message.clone()));
    }
    let Judged {
        runs,
        failed_setups,
        notes,
        ..
    } = judged;
    if runs.is_empty() {
        // Setup failed in every era: the requested reports still say what happened.
        // Each report's one error case says what happened.
        args.reports.write(&RunSet::new(failed_setups))?;
        return Err(Usage(format!(
            "{} (per-request timeout {} ms, start-up timeout {} ms)",
            notes.join("; "),
            args.target.timeout_ms,
            args.target.startup_timeout_ms
        )));
    }
    let mut set = RunSet::new(runs);
    set.not_judged = notes;
    // Before the reports are written: each run's report says what became
    // of its snapshots (the GitHub Action reads it there).
    let recording = snapshots
        .as_ref()
        .map(|plan| plan.record_runs(&mut set.runs, &canary, &args.select))
        .transpose()?;
    // A baseline entry failing in one era or transport is not stale in the others.
    set.keep_stale_in_all();
    let colour = io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let detail = match (args.quiet, args.verbose) {
        (true, _) => terminal::Detail::Quiet,
        (_, true) => terminal::Detail::Verbose,
        _ => terminal::Detail::Normal,
    };
    // A lone surrogate sent is shown as the escape that went out.
    out(&mcperr_wire::text::as_sent(&terminal::render_set(
        &set, colour, detail,
    )));
    let runs = &set.runs;
    if std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true") {
        out(&github_annotations(runs));
    }
    args.reports.write(&set)?;
    let mut code = set.exit_code();
    if let Some(recording) = &recording {
        out(&recording.text);
        code = code.max(recording.code);
    }
    if let Some(min) = args.min_coverage {
        for r in runs {
            let percent = r.coverage.as_ref().map_or(100, |c| c.percent());
            if percent < min {
                out(&format!(
                    "COVERAGE {} over {} judged {percent} % of the requirements that apply, below --min-coverage {min}\n",
                    r.era, r.transport
                ));
                code = code.max(1);
            }
        }
    }
    Ok(code)
}
