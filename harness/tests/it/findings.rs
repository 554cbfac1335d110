//! Findings a user can act on: one deviation is one finding (a server that
//! answers every id beyond 2^53 the same wrong way gives a handful, not one
//! per tool and rule); every saved finding of a fault sweep replays with
//! `mcperr run --cases-dir` to the rule, aspect and verdict the campaign
//! gave it, over stdio and HTTP in both eras; a credential no canary
//! planted is a finding in `run`, `fuzz`, `proxy` and SARIF, shown redacted.

use std::collections::BTreeMap;
use std::io::Write;
use std::process::{Command, Stdio};

use mcperr_reference::Fault;
use serde_json::{json, Value};

use crate::http::HttpServer;
use crate::support::{mcperr, report, scratch, MCPERR};

const ERAS: [&str; 2] = ["2025-11-25", "2026-07-28"];

#[test]
fn a_server_that_answers_every_big_id_the_same_wrong_way_gives_a_handful_of_findings() {
    let dir = scratch("findings-big-id");
    let server = format!("{MCPERR} reference --fault big-id-empty-result");
    for era in ERAS {
        let json = dir.join(format!("{era}.json"));
        let out = mcperr(&[
            "fuzz",
            "--stdio",
            &server,
            "--era",
            era,
            "--requests",
            "3000",
            "--seed",
            "1",
            "--json",
            json.to_str().unwrap(),
        ]);
        assert_eq!(out.code, Some(1), "{}", out.stderr);
        let r = report(&json);
        let found = r["findings"].as_array().unwrap();
        // Before grouping: 65 J1 findings in 2026-07-28 alone, one per
        // tool x constraint x rule.
        assert!(
            (1..=4).contains(&found.len()),
            "{era}: {} findings: {found:#?}",
            found.len()
        );
        let hits: u64 = found.iter().map(|f| f["hits"].as_u64().unwrap()).sum();
        assert!(hits >= 100, "{era}: every big-id request counted: {hits}");
        for f in found {
            assert!(
                f["id"].as_str().unwrap().starts_with("fuzz/ids-above53-"),
                "{era}: grouped by the id style: {f:#}"
            );
            assert!(
                f["message"]
                    .as_str()
                    .unwrap()
                    .contains("only its id brought this answer about"),
                "{f:#}"
            );
        }
        assert!(
            found
                .iter()
                .any(|f| f["causes"].as_array().unwrap().len() > 5),
            "{era}: the causes folded in are listed"
        );
        assert!(
            out.stdout
                .contains("more inputs gave the same answer (causes: "),
            "{}",
            out.stdout
        );
    }
}

/// `(rule, aspect, verdict)` of each finding a campaign saved, by id.
type Verdicts = BTreeMap<String, (String, String, String)>;

/// The id of a finding or case result, with its rule, aspect and verdict.
fn verdict_of(v: &Value) -> (String, (String, String, String)) {
    let s = |k: &str| v[k].as_str().unwrap_or_default().to_string();
    (s("id"), (s("rule"), s("aspect"), s("verdict")))
}

/// Renames every saved case in `dir` so that a directory listing orders
/// them by a digest of their name: another order than the campaign's, the
/// same on every run.
fn shuffle(dir: &std::path::Path) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let key = name
            .bytes()
            .fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
                (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
            })
            .rotate_left(17);
        std::fs::rename(&path, dir.join(format!("{key:016x}-{name}"))).unwrap();
    }
}

