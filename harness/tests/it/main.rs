//! Integration tests of the `mcperr` binary: one test binary, one module per area.

mod auth;
mod consent;
mod docs;
mod faults;
mod findings;
mod fixtures;
mod fuzz;
mod hostile;
mod http;
mod ids;
mod layout;
mod load;
mod matrix;
mod one_judgement;
mod pace;
mod parts;
mod proxy;
mod reference_faults;
mod reference_wire;
mod reports;
mod run;
mod sdk_peers;
mod snapshots;
mod support;
mod validation;
mod verdicts;
