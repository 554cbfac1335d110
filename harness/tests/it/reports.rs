//! The reports CI systems read: `--sarif` valid against the SARIF 2.1.0
//! schema with a result per failure, `--markdown` fit for a pull-request
//! comment, and GitHub annotations when `GITHUB_ACTIONS=true`.

use serde_json::Value;

use crate::support::{mcperr_env, scratch, MCPERR};

/// `mcperr run` against the reference server with a fault that leaks a
/// crash's text (T3 and J7 fail under `model`), writing `extra` reports.
fn leaky_run(extra: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String) {
    let server = format!("{MCPERR} reference --fault crash-leaks-text");
    let mut args = vec![
        "run",
        "--stdio",
        &server,
        "--era",
        "2025-11-25",
        "--profile",
        "model",
    ];
    args.extend_from_slice(extra);
    let out = mcperr_env(&args, env);
    (out.code, out.stdout)
}

/// The SARIF 2.1.0 schema, installed from npm by
/// fixtures/tools/sarif-schema/setup.sh (scripts/test.sh runs it).
fn sarif_schema() -> Value {
    let path = std::env::var("MCPERR_SARIF_SCHEMA").unwrap_or_else(|_| {
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../fixtures/tools/sarif-schema/node_modules/@microsoft/jest-sarif/lib/schemas/sarif-2.1.0-rtm.5.json"
        )
        .to_string()
    });
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!("{path}: {e}: run scripts/test.sh, or fixtures/tools/sarif-schema/setup.sh")
    });
    serde_json::from_str(&text).unwrap()
}

/// Replaces each `pattern` equal to `stray` with its `]` escaped; how many.
fn escape_pattern(v: &mut Value, stray: &str) -> usize {
    match v {
        Value::Object(o) => o
            .iter_mut()
            .map(|(k, v)| {
                if k == "pattern" && v == stray {
                    *v = stray.replace("]?$", "\\]?$").into();
                    1
                } else {
                    escape_pattern(v, stray)
                }
            })
            .sum(),
        Value::Array(a) => a.iter_mut().map(|v| escape_pattern(v, stray)).sum(),
        _ => 0,
    }
}

