//! `mcperr run`: the embedded reference server passes everything, every fault
//! is caught by the rule it breaks, misbehaving servers end in verdicts (not
//! hangs), and the reports are what CI consumers parse.

use std::collections::BTreeSet;

use crate::support::{assert_clean, mcperr, report, scratch, MCPERR};
use serde_json::Value;

#[test]
fn the_embedded_reference_server_passes_every_case_in_both_eras_over_stdio_and_http() {
    let dir = scratch("embedded");
    let json = dir.join("all.json");
    // No target and no --era: both eras, over stdio and over HTTP on a loopback port.
    let out = mcperr(&[
        "run",
        "--profile",
        "model",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(out.code, Some(0), "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("Summary:\n  2026-07-28 over stdio:"),
        "one summary line per era and transport: {}",
        out.stdout
    );
    // One page for the four runs: the tools once (a tool only one era
    // lists says so), each era with the version the server agreed, no line
    // per passing case.
    let lines = |want: &str| out.stdout.lines().filter(|l| l.starts_with(want)).count();
    assert_eq!(lines("Tools ("), 1, "{}", out.stdout);
    assert!(
        out.stdout.contains("reindex [2025-11-25 only]"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("\n  2025-11-25: initialize answered 2025-11-25\n")
            && out
                .stdout
                .contains("\n  2026-07-28: server/discover lists 2026-07-28"),
        "{}",
        out.stdout
    );
    assert_eq!(lines("PASS "), 0, "{}", out.stdout);
    assert!(out.stdout.lines().count() <= 70, "{}", out.stdout);
    // The JSON report of several runs is a typed RunSet: it reads back as one.
    let set: mcperr_core::report::RunSet =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let judged: BTreeSet<(&str, &str)> = set
        .runs
        .iter()
        .map(|r| (r.era.as_str(), r.transport.as_str()))
        .collect();
    assert_eq!(judged.len(), 4, "{judged:?}");
    // Its head says what the set is: the profile and the eras judged.
    assert_eq!(set.profile, "model");
    assert_eq!(set.eras, ["2026-07-28", "2025-11-25"], "{:?}", set.eras);
    let r = report(&json);
    for run in r["runs"].as_array().unwrap() {
        let (era, transport) = (
            run["era"].as_str().unwrap(),
            run["transport"].as_str().unwrap(),
        );
        assert_eq!(run["profile"], "model");
        assert_eq!(run["target"]["kind"], "embedded");
        assert_clean(run);
        let cases = run["cases"].as_array().unwrap();
        assert!(cases.len() >= 45, "{}", cases.len());
        for c in cases {
            for key in [
                "id",
                "rule",
                "verdict",
                "message",
                "request",
                "response",
                "http_status",
                "duration_ms",
            ] {
                assert!(c.get(key).is_some(), "case lacks {key}: {c}");
            }
        }
        // Every rule of the error model that applies here has at least one case.
        let rules: BTreeSet<&str> = cases.iter().map(|c| c["rule"].as_str().unwrap()).collect();
        let stdio_only = ["J5"];
        for rule in [
            "T1", "T2", "T3", "T4", "T5", "T6", "T7", "T8", "T9", "R1", "R2", "R3", "R4", "R5",
            "R6", "P1", "P2", "P3", "J1", "J2", "J3", "J4", "J5", "J6", "J7",
        ] {
            if transport == "http" && stdio_only.contains(&rule) {
                continue;
            }
            assert!(
                rules.contains(rule),
                "{era} {transport}: no case for {rule}"
            );
        }
    }
    let out = mcperr(&["run", "--profile", "python-sdk"]);
    assert_eq!(
        out.code,
        Some(0),
        "the reference server follows the python-sdk texts too:\n{}",
        out.stdout
    );
    // Under spec it only warns, where the spec suggests what the model does not.
    let out = mcperr(&["run"]);
    assert_eq!(out.code, Some(0), "{}", out.stdout);
    assert!(out.stdout.contains(" 0 failed"), "{}", out.stdout);
}

#[test]
fn junit_report_parses_and_has_the_required_attributes() {
    let dir = scratch("junit");
    let xml = dir.join("report.xml");
    let server = format!("{MCPERR} reference --fault crash-leaks-text");
    let html = dir.join("report.html");
    let out = mcperr(&[
        "run",
        "--era",
        "2026-07-28",
        "--stdio",
        &server,
        "--profile",
        "model",
        "--junit",
        xml.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
    ]);
    assert_eq!(out.code, Some(1));
    let page = std::fs::read_to_string(&html).unwrap();
    // The page is the matrix renderer's, with one server: the failing case's
    // row has a failing cell, and the cell's detail (request and response)
    // is embedded for the panel it opens.
    let row = page
        .split("data-case=\"tools/crash-hides-text\"")
        .nth(1)
        .and_then(|rest| rest.split("</tr>").next())
        .expect("a row for the failing case");
    assert!(row.contains("class=\"cell v-fail"), "{row}");
    let data = page
        .split("<script type=\"application/json\" id=\"mcperr-data\">")
        .nth(1)
        .and_then(|rest| rest.split("</script>").next())
        .expect("the cell data");
    let data: serde_json::Value = serde_json::from_str(data).unwrap();
    let detail = data["cells"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["case"] == "tools/crash-hides-text")
        .expect("the failing cell's detail");
    assert_eq!(detail["verdict"], "fail");
    assert_eq!(detail["request"]["params"]["name"], "crash");
    assert!(detail["response"].is_object(), "{detail}");
    assert!(detail["expected"].is_object(), "{detail}");
    assert!(
        detail["spec"].as_str().unwrap().contains("2026-07-28"),
        "{detail}"
    );
    let text = std::fs::read_to_string(&xml).unwrap();
    let doc = roxmltree::Document::parse(&text).expect("well-formed XML");
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "testsuites");
    let suites: Vec<_> = root
        .children()
        .filter(|n| n.has_tag_name("testsuite"))
        .collect();
    assert!(suites.len() >= 4, "a suite per area");
    let mut failures = 0;
    let mut cases = 0;
    for suite in &suites {
        for attr in ["name", "tests", "failures", "errors", "skipped", "time"] {
            assert!(suite.attribute(attr).is_some(), "testsuite lacks {attr}");
        }
        let tc: Vec<_> = suite
            .children()
            .filter(|n| n.has_tag_name("testcase"))
            .collect();
        assert_eq!(
            suite.attribute("tests").unwrap().parse::<usize>().unwrap(),
            tc.len()
        );
        for c in tc {
            cases += 1;
            assert!(
                c.attribute("name").is_some()
                    && c.attribute("classname").is_some()
                    && c.attribute("time").is_some()
            );
            if let Some(f) = c.children().find(|n| n.has_tag_name("failure")) {
                failures += 1;
                assert!(f.attribute("message").is_some() && f.attribute("type").is_some());
                assert!(
                    f.text().unwrap_or("").contains("response:"),
                    "the failure carries the raw response"
                );
            }
        }
    }
    assert_eq!(
        root.attribute("tests").unwrap().parse::<usize>().unwrap(),
        cases
    );
    assert_eq!(
        root.attribute("failures")
            .unwrap()
            .parse::<usize>()
            .unwrap(),
        failures
    );
    assert!(failures >= 2, "T3 and J7 fail under crash-leaks-text");
}

#[test]
fn baselined_failures_pass_and_stale_entries_fail() {
    let dir = scratch("baseline");
    let server = format!("{MCPERR} reference --fault unknown-tool-result");
    let toml = dir.join("b.toml");
    std::fs::write(&toml, "expected = [\"tools/unknown-tool:T5\"]\n").unwrap();
    let out = mcperr(&[
        "run",
        "--stdio",
        &server,
        "--profile",
        "model",
        "--baseline",
        toml.to_str().unwrap(),
    ]);
    assert_eq!(out.code, Some(0), "{}", out.stdout);
    // T5 fails in both eras: both baselined, shown as one cause.
    assert!(
        out.stdout.contains(" 2 failed, ") && out.stdout.contains("(2 of them baselined)"),
        "{}",
        out.stdout
    );
    assert_eq!(out.stdout.matches("FAIL* T5").count(), 1, "{}", out.stdout);
    // The same entry against a server that passes it is stale.
    let yaml = dir.join("b.yaml");
    std::fs::write(&yaml, "expected:\n  - tools/unknown-tool\n").unwrap();
    let out = mcperr(&[
        "run",
        "--profile",
        "model",
        "--baseline",
        yaml.to_str().unwrap(),
    ]);
    assert_eq!(out.code, Some(1));
    assert!(
        out.stdout
            .contains("STALE baseline entry tools/unknown-tool"),
        "{}",
        out.stdout
    );
    // A typo in a baseline is stale too: it names no case.
    std::fs::write(&toml, "expected = [\"tools/unknwon-tool\"]\n").unwrap();
    let out = mcperr(&["run", "--baseline", toml.to_str().unwrap()]);
    assert_eq!(out.code, Some(1));
    assert!(
        out.stdout
            .contains("baseline entry tools/unknwon-tool names no case"),
        "{}",
        out.stdout
    );
    // A baseline for another rule does not cover the failure.
    std::fs::write(&toml, "expected = [\"tools/unknown-tool:T1\"]\n").unwrap();
    let out = mcperr(&[
        "run",
        "--stdio",
        &server,
        "--profile",
        "model",
        "--baseline",
        toml.to_str().unwrap(),
    ]);
    assert_eq!(out.code, Some(1));
}

#[test]
fn a_baseline_entry_failing_in_one_era_only_is_not_stale() {
    // -32002 is 2025-11-25's own code for a resource not found and a MUST
    // break in 2026-07-28 (which says -32602): with both eras judged, the
    // entry fails in one of them, as the matrix's gate counts it, so the
    // run passes.
    let dir = scratch("baseline-eras");
    let server = format!("{MCPERR} reference --fault not-found-32002");
    let toml = dir.join("b.toml");
    std::fs::write(&toml, "expected = [\"resources/not-found\"]\n").unwrap();
    let json = dir.join("r.json");
    let out = mcperr(&[
        "run",
        "--stdio",
        &server,
        "--cases",
        "resources/not-found",
        "--baseline",
        toml.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    let runs = report(&json)["runs"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let verdict = |era: &str| {
        runs.iter()
            .filter(|r| r["era"] == era)
            .flat_map(|r| r["cases"].as_array().cloned().unwrap_or_default())
            .map(|c| c["verdict"].as_str().unwrap_or_default().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(verdict("2025-11-25"), ["pass"], "{}", out.stdout);
    assert_eq!(verdict("2026-07-28"), ["fail"], "{}", out.stdout);
    assert_eq!(out.code, Some(0), "{}", out.stdout);
    assert!(!out.stdout.contains("STALE"), "{}", out.stdout);
    // Passing in every era, it is stale.
    let out = mcperr(&[
        "run",
        "--stdio",
        &format!("{MCPERR} reference"),
        "--cases",
        "resources/not-found",
        "--baseline",
        toml.to_str().unwrap(),
    ]);
    assert_eq!(out.code, Some(1), "{}", out.stdout);
    assert!(
        out.stdout
            .contains("STALE baseline entry resources/not-found"),
        "{}",
        out.stdout
    );
}

#[test]
fn config_files_jobs_and_case_selection() {
    let dir = scratch("config");
    let cfg = dir.join("mcp.json");
    let config = serde_json::json!({"mcpServers": {"ref": {"command": MCPERR, "args": ["reference"]}, "remote": {"url": "http://127.0.0.1:1/mcp"}}});
    std::fs::write(&cfg, config.to_string()).unwrap();
    let json = dir.join("r.json");
    let out = mcperr(&[
        "run",
        "--config",
        cfg.to_str().unwrap(),
        "--server",
        "ref",
        "--era",
        "2026-07-28",
        "--cases",
        "tools/*",
        "--jobs",
        "3",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(out.code, Some(0), "{}{}", out.stdout, out.stderr);
    let r = report(&json);
    assert!(r["cases"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["id"].as_str().unwrap().starts_with("tools/")));
    let out = mcperr(&["run", "--config", cfg.to_str().unwrap(), "--server", "nope"]);
    assert_eq!(out.code, Some(2));
    assert!(
        out.stderr.contains("not in") && out.stderr.contains("ref"),
        "{}",
        out.stderr
    );
    // Without --server: a file of two servers names them, one line, exit 2.
    let out = mcperr(&["run", "--config", cfg.to_str().unwrap()]);
    assert_eq!(out.code, Some(2), "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr.trim().lines().count() == 1
            && out
                .stderr
                .contains("pick a server with --server NAME (it has: ref, remote)"),
        "{}",
        out.stderr
    );
    // A file of one server needs no --server.
    let one = dir.join("one.json");
    let only =
        serde_json::json!({"mcpServers": {"ref": {"command": MCPERR, "args": ["reference"]}}});
    std::fs::write(&one, only.to_string()).unwrap();
    let out = mcperr(&[
        "list",
        "--config",
        one.to_str().unwrap(),
        "--era",
        "2025-11-25",
    ]);
    assert_eq!(out.code, Some(0), "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("get_author"), "{}", out.stdout);
    // Another server's entry that mcperr cannot take does not stop it from
    // testing the one chosen; choosing that entry is refused, one line.
    let mixed = dir.join("mixed.json");
    let both = serde_json::json!({"mcpServers": {
        "ref": {"command": MCPERR, "args": ["reference"]},
        "odd": {"command": 3, "env": {"A=B": "x"}}}});
    std::fs::write(&mixed, both.to_string()).unwrap();
    let chosen = |name: &str| {
        let file = mixed.to_str().unwrap();
        mcperr(&[
            "list",
            "--config",
            file,
            "--server",
            name,
            "--era",
            "2025-11-25",
        ])
    };
    let out = chosen("ref");
    assert_eq!(out.code, Some(0), "{}{}", out.stdout, out.stderr);
    let out = chosen("odd");
    assert_eq!(out.code, Some(2), "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr.trim().lines().count() == 1 && out.stderr.contains("server odd"),
        "{}",
        out.stderr
    );
    let out = mcperr(&["list", "--tools", "get_*"]);
    assert_eq!(out.code, Some(0));
    assert!(
        out.stdout
            .contains("tools:      get_author, raise_protocol_error"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(
            "skip  T3   tools/crash-hides-text  (part crash is played by crash, which is left out: not selected by --tools)"
        ),
        "{}",
        out.stdout
    );
}

/// A host configuration's `cwd` and `env` reach the server as `--cwd` and
/// `--env` do (one options struct reads both); a name no environment
/// variable can have is refused with the file's name.
#[cfg(unix)]
#[test]
fn a_config_entry_s_cwd_and_env_reach_the_server() {
    let dir = scratch("config-options");
    let dir = dir.canonicalize().unwrap();
    let check = format!(
        "test \"$SHOP\" = open && test \"$(pwd)\" = '{}' && exec '{MCPERR}' reference",
        dir.display()
    );
    let entry = |env: serde_json::Value| {
        serde_json::json!({"mcpServers": {"shop": {"command": "sh", "args": ["-c", check],
            "cwd": dir, "env": env}}})
    };
    let cfg = dir.join("mcp.json");
    let list = |config: serde_json::Value| {
        std::fs::write(&cfg, config.to_string()).unwrap();
        mcperr(&[
            "list",
            "--config",
            cfg.to_str().unwrap(),
            "--era",
            "2025-11-25",
        ])
    };
    let out = list(entry(serde_json::json!({"SHOP": "open"})));
    assert_eq!(out.code, Some(0), "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("get_author"), "{}", out.stdout);
    let out = list(entry(serde_json::json!({"SHOP": "closed"})));
    assert_eq!(out.code, Some(2), "{}{}", out.stdout, out.stderr);
    let out = list(entry(serde_json::json!({"": "open"})));
    assert_eq!(out.code, Some(2), "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains("mcp.json") && out.stderr.contains("environment variable"),
        "{}",
        out.stderr
    );
}

#[cfg(target_os = "linux")]
#[test]
fn interrupting_mcperr_stops_the_servers_it_started() {
    // Unique per test process, so a leftover of another run cannot be mistaken for ours.
    let marker = format!("sleep {}", 700_000 + std::process::id() % 100_000);
    let server = format!("sh -c '{marker} & cat >/dev/null'");
    let child = std::process::Command::new(MCPERR)
        .args(["run", "--stdio", &server, "--timeout-ms", "20000"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let running = || {
        std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
            std::fs::read(e.path().join("cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).replace('\0', " ").trim() == marker)
        })
    };
    let start = std::time::Instant::now();
    while !running() {
        assert!(start.elapsed().as_secs() < 10, "the server never started");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(143),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let gone = (0..50).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(40));
        !running()
    });
    assert!(
        gone,
        "the server's child survived mcperr; its stderr:\n{stderr}"
    );
}

#[test]
fn the_python_sdk_log_checks_can_fail() {
    // A crash must log its headline and traceback: a server whose stderr is gone fails T3 and T7.
    let silent = format!("sh -c '{MCPERR} reference 2>/dev/null'");
    let out = mcperr(&[
        "run",
        "--stdio",
        &silent,
        "--profile",
        "python-sdk",
        "--cases",
        "tools/*",
    ]);
    assert_eq!(out.code, Some(1), "{}", out.stdout);
    assert!(
        out.stdout.contains("FAIL  T3   tools/crash-hides-text"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("stderr lacks the line \"Tool 'crash' raised an unexpected exception\""),
        "{}",
        out.stdout
    );
    // An expected failure must log no traceback: a server that keeps printing one fails T1.
    let noisy = format!(
        "sh -c 'while :; do echo \"Traceback (most recent call last):\" >&2; sleep 0.005; done & exec {MCPERR} reference'"
    );
    let out = mcperr(&[
        "run",
        "--stdio",
        &noisy,
        "--profile",
        "python-sdk",
        "--cases",
        "tools/tool-error-is-result",
    ]);
    assert_eq!(out.code, Some(1), "{}", out.stdout);
    assert!(
        out.stdout
            .contains("an expected failure logged a traceback"),
        "{}",
        out.stdout
    );
}

#[test]
fn secret_values_never_reach_a_report_or_the_terminal() {
    let dir = scratch("redact");
    let (json, xml, html) = (dir.join("r.json"), dir.join("r.xml"), dir.join("r.html"));
    // mcperr's own secret-looking variable, and one given to the server with
    // --env, both end up in what the run shows (the command line).
    let own = "tok-Own-123456789";
    let given = "Given-secret-987654321";
    let server = format!("env MY_API_KEY={given} SEEN={own} {MCPERR} reference");
    let out = std::process::Command::new(MCPERR)
        .env("MCPERR_TEST_TOKEN", own)
        .args([
            "run",
            "--stdio",
            &server,
            "--env",
            &format!("MY_API_KEY={given}"),
            "--era",
            "2026-07-28",
            "--cases",
            "jsonrpc/string-id",
            "--json",
            json.to_str().unwrap(),
            "--junit",
            xml.to_str().unwrap(),
            "--html",
            html.to_str().unwrap(),
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .expect("mcperr runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    for (what, text) in [
        ("stdout", stdout.clone()),
        ("json", std::fs::read_to_string(&json).unwrap()),
        ("junit", std::fs::read_to_string(&xml).unwrap()),
        ("html", std::fs::read_to_string(&html).unwrap()),
    ] {
        assert!(
            !text.contains(own) && !text.contains(given),
            "{what} holds a secret:\n{text}"
        );
    }
    assert!(
        stdout.contains("[redacted: $MCPERR_TEST_TOKEN]"),
        "{stdout}"
    );
    assert!(stdout.contains("[redacted: $MY_API_KEY]"), "{stdout}");
    assert!(crate::support::report(&json)["summary"]["pass"] == 1);
}

/// `prompts/prompt-crash` against the reference server behind a proxy that
/// holds crash_prompt's answers for 1.3 s, at --timeout-ms 1000.
fn slow_prompt_run(name: &str, extra: &[&str]) -> (Value, String) {
    let dir = scratch(name);
    let json = dir.join("r.json");
    let server = crate::fuzz::proxied(&dir, "slow");
    let mut args = vec![
        "run",
        "--stdio",
        &server,
        "--era",
        "2025-11-25",
        "--cases",
        "prompts/prompt-crash",
        "--timeout-ms",
        "1000",
        "--json",
        json.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let out = mcperr(&args);
    (report(&json)["cases"][0].clone(), out.stdout)
}

#[test]
fn a_slow_answer_is_judged_on_its_answer_with_the_slowness_noted_never_an_error() {
    // Slow is not dead: the answer that comes within --slow-ms is judged
    // (P3 passes), and the slowness is J4's `slow` aspect, which no
    // sentence of the spec judges and which is not the error model's: a
    // note under every profile.
    for (name, extra) in [
        ("slow-spec", &[][..]),
        ("slow-model", &["--profile", "model"][..]),
    ] {
        let (case, stdout) = slow_prompt_run(name, extra);
        assert_eq!(
            (&case["rule"], &case["verdict"]),
            (&"P3".into(), &"pass".into()),
            "{name}: {stdout}"
        );
        let m = case["message"].as_str().unwrap();
        assert!(
            m.contains("answered only after 1.") && m.contains("slow, not hung"),
            "{name}: {m}"
        );
        assert!(
            !crate::support::words(&stdout).contains("more than once"),
            "{stdout}"
        );
    }
    // Not answered within --slow-ms: hung, a J4 deviation.
    let (case, stdout) = slow_prompt_run("slow-hung", &["--slow-ms", "1100"]);
    assert_eq!(
        (&case["rule"], &case["verdict"]),
        (&"J4".into(), &"fail".into()),
        "{stdout}"
    );
}

#[test]
fn a_hung_method_costs_one_slow_wait_then_its_cases_are_errors_naming_the_first() {
    // silent-tool: get_author is never answered, the rest of the server is.
    let dir = scratch("hung");
    let json = dir.join("r.json");
    let server = format!("{MCPERR} reference --fault silent-tool");
    let started = std::time::Instant::now();
    let out = mcperr(&[
        "run",
        "--stdio",
        &server,
        "--timeout-ms",
        "1000",
        "--slow-ms",
        "2000",
        "--json",
        json.to_str().unwrap(),
    ]);
    let elapsed = started.elapsed();
    let r = report(&json);
    let mut firsts = 0;
    for run in r["runs"].as_array().unwrap() {
        for c in run["cases"].as_array().unwrap() {
            let m = c["message"].as_str().unwrap_or("");
            if m.starts_with("not sent: tools/call \"get_author\" is hung") {
                assert_eq!(
                    (&c["rule"], &c["verdict"]),
                    (&"J4".into(), &"error".into()),
                    "{c}"
                );
                assert_eq!(c["duration_ms"], 0, "{c}");
            } else if c["verdict"] == "fail" {
                assert_eq!(c["rule"], "J4", "{c}");
                firsts += 1;
            }
        }
    }
    // One J4 deviation per era (each era on its own process), not one per case.
    assert_eq!(firsts, 2, "{}", out.stdout);
    // The second era does not wait --slow-ms again for what the first found hung:
    // one slow wait (2 s) and a few timeouts (1 s), far from one per case.
    assert!(elapsed < std::time::Duration::from_secs(15), "{elapsed:?}");
    assert_eq!(out.code, Some(1));
}

#[test]
fn a_deadline_bounds_a_run_and_a_campaign_and_the_reports_say_what_was_left_out() {
    let dir = scratch("deadline");
    let json = dir.join("r.json");
    let out = mcperr(&[
        "run",
        "--era",
        "2026-07-28",
        "--deadline",
        "0",
        "--json",
        json.to_str().unwrap(),
    ]);
    let r = report(&json);
    let cases: Vec<Value> = r["runs"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|x| x["cases"].as_array().unwrap().clone())
        .collect();
    assert!(!cases.is_empty(), "{}", out.stdout);
    for c in &cases {
        assert_eq!(c["verdict"], "skip", "{c}");
        let (id, m) = (c["id"].as_str().unwrap(), c["message"].as_str().unwrap());
        // Skipped when planned, before the deadline could matter.
        let planned = crate::support::is_expected_skip(id, "skip", m);
        assert!(m.contains("--deadline") || planned, "{c}");
    }
    let fuzz_json = dir.join("f.json");
    let started = std::time::Instant::now();
    let out = mcperr(&[
        "fuzz",
        "--seconds",
        "60",
        "--deadline",
        "1",
        "--json",
        fuzz_json.to_str().unwrap(),
    ]);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "{}",
        out.stdout
    );
    assert_eq!(
        report(&fuzz_json)["deadline_reached"],
        true,
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("stopped at --deadline"),
        "{}",
        out.stdout
    );
}

/// One read-only tool, `lookup(title)`, whose schema forbids other
/// properties. `refuse-all`: every call is refused with the arguments quoted
/// (so a refusal names any extra property); `ignore-extra`: every call is
/// accepted, extra properties ignored.
const LOOKUP_TOOL: &str = r#"[{"name": "lookup", "annotations": {"readOnlyHint": True},
    "inputSchema": {"type": "object", "properties": {"title": {"type": "string"}},
                    "required": ["title"], "additionalProperties": False}}]"#;
const LOOKUP_CALL: &str = r#"        args = m["params"].get("arguments", {})
        if mode == "refuse-all":
            r = {"content": [{"type": "text", "text": "No entry for " + json.dumps(args)}], "isError": True}
        else:
            r = {"content": [{"type": "text", "text": "found " + str(args.get("title"))}]}
        send({"jsonrpc": "2.0", "id": i, "result": r})"#;

#[test]
fn an_extra_property_rejection_counts_only_on_a_call_the_tool_accepts() {
    let dir = scratch("rebase");
    let command = crate::support::python_stdio_server("rebase-server", LOOKUP_TOOL, LOOKUP_CALL);
    let verdict = |mode: &str| {
        let json = dir.join(format!("{mode}.json"));
        let server = format!("{command} {mode}");
        let out = mcperr(&[
            "run",
            "--stdio",
            &server,
            "--era",
            "2025-11-25",
            "--cases",
            "generated/tools/lookup/additional-properties",
            "--json",
            json.to_str().unwrap(),
        ]);
        assert_ne!(out.code, Some(2), "{}", out.stderr);
        let r = report(&json);
        let case = r["cases"][0].clone();
        (case["verdict"].as_str().unwrap().to_string(), case)
    };
    // Every call refused, the arguments quoted: the refusal names the extra
    // property, but it refuses the valid call too. It proves nothing.
    let (v, case) = verdict("refuse-all");
    assert_eq!(v, "skip", "{case}");
    assert!(
        case["message"]
            .as_str()
            .unwrap()
            .contains("says nothing its refusal of the same set without it did not"),
        "{case}"
    );
    // The tool accepts a valid call, and then the extra property as well.
    let (v, case) = verdict("ignore-extra");
    assert!(v == "fail" || v == "warn", "{case}");
}

#[test]
fn a_server_that_fails_in_both_eras_shows_its_stderr_once() {
    // What it prints differs from its command line, which the note names.
    let out = mcperr(&["run", "--stdio", "sh -c 'echo boom-$((40+2)) >&2; exit 3'"]);
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert_eq!(out.stderr.matches("boom-42").count(), 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("stderr tail: as above"),
        "{}",
        out.stderr
    );
}

#[test]
fn list_without_era_lists_every_era_the_server_speaks_with_its_version() {
    let out = mcperr(&["list"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(
        out.stdout
            .contains("· era 2026-07-28 (server/discover lists 2026-07-28)")
            && out
                .stdout
                .contains("· era 2025-11-25 (initialize answered 2025-11-25)"),
        "{}",
        out.stdout
    );
}
