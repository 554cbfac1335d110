//! Logging in both eras: the eight levels, `logging/setLevel`'s and the
//! 2026-07-28 envelope's level checked, and the log messages a request's
//! level lets through.

use mcperr_protocol::{codes, ErrorObject, Request};
use serde_json::{json, Value};

use crate::faults::Fault;
use crate::log::LogRecord;

use super::{Handler, SERVER_NAME};

/// The eight log levels, least severe first (server/utilities/logging#log-levels).
const LOG_LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

impl Handler {
    /// A log level that is none of the eight (server/utilities/logging#log-levels):
    /// -32602, unless the fault accepts any.
    pub(super) fn unknown_log_level(&self, level: &Value) -> Option<ErrorObject> {
        let known = level.as_str().is_some_and(|l| LOG_LEVELS.contains(&l));
        (!known && self.fault != Some(Fault::LogLevelUnchecked)).then(|| {
            ErrorObject::new(
                codes::INVALID_PARAMS,
                format!("Invalid params: unknown log level {level}"),
            )
        })
    }

    /// The `notifications/message` a request gets for its log records at
    /// level `asked` (2026-07-28: its `_meta`'s, which the `log-unasked`
    /// fault takes as `debug` when absent; 2025-11-25: the session's, set by
    /// logging/setLevel): none without a level, only records at that level
    /// or above, and only their headline: the failure chain stays in the
    /// server's own log (the `log-message-leaks` fault adds the request's
    /// arguments, as a server that logs its calls would).
    pub fn log_messages(
        &self,
        asked: Option<&str>,
        req: &Request,
        records: &[LogRecord],
    ) -> Vec<Value> {
        let Some(threshold) = asked.and_then(|a| LOG_LEVELS.iter().position(|l| *l == a)) else {
            return vec![];
        };
        records
            .iter()
            .filter_map(|r| {
                let level = match r.level {
                    crate::log::Level::Info => "info",
                    crate::log::Level::Warn => "warning",
                    crate::log::Level::Error => "error",
                };
                let rank = LOG_LEVELS.iter().position(|l| *l == level)?;
                (rank >= threshold).then_some((level, r))
            })
            .map(|(level, r)| {
                let mut data = r.message.clone();
                let arguments = req.params.as_ref().and_then(|p| p.get("arguments"));
                if let Some(a) = arguments.filter(|_| self.fault == Some(Fault::LogMessageLeaks)) {
                    data = format!("{data}; arguments: {a}");
                }
                json!({"jsonrpc": "2.0", "method": "notifications/message",
                    "params": {"level": level, "logger": SERVER_NAME, "data": data}})
            })
            .collect()
    }
}
