//! Resolving the server under test from the command line or an MCP host's
//! `mcpServers` configuration file.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;

use crate::transport::{HttpTarget, StdioTarget, Target};

/// Default cap on one stdout line (16 MiB).
pub const DEFAULT_MAX_LINE: usize = 16 << 20;

/// A bad target specification (exit code 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct TargetError(pub String);

#[derive(Debug, Deserialize)]
struct HostConfig {
    #[serde(rename = "mcpServers", alias = "servers")]
    servers: BTreeMap<String, ServerEntry>,
}

#[derive(Debug, Deserialize)]
struct ServerEntry {
    #[serde(default)]
    headers: BTreeMap<String, String>,
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    cwd: Option<PathBuf>,
    url: Option<String>,
}

/// Splits `--stdio "CMD ARGS…"` like a POSIX shell would.
pub fn from_command_line(
    cmd: &str,
    cwd: Option<PathBuf>,
    env: &[String],
) -> Result<StdioTarget, TargetError> {
    let words =
        shell_words::split(cmd).map_err(|e| TargetError(format!("--stdio {cmd:?}: {e}")))?;
    let Some((program, args)) = words.split_first() else {
        return Err(TargetError(
            "--stdio needs a command, e.g. --stdio \"python server.py\"".into(),
        ));
    };
    Ok(StdioTarget {
        program: program.clone(),
        args: args.to_vec(),
        cwd,
        env: parse_env(env)?,
        max_line: DEFAULT_MAX_LINE,
    })
}

/// Parses `--env K=V` pairs.
pub fn parse_env(pairs: &[String]) -> Result<Vec<(String, String)>, TargetError> {
    pairs
        .iter()
        .map(|p| match p.split_once('=') {
            Some((k, v)) if !k.is_empty() => Ok((k.to_string(), v.to_string())),
            _ => Err(TargetError(format!("--env {p:?}: expected KEY=VALUE"))),
        })
        .collect()
}

/// Parses `--header "K: V"` values.
pub fn parse_headers(pairs: &[String]) -> Result<Vec<(String, String)>, TargetError> {
    pairs
        .iter()
        .map(|p| match p.split_once(':') {
            Some((k, v)) if !k.trim().is_empty() => {
                Ok((k.trim().to_string(), v.trim().to_string()))
            }
            _ => Err(TargetError(format!(
                "--header {p:?}: expected \"NAME: VALUE\""
            ))),
        })
        .collect()
}

/// An HTTP target; the URL must be http:// (this build has no TLS).
pub fn http(url: &str, headers: Vec<(String, String)>) -> Result<HttpTarget, TargetError> {
    if url.starts_with("https://") {
        return Err(TargetError(format!("--http {url}: https is not supported by this build; use http:// (e.g. through a local proxy)")));
    }
    if !url.starts_with("http://") || url.len() <= "http://".len() {
        return Err(TargetError(format!(
            "--http {url:?}: expected a URL like http://127.0.0.1:8000/mcp"
        )));
    }
    Ok(HttpTarget {
        url: url.to_string(),
        headers,
        max_body: DEFAULT_MAX_LINE,
    })
}

/// Reads server `name` from an MCP host configuration (`{"mcpServers": {...}}`);
/// without a name, the file's only server (a file with more names them).
pub fn from_config(
    path: &str,
    name: Option<&str>,
    extra_headers: Vec<(String, String)>,
) -> Result<Target, TargetError> {
    let text =
        std::fs::read_to_string(path).map_err(|e| TargetError(format!("--config {path}: {e}")))?;
    let config: HostConfig = serde_json::from_str(&text)
        .map_err(|e| TargetError(format!("--config {path}: not an mcpServers JSON file: {e}")))?;
    let known = || {
        let names: Vec<&str> = config.servers.keys().map(String::as_str).collect();
        names.join(", ")
    };
    let name = match (name, config.servers.len()) {
        (Some(name), _) => name.to_string(),
        (None, 0) => {
            return Err(TargetError(format!(
                "--config {path}: its mcpServers map names no server"
            )))
        }
        (None, 1) => known(),
        (None, _) => {
            return Err(TargetError(format!(
                "--config {path}: pick a server with --server NAME (it has: {})",
                known()
            )))
        }
    };
    let name = name.as_str();
    let Some(entry) = config.servers.get(name) else {
        return Err(TargetError(format!(
            "--server {name}: not in {path} (it has: {})",
            known()
        )));
    };
    match (&entry.command, &entry.url) {
        (Some(command), _) => Ok(Target::Stdio(StdioTarget {
            program: command.clone(),
            args: entry.args.clone(),
            cwd: entry.cwd.clone(),
            env: entry
                .env
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            max_line: DEFAULT_MAX_LINE,
        })),
        (None, Some(url)) => {
            let mut headers: Vec<(String, String)> = entry
                .headers
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            headers.extend(extra_headers);
            Ok(Target::Http(http(url, headers).map_err(|e| {
                TargetError(format!("--server {name}: {e}"))
            })?))
        }
        (None, None) => Err(TargetError(format!(
            "--server {name}: has neither \"command\" nor \"url\""
        ))),
    }
}

/// The embedded reference server: this very binary, `mcperr reference`.
pub fn embedded() -> Result<StdioTarget, TargetError> {
    let exe = std::env::current_exe()
        .map_err(|e| TargetError(format!("cannot locate the mcperr binary: {e}")))?;
    Ok(StdioTarget {
        program: exe.display().to_string(),
        args: vec!["reference".into()],
        cwd: None,
        env: vec![],
        max_line: DEFAULT_MAX_LINE,
    })
}
