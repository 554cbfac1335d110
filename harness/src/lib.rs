//! mcperr: a conformance harness and fuzzer for the error behaviour of MCP servers.
//!
//! Layout:
//! - [`cli`]: argument parsing and the subcommands; the only place that prints
//!   errors for the user and picks exit codes.
//! - `reference` subcommand: serves the embedded reference server (crate
//!   `mcperr-reference`) over stdio.

pub mod cli;
