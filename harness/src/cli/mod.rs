//! Command-line interface: `mcperr run`, `mcperr fuzz`, `mcperr matrix`, `mcperr list`,
//! `mcperr reference`, `mcperr explain`.
//!
//! The only place that prints errors for the user and picks exit codes
//! (documented in the README): 0 all pass, 1 a failure or a stale baseline entry, 2 a
//! usage or setup error, always as one line naming what to fix.

use std::io::{self, IsTerminal};

use clap::{Args, Parser, Subcommand};
use mcperr_reference::Fault;

mod args;
mod error;
mod fuzz;
mod list;
mod matrix;
mod proxy;
mod reference;
mod requirements;
mod review;
mod run;
mod setup;
mod signals;
mod snapshot_args;

pub(crate) use args::{
    check_report_paths, ReferenceArgs, ReportArgs, RunArgs, SelectArgs, TargetArgs,
};
use list::{list, ListArgs};
pub(crate) use setup::{
    check_auth, era_choice, load_baseline, resolve_target, runtime, selection, settings,
};

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
    /// error verdict, a stale baseline entry or (with --snapshots) a new or
    /// changed snapshot not accepted, 2 a usage or setup error.
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
    /// server does, or (with --snapshots) a snapshot is new or changed; 2 a usage error or a server that could not be judged in
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
    /// Review the snapshots `run --snapshots DIR` left pending: accept, reject or skip each.
    ///
    /// Each pending snapshot (a `.snap.new` beside the accepted `.snap`) is
    /// shown with its diff; `a` accepts it (the `.snap.new` becomes the
    /// `.snap`), `r` rejects it (deleted; the accepted one stays), `s`
    /// skips it. For scripts: `--accept`, `--reject`, `--list`. The files
    /// are insta's: in a Cargo package, `cargo insta review` and `cargo
    /// insta accept` work on them too.
    ///
    /// Exit codes: 0 done (also with snapshots skipped), 2 DIR is not a
    /// folder, a pending file is not a snapshot, or no terminal to ask.
    Review(review::ReviewArgs),
}

#[derive(Debug, Args)]
struct ExplainArgs {
    /// A rule id of the table (T1-T9, R1-R6, P1-P3, J1-J7, H1-H3, U1-U2).
    #[arg(value_name = "RULE")]
    rule: String,
}

/// The page of `rule` for `mcperr explain` and docs/rules/.
pub fn rule_page(rule: mcperr_model::rules::RuleId) -> String {
    let faults: Vec<(&str, mcperr_model::rules::RuleId, &str)> = Fault::ALL
        .iter()
        .map(|f| (f.name(), f.rule(), f.description()))
        .collect();
    mcperr_core::explain::page(rule, &faults)
}

fn explain(args: ExplainArgs) -> Result<i32, CliError> {
    let rule: mcperr_model::rules::RuleId = args
        .rule
        .to_ascii_uppercase()
        .parse()
        .map_err(|e: mcperr_model::rules::UnknownId| Usage(e.0))?;
    requirements::print_out(&rule_page(rule));
    Ok(0)
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
        Command::Review(args) => review::review(args),
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
fn redactor() -> &'static std::sync::Mutex<mcperr_oracle::redact::Redactor> {
    static R: std::sync::OnceLock<std::sync::Mutex<mcperr_oracle::redact::Redactor>> =
        std::sync::OnceLock::new();
    R.get_or_init(|| {
        std::sync::Mutex::new(mcperr_oracle::redact::Redactor::from_env(std::env::vars()))
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
