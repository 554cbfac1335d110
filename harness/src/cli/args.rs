//! The flags the subcommands share (the target, the case selection, the
//! reports) and those of `mcperr run` and `mcperr reference`, with the help
//! text `--help` shows.

use std::path::PathBuf;

use clap::Args;
use mcperr_reference::Fault;

use crate::target;

use super::{write_report, CliError};

#[derive(Debug, Args, Clone)]
pub(crate) struct TargetArgs {
    /// The server as a command line, run as a child over stdio (split like a shell).
    #[arg(long, value_name = "\"CMD ARGS…\"", conflicts_with_all = ["config", "http"])]
    pub(crate) stdio: Option<String>,
    /// The server's Streamable HTTP endpoint, e.g. http://127.0.0.1:8000/mcp.
    #[arg(long, value_name = "URL", conflicts_with = "config")]
    pub(crate) http: Option<String>,
    /// `--header`: what the HTTP transport adds to every request.
    #[command(flatten)]
    pub(crate) http_options: crate::transport::HttpOptions,
    /// `--cwd` and `--env`: what the stdio transport starts the server with.
    #[command(flatten)]
    pub(crate) stdio_options: crate::transport::StdioOptions,
    /// An MCP host configuration file with an "mcpServers" map: its only
    /// server, or the one --server names.
    #[arg(long, value_name = "FILE")]
    pub(crate) config: Option<String>,
    /// The server's name in the --config file.
    #[arg(long, value_name = "NAME", requires = "config")]
    pub(crate) server: Option<String>,
    /// Protocol era: auto (judge every era the server speaks, each on a fresh
    /// process), 2025-11-25 or 2026-07-28.
    #[arg(long, value_name = "ERA", default_value = "auto")]
    pub(crate) era: String,
    /// Per-request timeout in milliseconds.
    #[arg(long, value_name = "N", default_value_t = 5000)]
    pub(crate) timeout_ms: u64,
    /// Timeout of the start-up handshake in milliseconds (a server may be slow to start).
    #[arg(long, value_name = "N", default_value_t = 10000)]
    pub(crate) startup_timeout_ms: u64,
    /// How long the first request of a method that outlives --timeout-ms is
    /// waited for while the server answers others, in milliseconds: answered
    /// by then, the method is slow (a warning at most; its later requests get
    /// this long); not, it is hung (J4), and its remaining cases are errors at
    /// once instead of one timeout each.
    #[arg(long, value_name = "N", default_value_t = 30000)]
    pub(crate) slow_ms: u64,
    /// Bound the whole command, in seconds: when it is reached, what is not
    /// done is left out (cases not run are skips saying so; a campaign stops
    /// and its findings go unshrunk), and the reports are still written.
    #[arg(long, value_name = "SECONDS")]
    pub(crate) deadline: Option<f64>,
    /// Longest stdout line (stdio) or response body (HTTP) accepted, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = target::DEFAULT_MAX_LINE)]
    pub(crate) max_line: usize,
}

