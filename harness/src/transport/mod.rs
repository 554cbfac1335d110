//! Transports: how the harness reaches a server under test.
//!
//! [`stdio`] runs the server as a child process in its own process group and
//! frames messages as lines; [`http`] posts each message to an MCP endpoint.
//! Everything above this module (the client, the
//! oracle) sees only lines out, events in, and the server's stderr.

pub mod http;
pub mod stdio;

pub use http::{HttpConnection, HttpTarget};
pub use stdio::{StdioConnection, StdioTarget, StdoutEvent};

/// A server under test: how to reach it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A child process over stdio.
    Stdio(StdioTarget),
    /// A Streamable HTTP endpoint.
    Http(HttpTarget),
}

impl Target {
    /// For reports: the command line or the URL.
    pub fn display(&self) -> String {
        match self {
            Target::Stdio(s) => s.display(),
            Target::Http(h) => h.url.clone(),
        }
    }
}
