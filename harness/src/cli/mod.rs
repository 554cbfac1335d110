//! Command-line interface: `mcperr run`, `mcperr fuzz`, `mcperr matrix`, `mcperr list`,
//! `mcperr reference`, `mcperr explain`.
//!
//! The only place that prints errors for the user and picks exit codes
//! (documented in the README): 0 all pass, 1 a failure or a stale baseline entry, 2 a
//! usage or setup error, always as one line naming what to fix.

use std::io::{self, IsTerminal};
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use mcperr_core::baseline::Baseline;
use mcperr_core::select::Selection;
use mcperr_protocol::Era;
use mcperr_reference::Fault;

use crate::engine::{self, EraChoice, RunSettings};
use crate::target;
use crate::transport::Target;

mod error;
mod fuzz;
mod matrix;
mod proxy;
mod reference;
mod requirements;
mod run;
mod signals;

pub(crate) use error::CliError;
pub(crate) use error::CliError::Usage;
pub use error::EXIT_USAGE;

/// mcperr: conformance harness for the error behaviour of MCP servers.
///
/// With no target, `mcperr run` checks the embedded reference server. Point it
/// at your own server with `--stdio "CMD ARGS"`, `--http URL`, or
/// `--config FILE --server NAME` (an MCP host's mcpServers file).
#[derive(Debug, Parser)]
#[command(name = "mcperr", version, about, long_about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the conformance cases against a server and judge every rule.
    ///
    /// Exit codes: 0 all pass (or only baselined failures), 1 a failure, an
    /// error verdict or a stale baseline entry, 2 a usage or setup error.
    Run(RunArgs),
    /// Fuzz a server: requests drawn from its own schemas, judged on every answer.
    ///
    /// Valid and minimally invalid tool arguments (each breaking exactly one
    /// constraint of the tool's inputSchema), resource URIs that cannot exist
    /// or nearly match, prompt arguments missing, extra or mistyped, broken
    /// request envelopes, unknown methods, and ids of every legal kind. Every
    /// answer is judged without a script: exact ids, the era's result shapes,
    /// no stack traces, clean stdout, a live server, invalid arguments that
    /// never run a tool body. Each distinct finding is shrunk to a minimal
    /// request, printed with its response, and with --save kept as a case
    /// file that `mcperr run --cases-dir DIR` replays.
    ///
    /// Exit codes: 0 no failing finding (warnings and baselined ones allowed),
    /// 1 a failing finding or an error one (an input after which the server
    /// died or hung), 2 a usage or setup error. Ctrl-C stops early and
    /// still prints the summary and writes the reports.
    Fuzz(fuzz::FuzzArgs),
    /// Sit between a real host and a server (stdio or Streamable HTTP), and judge the server's answers as they pass.
    ///
    /// Put it in the host's configuration in place of the server's command:
    /// `"command": "mcperr", "args": ["proxy", "--json", "/tmp/r.json", "--",
    /// "python", "server.py"]`. Every byte goes through unchanged, in both
    /// directions; each answer is judged as fuzzing judges one (exact ids
    /// and framing, the era's result shapes, stack traces and secret-shaped
    /// text, invalid arguments answered as tool errors, unknown prompts and
    /// methods, requests left unanswered while later ones were answered).
    /// When the host disconnects, or on SIGINT/SIGTERM, the reports are
    /// written and the findings printed to stderr (or --log FILE); the
    /// host's stdout never carries a byte of mcperr's.
    ///
    /// Over Streamable HTTP: `mcperr proxy --listen 127.0.0.1:8931
    /// --upstream http://127.0.0.1:8000/mcp` prints the URL to give the
    /// host (http://127.0.0.1:8931/mcp), forwards every request to the
    /// server and streams each answer back as it comes (SSE included);
    /// SIGINT/SIGTERM stops it and writes the reports.
    ///
    /// Exit codes: 0 no failing finding, 1 a failing finding, 2 a usage
    /// error or a server that could not be started (or listened for).
    Proxy(proxy::ProxyArgs),
    /// Run the suite against several servers and compare them side by side.
    ///
    /// Each --server NAME=TARGET is judged in every era it speaks (servers in
    /// parallel). --html writes one self-contained page: cases as rows grouped
    /// by rule, server × transport × era as columns, each cell opening the
    /// request, the response, the expected shape and the spec section.
    /// --json lists every cell. The terminal shows a summary per column and
    /// the cases on which columns differ.
    ///
    /// Exit codes: 0 every server was judged and no gated server (one given
    /// a --baseline) has an unexpected failure or a stale entry; 1 a gated
    /// server does; 2 a usage error or a server that could not be judged in
    /// any era (the reports are still written). Servers without a baseline
    /// are compared, never gated.
    Matrix(matrix::MatrixArgs),
    /// Show what a server offers and which cases apply to it (a dry run).
    List(ListArgs),
    /// Serve the reference server (the executable error model) over stdio or HTTP.
    ///
    /// It implements every rule of the MCP error model and the Bookshop fixture
    /// in both protocol eras. `--fault NAME` makes it break exactly one rule, so
    /// that a harness can prove it catches that deviation.
    Reference(ReferenceArgs),
    /// Explain a rule from the rule table: what it checks, each aspect's level
    /// and spec sentence per era with its link, how the profiles grade it,
    /// the reference fault that proves it can fail, and the cases and fuzz
    /// classes that check it (the same text as docs/rules/<RULE>.md).
    ///
    /// Examples: `mcperr explain T4`, `mcperr explain J1`.
    Explain(ExplainArgs),
    /// List the spec's error requirements and what checks each.
    ///
    /// Every sentence of an era's spec with an RFC 2119 keyword that
    /// constrains what a server does when something goes wrong, by section:
    /// the rules and aspects that judge it, or why nothing does (client-side,
    /// not observable on the wire, needs server internals, needs a second
    /// session, credentials mcperr is not given, a permission, or not yet checked). Totals
    /// first. The registry is fixtures/requirements/<era>.toml; the same
    /// table is docs/requirements/<era>.md.
    ///
    /// Examples: `mcperr requirements`, `mcperr requirements --era 2026-07-28 --json`.
    Requirements(requirements::RequirementsArgs),
}

