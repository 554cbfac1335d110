//! The mcperr reference server: the executable specification of the MCP
//! error model (DESIGN.md §1) and the Bookshop fixture (§3).
//!
//! Layout:
//! - [`handler`]: the pure handler, one request in an established era → one
//!   answer plus log records; dispatches to [`tools`], [`resources`], [`prompts`].
//! - [`bookshop`]: the fixture's tools, templates and prompts as plain functions.
//! - [`session`]: one connection (era lock, response ids); [`stdio`]: the edge.
//! - [`http_edge`]: Streamable HTTP decisions as a pure function; `http` (feature
//!   `http`): the axum glue that serves them.
//! - [`faults`]: named deviations, one rule each, so tests prove rules can fail.
//! - [`log`]: log records and the panic capture that keeps crash text in the log.

pub mod bookshop;
pub mod faults;
pub mod handler;
#[cfg(feature = "http")]
pub mod http;
pub mod http_edge;
pub mod log;
pub mod prompts;
pub mod resources;
pub mod session;
pub mod stdio;
pub mod tools;

pub use faults::Fault;
pub use handler::Handler;
pub use session::{Outcome, Session};
