//! The errors of mcperr itself (not of the server under test), in one place:
//! each is printed as one line naming what to fix, and owns its exit code.
//! A run's outcomes (0 all pass, 1 a failure or a stale baseline entry) are
//! not errors; every variant here exits 2.

/// Exit code for usage and setup errors.
pub const EXIT_USAGE: i32 = 2;

/// What went wrong before or around a run.
#[derive(Debug)]
pub(crate) enum CliError {
    /// A flag's value is wrong, flags conflict, or an input does not parse
    /// (a case, profile or rule id), or the server would not start.
    Usage(String),
    /// A file mcperr must read or write: the flag, the path, the OS reason.
    File {
        /// The option that named it (`--baseline`, `--json`, …).
        flag: String,
        /// The path.
        path: String,
        /// Why it could not be read or written.
        reason: String,
    },
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
        let text = match self {
            CliError::Usage(m) => m.clone(),
            CliError::File { flag, path, reason } => format!("{flag} {path}: {reason}"),
        };
        text.replace('\n', " ")
    }

    /// The process exit code.
    pub(crate) fn exit_code(&self) -> i32 {
        match self {
            CliError::Usage(_) | CliError::File { .. } => EXIT_USAGE,
        }
    }
}

/// Any library error (a target, selection, engine or report error) is a
/// usage or setup error with its own message.
impl<E: std::fmt::Display> From<E> for CliError {
    fn from(e: E) -> Self {
        CliError::Usage(e.to_string())
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
        assert_eq!(CliError::from("bad --era").exit_code(), 2);
    }
}
