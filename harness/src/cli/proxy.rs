//! `mcperr proxy -- CMD ARGS…`: put mcperr between a real host and a stdio
//! server (in the host's configuration, in place of the server's command),
//! forward every byte unchanged, judge the server's answers as they pass,
//! and write the usual reports when the host disconnects or a signal comes.
//! Its stdout belongs to the host: everything mcperr says goes to stderr or
//! to `--log FILE`.
//!
//! `mcperr proxy --listen ADDR --upstream URL`: the same over Streamable
//! HTTP; the host is pointed at the printed URL instead of the server's,
//! and the reports are written when a signal stops the proxy.

use std::io::Write as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::Args;
use mcperr_cases::profile::Profile;
use mcperr_core::proxy::Observer;
use mcperr_core::report::{RunSet, TargetInfo};
use mcperr_oracle::findings::replay::case_file;
use mcperr_protocol::Era;

use super::{era_choice, load_baseline, redact, CliError, ReportArgs, Usage};
use crate::engine::EraChoice;
use crate::proxy::http::{serve, HttpProxySettings};
use crate::proxy::{relay, ProxySettings};

#[derive(Debug, Args)]
pub(crate) struct ProxyArgs {
    /// The era to judge in: auto (the one the host and the server agree on
    /// in the handshake, or the first request's envelope names), 2025-11-25
    /// or 2026-07-28.
    #[arg(long, value_name = "ERA", default_value = "auto")]
    era: String,
    /// How strictly to judge: spec, model, python-sdk or a profile TOML file.
    #[arg(long, value_name = "NAME|FILE", default_value = "spec")]
    profile: String,
    /// Turn every warning into a failure.
    #[arg(long)]
    strict: bool,
    /// Known findings (finding ids, or id:rule): they do not fail the run.
    #[arg(long, value_name = "FILE")]
    baseline: Option<String>,
    #[command(flatten)]
    reports: ReportArgs,
    /// Save each finding as a case file in DIR; replay with
    /// `mcperr run --stdio CMD --cases-dir DIR`.
    #[arg(long, value_name = "DIR")]
    save: Option<PathBuf>,
    /// Write mcperr's own messages (the summary, the findings) to FILE
    /// instead of stderr (which the host may show as the server's log).
    #[arg(long, value_name = "FILE")]
    log: Option<PathBuf>,
    /// Longest line judged, in bytes (longer ones are forwarded, not judged).
    #[arg(long, value_name = "BYTES", default_value_t = 16 * 1024 * 1024)]
    max_line: usize,
    /// How long the server may take to exit after the host closes its
    /// stdin, in milliseconds, before its process group is killed.
    #[arg(long, value_name = "MS", default_value_t = 2000)]
    exit_grace_ms: u64,
    /// Over Streamable HTTP: the address to serve the host on (port 0 picks
    /// a free one). The URL to give the host is printed on stdout, e.g.
    /// http://127.0.0.1:8931/mcp for an upstream ending in /mcp.
    #[arg(long, value_name = "ADDR", requires = "upstream")]
    listen: Option<String>,
    /// Over Streamable HTTP: the server's MCP endpoint URL, e.g.
    /// http://127.0.0.1:8000/mcp. Every request reaching --listen is
    /// forwarded to its host and port with the request's own path; the
    /// ones to this URL's path are judged. SIGINT or SIGTERM stops the
    /// proxy and writes the reports.
    #[arg(
        long,
        value_name = "URL",
        requires = "listen",
        conflicts_with = "server"
    )]
    upstream: Option<String>,
    /// The server's command line, after `--` (as the host would run it).
    #[arg(
        last = true,
        required_unless_present = "upstream",
        value_name = "SERVER"
    )]
    server: Vec<String>,
}

/// What a proxied session leaves for the reports, whichever the transport.
struct Session {
    observer: Observer,
    /// What was proxied: the server's command, or where the host connects.
    what: String,
    target: TargetInfo,
    /// Shown after the findings, to stderr or the log.
    summary: String,
    /// The era the saved cases replay in, and how they are replayed.
    replay: String,
}

