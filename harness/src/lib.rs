//! mcperr: a conformance harness for the error behaviour of MCP servers.
//!
//! Layout (transports, oracle, cases and reports kept apart):
//! - [`transport`]: reaching a server (a stdio child in its own process group).
//! - [`client`]: one request at a time, answers matched by id, strays recorded.
//! - [`case`], [`profile`], [`generate`]: what to send and what to expect.
//! - [`oracle`]: an exchange in, a [`oracle::Verdict`] with its rule out.
//! - [`discovery`]: what the server offers; [`runner`]: connect, detect the
//!   era, run, restart the dead.
//! - [`report`], [`baseline`]: terminal, JSON and JUnit output; known failures.
//! - [`cli`]: the `mcperr` command line; the only place that picks exit codes.

pub mod baseline;
pub mod case;
pub mod cli;
pub mod client;
pub mod discovery;
pub mod generate;
pub mod http_case;
pub mod oracle;
pub mod profile;
pub mod report;
pub mod runner;
pub mod target;
pub mod transport;
