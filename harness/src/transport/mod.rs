//! Transports: how the harness reaches a server under test.
//!
//! [`stdio`] runs the server as a child process in its own process group,
//! and [`lines`] frames its messages as lines (and keeps its stderr, in
//! [`stderr`]); [`memory`] drives the reference server's pure stdio edge in
//! process, behind the same [`LineConn`]; [`http`] posts each message to an MCP endpoint (a
//! real one, or the reference server's HTTP edge in process). Everything
//! above this module (the client, the engine) sees only lines out, events
//! in, the server's stderr, and HTTP answers.

pub mod cpu;
pub mod http;
pub mod lines;
pub mod memory;
pub mod options;
mod sse_read;
pub mod stderr;
pub mod stdio;

pub use http::{HttpConnection, HttpFailure, HttpTarget};
pub use lines::{ChildLines, LineConn, StdoutEvent};
pub use memory::MemoryLines;
pub use options::{HttpOptions, StdioOptions};
pub use stderr::StderrLog;
pub use stdio::StdioTarget;

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
