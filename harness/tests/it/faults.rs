//! The fault sweep shared by the stdio and HTTP tests: run `mcperr run`
//! against the reference server with each fault, in both eras, and check
//! that the run fails (exit 1) with the fault's own rule among the failures.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;

use crate::support::{mcperr, scratch};

/// Rules with a warn-level verdict: their faults show as warnings, not failures.
const WARN_RULES: &[&str] = &["T9"];

/// The faults (name, rule) that show over `transport` ("stdio" or "HTTP").
pub fn faults(transport: &str) -> Vec<(String, String)> {
    let out = mcperr(&["reference", "--list-faults"]);
    let other = if transport == "stdio" {
        "over HTTP:"
    } else {
        "over stdio:"
    };
    out.stdout
        .lines()
        .filter(|l| !l.contains(other))
        .map(|l| {
            let mut w = l.split_whitespace();
            (w.next().unwrap().to_string(), w.next().unwrap().to_string())
        })
        .collect()
}

fn check(fault: &str, rule: &str, era: &str, code: Option<i32>, report: &Value) -> Option<String> {
    let hits: BTreeSet<(String, String)> = report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["verdict"] != "pass" && c["verdict"] != "skip")
        .map(|c| {
            (
                c["rule"].as_str().unwrap().to_string(),
                c["verdict"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    // R1's -32002 is a SHOULD in 2025-11-25: a warning there (exit 0), a failure in 2026-07-28.
    let legacy_should = fault == "not-found-32002" && era == "2025-11-25";
    let want: &[&str] = if WARN_RULES.contains(&rule) || legacy_should {
        &["warn"]
    } else {
        &["fail", "error"]
    };
    let caught = hits
        .iter()
        .any(|(r, v)| r == rule && want.contains(&v.as_str()));
    let code_ok = if legacy_should {
        code == Some(0)
    } else {
        code == Some(1)
    };
    (!caught || !code_ok)
        .then(|| format!("--fault {fault} ({rule}) in {era}: exit {code:?}, non-passing {hits:?}"))
}

/// Runs every (fault, era) of `transport` not `excluded`, two at a time;
/// `run(fault, era, json_path)` runs mcperr and returns its exit code.
/// Panics listing every fault that was not caught.
pub fn sweep(
    transport: &str,
    excluded: impl Fn(&str, &str) -> bool,
    run: impl Fn(&str, &str, &Path) -> Option<i32> + Sync,
) {
    let dir = scratch(&format!("faults-{transport}"));
    let jobs: Vec<(String, String, &str)> = faults(transport)
        .into_iter()
        .flat_map(|(f, r)| ["2026-07-28", "2025-11-25"].map(move |e| (f.clone(), r.clone(), e)))
        .filter(|(f, _, e)| !excluded(f, e))
        .collect();
    assert!(jobs.len() >= 60, "{} fault runs", jobs.len());
    let misses: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = jobs
            .chunks(jobs.len().div_ceil(2))
            .map(|chunk| {
                let (dir, run) = (&dir, &run);
                s.spawn(move || {
                    chunk
                        .iter()
                        .filter_map(|(fault, rule, era)| {
                            let json = dir.join(format!("{fault}-{era}.json"));
                            let code = run(fault, era, &json);
                            // No report is a miss too: the run must finish and write one.
                            let report = std::fs::read_to_string(&json).ok().and_then(|t| serde_json::from_str::<Value>(&t).ok());
                            match report {
                                Some(report) => check(fault, rule, era, code, &report),
                                None => Some(format!("--fault {fault} ({rule}) in {era}: exit {code:?}, no JSON report")),
                            }
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    assert!(
        misses.is_empty(),
        "faults not caught:\n{}",
        misses.join("\n")
    );
}
