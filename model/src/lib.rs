//! mcperr-model: the error model as data and the one path that grades it.
//!
//! The bottom of mcperr's crates, with no I/O: every other crate names rules
//! and aspects through [`rules`] and turns a violation into a verdict through
//! [`grading`]. The data flows one way from here: mcperr-model → mcperr-wire
//! (the exchange) → mcperr-cases (what is sent) → mcperr-oracle (the
//! judgement) → mcperr-core (the report) → mcperr-render → mcperr.
//!
//! Layout, bottom-up:
//! - [`verdict`]: pass, warn, fail, skip, error.
//! - [`level`]: MUST, SHOULD, described, none… and what each grades to.
//! - [`rules`]: the rule table (fixtures/rules.toml): rule and aspect ids
//!   as types, titles, the spec's own sentence and level per era.
//! - [`grading`]: the one grading path: a violation names an aspect; its
//!   verdict and quote come from the table, the profile's grading and the run.
//! - [`requirements`]: the spec's error requirements per era, each checked by
//!   the table's rules or not checked with a reason.
//! - [`fixtures`]: every file of fixtures/ that mcperr carries in its binary
//!   (the table and the registry here; cases, profiles and schemas for
//!   mcperr-cases), embedded by one build script.

pub mod grading;
pub mod level;
pub mod requirements;
pub mod rules;
pub mod verdict;

pub use verdict::Verdict;

/// The files of fixtures/ built into the binary, so `mcperr` works from any
/// directory: each a list of (path relative to fixtures/, contents).
pub mod fixtures {
    include!(concat!(env!("OUT_DIR"), "/fixtures.rs"));
}
