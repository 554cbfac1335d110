//! The mcperr reference server: the executable specification of the MCP
//! error model (the rule table, fixtures/rules.toml) and the Bookshop fixture.
//!
//! Layout, bottom-up (each module imports only modules above it in this list):
//! - [`faults`]: named deviations, one rule each; [`log`]: log records and the
//!   panic capture that keeps crash text in the log. Both import nothing here.
//! - [`answer`]: [`answer::Answer`], one request's decision (imports `log`).
//! - [`fixture`]: the types a fixture is made of (tool, template and prompt
//!   definitions, their failures, the shared state); imports nothing here.
//! - [`bookshop`]: the Bookshop's tools, templates and prompts (imports `fixture`).
//! - [`tools`], [`resources`], [`prompts`]: the rules that run those
//!   definitions (import `answer`, `fixture`, `faults`, `log`; not `bookshop`).
//! - [`work`]: a slow tool's paced reply, progress and cancellation (imports
//!   `faults`); time is passed in.
//! - [`tasks`]: 2025-11-25's tasks, worked off one step per request handled
//!   (imports `answer`, `faults`, `fixture`); no clock but for timestamps.
//! - [`mrtr`]: 2026-07-28's `confirm_purchase`: -32021 without the
//!   client's elicitation capability, else the multi round-trip
//!   confirmation (imports `answer`, `faults`); its request state is the
//!   whole memory, integrity-protected.
//! - [`asking`]: 2025-11-25's `confirm_purchase` over stdio: an
//!   `elicitation/create` of the server's own, the call parked until the
//!   client answers; -32042 to a client that declared URL mode only
//!   (imports `faults`, `mrtr`).
//! - [`pages`]: the list methods' pages and opaque cursors (imports `faults`).
//! - [`param_headers`]: 2026-07-28's `Mcp-Param-{Name}` headers checked
//!   against a tool's arguments (imports `faults`, `bookshop`).
//! - [`auth`]: the decisions of a protected server (bearer tokens, the 401
//!   challenge, the protected-resource metadata); imports `faults`.
//! - [`handler`]: the pure handler, one request in an established era → one
//!   answer; joins the rules to the Bookshop.
//! - [`subscriptions`]: 2026-07-28's `subscriptions/listen` on a stdio
//!   connection (imports `faults`).
//! - [`session`]: one connection (era lock, response ids, a stdio
//!   connection's subscriptions and requests to its client).
//! - [`stdio`]: the stdio edge ([`stdio::StdioEdge`] decides, `serve` does I/O);
//!   [`http_edge`]: Streamable HTTP decisions as a pure function; `http`
//!   (feature `http`): the axum glue that serves them.

pub mod answer;
pub mod asking;
pub mod auth;
pub mod bookshop;
pub mod completion;
pub mod faults;
pub mod fixture;
pub mod handler;
#[cfg(feature = "http")]
pub mod http;
pub mod http_edge;
mod http_reply;
pub mod log;
pub mod mrtr;
pub mod pages;
pub mod param_headers;
pub mod prompts;
pub mod resources;
pub mod resume;
pub mod session;
pub mod stdio;
pub mod subscriptions;
pub mod tasks;
pub mod tools;
pub mod work;

pub use faults::Fault;
pub use handler::Handler;
pub use session::{Outcome, Session};

#[cfg(test)]
mod tests {
    use crate::http_edge::HttpEdge;
    use crate::Handler;

    /// The harness shares these across tokio tasks.
    #[test]
    fn shared_types_are_send_and_sync() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<Handler>();
        assert_send_sync::<HttpEdge>();
    }
}
