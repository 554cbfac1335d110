//! Benchmarks of live fuzzing (run with `cargo bench -p mcperr --bench fuzz`;
//! release build). Prints one line per figure the fuzzing issue names:
//!
//! 1. The pipe's own floor: lockstep round trips through `cat`, and lines
//!    per second through `cat` with a writer and a reader running at once.
//! 2. `mcperr fuzz` against the reference server as a child over stdio
//!    (target: at least 20,000 requests/s), in each era.
//! 3. `mcperr fuzz` against the reference server in process (target: at
//!    least 100,000 requests/s with one job).
//! 4. Every SDK Bookshop (each column of fixtures/servers/*/peer.toml that
//!    serves stdio): each one's ceiling
//!    measured by a minimal lockstep client (one that knows which requests
//!    go unanswered, and a blind one that waits a grace for them as mcperr
//!    does), and `mcperr fuzz` against it (target: at least 90 % of the
//!    ceiling), with the server's busy share (target: at least 90 %). Needs the peers installed
//!    (scripts/test.sh, or each fixture's setup.sh).
//! 5. What `mcperr proxy` adds per message: lockstep round trips with the
//!    reference server, direct and through the proxy, over stdio (`proxy`)
//!    and over Streamable HTTP (`proxy-http`).
//! 6. Peak resident memory of a 1,000,000-request `mcperr fuzz` (target:
//!    flat, under 100 MB), with `/usr/bin/time -v` when it is there.
//!
//! `BENCH_QUICK=1` shortens every run (a smoke test of the benchmark itself).
//! Names after `--` pick figures: `pipe`, `stdio`, `in-process`, a peer's
//! column or folder name (`python`, `typescript`, `typescript-v1`, `fastmcp`,
//! `fastmcp-masked`, `fastmcp-ts`, `mcp-framework`, `rmcp`, …),
//! `proxy`, `proxy-http`, `memory` (`cargo bench -p mcperr --bench fuzz -- in-process`); none runs all.

use std::process::{Command, Stdio};

mod lockstep;
mod rates;

use lockstep::{cat_lockstep, cat_pipelined, http_lockstep, reference_lockstep, url_server};
use rates::{fuzz_rate, in_process, peer_ratio};

/// The allocator the `mcperr` binary uses, so the in-process figure is the binary's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const MCPERR: &str = env!("CARGO_BIN_EXE_mcperr");
const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

fn quick() -> bool {
    std::env::var_os("BENCH_QUICK").is_some()
}

fn scale(n: u64) -> u64 {
    if quick() {
        (n / 20).max(100)
    } else {
        n
    }
}

/// Whether the figure `name` was asked for (every figure when none was named).
fn wanted(name: &str) -> bool {
    let names: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    names.is_empty() || names.iter().any(|n| n == name)
}

fn main() {
    // As the binary does: no transparent huge pages.
    mcperr::no_huge_pages();
    if wanted("pipe") || wanted("stdio") {
        pipe_and_stdio();
    }
    if wanted("proxy") {
        proxy();
    }
    if wanted("proxy-http") {
        proxy_http();
    }
    if wanted("in-process") {
        in_process_rates();
    }
    peers();
    if wanted("memory") && std::path::Path::new("/usr/bin/time").exists() {
        memory();
    }
}

/// The pipe's own floor (`cat`), and the reference server fuzzed as a
/// stdio child against it: the pipe's floor is the yardstick of the stdio
/// figures.
fn pipe_and_stdio() {
    // The pipe's floor is the yardstick of the stdio figures too.
    let (rtt, pipe) = (cat_lockstep(scale(20_000)), cat_pipelined(scale(1_000_000)));
    println!(
        "pipe floor (cat): lockstep round trip {:.1} µs ({:.0} requests/s), pipelined {pipe:.0} lines/s",
        rtt.as_secs_f64() * 1e6,
        1.0 / rtt.as_secs_f64()
    );

    let reference = format!("{MCPERR} reference");
    let stdio_eras: &[&str] = if wanted("stdio") {
        &["2025-11-25", "2026-07-28"]
    } else {
        &[]
    };
    for era in stdio_eras {
        let n = scale(200_000).to_string();
        let (rate, _) = fuzz_rate(&[
            "--stdio",
            &reference,
            "--era",
            era,
            "--requests",
            &n,
            "--seed",
            "1",
        ]);
        println!(
            "mcperr fuzz, reference server as a child over stdio, {era}: {rate:.0} requests/s \
             (target >= 20000; {:.0} % of the lockstep floor's rate, {:.0} % of cat's pipelined rate)",
            rate * rtt.as_secs_f64() * 100.0,
            rate / pipe * 100.0
        );
    }

    if wanted("stdio") {
        let n = scale(200_000).to_string();
        let (rate, _) = fuzz_rate(&[
            "--stdio",
            &reference,
            "--era",
            "2025-11-25",
            "--requests",
            &n,
            "--seed",
            "1",
            "--jobs",
            "2",
        ]);
        println!(
            "mcperr fuzz, reference server as two children over stdio (--jobs 2, a thread each), 2025-11-25: \
             {rate:.0} requests/s (target >= 20000)"
        );
    }
}

