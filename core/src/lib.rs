//! mcperr-core: everything mcperr decides, with no I/O.
//!
//! No tokio, no sockets, no child processes: the `mcperr` crate's transports
//! and CLI sit on top, and live fuzzing, `cargo fuzz` targets, snapshots and
//! the cross-server matrix call the same code without a server process.
//!
//! Layout, bottom-up (each module uses only those above it):
//! - [`verdict`]: pass, warn, fail, skip, error.
//! - [`rules`]: the rule table (fixtures/rules.toml): rule and aspect ids
//!   as types, titles, the spec's own sentence and level per era.
//! - [`grading`]: the one grading path: a violation names an aspect; its
//!   verdict and quote come from the table, the profile and the run.
//! - [`text`]: JSON text in and out (decoding, the lone-surrogate placeholder,
//!   names an `inputRequests` object repeats).
//! - [`wire`]: one policy per wire edge case (big ids, lone surrogates).
//! - [`pattern`]: structural subset matching and `{{placeholder}}` substitution.
//! - [`case`], [`profile`]: case files and the profiles that override them;
//!   [`capture`]: what a case step takes from its answer for the next request.
//! - [`shapes`]: the era's schema for each method's result and for errors.
//! - [`lines`]: stdout split into capped lines (the stdio framing).
//! - [`sse`]: Server-Sent Events answers read into JSON-RPC messages.
//! - [`exchange`]: what the executor saw (request, ending, strays, HTTP answer).
//! - [`discovery`], [`generate`], [`select`]: what a server offers, the cases
//!   generated from its schemas, which cases run and why the others do not.
//! - [`fuzz`]: fuzz inputs, their judge, shrinking and saved findings.
//! - [`plan`]: a case instantiated for one run before any I/O (canary
//!   substituted, era envelope built, HTTP shape chosen).
//! - [`oracle`]: invariants callable without a case, and case judgement on top.
//! - [`proxy`]: a real host's traffic judged as it passes (`mcperr proxy`).
//! - [`report`], [`baseline`]: the typed run report (its renderings are the
//!   `mcperr-render` crate's); known failures.
//! - [`requirements`]: the spec's error requirements per era, each checked by
//!   the table's rules or not checked with a reason.

pub mod baseline;
pub mod bookshop;
pub mod capture;
pub mod case;
pub mod discovery;
pub mod exchange;
pub mod expect;
pub mod explain;
pub mod fuzz;
pub mod generate;
pub mod grading;
pub mod lines;
pub mod oracle;
pub mod pattern;
pub mod plan;
pub mod profile;
pub mod proxy;
pub mod reassemble;
pub mod redact;
pub mod report;
pub mod requirements;
pub mod rules;
pub mod select;
pub mod shapes;
pub mod sse;
pub mod text;
pub mod verdict;
pub mod wire;

pub use verdict::Verdict;
