//! mcperr-cases: what mcperr sends and what it expects back, before any I/O.
//!
//! Scripted case files, the profiles that override them, cases generated
//! from a server's own schemas, the selection of what runs, a case planned
//! for one run, and fuzz inputs. Above mcperr-model and mcperr-wire; the
//! oracle (mcperr-oracle) judges what these plans provoke.
//!
//! Layout, bottom-up:
//! - [`pattern`]: structural subset matching and `{{placeholder}}` substitution.
//! - [`capture`]: what a case step takes from its answer for the next request.
//! - [`case`]: case files (fixtures/cases and the user's own).
//! - [`profile`]: how strictly a run judges, and the overrides per case.
//! - [`shapes`]: the era's schema for each method's result and for errors.
//! - [`expect`]: the answer shapes a refusal may take.
//! - [`bookshop`]: the Bookshop fixture's contract as values.
//! - [`discovery`], [`generate`], [`select`]: what a server offers, the cases
//!   generated from its schemas, which cases run and why the others do not.
//! - [`parts`]: the roles a case needs played (a tool that reports
//!   progress, a crashing resource) and who plays each on a server.
//! - [`plan`]: a case instantiated for one run (canary substituted, era
//!   envelope built, HTTP shape chosen).
//! - [`fuzz`]: fuzz inputs drawn from a server's offer, and their shrinking.

pub mod bookshop;
pub mod capture;
pub mod case;
pub mod discovery;
pub mod expect;
pub mod fuzz;
pub mod generate;
pub mod parts;
pub mod pattern;
pub mod plan;
pub mod profile;
pub mod select;
pub mod shapes;
