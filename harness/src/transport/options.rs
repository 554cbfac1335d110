//! The settings of each transport beyond its command or URL, declared once.
//!
//! Each struct is at the same time the command line's flags (clap flattens
//! it into `TargetArgs`), a host configuration entry's fields (serde reads
//! an `mcpServers` entry into it), and what the transport applies when it
//! starts a server or sends a request. A new option is one field here, with
//! its help text and its configuration key, and one use in the transport.
//!
//! The values stay in the command line's own form (`KEY=VALUE`, `NAME:
//! VALUE`). A configuration's maps are read into that form, a key no
//! variable or header can have refused as the file is read; the flags are
//! checked once ([`StdioOptions::check`], [`HttpOptions::check`]) before a
//! server starts: a bad value gets mcperr's one-line error (exit 2), whose
//! text passes through the run's redactor, rather than clap's, which would
//! print the value, a secret perhaps, as given.
//!
//! The structs set no `about` (`#[command(about = None)]`): flattened into
//! a subcommand, a struct's doc comment would otherwise become the help of
//! any subcommand that has none of its own.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Deserializer};

use crate::target::TargetError;

/// What a stdio server is started with besides its command line: `--cwd`
/// and `--env`, or a configuration entry's `cwd` and `env` map.
#[derive(Debug, Clone, Default, PartialEq, Eq, clap::Args, Deserialize)]
#[command(about = None, long_about = None)]
pub struct StdioOptions {
    /// Working directory for the --stdio server.
    #[arg(long, value_name = "DIR", requires = "stdio")]
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    /// Environment variable for the --stdio server (repeatable).
    #[arg(long, value_name = "KEY=VALUE", requires = "stdio")]
    #[serde(default, deserialize_with = "env_from_map")]
    pub env: Vec<String>,
}

impl StdioOptions {
    /// Fails on an `--env` that is not `KEY=VALUE`.
    pub fn check(&self) -> Result<(), TargetError> {
        for pair in &self.env {
            if !matches!(pair.split_once('='), Some((key, _)) if !key.is_empty()) {
                return Err(TargetError(format!("--env {pair:?}: expected KEY=VALUE")));
            }
        }
        Ok(())
    }

    /// The environment variables as `(KEY, VALUE)`, in the order given.
    pub fn vars(&self) -> impl Iterator<Item = (&str, &str)> {
        self.env.iter().filter_map(|pair| pair.split_once('='))
    }
}

/// What every request to an HTTP server carries besides the protocol's
/// own headers: `--header`, or a configuration entry's `headers` map (the
/// command line's come after the file's).
#[derive(Debug, Clone, Default, PartialEq, Eq, clap::Args, Deserialize)]
#[command(about = None, long_about = None)]
pub struct HttpOptions {
    /// An extra HTTP header on every request, e.g. "Authorization: Bearer …" (repeatable).
    #[arg(long, value_name = "NAME: VALUE", conflicts_with = "stdio")]
    #[serde(default, rename = "headers", deserialize_with = "headers_from_map")]
    pub header: Vec<String>,
}

impl HttpOptions {
    /// The options with a header of mcperr's own (the in-process server's token).
    pub fn with_header(name: &str, value: &str) -> HttpOptions {
        HttpOptions {
            header: vec![format!("{name}: {value}")],
        }
    }

    /// Fails on a `--header` that is not `NAME: VALUE`.
    pub fn check(&self) -> Result<(), TargetError> {
        for pair in &self.header {
            if !matches!(pair.split_once(':'), Some((name, _)) if !name.trim().is_empty()) {
                return Err(TargetError(format!(
                    "--header {pair:?}: expected \"NAME: VALUE\""
                )));
            }
        }
        Ok(())
    }

    /// The headers as `(NAME, VALUE)`, each trimmed, in the order given.
    pub fn headers(&self) -> impl Iterator<Item = (&str, &str)> {
        self.header
            .iter()
            .filter_map(|pair| pair.split_once(':'))
            .map(|(name, value)| (name.trim(), value.trim()))
    }

    /// The headers as owned pairs, to add to a request's own.
    pub fn header_pairs(&self) -> impl Iterator<Item = (String, String)> + '_ {
        self.headers()
            .map(|(name, value)| (name.to_string(), value.to_string()))
    }
}

/// A configuration's `env` map as `KEY=VALUE` (keys sorted, as the map
/// reads them); a key that is empty or holds `=` cannot be one.
fn env_from_map<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    let map = BTreeMap::<String, String>::deserialize(d)?;
    map.into_iter()
        .map(|(key, value)| {
            if key.is_empty() || key.contains('=') {
                Err(serde::de::Error::custom(format!(
                    "env: {key:?} is not an environment variable's name"
                )))
            } else {
                Ok(format!("{key}={value}"))
            }
        })
        .collect()
}

/// A configuration's `headers` map as `NAME: VALUE` (names sorted); a
/// name that is empty or holds `:` cannot be one.
fn headers_from_map<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    let map = BTreeMap::<String, String>::deserialize(d)?;
    map.into_iter()
        .map(|(name, value)| {
            if name.trim().is_empty() || name.contains(':') {
                Err(serde::de::Error::custom(format!(
                    "headers: {name:?} is not a header's name"
                )))
            } else {
                Ok(format!("{name}: {value}"))
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_configuration_entry_reads_into_the_command_line_s_form() {
        let entry: StdioOptions =
            serde_json::from_str(r#"{"cwd": "/srv", "env": {"B": "2=x", "A": "1"}}"#).unwrap();
        assert_eq!(entry.cwd, Some(PathBuf::from("/srv")));
        assert_eq!(entry.env, ["A=1", "B=2=x"]);
        assert_eq!(entry.vars().collect::<Vec<_>>(), [("A", "1"), ("B", "2=x")]);
        let http: HttpOptions =
            serde_json::from_str(r#"{"headers": {"Authorization": "Bearer t"}}"#).unwrap();
        assert_eq!(
            http.headers().collect::<Vec<_>>(),
            [("Authorization", "Bearer t")]
        );
    }

    #[test]
    fn a_value_not_in_the_flag_s_form_is_refused() {
        let env = StdioOptions {
            cwd: None,
            env: vec!["A=1".into(), "=2".into()],
        };
        assert_eq!(
            env.check().unwrap_err().0,
            "--env \"=2\": expected KEY=VALUE"
        );
        let header = HttpOptions {
            header: vec!["X-Token".into()],
        };
        assert_eq!(
            header.check().unwrap_err().0,
            "--header \"X-Token\": expected \"NAME: VALUE\""
        );
        assert!(serde_json::from_str::<StdioOptions>(r#"{"env": {"": "x"}}"#).is_err());
        assert!(serde_json::from_str::<HttpOptions>(r#"{"headers": {"a:b": "x"}}"#).is_err());
    }
}