/// Where mcperr's own words go: never the host's stdout.
fn diagnostics(log: &Option<PathBuf>) -> Result<Box<dyn std::io::Write>, CliError> {
    Ok(match log {
        Some(path) => Box::new(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map_err(|e| CliError::file("--log", path.display(), e))?,
        ),
        None => Box::new(std::io::stderr()),
    })
}

pub(crate) fn proxy_main(args: ProxyArgs) -> Result<i32, CliError> {
    let era = match era_choice(&args.era)? {
        EraChoice::Pinned(e) => Some(e),
        EraChoice::Auto => None,
    };
    let mut profile = Profile::load(&args.profile)?;
    profile.strict = args.strict;
    let baseline = args
        .baseline
        .as_deref()
        .map(|path| load_baseline("--baseline", path))
        .transpose()?;
    args.reports.check()?;
    if let Some(dir) = &args.save {
        std::fs::create_dir_all(dir).map_err(|e| CliError::file("--save", dir.display(), e))?;
    }
    let mut log = diagnostics(&args.log)?;
    let observer = Observer::new(profile.clone(), era);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Usage(format!("could not start the runtime: {e}")))?;
    let session = match (&args.listen, &args.upstream) {
        (Some(listen), Some(upstream)) => {
            over_http(&rt, &args, listen, upstream, observer, &mut log)
        }
        _ => over_stdio(&rt, &args, observer),
    };
    // tokio reads stdin on a blocking thread that a runtime's drop would
    // wait for: a host that keeps its stdin open (or a signal) must not
    // hold the proxy there.
    rt.shutdown_background();
    let session = session?;
    let era: Era = session.observer.era();
    let (mut found, seen) = session.observer.finish(Instant::now());
    for (f, _) in &mut found {
        f.baselined = baseline
            .as_ref()
            .is_some_and(|b| b.lists_finding(&f.id, f.rule));
    }
    let mut saved = 0;
    if let Some(dir) = &args.save {
        for (f, input) in found.iter().filter(|(_, i)| !i.is_stray_output()) {
            let (name, text) = case_file(f, input, era, 0, false);
            super::write_report("--save", &dir.join(name), &text)?;
            saved += 1;
        }
    }
    let report = Observer::report(&found, era, &profile.name, session.target);
    let set = RunSet::new(vec![report]);
    args.reports.write(&set)?;
    let mut text = format!(
        "mcperr proxy: {} · era {era} · profile {}\n",
        session.what, profile.name
    );
    for (f, _) in &found {
        text.push_str(&format!(
            "{} {} {}{} · {} hit{} in {}\n  {}\n  request:  {}\n  response: {}\n",
            f.verdict.as_str().to_uppercase(),
            f.rule,
            f.id,
            if f.baselined { " (baselined)" } else { "" },
            f.hits,
            if f.hits == 1 { "" } else { "s" },
            f.methods.join(", "),
            match mcperr_oracle::findings::group::more_inputs(f) {
                Some(more) => format!("{}\n  {more}", f.message.replace('\n', "\n  ")),
                None => f.message.replace('\n', "\n  "),
            },
            mcperr_wire::text::as_sent(&f.request.to_string()),
            f.response
        ));
    }
    text.push_str(&format!(
        "proxy: {} requests from the host, {} answers judged, {} unanswered when the host left{}; {} findings{}; {}\n",
        seen.requests,
        seen.judged,
        seen.unanswered,
        if seen.rejected > 0 {
            format!(", {} refused at the HTTP level (not judged)", seen.rejected)
        } else {
            String::new()
        },
        found.len(),
        if saved > 0 {
            format!(" ({saved} saved; replay: mcperr run {} --era {era} --cases-dir DIR)", session.replay)
        } else {
            String::new()
        },
        session.summary,
    ));
    let _ = log.write_all(redact(&text).as_bytes());
    let _ = log.flush();
    Ok(set.exit_code())
}

