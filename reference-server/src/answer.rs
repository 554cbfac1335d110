//! [`Answer`]: what the handler decided for one request.
//!
//! It sits at the bottom of the crate so the rule modules ([`crate::tools`],
//! [`crate::resources`], [`crate::prompts`]) can build answers without
//! importing the handler that dispatches to them.

use mcperr_protocol::ErrorObject;
use serde_json::Value;

use crate::log::LogRecord;

/// What the handler decided for one request.
#[derive(Debug, Default)]
pub struct Answer {
    /// `Some(Ok(result))`, `Some(Err(error))`, or `None` for no response at all
    /// (only under the `silent-tool` fault).
    pub reply: Option<Result<Value, ErrorObject>>,
    /// Log records for the server's stderr.
    pub logs: Vec<LogRecord>,
    /// Whether the server process should exit after sending the reply
    /// (only under the `exit-after-crash` fault).
    pub exit_after: bool,
    /// Steps of work before the reply goes out (a slow tool); the edge paces
    /// them ([`crate::work`]).
    pub steps: u32,
    /// Notifications sent to the client before the reply: log messages a
    /// 2026-07-28 request asked for with its log level.
    pub notifications: Vec<Value>,
}

impl Answer {
    /// A success.
    pub fn result(value: Value) -> Self {
        Answer {
            reply: Some(Ok(value)),
            ..Default::default()
        }
    }

    /// A JSON-RPC error.
    pub fn error(error: ErrorObject) -> Self {
        Answer {
            reply: Some(Err(error)),
            ..Default::default()
        }
    }

    /// No response.
    pub fn silent() -> Self {
        Answer::default()
    }

    /// Adds a log record.
    pub fn log(mut self, record: LogRecord) -> Self {
        self.logs.push(record);
        self
    }

    /// Withholds the reply for `steps` steps of work.
    pub fn after_steps(mut self, steps: u32) -> Self {
        self.steps = steps;
        self
    }

    /// Marks the process to exit after this answer.
    pub fn then_exit(mut self) -> Self {
        self.exit_after = true;
        self
    }
}
