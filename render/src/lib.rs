//! mcperr-render: every rendering of a run report, apart from the core that
//! makes the report. No I/O: each renderer turns core's typed `RunReport`
//! (or several, a matrix) into text, and the CLI writes it.
//!
//! Layout:
//! - [`terminal`]: the lines `mcperr run` prints, with the findings and why.
//! - [`junit`]: JUnit XML, one test case per case, for CI dashboards.
//! - [`markdown`]: a Markdown summary (a pull-request comment, a job
//!   summary), each finding with how to reproduce it.
//! - [`sarif`]: SARIF 2.1.0 for code-scanning tools.
//! - [`matrix`]: servers × columns as one grid of verdicts, with its gate
//!   (unexpected failures, baseline entries stale in every column).
//! - [`html`]: one server's report, or the matrix grid, as one HTML page.
//! - [`snapshot`]: each case's transcript as an insta snapshot file, with
//!   what changes from run to run redacted.
//!
//! Why a crate of its own: it depends on the core (the report types, the
//! rule table, the rule pages' paths) and nothing in the core depends on it,
//! so the data flows one way, request → … → verdict → report → rendering.

pub mod html;
pub mod junit;
pub mod markdown;
pub mod matrix;
pub mod sarif;
pub mod snapshot;
pub mod terminal;