#[test]
fn the_sarif_log_is_valid_and_holds_a_result_per_failure() {
    let dir = scratch("sarif");
    let path = dir.join("r.sarif");
    // Located in a file too, as GitHub code scanning needs.
    let (code, _) = leaky_run(
        &[
            "--sarif",
            path.to_str().unwrap(),
            "--sarif-location",
            "src/server.py",
        ],
        &[],
    );
    assert_eq!(code, Some(1));
    let log: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let mut schema = sarif_schema();
    // The schema's own pattern for a `language` (of a run and of a tool
    // component) has a stray `]` that the regex engine refuses when it
    // checks the schema; escaped, it means the same. mcperr writes no
    // `language`.
    let stray = "^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$";
    assert!(escape_pattern(&mut schema, stray) >= 1);
    let validator = jsonschema::draft4::new(&schema).expect("the SARIF schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(&log)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    let run = &log["runs"][0];
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    assert_eq!(rules.len(), mcperr_model::rules::RuleId::ALL.len());
    let results = run["results"].as_array().unwrap();
    for rule in ["T3", "J7"] {
        let r = results
            .iter()
            .find(|r| r["ruleId"] == rule)
            .unwrap_or_else(|| panic!("no {rule} result: {results:#?}"));
        assert_eq!(r["level"], "error");
        let i = r["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[i]["id"], rule);
        let file = &r["locations"][0]["physicalLocation"];
        assert_eq!(file["artifactLocation"]["uri"], "src/server.py");
        assert_eq!(file["region"]["startLine"], 1);
        let loc = &r["locations"][0]["logicalLocations"][0];
        assert!(loc["fullyQualifiedName"]
            .as_str()
            .unwrap()
            .contains("2025-11-25"));
        assert!(r["properties"]["reproduce"]
            .as_str()
            .unwrap()
            .starts_with("mcperr run --stdio "));
    }
    // A pass is not a result.
    assert!(results.iter().all(|r| r["level"] != "none"));
}

#[test]
fn the_markdown_summary_counts_and_lists_each_failure_with_its_reproduction() {
    let dir = scratch("markdown");
    let path = dir.join("summary.md");
    let (code, _) = leaky_run(&["--markdown", path.to_str().unwrap()], &[]);
    assert_eq!(code, Some(1));
    let md = std::fs::read_to_string(&path).unwrap();
    // The head names the profile, and per run the version the server agreed and the coverage.
    assert!(md.contains("· profile `model`"), "{md}");
    assert!(
        md.contains("| 2025-11-25 | stdio | initialize answered 2025-11-25 |"),
        "{md}"
    );
    assert!(md.contains(" % ("), "{md}");
    assert!(md.contains("### Failures ("), "{md}");
    assert!(
        md.contains("#### FAIL `tools/crash-hides-text` [T3]"),
        "{md}"
    );
    assert!(md.contains("<details><summary>request and response</summary>"));
    assert!(
        md.contains("Reproduce: `mcperr run --stdio '")
            && md.contains("--cases tools/crash-hides-text`"),
        "{md}"
    );
}

#[test]
fn the_terminal_groups_by_default_lists_each_case_with_v_and_keeps_findings_only_with_q() {
    let (code, page) = leaky_run(&[], &[]);
    let (v_code, verbose) = leaky_run(&["-v"], &[]);
    let (q_code, quiet) = leaky_run(&["-q"], &[]);
    assert_eq!((code, v_code, q_code), (Some(1), Some(1), Some(1)));
    let lines = |text: &str, label: &str| text.lines().filter(|l| l.starts_with(label)).count();
    // -v: the tools block per tool and a line for every case.
    assert!(verbose.contains("Tools:\n  get_author: "), "{verbose}");
    let skipped = lines(&verbose, "SKIP ");
    assert!(lines(&verbose, "PASS ") > 0 && skipped > 0, "{verbose}");
    // By default: the tools grouped, no line per passing or skipped case,
    // each cause of failure once with its example, the skips by reason,
    // the summary last.
    assert!(
        page.contains("Tools (14):\n  valid and invalid calls: get_author, "),
        "{page}"
    );
    assert_eq!(
        (lines(&page, "PASS "), lines(&page, "SKIP ")),
        (0, 0),
        "{page}"
    );
    assert!(lines(&page, "FAIL ") > 0, "{page}");
    assert!(lines(&page, "FAIL ") <= lines(&verbose, "FAIL "), "{page}");
    assert!(
        page.contains(&format!("Skipped: {skipped} (by reason; -v lists each)")),
        "{page}"
    );
    // The summary last: nothing but counts after it.
    let (_, summary) = page.rsplit_once("\nSummary:\n").expect("a summary");
    assert!(
        summary.contains(" errors") && !summary.contains("FAIL ") && !summary.contains("SKIP"),
        "{page}"
    );
    assert!(page.lines().count() < verbose.lines().count() / 2, "{page}");
    // -q: the same findings, no tools block, the skips counted in one line.
    assert!(!quiet.contains("Tools"), "{quiet}");
    for label in ["FAIL ", "WARN ", "ERROR"] {
        assert_eq!(
            lines(&quiet, label),
            lines(&page, label),
            "{label}: {quiet}"
        );
    }
    let counted = format!("{skipped} skipped (listed by reason without -q)");
    assert!(quiet.contains(&counted), "not {counted:?}: {quiet}");
    // Both at once is a usage error.
    let (both, _) = leaky_run(&["-q", "-v"], &[]);
    assert_eq!(both, Some(2));
}

#[test]
fn github_annotations_only_under_github_actions() {
    let (_, plain) = leaky_run(&["-q"], &[]);
    assert!(!plain.contains("::error"), "{plain}");
    let (_, gh) = leaky_run(&["-q"], &[("GITHUB_ACTIONS", "true")]);
    let line = gh
        .lines()
        .find(|l| l.starts_with("::error title=mcperr T3 tools/crash-hides-text"))
        .unwrap_or_else(|| panic!("{gh}"));
    // One line each: newlines in the message are escaped, as workflow commands need.
    assert!(line.contains("%0AReproduce: mcperr run"), "{line}");
}

#[test]
fn a_lone_surrogate_sent_is_shown_as_its_escape_in_the_terminal_and_every_report() {
    let dir = scratch("lone-surrogate-shown");
    let cases = dir.join("cases");
    std::fs::create_dir_all(&cases).unwrap();
    std::fs::write(
        cases.join("lone.toml"),
        r#"id = "mine/lone-surrogate-title"
rule = "T4"
title = "a title with a lone surrogate"
eras = ["2025-11-25"]

[request]
method = "tools/call"
params_json = '{"name":"get_author","arguments":{"title":"a\ud800b"}}'

[expect]
result = "$object"
"#,
    )
    .unwrap();
    let path = |name: &str| dir.join(name).to_str().unwrap().to_string();
    let out = crate::support::mcperr(&[
        "run",
        "--era",
        "2025-11-25",
        "--cases-dir",
        cases.to_str().unwrap(),
        "--cases",
        "mine/*",
        "-v",
        "--json",
        &path("r.json"),
        "--markdown",
        &path("r.md"),
        // The reference leaves such a line unanswered over stdio: no long wait.
        "--timeout-ms",
        "1000",
        "--slow-ms",
        "1500",
    ]);
    assert!(out.code.is_some_and(|c| c < 2), "{}", out.stderr);
    for (what, text) in [
        ("stdout", out.stdout.clone()),
        ("json", std::fs::read_to_string(dir.join("r.json")).unwrap()),
    ] {
        assert!(!text.contains("mcperr-lone-surrogate"), "{what}: {text}");
        assert!(text.contains("a\\ud800b"), "{what}: {text}");
    }
}

#[test]
fn warnings_of_one_cause_in_every_era_and_list_method_are_one_group_on_the_page() {
    // An unknown cursor answered with the first page on each list method,
    // in both eras: one cause, shown once with its count.
    let server = format!("{MCPERR} reference --fault cursor-ignored");
    let out = crate::support::mcperr(&["run", "--stdio", &server, "--cases", "*/invalid-cursor*"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let groups = out
        .stdout
        .lines()
        .filter(|l| l.starts_with("WARN  U2"))
        .count();
    let warned: usize = out
        .stdout
        .lines()
        .filter_map(|l| {
            l.split(" warned")
                .next()?
                .rsplit(", ")
                .next()?
                .parse::<usize>()
                .ok()
        })
        .take(2)
        .sum();
    assert!(warned >= 6, "{warned}: {}", out.stdout);
    assert_eq!(groups, 1, "{}", out.stdout);
    assert!(
        crate::support::words(&out.stdout).contains(&format!("also: {} more: ", warned - 1)),
        "{}",
        out.stdout
    );
}
