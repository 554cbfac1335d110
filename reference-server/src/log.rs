//! Log records the handler produces and the edges write to stderr.
//!
//! The handler never prints: it returns records, and the edge decides where
//! they go (stderr normally; stdout under the `log-on-stdout` fault). The
//! format mirrors what the MCP Python SDK documents: expected failures are
//! one INFO line, crashes an ERROR line followed by the failure chain, each
//! chain line indented, the way a traceback follows its headline.

use std::cell::RefCell;
use std::fmt;
use std::panic;
use std::sync::Once;

/// Severity of a log record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// Expected failures (T1, T4, T5, R1–R3): one line, no chain.
    Info,
    /// Inputs the server drops (unparseable lines).
    Warn,
    /// Crashes (T3, T7, R4, P3): the headline plus the failure chain.
    Error,
}

/// One log record: a headline and, for crashes, the chain of causes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogRecord {
    /// Severity.
    pub level: Level,
    /// The headline.
    pub message: String,
    /// The failure chain (panic message and location, or error sources).
    pub chain: Vec<String>,
}

impl LogRecord {
    /// An INFO record.
    pub fn info(message: impl Into<String>) -> Self {
        LogRecord {
            level: Level::Info,
            message: message.into(),
            chain: vec![],
        }
    }

    /// A WARN record.
    pub fn warn(message: impl Into<String>) -> Self {
        LogRecord {
            level: Level::Warn,
            message: message.into(),
            chain: vec![],
        }
    }

    /// An ERROR record with its failure chain.
    pub fn error(message: impl Into<String>, chain: Vec<String>) -> Self {
        LogRecord {
            level: Level::Error,
            message: message.into(),
            chain,
        }
    }
}

impl fmt::Display for LogRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let level = match self.level {
            Level::Info => "INFO",
            Level::Warn => "WARN",
            Level::Error => "ERROR",
        };
        write!(f, "{level} mcperr_reference: {}", self.message)?;
        if !self.chain.is_empty() {
            write!(f, "\nFailure chain (most recent last):")?;
            for line in &self.chain {
                for part in line.lines() {
                    write!(f, "\n    {part}")?;
                }
            }
        }
        Ok(())
    }
}

thread_local! {
    static CAPTURING: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// A panic caught in a handler: its message and source location, for the
/// server log only (never the wire).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Panic(pub String);

/// Runs `f`, turning a panic inside it into `Err(description)`.
///
/// The description is the panic message and its source location, kept for
/// the server log only. While `f` runs, this thread's panics are captured
/// instead of printed, so stderr carries our log format, not Rust's default
/// panic text; panics on other threads still reach the previous hook.
pub fn catch_panic<T>(f: impl FnOnce() -> T) -> Result<T, Panic> {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            let captured = CAPTURING.with(|c| {
                let mut slot = c.borrow_mut();
                match slot.as_mut() {
                    Some(s) => {
                        let msg = info
                            .payload()
                            .downcast_ref::<&str>()
                            .map(|s| s.to_string())
                            .or_else(|| info.payload().downcast_ref::<String>().cloned())
                            .unwrap_or_else(|| "Box<dyn Any>".to_string());
                        *s = match info.location() {
                            Some(l) => format!(
                                "panicked at {}:{}:{}: {msg}",
                                l.file(),
                                l.line(),
                                l.column()
                            ),
                            None => format!("panicked: {msg}"),
                        };
                        true
                    }
                    None => false,
                }
            });
            if !captured {
                previous(info);
            }
        }));
    });
    CAPTURING.with(|c| *c.borrow_mut() = Some(String::new()));
    let result = panic::catch_unwind(panic::AssertUnwindSafe(f));
    let text = CAPTURING
        .with(|c| c.borrow_mut().take())
        .unwrap_or_default();
    result.map_err(|_| {
        Panic(if text.is_empty() {
            "panicked".to_string()
        } else {
            text
        })
    })
}