#[derive(Debug, Args)]
pub(crate) struct SelectArgs {
    /// How strictly to judge: spec (the era's MUSTs fail, SHOULDs warn), model
    /// (the source documents' error model is exact: any deviation of the tools,
    /// resources, prompts and crash rows fails; everything else as under spec),
    /// python-sdk (model plus the MCP Python SDK's exact texts and log lines),
    /// or the path of a profile TOML file. `mcperr explain RULE` shows what
    /// each profile gives each aspect.
    #[arg(long, value_name = "NAME|FILE", default_value = "spec")]
    pub(crate) profile: String,
    /// Turn every warning into a failure (as h2spec's strict mode does).
    #[arg(long)]
    pub(crate) strict: bool,
    /// Only cases whose id matches this glob (repeatable), e.g. 'tools/*'.
    #[arg(long, value_name = "GLOB")]
    pub(crate) cases: Vec<String>,
    /// Only call tools whose name matches this glob (repeatable). A tool named
    /// here also gets valid calls (its body runs), as read-only tools do;
    /// one annotated destructiveHint: true is called only with
    /// --allow-destructive as well (a glob is no consent to destroy).
    #[arg(long, value_name = "GLOB")]
    pub(crate) tools: Vec<String>,
    /// Give valid calls (the body runs) to tools annotated destructiveHint:
    /// false: they write (create, store, commit) but destroy nothing. Without
    /// it they get only arguments their schema rejects.
    #[arg(long)]
    pub(crate) allow_additive: bool,
    /// Also call tools annotated destructiveHint: true (never called
    /// otherwise), and give valid calls to every tool that may write.
    #[arg(long)]
    pub(crate) allow_destructive: bool,
    /// Run the case files (*.toml) in DIR instead of the built-in and
    /// generated cases, e.g. the findings `mcperr fuzz --save DIR` wrote.
    #[arg(long, value_name = "DIR")]
    pub(crate) cases_dir: Option<PathBuf>,
    /// The server is a protected resource: also judge how it refuses
    /// requests without a valid token (401 with a Bearer challenge, no data)
    /// and its protected-resource metadata (rule A1). Needs --http and the
    /// token as --header "Authorization: Bearer TOKEN"; mcperr never guesses
    /// that a server is protected.
    #[arg(long)]
    pub(crate) auth_required: bool,
    /// With --auth-required, a header with a token that lacks a scope the
    /// server's tools need, e.g. "Authorization: Bearer READONLY": a
    /// tools/call with it must get 403 insufficient_scope.
    #[arg(long, value_name = "HEADER", requires = "auth_required")]
    pub(crate) auth_limited_header: Option<String>,
    /// Name what plays a part a case needs, e.g. --part
    /// 'progress=count_slowly:{"n":40}' (a tool and its arguments as JSON)
    /// or --part failing-resource=db://down (a resource's URI); repeatable.
    /// mcperr finds most parts from what the server lists and how it answers
    /// valid calls; `mcperr list` shows each part, what plays it and how it
    /// was found. Naming a tool is consent to call it with those arguments.
    #[arg(long, value_name = "PART=TARGET[:JSON]")]
    pub(crate) part: Vec<String>,
    /// A TOML file of parts (`[parts.progress]` with `tool = "…"`,
    /// `arguments = {…}` and optionally `message`, the exact text its
    /// failure carries; `uri` or `prompt` for the others); --part wins.
    #[arg(long, value_name = "FILE")]
    pub(crate) parts: Option<PathBuf>,
    /// Make no probing calls before the cases (by default each tool that
    /// gets valid calls is called once with a progressToken, and each prompt
    /// with one required argument is got once, to find who plays the parts
    /// progress, asks-input, succeeds, structured and prompt-arg); those
    /// parts then come only from --part, --parts and the listings.
    #[arg(long)]
    pub(crate) no_probe: bool,
}

/// The report files of a judged run (`run` and `proxy` write the same ones).
#[derive(Debug, Args)]
pub(crate) struct ReportArgs {
    /// Write the JSON report here.
    #[arg(long, value_name = "PATH")]
    pub(crate) json: Option<PathBuf>,
    /// Write a JUnit XML report here.
    #[arg(long, value_name = "PATH")]
    pub(crate) junit: Option<PathBuf>,
    /// Write an HTML report here.
    #[arg(long, value_name = "PATH")]
    pub(crate) html: Option<PathBuf>,
    /// Write a Markdown summary here (counts, then each failure and warning
    /// with its rule, the spec's sentence, the request and response folded,
    /// and the command that reproduces it): fit for a pull-request comment
    /// or $GITHUB_STEP_SUMMARY.
    #[arg(long, value_name = "PATH")]
    pub(crate) markdown: Option<PathBuf>,
    /// Write a SARIF 2.1.0 log here (the rule table as rules, one result per
    /// failure, error and warning, located by server, era, transport and case).
    #[arg(long, value_name = "PATH")]
    pub(crate) sarif: Option<PathBuf>,
    /// Also locate each SARIF result in FILE, a path relative to the
    /// repository root (the server's entry point, or the CI workflow):
    /// GitHub code scanning refuses results that name no file.
    #[arg(long, value_name = "FILE", requires = "sarif")]
    pub(crate) sarif_location: Option<String>,
}

impl ReportArgs {
    /// Fails (exit 2) before any work when a report's directory is missing.
    pub(crate) fn check(&self) -> Result<(), CliError> {
        check_report_paths(&[
            ("--json", self.json.as_ref()),
            ("--junit", self.junit.as_ref()),
            ("--html", self.html.as_ref()),
            ("--markdown", self.markdown.as_ref()),
            ("--sarif", self.sarif.as_ref()),
        ])
    }