/// What `mcperr proxy` adds to each message a host exchanges with its
/// server over stdio.
fn proxy() {
    // What `mcperr proxy` adds to each message a host exchanges with its
    // server: lockstep round trips, direct and through the proxy, side
    // by side (alternating, three pairs).
    let n = scale(20_000);
    for _ in 0..if quick() { 1 } else { 3 } {
        let direct = reference_lockstep(&[MCPERR, "reference"], n);
        let proxied = reference_lockstep(&[MCPERR, "proxy", "--", MCPERR, "reference"], n);
        println!(
            "mcperr proxy, lockstep round trips with the reference server ({n} tools/call): direct {:.1} µs, \
             through the proxy {:.1} µs: +{:.1} µs per request and its answer",
            direct.as_secs_f64() * 1e6,
            proxied.as_secs_f64() * 1e6,
            (proxied.as_secs_f64() - direct.as_secs_f64()) * 1e6
        );
    }
}

/// What `mcperr proxy --listen` adds over Streamable HTTP.
fn proxy_http() {
    // The same over Streamable HTTP: one keep-alive connection to the
    // reference server's HTTP edge, direct and through
    // `mcperr proxy --listen --upstream`.
    let n = scale(20_000);
    let (mut server, url) = url_server(&[MCPERR, "reference", "--http", "127.0.0.1:0"]);
    let (mut proxy, proxy_url) = url_server(&[
        MCPERR,
        "proxy",
        "--listen",
        "127.0.0.1:0",
        "--upstream",
        &url,
    ]);
    for _ in 0..if quick() { 1 } else { 3 } {
        let direct = http_lockstep(&url, n);
        let proxied = http_lockstep(&proxy_url, n);
        println!(
            "mcperr proxy over HTTP, lockstep round trips with the reference server ({n} tools/call, 2026-07-28, keep-alive): \
             direct {:.1} µs, through the proxy {:.1} µs: +{:.1} µs per request and its answer",
            direct.as_secs_f64() * 1e6,
            proxied.as_secs_f64() * 1e6,
            (proxied.as_secs_f64() - direct.as_secs_f64()) * 1e6
        );
    }
    let _ = proxy.kill();
    let _ = server.kill();
    let _ = (proxy.wait(), server.wait());
}

/// The embedded reference server in process, one job and two.
fn in_process_rates() {
    let n = scale(200_000);
    println!(
        "mcperr fuzz, reference server in process (2025-11-25, 1 job): {:.0} requests/s (target >= 100000)",
        in_process(n, 1)
    );
    println!(
        "mcperr fuzz, reference server in process (2025-11-25, 2 jobs, a thread each): {:.0} requests/s",
        in_process(n, 2)
    );
}

/// Each asked-for SDK Bookshop that serves stdio, against the lockstep
/// replays of the same stream.
fn peers() {
    // Every peer column that serves stdio (fixtures/servers/*/peer.toml),
    // picked by its column's name or its folder's (`python`, `rust`). A
    // compiled server answers far faster: its run is sized up to last
    // about a second too.
    let peers = mcperr_peers::all(std::path::Path::new(ROOT)).unwrap_or_else(|e| panic!("{e}"));
    for peer in peers {
        let compiled = peer.manifest.registry == "crates.io";
        let requests = if compiled { 100_000 } else { 5_000 };
        for spec in &peer.manifest.column {
            if !(wanted(&spec.name) || wanted(&peer.folder))
                || !peer
                    .manifest
                    .transports
                    .contains(&mcperr_peers::Transport::Stdio)
            {
                continue;
            }
            let label = format!("{} bookshop", spec.title);
            match peer.columns(std::path::Path::new(ROOT)) {
                Ok(columns) => {
                    let column = columns.iter().find(|c| c.name == spec.name).unwrap();
                    peer_ratio(&label, &column.argv, column.eras(), requests);
                }
                Err(e) => println!("{label}: skipped ({e})"),
            }
        }
    }
}

/// Peak resident memory of a long campaign (`/usr/bin/time -v`).
fn memory() {
    let n = scale(1_000_000).to_string();
    let out = Command::new("/usr/bin/time")
        .args([
            "-v",
            MCPERR,
            "fuzz",
            "-q",
            "--era",
            "2025-11-25",
            "--requests",
            &n,
            "--seed",
            "1",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stderr);
    let rss = text
        .lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix("Maximum resident set size (kbytes): ")
        })
        .and_then(|k| k.trim().parse::<f64>().ok())
        .unwrap_or(f64::NAN);
    println!(
        "peak resident memory of mcperr fuzz over {n} requests: {:.1} MB (target < 100 MB)",
        rss / 1024.0
    );
}
