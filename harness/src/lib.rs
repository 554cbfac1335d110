//! mcperr: the I/O shell of a conformance harness for the error behaviour
//! of MCP servers. Everything it decides lives in the I/O-free crates below
//! it (mcperr-model, -wire, -cases, -oracle, -core, -render); this crate
//! reaches servers and runs the cases.
//!
//! Layout:
//! - [`transport`]: reaching a server: a stdio child in its own process
//!   group, an HTTP endpoint, or the reference server in process.
//! - [`client`]: one request at a time, answers matched by id, strays kept.
//! - [`execute`]: sends what a case plan says and hands the exchange to the oracle.
//! - [`settings`]: the settings of one run, the era to speak, setup errors.
//! - [`connect`]: start a server, establish the era, discover what it offers.
//! - [`parts`]: the probe's valid calls that show which tools play the
//!   parts the cases need (progress, asking for input, success).
//! - [`engine`]: connect, detect the era, discover, plan, run on N servers,
//!   restart the dead; `run`, `list` and the modes to come share it.
//! - [`fuzz`]: live fuzzing: many requests in flight, culprits of deaths
//!   found, findings shrunk and kept as cases.
//! - [`matrix`]: judging servers in every era over each of their targets,
//!   shared by `run` and `matrix`; many servers in parallel as one grid.
//! - [`proxy`]: a byte-exact relay between a real host and a stdio server,
//!   its lines judged on the way (`mcperr proxy`).
//! - [`target`]: the server from the command line or an MCP host's config.
//! - [`snapshots`]: each case's transcript of a user's server as an insta
//!   snapshot on disk, pending where new or changed (`--snapshots DIR`).
//! - [`conformance`]: the cases from a Rust server's own `cargo test`,
//!   each transcript a snapshot for insta to assert.
//! - [`cli`]: the `mcperr` command line: parses, prints, picks exit codes.

pub mod cli;
pub mod client;
pub mod conformance;
pub mod connect;
pub mod engine;
pub mod execute;
pub mod fuzz;
pub mod matrix;
pub mod pace;
pub mod parts;
pub mod proxy;
pub mod settings;
pub mod snapshots;
pub mod target;
pub mod transport;

/// No transparent huge pages for this process: mimalloc asks for them on
/// its arenas, and a 2 MiB page resident for every few bytes touched
/// doubled mcperr's peak memory (49 MB instead of 24 MB for `mcperr run`;
/// 59–63 MB instead of 35–37 MB reading a 300 MiB answer past the cap),
/// for no measurable speed. Called first by the binary, and by the fuzz
/// benchmark so that its figures are the binary's. The servers mcperr
/// starts get it back (transport/stdio.rs), since a child would inherit it.
pub fn no_huge_pages() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_THP_DISABLE takes integer arguments and touches no memory of ours.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}