    /// Writes every report asked for.
    pub(crate) fn write(&self, set: &mcperr_core::report::RunSet) -> Result<(), CliError> {
        use mcperr_render::{html, junit, markdown, sarif};
        let files = [
            ("--json", &self.json, set.to_json()),
            (
                "--junit",
                &self.junit,
                junit::render_all(&set.runs, &set.not_judged),
            ),
            ("--html", &self.html, html::render_all(set)),
            ("--markdown", &self.markdown, markdown::render_all(set)),
            (
                "--sarif",
                &self.sarif,
                sarif::render_all(&set.runs, self.sarif_location.as_deref(), &set.not_judged),
            ),
        ];
        for (flag, path, text) in files {
            if let Some(path) = path {
                // A lone surrogate sent is shown as the escape that went
                // out, not as mcperr's internal placeholder.
                write_report(flag, path, &mcperr_wire::text::as_sent(&text))?;
            }
        }
        Ok(())
    }
}

#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    #[command(flatten)]
    pub(crate) target: TargetArgs,
    #[command(flatten)]
    pub(crate) select: SelectArgs,
    /// Known failures (YAML or TOML: case-id or case-id:rule); they do not fail the run.
    #[arg(long, value_name = "FILE")]
    pub(crate) baseline: Option<String>,
    #[command(flatten)]
    pub(crate) reports: ReportArgs,
    #[command(flatten)]
    pub(crate) snapshots: super::snapshot_args::SnapshotArgs,
    /// Run independent cases on N server processes. Each pays the server's
    /// start-up, so this pays off only when the suite outlasts a start-up.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=64))]
    pub(crate) jobs: u64,
    /// Print only failures, errors, warnings and the summary (no tools
    /// block; skipped cases counted, not listed).
    #[arg(long, short, conflicts_with = "verbose")]
    pub(crate) quiet: bool,
    /// Print every run in full: a line per case (passes and skips too),
    /// each failure's request and response whole. By default findings are
    /// grouped by cause, one example each, and skips counted by reason.
    #[arg(long, short)]
    pub(crate) verbose: bool,
    /// Fail the run (exit 1) when, in any era and transport, it judged less
    /// than PERCENT of the requirements mcperr checks that apply to the
    /// server (each run prints its coverage: judged, applicable, and why the
    /// rest were not reached). A run that judged little then never reads as
    /// a clean pass in CI.
    #[arg(long, value_name = "PERCENT", value_parser = clap::value_parser!(u32).range(0..=100))]
    pub(crate) min_coverage: Option<u32>,
}

#[derive(Debug, Args)]
pub(crate) struct ReferenceArgs {
    /// Inject one named deviation from the error model (see --list-faults).
    #[arg(long, value_name = "NAME")]
    pub(crate) fault: Option<Fault>,
    /// Print every fault with the rule it breaks, then exit.
    #[arg(long)]
    pub(crate) list_faults: bool,
    /// Serve Streamable HTTP on ADDR (e.g. 127.0.0.1:0) instead of stdio; the
    /// bound URL is printed on stdout, then only logs on stderr.
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = "127.0.0.1:0")]
    pub(crate) http: Option<String>,
    /// Over HTTP, answer every request as a text/event-stream.
    #[arg(long, requires = "http")]
    pub(crate) sse: bool,
    /// Over HTTP, the largest request body accepted (bytes).
    #[arg(long, value_name = "BYTES", default_value_t = 4 << 20, requires = "http")]
    pub(crate) max_body: usize,
    /// Over HTTP, serve as a protected resource: every request needs
    /// `Authorization: Bearer TOKEN` (else 401 with a Bearer challenge naming
    /// the protected-resource metadata, served at
    /// /.well-known/oauth-protected-resource/mcp). Judge it with `mcperr run
    /// --http URL --auth-required --header "Authorization: Bearer TOKEN"`.
    #[arg(long, value_name = "TOKEN", requires = "http")]
    pub(crate) auth_token: Option<String>,
    /// With --auth-token, a second token that may do everything but
    /// tools/call (which it gets a 403 insufficient_scope for).
    #[arg(long, value_name = "TOKEN", requires = "auth_token")]
    pub(crate) auth_limited_token: Option<String>,
}

/// Checks before a run that each report path can be written, so that a typo
/// cannot cost a whole run; without truncating a report an early error
/// would then leave empty (the run writes each one whole at its end).
pub(crate) fn check_report_paths(paths: &[(&str, Option<&PathBuf>)]) -> Result<(), CliError> {
    for (flag, path) in paths {
        if let Some(path) = path {
            std::fs::OpenOptions::new()
                .append(true)
                .create(true)
                .open(path)
                .map_err(|e| CliError::file(flag, path.display(), &e))?;
        }
    }
    Ok(())
}
