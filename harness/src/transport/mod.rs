//! Transports: how the harness reaches a server under test.
//!
//! [`stdio`] runs the server as a child process in its own process group and
//! frames messages as lines. Everything above this module (the client, the
//! oracle) sees only lines out, events in, and the server's stderr.

pub mod stdio;

pub use stdio::{StdioConnection, StdioTarget, StdoutEvent};
