//! Fuzzing without I/O: what `mcperr fuzz` (live, against a server) and the
//! `cargo fuzz` targets share.
//!
//! - [`source`]: where choices come from (a seeded RNG, libFuzzer's bytes
//!   through `arbitrary`, proptest's bytes): one generator, three drivers.
//! - [`values`]: valid and minimally invalid instances of a JSON Schema,
//!   classified by the `jsonschema` crate; hostile strings and nesting.
//! - [`inputs`]: requests drawn from a server's tools, resources and
//!   prompts, envelope mutations, unknown methods, ids of every kind.
//! - [`judge`]: findings from the invariants plus what each input's class
//!   implies, graded by the profile as a case would be.
//! - [`shrink`]: one-step simplifications of an input, for minimal findings.
//! - [`replay`]: a finding as an ordinary case file that `mcperr run` replays.
//! - [`group`]: findings folded by the deviation they show, one per group.

pub mod formats;
pub mod generator;
pub mod group;
pub mod identity;
pub mod inputs;
pub mod invalid;
pub mod judge;
mod plant;
pub mod replay;
pub mod shrink;
pub mod source;
pub mod values;

pub use generator::Generator;
pub use inputs::{Class, FuzzInput, IdStyle};
pub use judge::{Finding, Judge};
pub use source::{Bytes, Seeded, Source};
