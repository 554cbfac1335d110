//! Findings: what the fuzzer and the proxy report, one per deviation.
//!
//! - [`judge`]: findings from the invariants plus what each input's class
//!   implies, graded by the profile as a case would be.
//! - [`identity`]: what makes two findings the same (cause, digest, id).
//! - [`group`]: findings folded by the deviation they show, one per group.
//! - [`replay`]: a finding as an ordinary case file that `mcperr run` replays.

pub mod group;
pub mod identity;
pub mod judge;
pub mod replay;

pub use judge::{Finding, Judge};
