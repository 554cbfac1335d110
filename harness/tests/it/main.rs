//! Integration tests of the `mcperr` binary: one test binary, one module per area.

mod reference_faults;
mod reference_wire;
mod support;
