//! Helpers to reach the SDK peers (fixtures/servers/*/peer.toml, read by the
//! mcperr-peers crate), and what the peers show beyond their baselines: a
//! server of one era noted as such in every report, rmcp's id-less errors
//! under fuzzing, big ids the TypeScript SDK never answers found without a
//! restart. Each baseline is its own test in the `cases` binary
//! (tests/cases/peers.rs).

use crate::support::mcperr;

pub fn python() -> String {
    if let Ok(p) = std::env::var("MCPERR_PYTHON") {
        return p;
    }
    let venv = concat!(env!("CARGO_MANIFEST_DIR"), "/../target/py-venv/bin/python");
    assert!(
        std::path::Path::new(venv).exists(),
        "the Python SDK peer is not installed: run scripts/test.sh, or fixtures/servers/python/setup.sh and set MCPERR_PYTHON"
    );
    venv.to_string()
}

/// The stdio command line of the peer column `name` (its manifest's).
pub fn bookshop(name: &str) -> String {
    mcperr_peers::column(&mcperr_peers::root(), name)
        .unwrap_or_else(|e| panic!("{e}"))
        .command_line()
}

/// The Bookshop on the TypeScript SDK's 1.x line (`@modelcontextprotocol/sdk`).
pub fn typescript_v1_bookshop() -> String {
    bookshop("typescript-sdk-v1")
}