#[derive(Debug, Args)]
struct ExplainArgs {
    /// A rule id of the table (T1-T9, R1-R6, P1-P3, J1-J7, H1-H3, U1-U2).
    #[arg(value_name = "RULE")]
    rule: String,
}

/// The page of `rule` for `mcperr explain` and docs/rules/.
pub fn rule_page(rule: mcperr_core::rules::RuleId) -> String {
    let faults: Vec<(&str, &str, &str)> = Fault::ALL
        .iter()
        .map(|f| (f.name(), f.rule(), f.description()))
        .collect();
    mcperr_core::explain::page(rule, &faults)
}

fn explain(args: ExplainArgs) -> Result<i32, CliError> {
    let rule: mcperr_core::rules::RuleId = args
        .rule
        .to_ascii_uppercase()
        .parse()
        .map_err(|e: mcperr_core::rules::UnknownId| Usage(e.0))?;
    requirements::print_out(&rule_page(rule));
    Ok(0)
}

#[derive(Debug, Args, Clone)]
pub(crate) struct TargetArgs {
    /// The server as a command line, run as a child over stdio (split like a shell).
    #[arg(long, value_name = "\"CMD ARGS…\"", conflicts_with_all = ["config", "http"])]
    pub(crate) stdio: Option<String>,
    /// The server's Streamable HTTP endpoint, e.g. http://127.0.0.1:8000/mcp.
    #[arg(long, value_name = "URL", conflicts_with = "config")]
    pub(crate) http: Option<String>,
    /// An extra HTTP header on every request, e.g. "Authorization: Bearer …" (repeatable).
    #[arg(long, value_name = "NAME: VALUE", conflicts_with = "stdio")]
    pub(crate) header: Vec<String>,
    /// Working directory for the --stdio server.
    #[arg(long, value_name = "DIR", requires = "stdio")]
    pub(crate) cwd: Option<PathBuf>,
    /// Environment variable for the --stdio server (repeatable).
    #[arg(long, value_name = "KEY=VALUE", requires = "stdio")]
    pub(crate) env: Vec<String>,
    /// An MCP host configuration file with an "mcpServers" map (use with --server).
    #[arg(long, value_name = "FILE", requires = "server")]
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
    /// (the source documents' error model: every deviation fails), python-sdk
    /// (model plus the MCP Python SDK's exact texts and log lines), or the path
    /// of a profile TOML file.
    #[arg(long, value_name = "NAME|FILE", default_value = "spec")]
    pub(crate) profile: String,
    /// Turn every warning into a failure (as h2spec's strict mode does).
    #[arg(long)]
    pub(crate) strict: bool,
    /// Only cases whose id matches this glob (repeatable), e.g. 'tools/*'.
    #[arg(long, value_name = "GLOB")]
    pub(crate) cases: Vec<String>,
    /// Only call tools whose name matches this glob (repeatable). A tool named
    /// here also gets a valid sample call, as read-only tools do.
    #[arg(long, value_name = "GLOB")]
    pub(crate) tools: Vec<String>,
    /// Also call tools annotated destructiveHint: true (never called otherwise).
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
        use mcperr_core::report::{html, junit, markdown, sarif};
        let files = [
            ("--json", &self.json, set.to_json()),
            ("--junit", &self.junit, junit::render_all(&set.runs)),
            ("--html", &self.html, html::render_all(&set.runs)),
            (
                "--markdown",
                &self.markdown,
                markdown::render_all(&set.runs),
            ),
            (
                "--sarif",
                &self.sarif,
                sarif::render_all(&set.runs, self.sarif_location.as_deref()),
            ),
        ];
        for (flag, path, text) in files {
            if let Some(path) = path {
                write_report(flag, path, &text)?;
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
    /// Run independent cases on N server processes. Each pays the server's
    /// start-up, so this pays off only when the suite outlasts a start-up.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=64))]
    pub(crate) jobs: u64,
    /// Print only failures and the summary.
    #[arg(long, short)]
    pub(crate) quiet: bool,
}

#[derive(Debug, Args)]
struct ListArgs {
    #[command(flatten)]
    target: TargetArgs,
    #[command(flatten)]
    select: SelectArgs,
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

/// A wire trace on stderr when `MCPERR_LOG` (or `RUST_LOG`) asks for one,
/// e.g. `MCPERR_LOG=mcperr::wire=debug`: every line and HTTP exchange sent
/// and received.
fn init_tracing() {
    let Some(filter) = ["MCPERR_LOG", "RUST_LOG"]
        .iter()
        .find_map(|k| std::env::var(k).ok().filter(|v| !v.is_empty()))
    else {
        return;
    };
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
        .with_writer(io::stderr)
        .with_ansi(io::stderr().is_terminal())
        .try_init();
}

/// Runs the CLI and returns the process exit code.
pub fn main() -> i32 {
    let cli = Cli::parse();
    init_tracing();
    if !matches!(
        cli.command,
        Command::Reference(_) | Command::Fuzz(_) | Command::Proxy(_)
    ) {
        signals::stop_servers_on_signals();
    }
    let result = match cli.command {
        Command::Reference(args) => return reference::main(args),
        Command::Run(args) => run::run(args),
        Command::Fuzz(args) => fuzz::fuzz_main(args),
        Command::Proxy(args) => proxy::proxy_main(args),
        Command::List(args) => list(args),
        Command::Matrix(args) => matrix::matrix(args),
        Command::Explain(args) => explain(args),
        Command::Requirements(args) => requirements::requirements(args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("mcperr: error: {}", redact(&e.message()));
            e.exit_code()
        }
    }
}

/// The run's secrets: secret-looking environment variables (mcperr's own,
/// and the `--env` given to a stdio server) and `--header` values. Every
/// report written and every line printed passes through it.
fn redactor() -> &'static std::sync::Mutex<mcperr_core::redact::Redactor> {
    static R: std::sync::OnceLock<std::sync::Mutex<mcperr_core::redact::Redactor>> =
        std::sync::OnceLock::new();
    R.get_or_init(|| {
        std::sync::Mutex::new(mcperr_core::redact::Redactor::from_env(std::env::vars()))
    })
}

/// `text` with the run's secrets redacted.
pub(crate) fn redact(text: &str) -> String {
    redactor()
        .lock()
        .map_or_else(|_| text.to_string(), |r| r.redact(text))
}

/// Writes a report file, its secrets redacted (`flag` names the option in errors).
pub(crate) fn write_report(flag: &str, path: &std::path::Path, text: &str) -> Result<(), CliError> {
    std::fs::write(path, redact(text)).map_err(|e| CliError::file(flag, path.display(), e))
}

/// Writes to stdout, secrets redacted; a closed stdout (`mcperr list | head`)
/// is not an error. (SIGPIPE stays ignored: a dying server's stdin must not
/// kill mcperr.)
pub(crate) fn out(text: &str) {
    use std::io::Write;
    let text = redact(text);
    let mut stdout = io::stdout().lock();
    let _ = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush());
}

/// Reads and parses a `--baseline` file (`flag` names the option in errors).
pub(crate) fn load_baseline(flag: &str, path: &str) -> Result<Baseline, CliError> {
    let text = std::fs::read_to_string(path).map_err(|e| CliError::file(flag, path, &e))?;
    Baseline::parse(path, &text).map_err(|e| CliError::file(flag, path, &e))
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

pub(crate) fn era_choice(s: &str) -> Result<EraChoice, CliError> {
    match s {
        "auto" => Ok(EraChoice::Auto),
        other => other
            .parse::<Era>()
            .map(EraChoice::Pinned)
            .map_err(|e| Usage(format!("--era: {e}, or auto"))),
    }
}

pub(crate) fn resolve_target(t: &TargetArgs) -> Result<(Target, bool), CliError> {
    let headers = target::parse_headers(&t.header)?;

    let target = match (&t.stdio, &t.http, &t.config, &t.server) {
        (Some(cmd), _, _, _) => {
            Target::Stdio(target::from_command_line(cmd, t.cwd.clone(), &t.env)?)
        }
        (None, Some(url), _, _) => Target::Http(target::http(url, headers)?),
        (None, None, Some(config), Some(name)) => target::from_config(config, name, headers)?,
        _ => Target::Stdio(target::embedded()?),
    };
    // Whatever the server is given (--env, --header, or a config file's env
    // and headers) stays out of every report.
    if let Ok(mut r) = redactor().lock() {
        match &target {
            Target::Stdio(s) => {
                for (k, v) in s
                    .env
                    .iter()
                    .filter(|(k, _)| mcperr_core::redact::looks_secret(k))
                {
                    r.add_env(k, v);
                }
            }
            Target::Http(h) => {
                for (name, value) in &h.headers {
                    r.add_header(name, value);
                }
            }
            Target::InProcess(_) => {}
        }
    }
    let target = match target {
        Target::Stdio(mut s) => {
            s.max_line = t.max_line;
            Target::Stdio(s)
        }
        Target::Http(mut h) => {
            h.max_body = t.max_line;
            Target::Http(h)
        }
        other => other,
    };
    let embedded = t.stdio.is_none() && t.http.is_none() && t.config.is_none();
    Ok((target, embedded))
}

/// `--auth-required` judges a protected HTTP server with the token given
/// as a header: both must be there (exit 2 otherwise).
pub(crate) fn check_auth(select: &SelectArgs, target: &Target) -> Result<(), CliError> {
    if !select.auth_required {
        return Ok(());
    }
    let Target::Http(http) = target else {
        return Err(Usage(
            "--auth-required judges a protected server over HTTP: give its URL with --http".into(),
        ));
    };
    if !http
        .headers
        .iter()
        .any(|(k, _)| k.eq_ignore_ascii_case("authorization"))
    {
        return Err(Usage(
            "--auth-required needs the token: --header \"Authorization: Bearer TOKEN\"".into(),
        ));
    }
    Ok(())
}

pub(crate) fn selection(select: &SelectArgs) -> Result<Selection, CliError> {
    let files = match &select.cases_dir {
        Some(dir) => case_files(dir)?,
        None => vec![],
    };
    let auth_limited = match &select.auth_limited_header {
        None => None,
        Some(h) => match h.split_once(':') {
            Some((name, value)) if name.trim().eq_ignore_ascii_case("authorization") => {
                Some(value.trim().to_string())
            }
            _ => {
                return Err(Usage(format!(
                    "--auth-limited-header {h:?}: expected \"Authorization: Bearer TOKEN\""
                )))
            }
        },
    };
    let s = Selection {
        cases: select.cases.clone(),
        tools: select.tools.clone(),
        allow_destructive: select.allow_destructive,
        files,
        auth_required: select.auth_required,
        auth_limited,
    };
    s.validate()?;
    Ok(s)
}

/// Every case file under `dir` (recursively), in path order.
fn case_files(dir: &std::path::Path) -> Result<Vec<mcperr_core::case::Case>, CliError> {
    let mut paths = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let entries =
            std::fs::read_dir(&d).map_err(|e| CliError::file("--cases-dir", d.display(), e))?;
        for entry in entries.flatten() {
            let p = entry.path();
            if p.is_dir() {
                todo.push(p);
            } else if p.extension().is_some_and(|x| x == "toml") {
                paths.push(p);
            }
        }
    }
    paths.sort();
    if paths.is_empty() {
        return Err(Usage(format!(
            "--cases-dir {}: no *.toml case files in it",
            dir.display()
        )));
    }
    paths
        .iter()
        .map(|p| {
            let text = std::fs::read_to_string(p)
                .map_err(|e| Usage(format!("--cases-dir: {}: {e}", p.display())))?;
            mcperr_core::case::Case::parse(&p.display().to_string(), &text)
                .map_err(|e| Usage(e.to_string()))
        })
        .collect()
}

pub(crate) fn settings(t: &TargetArgs, target: Target, jobs: u64, canary: String) -> RunSettings {
    RunSettings::new(
        target,
        Duration::from_millis(t.timeout_ms.max(1)),
        Duration::from_millis(t.startup_timeout_ms.max(1)),
        jobs as usize,
        canary,
    )
    .with_slow_timeout(Duration::from_millis(t.slow_ms.max(1)))
    .with_deadline(deadline(t))
}

/// When `--deadline` ends the command, counted from now.
pub(crate) fn deadline(t: &TargetArgs) -> Option<std::time::Instant> {
    t.deadline
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map(|s| std::time::Instant::now() + Duration::from_secs_f64(s))
}

pub(crate) fn runtime() -> Result<tokio::runtime::Runtime, CliError> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?)
}