/// Fuzzes `target` (`--stdio CMD` or `--http URL`) in `era` with `--save`,
/// replays the saved cases with `mcperr run --cases-dir`, and returns what
/// each saved finding was in the campaign and in the replay.
fn campaign_and_replay(name: &str, target: &[&str], era: &str) -> (Verdicts, Verdicts) {
    let dir = scratch(&format!("replay-{name}-{era}"));
    let saved = dir.join("cases");
    let mut args = vec![
        "fuzz",
        "--era",
        era,
        "--requests",
        "400",
        "--seed",
        "1",
        "--profile",
        "model",
    ];
    args.extend(target);
    let fuzz_json = dir.join("f.json");
    args.extend([
        "--save",
        saved.to_str().unwrap(),
        "--json",
        fuzz_json.to_str().unwrap(),
    ]);
    let out = mcperr(&args);
    assert!(
        out.code.is_some_and(|c| c < 2),
        "{name} {era}: {}",
        out.stderr
    );
    let campaign: Verdicts = report(&fuzz_json)["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["request"].is_object() && f.get("not_reproduced").is_none())
        .map(verdict_of)
        .collect();
    if campaign.is_empty() {
        return (campaign, Verdicts::new());
    }
    // Replayed in an order of their own (not the campaign's, not the file
    // names'): a saved case that gets no answer must not change the verdict
    // of any case after it.
    shuffle(&saved);
    let run_json = dir.join("r.json");
    let mut args = vec![
        "run",
        "--era",
        era,
        "--profile",
        "model",
        "--cases",
        "fuzz/*",
    ];
    args.extend(target);
    args.extend([
        "--cases-dir",
        saved.to_str().unwrap(),
        "--json",
        run_json.to_str().unwrap(),
    ]);
    let out = mcperr(&args);
    assert!(
        out.code.is_some_and(|c| c < 2),
        "{name} {era}: {}",
        out.stderr
    );
    let r = report(&run_json);
    let runs = r["runs"]
        .as_array()
        .cloned()
        .unwrap_or_else(|| vec![r.clone()]);
    let replay = runs
        .iter()
        .flat_map(|run| run["cases"].as_array().cloned().unwrap_or_default())
        .filter(|c| campaign.contains_key(c["id"].as_str().unwrap_or_default()))
        .map(|c| verdict_of(&c))
        .collect();
    (campaign, replay)
}

/// Faults left out of the sweep, with why. Under `wrong-id` every answer
/// carries the id of the request sent after it, so any pairing of answers
/// with requests (the campaign's pipe, and the replay's client alike) reads
/// one request's answer as another's: only its id finding stands, and the
/// J1 cases catch it (tests/it/faults.rs).
const NOT_REPLAYED: [&str; 1] = ["wrong-id"];

#[test]
fn every_saved_finding_of_a_fault_sweep_replays_to_the_same_rule_aspect_and_verdict() {
    let mut disagree = Vec::new();
    let mut compared = 0;
    let faults: Vec<Fault> = Fault::ALL
        .iter()
        .copied()
        .filter(|f| !NOT_REPLAYED.contains(&f.name()))
        .collect();
    // Over stdio: every fault that shows there, both eras, two at a time.
    let stdio: Vec<(Fault, &str)> = faults
        .iter()
        .filter(|f| !f.http_only())
        .flat_map(|f| ERAS.map(|e| (*f, e)))
        // A modern-only server: 2025-11-25 cannot reach it at all.
        .filter(|(f, e)| !(*f == Fault::InitializeRefusedUnnamed && *e == "2025-11-25"))
        .collect();
    for pair in stdio.chunks(2) {
        let results: Vec<_> = std::thread::scope(|s| {
            let jobs: Vec<_> = pair
                .iter()
                .map(|(f, era)| {
                    s.spawn(move || {
                        let server = format!("{MCPERR} reference --fault {f}");
                        (
                            f.name(),
                            *era,
                            campaign_and_replay(f.name(), &["--stdio", &server], era),
                        )
                    })
                })
                .collect();
            jobs.into_iter().map(|j| j.join().unwrap()).collect()
        });
        for (fault, era, (campaign, replay)) in results {
            compare(
                fault,
                era,
                "stdio",
                &campaign,
                &replay,
                &mut compared,
                &mut disagree,
            );
        }
    }
    // Over HTTP: the faults only HTTP shows and those only fuzzing finds.
    for f in faults.iter().filter(|f| f.http_only() || f.fuzz_only()) {
        // A protected server's faults need its token (tests/it/auth.rs).
        if f.stdio_only() || f.auth_only() {
            continue;
        }
        for era in ERAS {
            let server = HttpServer::reference(&["--fault", f.name()]);
            let (campaign, replay) =
                campaign_and_replay(&format!("http-{f}"), &["--http", &server.url], era);
            compare(
                f.name(),
                era,
                "http",
                &campaign,
                &replay,
                &mut compared,
                &mut disagree,
            );
        }
    }
    assert!(
        disagree.is_empty(),
        "{} of {compared} saved findings replay otherwise:\n{}",
        disagree.len(),
        disagree.join("\n")
    );
    // Each fault that shows in fuzzing gives a finding or more in each era;
    // a server's way with ids is one finding per transformation, whatever
    // request carried it (so the id faults add one each, not one per method).
    assert!(compared >= 130, "too few findings compared: {compared}");
}

fn compare(
    fault: &str,
    era: &str,
    transport: &str,
    campaign: &Verdicts,
    replay: &Verdicts,
    compared: &mut usize,
    disagree: &mut Vec<String>,
) {
    for (id, want) in campaign {
        *compared += 1;
        let got = replay.get(id);
        // A replay whose deciding violation is the case's own expectation
        // names no aspect beyond the rule's: compare what it names.
        let same = got.is_some_and(|g| g.0 == want.0 && g.2 == want.2 && g.1 == want.1);
        if !same {
            disagree.push(format!(
                "{fault} {era} {transport} {id}: campaign {want:?}, replay {got:?}"
            ));
        }
    }
}

/// `mcperr run` of the case that calls get_author with an unknown title, on
/// `server` in `era`, its JSON report at `json`, with `more` flags.
fn run_one(
    server: &str,
    era: &str,
    json: &std::path::Path,
    more: &[&str],
) -> crate::support::Output {
    let mut args = vec!["run", "--stdio", server, "--era", era];
    args.extend([
        "--cases",
        "tools/tool-error-is-result",
        "--json",
        json.to_str().unwrap(),
    ]);
    args.extend(more);
    mcperr(&args)
}

#[test]
fn a_credential_in_a_tool_error_is_a_finding_in_run_fuzz_and_proxy_shown_redacted() {
    let dir = scratch("findings-secret");
    let server = format!("{MCPERR} reference --fault tool-error-leaks-key");
    let key = "sk-proj-Xq7Lm2Rt9Vw4Zb8Nc3Hd6Jk1Pf5Gs0Ty";
    // run, under the default profile: the tools security sentence (MUST).
    let (json, sarif) = (dir.join("run.json"), dir.join("run.sarif"));
    let out = run_one(
        &server,
        "2026-07-28",
        &json,
        &["--sarif", sarif.to_str().unwrap()],
    );
    assert_eq!(out.code, Some(1), "{}", out.stdout);
    let r = report(&json);
    let case = &r["cases"][0];
    assert_eq!(
        (
            case["rule"].as_str(),
            case["aspect"].as_str(),
            case["verdict"].as_str()
        ),
        (Some("J7"), Some("J7.secret-in-tool-error"), Some("fail")),
        "{case:#}"
    );
    let sarif_text = std::fs::read_to_string(&sarif).unwrap();
    let s: Value = serde_json::from_str(&sarif_text).unwrap();
    let results = s["runs"][0]["results"].as_array().unwrap();
    assert!(
        results.iter().any(
            |x| x["ruleId"] == "J7" && x["locations"].as_array().is_some_and(|l| !l.is_empty())
        ),
        "{sarif_text}"
    );
    for text in [
        &out.stdout,
        &std::fs::read_to_string(&json).unwrap(),
        &sarif_text,
    ] {
        assert!(!text.contains(key), "the key is shown redacted: {text}");
        assert!(text.contains("[redacted: an OpenAI- or Anthropic-style API key]"));
    }
    // fuzz
    let (fuzz_json, fuzz_sarif) = (dir.join("fuzz.json"), dir.join("fuzz.sarif"));
    let out = mcperr(&[
        "fuzz",
        "--stdio",
        &server,
        "--era",
        "2025-11-25",
        "--requests",
        "600",
        "--seed",
        "1",
        "--json",
        fuzz_json.to_str().unwrap(),
        "--sarif",
        fuzz_sarif.to_str().unwrap(),
    ]);
    assert_eq!(out.code, Some(1), "{}", out.stdout);
    let text = std::fs::read_to_string(&fuzz_sarif).unwrap();
    let s: Value = serde_json::from_str(&text).unwrap();
    let results = s["runs"][0]["results"].as_array().unwrap();
    assert!(
        results.iter().any(
            |x| x["ruleId"] == "J7" && x["locations"].as_array().is_some_and(|l| !l.is_empty())
        ),
        "{text}"
    );
    assert!(!text.contains(key), "{text}");
    let f = report(&fuzz_json);
    assert!(
        f["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x["aspect"] == "J7.secret-in-tool-error"),
        "{f:#}"
    );
    assert!(
        !out.stdout.contains(key) && !std::fs::read_to_string(&fuzz_json).unwrap().contains(key)
    );
    // proxy: a host's own traffic through it.
    let proxy_json = dir.join("proxy.json");
    let proxy_sarif = dir.join("proxy.sarif");
    let mut child = Command::new(MCPERR)
        .args(["proxy", "--json", proxy_json.to_str().unwrap()])
        .args([
            "--sarif",
            proxy_sarif.to_str().unwrap(),
            "--log",
            dir.join("log").to_str().unwrap(),
        ])
        .args(["--", MCPERR, "reference", "--fault", "tool-error-leaks-key"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let host = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "host", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": {"name": "get_author", "arguments": {"title": "Nothing"}}}),
    ];
    let mut stdin = child.stdin.take().unwrap();
    for m in host {
        writeln!(stdin, "{m}").unwrap();
    }
    // The host reads its answers, then leaves.
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    for _ in 0..2 {
        line.clear();
        std::io::BufRead::read_line(&mut stdout, &mut line).unwrap();
    }
    assert!(
        line.contains(key),
        "the proxy forwards the bytes unchanged: {line}"
    );
    drop(stdin);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(1));
    let p = report(&proxy_json);
    let case = &p["cases"][0];
    assert_eq!(case["aspect"], "J7.secret-in-tool-error", "{p:#}");
    let text = std::fs::read_to_string(&proxy_sarif).unwrap();
    assert!(
        text.contains("\"ruleId\": \"J7\"") && !text.contains(key),
        "{text}"
    );
}

#[test]
fn a_log_message_carrying_a_credential_is_a_finding_no_canary_needed() {
    let dir = scratch("findings-log");
    let server = format!("{MCPERR} reference --fault log-leaks-dsn");
    let json = dir.join("run.json");
    let out = run_one(&server, "2025-11-25", &json, &[]);
    assert_eq!(out.code, Some(1), "{}", out.stdout);
    let case = &report(&json)["cases"][0];
    assert_eq!(case["aspect"], "J7.secret-in-log", "{case:#}");
    assert!(!out.stdout.contains("hunter2-s3cret"), "{}", out.stdout);
}
