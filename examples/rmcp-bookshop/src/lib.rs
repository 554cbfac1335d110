//! Example: mcperr in a Rust MCP server's own `cargo test`.
//!
//! The server here is the Bookshop fixture on rmcp (built by
//! `fixtures/servers/rust/setup.sh`); in your repository it is your own
//! binary, `env!("CARGO_BIN_EXE_<name>")` from an integration test of the
//! package that builds it. The test is `tests/conformance.rs`; its accepted
//! transcripts are `tests/snapshots/`. See README.md beside this file.
