//! `mcperr proxy`: a transparent man-in-the-middle between a real host and
//! a server, forwarding every message unchanged and handing a copy of each
//! to core's [`mcperr_core::proxy::Observer`], which judges the server's
//! answers.
//!
//! - [`stdio`]: the host launches the proxy in place of the server's
//!   command; the proxy launches the server and relays its stdin/stdout.
//! - [`http`]: the host talks Streamable HTTP to the proxy's listening
//!   address; each HTTP request is forwarded to the server's URL and its
//!   response streamed back as it arrives.

pub mod http;
pub mod stdio;

pub use stdio::{relay, ProxySettings, Relayed, SpawnError};
