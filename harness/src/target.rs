//! Resolving the server under test from the command line or an MCP host's
//! `mcpServers` configuration file.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::transport::{HttpOptions, HttpTarget, StdioOptions, StdioTarget, Target};

/// Default cap on one stdout line (16 MiB).
pub const DEFAULT_MAX_LINE: usize = 16 << 20;

/// A bad target specification (exit code 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct TargetError(pub String);

#[derive(Debug, Deserialize)]
struct HostConfig {
    /// Each entry is read only when it is the one chosen: a host's file may
    /// hold servers in shapes mcperr does not take (another host's keys, a
    /// variable name no process can have), and those are not the user's
    /// concern when they test another server.
    #[serde(rename = "mcpServers", alias = "servers")]
    servers: BTreeMap<String, serde_json::Value>,
}

#[derive(Debug, Deserialize)]
struct ServerEntry {
    #[serde(flatten)]
    http: HttpOptions,
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(flatten)]
    stdio: StdioOptions,
    url: Option<String>,
}

/// Splits `--stdio "CMD ARGS…"` like a POSIX shell would.
pub fn from_command_line(cmd: &str, options: StdioOptions) -> Result<StdioTarget, TargetError> {
    let words =
        shell_words::split(cmd).map_err(|e| TargetError(format!("--stdio {cmd:?}: {e}")))?;
    let Some((program, args)) = words.split_first() else {
        return Err(TargetError(
            "--stdio needs a command, e.g. --stdio \"python server.py\"".into(),
        ));
    };
    options.check()?;
    Ok(StdioTarget {
        program: program.clone(),
        args: args.to_vec(),
        options,
        max_line: DEFAULT_MAX_LINE,
    })
}

/// An HTTP target; the URL must be http:// (this build has no TLS).
pub fn http(url: &str, options: HttpOptions) -> Result<HttpTarget, TargetError> {
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
        options,
        max_body: DEFAULT_MAX_LINE,
    })
}

/// Reads server `name` from an MCP host configuration (`{"mcpServers": {...}}`);
/// without a name, the file's only server (a file with more names them).
pub fn from_config(
    path: &str,
    name: Option<&str>,
    extra: &HttpOptions,
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
    let entry = ServerEntry::deserialize(entry)
        .map_err(|e| TargetError(format!("--config {path}: server {name}: {e}")))?;
    match (&entry.command, &entry.url) {
        (Some(command), _) => Ok(Target::Stdio(StdioTarget {
            program: command.clone(),
            args: entry.args.clone(),
            options: entry.stdio.clone(),
            max_line: DEFAULT_MAX_LINE,
        })),
        (None, Some(url)) => {
            let mut options = entry.http.clone();
            options.header.extend(extra.header.iter().cloned());
            Ok(Target::Http(http(url, options).map_err(|e| {
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
        options: StdioOptions::default(),
        max_line: DEFAULT_MAX_LINE,
    })
}
