//! Benchmarks of whole `mcperr run` invocations (run with `cargo bench -p mcperr`).
//!
//! 1. The scripted suite against the embedded reference server (target: < 1 s wall).
//! 2. The harness's overhead on an external stdio server (target: < 5 %): the
//!    same request lines mcperr sent, replayed in lockstep by the simplest
//!    possible client, against `mcperr run` itself. Needs the Python SDK peer
//!    (MCPERR_PYTHON, or target/py-venv from fixtures/servers/python/setup.sh);
//!    without it that part is skipped with a note.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const MCPERR: &str = env!("CARGO_BIN_EXE_mcperr");
const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn time_run(args: &[&str]) -> Duration {
    let start = Instant::now();
    let out = Command::new(MCPERR)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    let took = start.elapsed();
    assert!(
        out.code().is_some_and(|c| c <= 1),
        "mcperr {args:?} failed to run"
    );
    took
}

/// Replays recorded lines in lockstep: each request waits for its response.
fn replay(server: &[String], lines: &[String]) -> Duration {
    let start = Instant::now();
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
    for line in lines {
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
        let msg: serde_json::Value = serde_json::from_str(line).unwrap_or_default();
        // Wait only where a server must answer: a request with a string or number id.
        let (Some(id), Some(_)) = (msg.get("id"), msg.get("method")) else {
            continue;
        };
        if !(id.is_string() || id.is_number()) {
            continue;
        }
        loop {
            buf.clear();
            if stdout.read_line(&mut buf).unwrap() == 0 {
                break;
            }
            let r: serde_json::Value = serde_json::from_str(&buf).unwrap_or_default();
            if r.get("id") == Some(id) {
                break;
            }
        }
    }
    drop(stdin);
    child.wait().unwrap();
    start.elapsed()
}

fn main() {
    let runs = 15;
    let embedded: Vec<Duration> = (0..runs)
        .map(|_| time_run(&["run", "--era", "2026-07-28"]))
        .collect();
    let m = median(embedded);
    println!("embedded reference server, whole scripted suite: median {:.1} ms over {runs} runs (target < 1000 ms)", m.as_secs_f64() * 1e3);

    let python = std::env::var("MCPERR_PYTHON")
        .unwrap_or_else(|_| format!("{ROOT}/target/py-venv/bin/python"));
    if !std::path::Path::new(&python).exists() {
        println!("python peer: skipped (run fixtures/servers/python/setup.sh first)");
        return;
    }
    let bookshop = format!("{ROOT}/fixtures/servers/python/bookshop.py");
    let record = std::env::temp_dir().join(format!("mcperr-bench-{}.jsonl", std::process::id()));
    let tee = format!("sh -c 'tee {} | {python} {bookshop}'", record.display());
    time_run(&["run", "--stdio", &tee, "--era", "2026-07-28"]);
    let lines: Vec<String> = std::fs::read_to_string(&record)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    let _ = std::fs::remove_file(&record);
    let server = vec![python.clone(), bookshop.clone()];
    let cmd = format!("{python} {bookshop}");
    let (mut harness, mut direct) = (Vec::new(), Vec::new());
    for _ in 0..11 {
        harness.push(time_run(&["run", "--stdio", &cmd, "--era", "2026-07-28"]));
        direct.push(replay(&server, &lines));
    }
    let (h, d) = (median(harness), median(direct));
    println!(
        "python SDK bookshop, {} lines: lockstep replay {:.1} ms, mcperr run {:.1} ms, overhead {:+.1} % (target < 5 %)",
        lines.len(),
        d.as_secs_f64() * 1e3,
        h.as_secs_f64() * 1e3,
        (h.as_secs_f64() / d.as_secs_f64() - 1.0) * 100.0
    );
}