fn list(args: ListArgs) -> Result<i32, CliError> {
    let (target, _) = resolve_target(&args.target)?;
    let choice = era_choice(&args.target.era)?;
    check_auth(&args.select, &target)?;
    let selection = selection(&args.select)?;
    let settings = settings(&args.target, target, 1, String::new());
    let rt = runtime()?;
    rt.block_on(async {
        let opened = engine::open(&settings, choice, &selection)
            .await
            .map_err(|e| Usage(e.to_string()))?;
        let era = opened.client.era;
        opened.client.conn.close().await;
        out(&render_listing(
            &settings.target.display(),
            era,
            &opened.discovery,
            &opened.plan,
        ));
        Ok(0)
    })
}

/// The `mcperr list` text: what the server offers and which cases apply.
fn render_listing(
    shown: &str,
    era: Era,
    discovery: &mcperr_core::discovery::Discovery,
    plan: &mcperr_core::select::RunPlan,
) -> String {
    use std::fmt::Write as _;
    let mut text = String::new();
    let _ = writeln!(text, "server: {shown} · era {era}");
    let _ = writeln!(text, "serverInfo: {}", discovery.server_info);
    let names = |list: &[serde_json::Value], key: &str| -> String {
        let v: Vec<&str> = list
            .iter()
            .filter_map(|x| x.get(key).and_then(|n| n.as_str()))
            .collect();
        if v.is_empty() {
            "(none)".to_string()
        } else {
            v.join(", ")
        }
    };
    let _ = writeln!(text, "tools:      {}", names(&discovery.tools, "name"));
    let _ = writeln!(text, "resources:  {}", names(&discovery.resources, "uri"));
    let _ = writeln!(
        text,
        "templates:  {}",
        names(&discovery.templates, "uriTemplate")
    );
    let _ = writeln!(text, "prompts:    {}", names(&discovery.prompts, "name"));
    let planned = &plan.cases;
    let _ = write!(
        text,
        "\n{}",
        mcperr_core::select::tool_calls_block(&plan.tool_calls, &plan.left_out)
    );
    let runs = planned.iter().filter(|(_, v)| v.is_ok()).count();
    let _ = writeln!(
        text,
        "\ncases: {runs} would run, {} would be skipped",
        planned.len() - runs
    );
    for (case, verdict) in planned.iter() {
        match verdict {
            Ok(()) => {
                let _ = writeln!(text, "  run   {:<4} {}", case.rule, case.id);
            }
            Err(why) => {
                let _ = writeln!(text, "  skip  {:<4} {}  ({why})", case.rule, case.id);
            }
        }
    }
    text
}
