//! JSON-RPC 2.0 and MCP message types, error codes and protocol eras.
//!
//! Layout: [`jsonrpc`] parses and builds messages (an `id` keeps its exact
//! JSON type), [`codes`] names the error codes both eras use, [`era`] names
//! the two protocol eras and the `_meta` envelope keys of the modern one,
//! [`headers`] the Base64 form of header values that mirror the body.
//! This crate does no I/O and pulls in no runtime: the reference server, the
//! harness and the fuzz targets all share it.

pub mod codes;
pub mod era;
pub mod headers;
pub mod jsonrpc;

pub use era::Era;
pub use jsonrpc::{ErrorObject, Id, Message, ParseError, Request};