/// 1.x speaks 2025-11-25 only: `--era auto` notes 2026-07-28 as not
/// spoken, in the terminal and in every report.
#[test]
fn a_server_of_one_era_is_noted_not_judged_in_the_other_in_every_report() {
    let server = typescript_v1_bookshop();
    let dir = crate::support::scratch("ts-v1-not-judged");
    let path = |name: &str| dir.join(name).to_str().unwrap().to_string();
    let out = mcperr(&[
        "run",
        "--stdio",
        &server,
        "--cases",
        "tools/tool-error-is-result",
        "--markdown",
        &path("r.md"),
        "--html",
        &path("r.html"),
        "--sarif",
        &path("r.sarif"),
        "--junit",
        &path("r.xml"),
    ]);
    assert_eq!(out.code, Some(0), "{}{}", out.stdout, out.stderr);
    // Read as words: the terminal wraps long notes where the path's length says.
    let flat = crate::support::words(&out.stdout);
    assert!(
        flat.contains("not judged: 2026-07-28")
            && flat.contains("2025-11-25: initialize answered 2025-11-25")
            // The note says how to skip the failed handshake next time.
            && flat.contains("`--era 2025-11-25` judges 2025-11-25 alone"),
        "{}",
        out.stdout
    );
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap();
    let (md, html, sarif) = (read("r.md"), read("r.html"), read("r.sarif"));
    let junit = read("r.xml");
    assert!(
        junit.contains(r#"<property name="protocolVersion" value="2025-11-25"/>"#)
            && junit.contains(r#"<property name="notJudged" value="2026-07-28"#),
        "{junit}"
    );
    assert!(md.contains("- Not judged: 2026-07-28"), "{md}");
    assert!(md.contains("| initialize answered 2025-11-25 |"), "{md}");
    assert!(
        html.contains("not judged") && html.contains("2026-07-28: "),
        "{html}"
    );
    assert!(html.contains("initialize answered 2025-11-25"), "{html}");
    let log: serde_json::Value = serde_json::from_str(&sarif).unwrap();
    let props = &log["runs"][0]["properties"];
    assert_eq!(props["protocolVersion"], "2025-11-25", "{props}");
    assert!(
        props["notJudged"][0]
            .as_str()
            .unwrap()
            .starts_with("2026-07-28"),
        "{props}"
    );
}

/// rmcp answers request params it cannot take (an array, a missing or
/// mistyped field) with an error that has no id, and drops a line with a
/// lone surrogate in silence. Fuzzing it: each id-less error is that broken
/// request's answer, one J1.error-id finding in all; no other request (an id
/// beyond a double, a lone surrogate, a valid call) is blamed for it, and
/// silence on a lone surrogate is no finding.
#[test]
fn fuzzing_rmcp_blames_its_idless_errors_on_the_broken_requests_alone() {
    let server = bookshop("rmcp");
    let json = crate::support::scratch("rmcp-fuzz").join("f.json");
    let out = mcperr(&[
        "fuzz",
        "-q",
        "--stdio",
        &server,
        "--era",
        "2025-11-25",
        "--requests",
        "3000",
        "--seed",
        "1",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(out.code, Some(1), "{}{}", out.stdout, out.stderr);
    let report = crate::support::report(&json);
    let findings = report["findings"].as_array().unwrap();
    let idless: Vec<&serde_json::Value> = findings
        .iter()
        .filter(|f| f["response"].is_object() && f["response"].get("id").is_none())
        .collect();
    assert_eq!(idless.len(), 1, "{findings:#?}");
    assert_eq!(idless[0]["aspect"], "J1.error-id");
    assert!(idless[0]["hits"].as_u64().unwrap() > 50, "{:#}", idless[0]);
    for f in findings {
        assert_ne!(
            f["rule"], "J4",
            "silence on a lone surrogate is allowed: {f:#}"
        );
    }
}

/// A fuzz read of a value mcperr made up is held to R1's row wherever it
/// comes: refused as not found, it names the URI as `data.uri` (the model;
/// the spec shows it only in an example, so `spec` gives no verdict). Two
/// SDKs that leave it out on their own, found by the campaign's reads of
/// their templates, not by a case written for the Bookshop's names.
#[test]
fn a_made_up_read_refused_without_its_uri_is_found_by_fuzzing_on_two_sdks() {
    for column in ["rust-mcp-sdk", "mastra"] {
        let server = bookshop(column);
        for profile in ["model", "spec"] {
            let json = crate::support::scratch(&format!("rows-{column}-{profile}")).join("f.json");
            let (_, report, stdout) = crate::fuzz::fuzz(
                &[
                    "-q",
                    "--stdio",
                    &server,
                    "--era",
                    "2026-07-28",
                    "--profile",
                    profile,
                    "--requests",
                    "400",
                    "--seed",
                    "5",
                ],
                &json,
            );
            let rows: Vec<&serde_json::Value> = report["findings"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|f| f["aspect"] == "R1.data-uri")
                .collect();
            if profile == "spec" {
                assert!(rows.is_empty(), "{column} under spec: {rows:#?}");
                continue;
            }
            let found = rows
                .iter()
                .find(|f| f["verdict"] == "fail")
                .unwrap_or_else(|| panic!("{column}: no R1.data-uri finding\n{stdout}"));
            let uri = found["request"]["params"]["uri"].as_str().unwrap();
            assert!(uri.contains("mcperr-nx-"), "{found:#}");
            assert_eq!(found["response"]["error"]["code"], -32602, "{found:#}");
            assert!(
                found["response"]["error"].get("data").is_none(),
                "{found:#}"
            );
        }
    }
}

/// A server that never answers an id past 2^53 (the TypeScript SDK, alone
/// and under mastra) gets its J1 big-id finding as found, without the
/// server being started again: shrinking that finding sent each simpler
/// candidate alone, waited out --timeout-ms for it (no re-send proof follows
/// a silence) and took the silence for a lost server, five times a
/// campaign. Each start of the server appends a line to a file.
#[test]
fn a_big_id_the_server_never_answers_is_not_shrunk_at_a_restart_each() {
    for (column, era) in [("typescript-sdk", "2025-11-25"), ("mastra", "2026-07-28")] {
        let dir = crate::support::scratch(&format!("big-id-starts-{column}"));
        let starts = dir.join("starts");
        let _ = std::fs::remove_file(&starts);
        let server = format!(
            "sh -c 'echo started >> {}; exec {}'",
            starts.display(),
            bookshop(column)
        );
        let (_, report, stdout) = crate::fuzz::fuzz(
            &[
                "-q",
                "--stdio",
                &server,
                "--era",
                era,
                "--requests",
                "5000",
                "--seed",
                "1",
                "--timeout-ms",
                "2000",
            ],
            &dir.join("f.json"),
        );
        let big = report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["aspect"] == "J1.big-id" && f["response"].is_null());
        assert!(
            big.is_some(),
            "{column}: no unanswered big-id finding\n{stdout}"
        );
        let started = std::fs::read_to_string(&starts).unwrap_or_default();
        assert_eq!(
            started.lines().count(),
            1,
            "{column}: server starts\n{stdout}"
        );
    }
}
