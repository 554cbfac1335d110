//! Benchmarks of live fuzzing (run with `cargo bench -p mcperr --bench fuzz`;
//! release build). Prints one line per figure the fuzzing issue names:
//!
//! 1. The pipe's own floor: lockstep round trips through `cat`, and lines
//!    per second through `cat` with a writer and a reader running at once.
//! 2. `mcperr fuzz` against the reference server as a child over stdio
//!    (target: at least 20,000 requests/s), in each era.
//! 3. `mcperr fuzz` against the reference server in process (target: at
//!    least 100,000 requests/s with one job).
//! 4. Every SDK Bookshop (the Python SDK, the TypeScript SDK 2.x and 1.x,
//!    FastMCP, punkpeye's fastmcp, mcp-framework, rmcp): each one's ceiling
//!    measured by a minimal lockstep client, and `mcperr fuzz` against it
//!    (target: at least 90 % of the ceiling). Needs the peers installed
//!    (scripts/test.sh, or each fixture's setup.sh).
//! 5. What `mcperr proxy` adds per message: lockstep round trips with the
//!    reference server, direct and through the proxy, over stdio (`proxy`)
//!    and over Streamable HTTP (`proxy-http`).
//! 6. Peak resident memory of a 1,000,000-request `mcperr fuzz` (target:
//!    flat, under 100 MB), with `/usr/bin/time -v` when it is there.
//!
//! `BENCH_QUICK=1` shortens every run (a smoke test of the benchmark itself).
//! Names after `--` pick figures: `pipe`, `stdio`, `in-process`, `python`,
//! `typescript`, `typescript-v1`, `fastmcp`, `fastmcp-ts`, `mcp-framework`, `rmcp`,
//! `proxy`, `proxy-http`, `memory` (`cargo bench -p mcperr --bench fuzz -- in-process`); none runs all.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcperr::engine::{EraChoice, RunSettings};
use mcperr::fuzz::{fuzz, Budget, FuzzSettings, Stats};
use mcperr::transport::{InProcess, Target};
use mcperr_core::profile::Profile;
use mcperr_core::report::TargetInfo;
use mcperr_protocol::Era;

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

/// Lockstep round trips through `cat`: the pipe's latency floor per request.
fn cat_lockstep(n: u64) -> Duration {
    let mut child = Command::new("cat")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("cat");
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let line = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_author","arguments":{"title":"Dune"}}}"#;
    let mut buf = String::new();
    let start = Instant::now();
    for _ in 0..n {
        stdin.write_all(line).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
        buf.clear();
        stdout.read_line(&mut buf).unwrap();
    }
    let took = start.elapsed();
    drop(stdin);
    child.wait().unwrap();
    took / n as u32
}

