//! The errors of mcperr itself (not of the server under test), in one place:
//! each is printed as one line naming what to fix, and owns its exit code.
//! A run's outcomes (0 all pass, 1 a failure or a stale baseline entry) are
//! not errors; every variant here exits 2.

/// Exit code for usage and setup errors.
pub const EXIT_USAGE: i32 = 2;

/// What went wrong before or around a run: one variant per source, so a
/// caller can tell a bad flag from a server that will not start without
/// reading the text. Each prints as its source's own one line.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CliError {
    /// A flag's value is wrong, flags conflict, or an input does not parse.
    #[error("{0}")]
    Usage(String),
    /// A file mcperr must read or write: the flag, the path, the OS reason.
    #[error("{flag} {path}: {reason}")]
    File {
        /// The option that named it (`--baseline`, `--json`, …).
        flag: String,
        /// The path.
        path: String,
        /// Why it could not be read or written.
        reason: String,
    },
    /// The server under test: a bad `--stdio`, `--http` or host-config
    /// entry, or a server that would not start.
    #[error(transparent)]
    Target(#[from] crate::target::TargetError),
    /// A case selection (`--cases`, `--tools`, …) that names nothing or
    /// does not parse.
    #[error(transparent)]
    Selection(#[from] mcperr_cases::select::SelectError),
    /// A `--profile` that does not parse or names an unknown rule.
    #[error(transparent)]
    Profile(#[from] mcperr_cases::profile::ProfileError),
    /// A run that could not be set up: the server did not start or answer
    /// its handshake, or the selection left nothing to run.
    #[error(transparent)]
    Engine(#[from] crate::engine::EngineError),
    /// A case file (`--cases-dir`) that does not parse.
    #[error(transparent)]
    Case(#[from] mcperr_cases::case::CaseError),
    /// A `--part` or `--parts` file that does not parse.
    #[error(transparent)]
    Part(#[from] mcperr_cases::parts::PartError),
    /// `mcperr proxy --` whose server would not start.
    #[error(transparent)]
    ProxySpawn(#[from] crate::proxy::stdio::SpawnError),
    /// `mcperr proxy --listen` that could not listen or reach its upstream.
    #[error(transparent)]
    ProxyHttp(#[from] crate::proxy::http::HttpProxyError),
    /// The snapshots folder, its redactions or `INSTA_UPDATE`.
    #[error(transparent)]
    Snapshot(#[from] crate::snapshots::SnapshotError),
    /// The async runtime a command runs on could not be built (the OS
    /// refused a thread or an event queue): the OS's own words.
    #[error(transparent)]
    Runtime(#[from] std::io::Error),
}

impl CliError {
    /// A file error for `flag`'s `path`.
    pub(crate) fn file(
        flag: &str,
        path: impl std::fmt::Display,
        reason: impl std::fmt::Display,
    ) -> CliError {
        CliError::File {
            flag: flag.to_string(),
            path: path.to_string(),
            reason: reason.to_string(),
        }
    }

    /// The one line printed after `mcperr: error: `.
    pub(crate) fn message(&self) -> String {
        self.to_string().replace('\n', " ")
    }

    /// The process exit code: every error of mcperr itself is a usage or
    /// setup error (a run's failures are outcomes, not errors).
    pub(crate) fn exit_code(&self) -> i32 {
        EXIT_USAGE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_error_is_one_line_and_exits_2() {
        let e = CliError::file("--json", "/nope/r.json", "No such file\nor directory");
        assert_eq!(
            e.message(),
            "--json /nope/r.json: No such file or directory"
        );
        assert_eq!(e.exit_code(), 2);
        let target = CliError::from(crate::target::TargetError("no such\ncommand".into()));
        assert_eq!(target.message(), "no such command");
        assert_eq!(target.exit_code(), 2);
    }
}
