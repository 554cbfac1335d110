//! Transports: how the harness reaches a server under test.
//!
//! [`stdio`] runs the server as a child process in its own process group and
//! frames messages as lines; [`memory`] drives the reference server's pure
//! stdio edge in process; [`http`] posts each message to an MCP endpoint (a
//! real one, or the reference server's HTTP edge in process). Everything
//! above this module (the client, the engine) sees only lines out, events
//! in, the server's stderr, and HTTP answers.

pub mod cpu;
pub mod http;
pub mod memory;
pub mod options;
mod sse_read;
pub mod stdio;

use std::time::Duration;

use serde_json::Value;

pub use http::{HttpConnection, HttpFailure, HttpTarget};
pub use memory::MemoryLines;
pub use options::{HttpOptions, StdioOptions};
pub use stdio::{StderrLog, StdioConnection, StdioTarget, StdoutEvent};

use mcperr_reference::Fault;

/// A server that could not be reached at all: the command that would not
/// start (with the OS reason), or an HTTP client that could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ConnectError(pub String);

/// The reference server run inside this process (tests, benchmarks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InProcess {
    /// Over its HTTP edge instead of its stdio edge.
    pub http: bool,
    /// Answer every HTTP request as an SSE stream.
    pub sse: bool,
    /// The injected fault, if any.
    pub fault: Option<Fault>,
    /// Over HTTP, protect it with [`IN_PROCESS_TOKEN`] (and
    /// [`IN_PROCESS_LIMITED_TOKEN`], without the tools scope), which the
    /// connection sends: for the `auth:*` cases' own tests.
    pub auth: bool,
}

/// The token of an in-process reference server with `auth` set.
pub const IN_PROCESS_TOKEN: &str = "mcperr-in-process";
/// Its token without the tools scope.
pub const IN_PROCESS_LIMITED_TOKEN: &str = "mcperr-in-process-limited";

/// A server under test: how to reach it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A child process over stdio.
    Stdio(StdioTarget),
    /// A Streamable HTTP endpoint.
    Http(HttpTarget),
    /// The reference server in this process.
    InProcess(InProcess),
}

impl Target {
    /// For reports: the command line or the URL.
    pub fn display(&self) -> String {
        match self {
            Target::Stdio(s) => s.display(),
            Target::Http(h) => h.url.clone(),
            Target::InProcess(p) => {
                let fault = p
                    .fault
                    .map(|f| format!(" --fault {}", f.name()))
                    .unwrap_or_default();
                let edge = if p.http { "http" } else { "stdio" };
                format!("in-process reference server ({edge}){fault}")
            }
        }
    }

    /// Whether the target speaks Streamable HTTP.
    pub fn is_http(&self) -> bool {
        matches!(
            self,
            Target::Http(_) | Target::InProcess(InProcess { http: true, .. })
        )
    }
}

/// A line-framed connection: a child process or the in-process edge.
pub enum LineConn {
    /// A child process.
    Child(Box<StdioConnection>),
    /// The reference server's stdio edge in process.
    Memory(MemoryLines),
}

impl LineConn {
    /// Writes one line.
    pub async fn send_line(&mut self, line: &[u8]) {
        tracing::debug!(target: "mcperr::wire", "→ {}", String::from_utf8_lossy(line));
        match self {
            LineConn::Child(c) => c.send_line(line).await,
            LineConn::Memory(m) => m.send_line(line),
        }
    }

    /// The next stdout event, or `None` after `wait` without one.
    pub async fn next_event(&mut self, wait: Duration) -> Option<StdoutEvent> {
        self.next_answer(wait).await.map(|(e, _)| e)
    }

    /// Events already waiting, without blocking.
    pub fn pending(&mut self) -> Vec<StdoutEvent> {
        let all = self.ready_answers(usize::MAX);
        all.into_iter().map(|(e, _)| e).collect()
    }

    /// [`LineConn::next_event`] for the fuzz pipeline: a line comes with its
    /// decoded value where the transport decoded it already (the in-process
    /// server's thread does).
    pub async fn next_answer(&mut self, wait: Duration) -> Option<(StdoutEvent, Option<Value>)> {
        let e = match self {
            LineConn::Child(c) => c.next_event(wait).await.map(|e| (e, None)),
            LineConn::Memory(m) => m.next_decoded(wait),
        };
        if let Some((StdoutEvent::Line(l), _)) = &e {
            tracing::debug!(target: "mcperr::wire", "← {}", String::from_utf8_lossy(l));
        }
        e
    }

    /// [`LineConn::pending`] for the fuzz pipeline, each line with its
    /// decoded value as [`LineConn::next_answer`] gives it; from a server
    /// thread in process at most `limit` (the rest stay queued), so that the
    /// pipeline feeds it again before the thread runs dry.
    pub fn ready_answers(&mut self, limit: usize) -> Vec<(StdoutEvent, Option<Value>)> {
        let events: Vec<_> = match self {
            LineConn::Child(c) => c.pending().into_iter().map(|e| (e, None)).collect(),
            LineConn::Memory(m) => m.pending_decoded(limit),
        };
        for (e, _) in &events {
            if let StdoutEvent::Line(l) = e {
                tracing::debug!(target: "mcperr::wire", "← {}", String::from_utf8_lossy(l));
            }
        }
        events
    }

    /// The server's stderr.
    pub fn stderr(&self) -> &StderrLog {
        match self {
            LineConn::Child(c) => &c.stderr,
            LineConn::Memory(m) => &m.stderr,
        }
    }

    /// Whether stderr is written with the answer (in process) rather than
    /// through a pipe that may lag behind stdout.
    pub fn stderr_is_synchronous(&self) -> bool {
        matches!(self, LineConn::Memory(_))
    }

    /// How the server ended, waiting up to `wait` for it.
    pub async fn exit_status(&mut self, wait: Duration) -> Option<String> {
        match self {
            LineConn::Child(c) => c.exit_status(wait).await.map(|s| s.0),
            LineConn::Memory(m) => m.exit_status(),
        }
    }

    /// Closes the server's stdin and waits up to `wait` for it to exit: how
    /// it ended, or `None` while it still runs. The connection is spent.
    pub async fn close_stdin(&mut self, wait: Duration) -> Option<String> {
        match self {
            LineConn::Child(c) => {
                c.close_stdin();
                c.exit_status(wait).await.map(|s| s.0)
            }
            LineConn::Memory(m) => m.close_stdin(),
        }
    }

    /// The CPU time the server's process group has used so far: a child
    /// on Linux only (the in-process server shares mcperr's).
    pub fn cpu_time(&self) -> Option<Duration> {
        match self {
            LineConn::Child(c) => c.cpu_time(),
            LineConn::Memory(_) => None,
        }
    }

    /// Closes the connection (reaps the child and its process group).
    pub async fn close(self) {
        if let LineConn::Child(c) = self {
            c.close().await;
        }
    }
}