/// Lockstep round trips of one `tools/call` against the reference server
/// started by `command` (after its handshake): the mean time per request.
fn reference_lockstep(command: &[&str], n: u64) -> Duration {
    let mut child = Command::new(command[0])
        .args(&command[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the reference server");
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut buf = String::new();
    let mut ask = |line: &str, answer: bool| {
        stdin.write_all(format!("{line}\n").as_bytes()).unwrap();
        stdin.flush().unwrap();
        if answer {
            buf.clear();
            stdout.read_line(&mut buf).unwrap();
        }
    };
    ask(
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#,
        true,
    );
    ask(
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        false,
    );
    let line = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_author","arguments":{"title":"Dune"}}}"#;
    let start = Instant::now();
    for _ in 0..n {
        ask(line, true);
    }
    let took = start.elapsed();
    drop(stdin);
    let _ = child.wait();
    took / n as u32
}

/// Starts `command` (a server that prints its URL on stdout first) and
/// returns it with the URL.
fn url_server(command: &[&str]) -> (std::process::Child, String) {
    let mut child = Command::new(command[0])
        .args(&command[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the server");
    let mut url = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut url)
        .expect("its URL");
    (child, url.trim().to_string())
}

/// The mean time of one 2026-07-28 `tools/call` over one keep-alive
/// HTTP/1.1 connection to `url`, lockstep: a minimal client (a request
/// written whole, the answer read by its Content-Length).
fn http_lockstep(url: &str, n: u64) -> Duration {
    let addr = url.trim_start_matches("http://").split('/').next().unwrap();
    let path = &url[url.find(addr).unwrap() + addr.len()..];
    let stream = std::net::TcpStream::connect(addr).expect("connect");
    stream.set_nodelay(true).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut writer = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_author","arguments":{"title":"Dune"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: get_author\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut line = String::new();
    let mut answer = Vec::new();
    let start = Instant::now();
    for _ in 0..n {
        writer.write_all(request.as_bytes()).unwrap();
        let mut length = 0;
        loop {
            line.clear();
            reader.read_line(&mut line).expect("an answer");
            if line == "\r\n" {
                break;
            }
            if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = v.trim().parse().unwrap();
            }
        }
        answer.resize(length, 0);
        std::io::Read::read_exact(&mut reader, &mut answer).unwrap();
    }
    start.elapsed() / n as u32
}

/// Lines per second through `cat` with writer and reader concurrent: the
/// pipe's throughput ceiling for messages of this size.
fn cat_pipelined(n: u64) -> f64 {
    let mut child = Command::new("cat")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("cat");
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let start = Instant::now();
    let writer = std::thread::spawn(move || {
        let line = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"get_author\",\"arguments\":{\"title\":\"Dune\"}}}\n";
        for _ in 0..n {
            stdin.write_all(line).unwrap();
        }
    });
    let mut count = 0;
    for line in BufReader::new(stdout).lines() {
        line.unwrap();
        count += 1;
        if count == n {
            break;
        }
    }
    writer.join().unwrap();
    let _ = child.kill();
    let _ = child.wait();
    n as f64 / start.elapsed().as_secs_f64()
}

/// `mcperr fuzz ARGS --json`: the report's requests per second.
fn fuzz_rate(args: &[&str]) -> (f64, serde_json::Value) {
    let json = std::env::temp_dir().join(format!("mcperr-bench-fuzz-{}.json", std::process::id()));
    let mut all = vec!["fuzz", "-q", "--json", json.to_str().unwrap()];
    all.extend_from_slice(args);
    let status = Command::new(MCPERR)
        .args(&all)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(
        status.code().is_some_and(|c| c <= 1),
        "mcperr {all:?} failed"
    );
    // The report keeps a lone surrogate the campaign sent or a server echoed
    // as its JSON escape (`\ud800`), which serde_json alone refuses.
    let report = mcperr_core::text::decode(&std::fs::read(&json).unwrap()).unwrap();
    let _ = std::fs::remove_file(&json);
    (report["stats"]["requests_per_s"].as_f64().unwrap(), report)
}

/// `mcperr fuzz` in this process against the in-process reference server.
fn in_process(requests: u64, jobs: usize) -> f64 {
    // As `mcperr fuzz` runs: setup on this one thread; with two or more jobs
    // each job gets a thread and runtime of its own (fuzz/campaign.rs).
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let target = Target::InProcess(InProcess {
        http: false,
        sse: false,
        fault: None,
        auth: false,
    });
    let settings = FuzzSettings {
        run: RunSettings::new(
            target,
            Duration::from_secs(5),
            Duration::from_secs(10),
            jobs,
            String::new(),
        ),
        selection: Default::default(),
        profile: Profile::load("spec").unwrap(),
        seed: 1,
        budget: Budget {
            time: None,
            requests: Some(requests),
        },
        in_flight: 64,
        tune_in_flight: false,
        max_findings: None,
        baseline: None,
        stats: Arc::new(Stats::default()),
    };
    let info = TargetInfo {
        kind: "in-process".into(),
        command: None,
        url: None,
    };
    let out = rt
        .block_on(fuzz(&settings, EraChoice::Pinned(Era::Legacy), info))
        .unwrap();
    assert!(out.report.findings.is_empty(), "{:?}", out.report.findings);
    out.report.stats.requests_per_s
}

/// Whether a request id is one the campaign drew for an input (`1 << 20` on,
/// in every id style: negative, shifted past 2^31 or 2^53, or a `fz-N…`
/// string), not the client's own small counter (handshake, discovery, the
/// lockstep probes) nor its `limited_calls` count (`mcperr-count-N`).
fn campaign_id(id: &serde_json::Value) -> bool {
    match id {
        serde_json::Value::Number(n) => n.as_f64().is_some_and(|f| f.abs() >= (1u64 << 20) as f64),
        serde_json::Value::String(s) => s.starts_with("fz-"),
        _ => false,
    }
}

/// A minimal lockstep client: replays `lines` (the requests a fuzz run
/// sent, recorded by `tee`) one at a time, each waiting for its answer, on
/// a fresh server, and times the campaign's `requests` as the fuzz report
/// times its own: from the first input the campaign drew to its
/// `requests`-th (the handshake and discovery before are replayed untimed;
/// the confirming and shrinking after, which draw ids the same way, not at
/// all; the probes in between are replayed and timed, not counted). A
/// request the server never answered is sent without waiting: the server
/// does its work for it as it did in the campaign, and the client knows, as
/// no real client could, that no answer will come. The server's own
/// ceiling for exactly the campaign's stream.
fn lockstep_ceiling(
    server: &[String],
    lines: &[String],
    answered: &std::collections::HashSet<String>,
    requests: u64,
) -> (f64, u64) {
    let mut child = Command::new(&server[0])
        .args(&server[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut buf = String::new();
    let mut drawn = 0u64;
    let mut start: Option<Instant> = None;
    for line in lines {
        if drawn == requests {
            break; // the campaign is over
        }
        // A line serde_json refuses (a lone surrogate) is sent without waiting:
        // a parser may refuse it in silence, which a lockstep client cannot
        // tell from slowness.
        let msg: serde_json::Value = serde_json::from_str(line).unwrap_or_default();
        let id = msg.get("id");
        if id.is_some_and(campaign_id) {
            start.get_or_insert_with(Instant::now);
            drawn += 1;
        }
        let id = id.map(|i| i.to_string());
        let wait = msg.get("method").is_some() && id.as_ref().is_some_and(|i| answered.contains(i));
        // One write per line: split writes (the line, then its newline)
        // cost a Node server a scheduling round each.
        stdin.write_all(format!("{line}\n").as_bytes()).unwrap();
        stdin.flush().unwrap();
        if !wait {
            continue;
        }
        loop {
            buf.clear();
            if stdout.read_line(&mut buf).unwrap() == 0 {
                break;
            }
            let r: serde_json::Value = serde_json::from_str(&buf).unwrap_or_default();
            if r.get("id").map(|i| i.to_string()) == id {
                break;
            }
        }
    }
    let rate = drawn as f64
        / start
            .expect("the campaign drew requests")
            .elapsed()
            .as_secs_f64();
    let _ = child.kill();
    let _ = child.wait();
    (rate, drawn)
}

/// The request lines and the answered ids of a fuzz run recorded with `tee`.
/// mcperr may start the server more than once in a run (after a server it
/// judged lost, or to confirm a finding on a fresh one): each start records
/// into files of its own (named by the shell's pid), and the longest
/// recording, the campaign's own stream, is the one replayed. (One shared
/// file let a later, short start overwrite the campaign's stream, and the
/// replay then measured a handful of requests.)
fn record(
    program: &str,
    script: &str,
    args: &[&str],
) -> (Vec<String>, std::collections::HashSet<String>, usize) {
    let dir = std::env::temp_dir().join(format!("mcperr-bench-rec-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let cmd = format!(
        "sh -c 'tee {dir}/req.$$ | {program} {script} | tee {dir}/resp.$$'",
        dir = dir.display()
    );
    let mut all = vec!["--stdio", cmd.as_str()];
    all.extend_from_slice(args);
    fuzz_rate(&all);
    let read = |path: std::path::PathBuf| -> Vec<String> {
        std::fs::read_to_string(path)
            .unwrap_or_default()
            .lines()
            .map(String::from)
            .collect()
    };
    let pids: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter_map(|name| name.strip_prefix("req.").map(String::from))
        .collect();
    let starts = pids.len();
    let (lines, pid) = pids
        .into_iter()
        .map(|pid| (read(dir.join(format!("req.{pid}"))), pid))
        .max_by_key(|(lines, _)| lines.len())
        .expect("the fuzz run started the server");
    let answered = read(dir.join(format!("resp.{pid}")))
        .iter()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v.get("id").map(|i| i.to_string()))
        .collect();
    let _ = std::fs::remove_dir_all(&dir);
    (lines, answered, starts)
}

/// `mcperr fuzz` over stdio against an SDK's Bookshop, next to a minimal
/// lockstep client replaying the same stream in the same run: the ratio of
/// the two rates, per era (the server's own ceiling is the yardstick).
/// `script` may be empty (a compiled server is its own program); `requests`
/// is sized so that each run lasts about a second at the peer's pace.
fn peer_ratio(label: &str, program: &str, script: &str, eras: &[&str], requests: u64) {
    let requests_per_era = scale(requests);
    let n = requests_per_era.to_string();
    let server: Vec<String> = std::iter::once(program)
        .chain((!script.is_empty()).then_some(script))
        .map(String::from)
        .collect();
    for &era in eras {
        // The same seed and request count give the same request stream.
        let args = [
            "--era",
            era,
            "--requests",
            n.as_str(),
            "--seed",
            "1",
            "--timeout-ms",
            "1000",
        ];
        let (lines, answered, starts) = record(program, script, &args);
        let cmd = server.join(" ");
        let mut all = vec!["--stdio", cmd.as_str()];
        all.extend_from_slice(&args);
        // A server's own pace moves by ±25 % between runs on a 2-core
        // machine: the replay and the campaign alternate, and the ratio is
        // taken of each pair, its median reported.
        let mut ratios = Vec::new();
        let mut unanswered = 0;
        for _ in 0..if quick() { 1 } else { 3 } {
            let (ceiling, timed) = lockstep_ceiling(&server, &lines, &answered, requests_per_era);
            let (rate, report) = fuzz_rate(&all);
            unanswered = report["findings"].as_array().map_or(0, |f| {
                f.iter()
                    .filter(|f| {
                        f["message"]
                            .as_str()
                            .is_some_and(|m| m.contains("never answered"))
                    })
                    .map(|f| f["hits"].as_u64().unwrap_or(0))
                    .sum::<u64>()
            });
            println!(
                "  {label}, {era}: lockstep replay of the campaign's {timed} requests {ceiling:.0} requests/s, \
                 mcperr fuzz {rate:.0} requests/s = {:.0} %",
                rate / ceiling * 100.0
            );
            ratios.push(rate / ceiling * 100.0);
        }
        ratios.sort_by(f64::total_cmp);
        println!(
            "{label} over stdio, {era}, {n} fuzz requests ({unanswered} never answered, each dropped after a grace from the server's latency; \
             the recording run started the server {starts} time(s), the longest stream is replayed): \
             mcperr fuzz at {:.0} % of the lockstep replay's rate (median of {} alternating pairs; target >= 90 %)",
            ratios[ratios.len() / 2],
            ratios.len()
        );
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
    // The pipe's floor is the yardstick of the stdio figures too.
    let (rtt, pipe) = if wanted("pipe") || wanted("stdio") {
        (cat_lockstep(scale(20_000)), cat_pipelined(scale(1_000_000)))
    } else {
        (Duration::ZERO, 0.0)
    };
    if wanted("pipe") || wanted("stdio") {
        println!(
        "pipe floor (cat): lockstep round trip {:.1} µs ({:.0} requests/s), pipelined {pipe:.0} lines/s",
        rtt.as_secs_f64() * 1e6,
        1.0 / rtt.as_secs_f64()
    );
    }

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

    if wanted("proxy") {
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

    if wanted("proxy-http") {
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

    if wanted("in-process") {
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

    let python = std::env::var("MCPERR_PYTHON")
        .unwrap_or_else(|_| format!("{ROOT}/target/py-venv/bin/python"));
    let fastmcp = std::env::var("MCPERR_FASTMCP_PYTHON")
        .unwrap_or_else(|_| format!("{ROOT}/target/fastmcp-venv/bin/python"));
    const BOTH: &[&str] = &["2025-11-25", "2026-07-28"];
    const LEGACY: &[&str] = &["2025-11-25"];
    let rmcp = std::env::var("MCPERR_RMCP_BOOKSHOP")
        .unwrap_or_else(|_| format!("{ROOT}/target/rmcp-fixture/release/bookshop-rmcp"));
    // (figure name, label, program, script, what shows it is installed, eras,
    // fuzz requests per run)
    let npm =
        |dir: &str, package: &str| format!("{ROOT}/fixtures/servers/{dir}/node_modules/{package}");
    let peers = [
        (
            "python",
            "python SDK bookshop",
            python.clone(),
            format!("{ROOT}/fixtures/servers/python/bookshop.py"),
            python.clone(),
            BOTH,
            5_000,
        ),
        (
            "typescript",
            "TypeScript SDK bookshop",
            "node".to_string(),
            format!("{ROOT}/fixtures/servers/typescript/bookshop.mjs"),
            npm("typescript", "@modelcontextprotocol/server"),
            BOTH,
            5_000,
        ),
        (
            "typescript-v1",
            "TypeScript SDK 1.x bookshop",
            "node".to_string(),
            format!("{ROOT}/fixtures/servers/typescript-v1/bookshop.mjs"),
            npm("typescript-v1", "@modelcontextprotocol/sdk"),
            LEGACY,
            5_000,
        ),
        (
            "fastmcp",
            "FastMCP (PyPI) bookshop",
            fastmcp.clone(),
            format!("{ROOT}/fixtures/servers/fastmcp/bookshop.py"),
            fastmcp.clone(),
            BOTH,
            5_000,
        ),
        (
            "fastmcp-ts",
            "fastmcp (npm) bookshop",
            "node".to_string(),
            format!("{ROOT}/fixtures/servers/fastmcp-ts/bookshop.mjs"),
            npm("fastmcp-ts", "fastmcp"),
            LEGACY,
            5_000,
        ),
        (
            "mcp-framework",
            "mcp-framework bookshop",
            "node".to_string(),
            format!("{ROOT}/fixtures/servers/mcp-framework/bookshop.mjs"),
            npm("mcp-framework", "mcp-framework"),
            LEGACY,
            5_000,
        ),
        (
            "rmcp",
            "rmcp (Rust SDK) bookshop",
            rmcp.clone(),
            String::new(),
            rmcp.clone(),
            BOTH,
            100_000,
        ),
    ];
    for (name, label, program, script, installed, eras, requests) in peers {
        if !wanted(name) {
            continue;
        }
        if std::path::Path::new(&installed).exists() {
            peer_ratio(label, &program, &script, eras, requests);
        } else {
            println!("{label}: skipped (run scripts/test.sh, or the fixture's setup.sh, first)");
        }
    }

    if wanted("memory") && std::path::Path::new("/usr/bin/time").exists() {
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
}
