//! Fuzz inputs without I/O: what `mcperr fuzz` (live, against a server) and
//! the `cargo fuzz` targets send. Judging them is mcperr-oracle's
//! `findings` module.
//!
//! - [`source`]: where choices come from (a seeded RNG, libFuzzer's bytes
//!   through `arbitrary`, proptest's bytes): one generator, three drivers.
//! - [`values`]: valid and minimally invalid instances of a JSON Schema,
//!   classified by the `jsonschema` crate; hostile strings and nesting.
//! - [`inputs`]: requests drawn from a server's tools, resources and
//!   prompts, envelope mutations, unknown methods, ids of every kind.
//! - [`shrink`]: one-step simplifications of an input, for minimal findings.
//! - [`generator`]: one stream of inputs from a server's offer, drawing
//!   from a source.

pub mod formats;
pub mod generator;
pub mod inputs;
pub mod invalid;
mod plant;
pub mod shrink;
pub mod source;
pub mod values;

pub use generator::Generator;
pub use inputs::{Class, FuzzInput, IdStyle};
pub use source::{Bytes, Seeded, Source};
