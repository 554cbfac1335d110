//! mcperr-core: the top of the I/O-free engine, where judgements become a
//! report.
//!
//! The crates below, bottom-up: mcperr-model (the rule table and the one
//! grading path) → mcperr-wire (bytes into an exchange) → mcperr-cases (what
//! is sent and expected) → mcperr-oracle (the judgement). This crate gathers
//! what they decide into the report that mcperr-render draws and the `mcperr`
//! crate's CLI writes; nothing below names it.
//!
//! Layout:
//! - [`report`], [`baseline`]: the typed run report (cases, findings, the
//!   target's facts) and the known failures a run compares against.
//! - [`proxy`]: a real host's traffic judged as it passes (`mcperr proxy`),
//!   into the same report: it sits here, not in the oracle, because what it
//!   produces is a report (its judging is the oracle's `findings`).
//! - [`explain`]: a rule's page (`mcperr explain`, docs/rules), from the
//!   table, the cases that prove it and the checks that name it.

pub mod baseline;
pub mod explain;
pub mod proxy;
pub mod report;
