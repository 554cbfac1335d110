//! `mcperr fuzz`'s own rates: as a child against a server command, in
//! process, and against each peer next to its ceiling, each printed and
//! recorded as a figure.

use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use mcperr::engine::{EraChoice, RunSettings};
use mcperr::fuzz::{fuzz, Budget, FuzzSettings, Stats};
use mcperr::transport::{InProcess, Target};
use mcperr_cases::profile::Profile;
use mcperr_core::report::TargetInfo;
use mcperr_protocol::Era;

use crate::{quick, scale, MCPERR};

use crate::lockstep::{lockstep_blind, lockstep_ceiling};

/// `mcperr fuzz ARGS --json`: the report's requests per second.
pub(crate) fn fuzz_rate(args: &[&str]) -> (f64, serde_json::Value) {
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
    let report = mcperr_wire::text::decode(&std::fs::read(&json).unwrap()).unwrap();
    let _ = std::fs::remove_file(&json);
    (report["stats"]["requests_per_s"].as_f64().unwrap(), report)
}

/// `mcperr fuzz` in this process against the in-process reference server.
pub(crate) fn in_process(requests: u64, jobs: usize) -> f64 {
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
            requests: Some(requests),
            ..Budget::default()
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

/// The request lines and the answered ids of a fuzz run recorded with `tee`.
/// mcperr may start the server more than once in a run (after a server it
/// judged lost, or to confirm a finding on a fresh one): each start records
/// into files of its own (named by the shell's pid), and the longest
/// recording, the campaign's own stream, is the one replayed. (One shared
/// file let a later, short start overwrite the campaign's stream, and the
/// replay then measured a handful of requests.)
pub(crate) fn record(
    command: &str,
    args: &[&str],
) -> (Vec<String>, std::collections::HashSet<String>, usize) {
    let dir = std::env::temp_dir().join(format!("mcperr-bench-rec-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let cmd = format!(
        "sh -c 'tee {dir}/req.$$ | {command} | tee {dir}/resp.$$'",
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
/// `server` is the peer's command, word by word; `requests` is sized so
/// that each run lasts about a second at the peer's pace.
pub(crate) fn peer_ratio(label: &str, server: &[String], eras: &[String], requests: u64) {
    let requests_per_era = scale(requests);
    let n = requests_per_era.to_string();
    for era in eras {
        let era = era.as_str();
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
        let (lines, answered, starts) = record(&server.join(" "), &args);
        let cmd = server.join(" ");
        let mut all = vec!["--stdio", cmd.as_str()];
        all.extend_from_slice(&args);
        // A server's own pace moves by ±25 % between runs on a 2-core
        // machine: the replay and the campaign alternate, and the ratio is
        // taken of each pair, its median reported.
        let mut ratios = Vec::new();
        let mut busy = Vec::new();
        let mut blind_ratios = Vec::new();
        let mut unanswered = 0;
        for _ in 0..if quick() { 1 } else { 3 } {
            let (ceiling, timed) = lockstep_ceiling(server, &lines, &answered, requests_per_era);
            let (blind, _) = lockstep_blind(server, &lines, requests_per_era);
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
            // The server's CPU over the campaign's wall (from /proc): a
            // yardstick that knows nothing of which requests go unanswered.
            let server_busy = report["stats"]["server_busy"].as_f64().unwrap_or(0.0) * 100.0;
            println!(
                "  {label}, {era}: lockstep replay of the campaign's {timed} requests {ceiling:.0} requests/s, \
                 blind {blind:.0} requests/s, mcperr fuzz {rate:.0} requests/s = {:.0} % and {:.0} %, \
                 the server busy {server_busy:.0} % of the campaign",
                rate / ceiling * 100.0,
                rate / blind * 100.0
            );
            blind_ratios.push(rate / blind * 100.0);
            ratios.push(rate / ceiling * 100.0);
            busy.push(server_busy);
        }
        ratios.sort_by(f64::total_cmp);
        busy.sort_by(f64::total_cmp);
        blind_ratios.sort_by(f64::total_cmp);
        println!(
            "{label} over stdio, {era}, {n} fuzz requests ({unanswered} never answered, each dropped after a grace from the server's latency; \
             the recording run started the server {starts} time(s), the longest stream is replayed): \
             mcperr fuzz at {:.0} % of the lockstep replay's rate that knows which requests go unanswered, \
             {:.0} % of a blind one's that waits a grace for them as mcperr does (medians of {} alternating runs; target >= 90 %), \
             the server busy {:.0} % of the campaign's wall (median; target >= 90 % for a single-threaded server)",
            ratios[ratios.len() / 2],
            blind_ratios[blind_ratios.len() / 2],
            ratios.len(),
            busy[busy.len() / 2]
        );
    }
}