/// Relays a host's stdio to the server it names, until the host leaves.
fn over_stdio(
    rt: &tokio::runtime::Runtime,
    args: &ProxyArgs,
    observer: Observer,
) -> Result<Session, CliError> {
    let (program, rest) = args.server.split_first().ok_or_else(|| {
        Usage("name the server's command after --, or use --listen ADDR --upstream URL".into())
    })?;
    let settings = ProxySettings {
        program: program.clone(),
        args: rest.to_vec(),
        max_line: args.max_line,
        exit_grace: Duration::from_millis(args.exit_grace_ms),
    };
    let command = shell_words::join(&args.server);
    let relayed = rt
        .block_on(relay(
            &settings,
            tokio::io::stdin(),
            tokio::io::stdout(),
            observer,
            stop_signal(),
        ))
        .map_err(CliError::from)?;
    let summary = format!(
        "{} bytes to the server, {} to the host; the server {}{}",
        relayed.bytes.0,
        relayed.bytes.1,
        relayed.server_exit,
        if relayed.server_left_first {
            " before the host left"
        } else {
            ""
        },
    );
    Ok(Session {
        observer: relayed.observer,
        what: command.clone(),
        target: TargetInfo {
            kind: "proxy".into(),
            command: Some(command.clone()),
            url: None,
        },
        summary,
        replay: format!("--stdio {}", shell_words::quote(&command)),
    })
}

/// Serves a host over Streamable HTTP, forwarding to `upstream`, until a
/// signal stops it.
fn over_http(
    rt: &tokio::runtime::Runtime,
    args: &ProxyArgs,
    listen: &str,
    upstream: &str,
    observer: Observer,
    log: &mut Box<dyn std::io::Write>,
) -> Result<Session, CliError> {
    let url = reqwest::Url::parse(upstream).map_err(|e| {
        Usage(format!(
            "--upstream {upstream}: not a URL ({e}); e.g. http://127.0.0.1:8000/mcp"
        ))
    })?;
    if url.scheme() != "http" || url.host_str().is_none() {
        return Err(Usage(format!(
            "--upstream {upstream}: only http://HOST:PORT/PATH URLs are supported by this build (https is not)"
        )));
    }
    let listener = rt
        .block_on(tokio::net::TcpListener::bind(listen))
        .map_err(|e| Usage(format!("--listen {listen}: cannot listen there: {e}")))?;
    let addr = listener
        .local_addr()
        .map_err(|e| Usage(format!("--listen {listen}: {e}")))?;
    let path = url.path().to_string();
    // The URL to give the host, on stdout (which no host reads here), as
    // `mcperr reference --http` prints its own.
    println!("http://{addr}{path}");
    let _ = std::io::stdout().flush();
    let _ = writeln!(
        log,
        "mcperr proxy: listening on http://{addr}{path}, forwarding to {url}; SIGINT or SIGTERM stops it and writes the reports"
    );
    let _ = log.flush();
    let settings = HttpProxySettings {
        upstream: url.clone(),
        max_body: args.max_line,
        connect_timeout: Duration::from_secs(10),
    };
    let relayed = rt
        .block_on(serve(
            listener,
            settings,
            observer.over_http(),
            stop_signal(),
        ))
        .map_err(CliError::from)?;
    let summary = format!(
        "{} HTTP requests forwarded{}; {} body bytes to the server, {} to the host",
        relayed.requests,
        if relayed.unreachable > 0 {
            format!(
                " ({} could not reach the server: answered 502)",
                relayed.unreachable
            )
        } else {
            String::new()
        },
        relayed.bytes.0,
        relayed.bytes.1,
    );
    Ok(Session {
        observer: relayed.observer,
        what: format!("http://{addr}{path} → {url}"),
        target: TargetInfo {
            kind: "proxy".into(),
            command: None,
            url: Some(url.to_string()),
        },
        summary,
        replay: format!("--http {}", shell_words::quote(url.as_str())),
    })
}

/// Resolves on SIGINT or SIGTERM (a host stopping its server sends one):
/// the relay then stops, the server is stopped, and the reports are written.
async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let (Ok(mut int), Ok(mut term)) = (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
        ) else {
            return std::future::pending().await;
        };
        tokio::select! {
            _ = int.recv() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    std::future::pending::<()>().await
}
