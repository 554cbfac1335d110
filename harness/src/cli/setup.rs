//! From flags to what a run needs: the target (a command, a URL, or a
//! host's configuration), the era, the case selection, the baseline, the
//! settings and the runtime; each bad flag a one-line usage error.

use std::time::Duration;

use mcperr_cases::select::Selection;
use mcperr_core::baseline::Baseline;
use mcperr_protocol::Era;

use crate::engine::{EraChoice, RunSettings};
use crate::target;
use crate::transport::Target;

use super::args::{SelectArgs, TargetArgs};
use super::{redactor, CliError, Usage};

/// Reads and parses a `--baseline` file (`flag` names the option in errors).
pub(crate) fn load_baseline(flag: &str, path: &str) -> Result<Baseline, CliError> {
    let text = std::fs::read_to_string(path).map_err(|e| CliError::file(flag, path, &e))?;
    Baseline::parse(path, &text).map_err(|e| CliError::file(flag, path, &e))
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
    t.http_options.check()?;
    let target = match (&t.stdio, &t.http, &t.config, &t.server) {
        (Some(cmd), _, _, _) => {
            Target::Stdio(target::from_command_line(cmd, t.stdio_options.clone())?)
        }
        (None, Some(url), _, _) => Target::Http(target::http(url, t.http_options.clone())?),
        (None, None, Some(config), name) => {
            target::from_config(config, name.as_deref(), &t.http_options)?
        }
        _ => Target::Stdio(target::embedded()?),
    };
    // Whatever the server is given (--env, --header, or a config file's env
    // and headers) stays out of every report.
    if let Ok(mut r) = redactor().lock() {
        match &target {
            Target::Stdio(s) => {
                for (k, v) in s
                    .options
                    .vars()
                    .filter(|(k, _)| mcperr_oracle::redact::looks_secret(k))
                {
                    r.add_env(k, v);
                }
            }
            Target::Http(h) => {
                for (name, value) in h.options.headers() {
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
        .options
        .headers()
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
        allow_additive: select.allow_additive,
        files,
        auth_required: select.auth_required,
        auth_limited,
        parts: named_parts(select)?,
        no_probe: select.no_probe,
    };
    s.validate()?;
    Ok(s)
}

/// The players the user named: the `--parts` file, then each `--part`.
fn named_parts(select: &SelectArgs) -> Result<mcperr_cases::parts::Cast, CliError> {
    let mut cast = match &select.parts {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| CliError::file("--parts", path.display(), e))?;
            mcperr_cases::parts::parse_file(&text, &format!("--parts {}", path.display()))
                .map_err(CliError::from)?
        }
        None => Default::default(),
    };
    for value in &select.part {
        let (name, player) = mcperr_cases::parts::parse_flag(value).map_err(CliError::from)?;
        cast.insert(name, player);
    }
    Ok(cast)
}

/// Every case file under `dir` (recursively), in path order.
pub(crate) fn case_files(dir: &std::path::Path) -> Result<Vec<mcperr_cases::case::Case>, CliError> {
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
            mcperr_cases::case::Case::parse(&p.display().to_string(), &text).map_err(CliError::from)
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
