//! mcperr-wire: what went over the wire, read into JSON-RPC messages.
//!
//! No sockets and no processes: the transports in the `mcperr` crate hand
//! their bytes here, and the proxy and the `cargo fuzz` targets do the same.
//! What comes out is an [`exchange::Exchange`], the one value the oracle
//! judges. Above mcperr-model (a wire edge case is graded as a violation),
//! below mcperr-cases and mcperr-oracle.
//!
//! Layout, bottom-up:
//! - [`text`]: JSON text in and out (decoding, the lone-surrogate
//!   placeholder, names an `inputRequests` object repeats).
//! - [`exchange`]: what the executor saw (request, ending, strays, HTTP answer).
//! - [`lines`]: stdout split into capped lines (the stdio framing).
//! - [`reassemble`]: those lines back into messages, strays kept apart.
//! - [`sse`]: Server-Sent Events answers read into JSON-RPC messages.
//! - [`edges`]: one policy per wire edge case (big ids, lone surrogates).
//! - [`id_fault`]: what a server did to an id it answered wrongly.

pub mod edges;
pub mod exchange;
pub mod id_fault;
pub mod lines;
pub mod reassemble;
pub mod sse;
pub mod text;
