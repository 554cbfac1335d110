//! Hostile and broken servers end in clear verdicts or one-line setup
//! errors, never in hangs: servers that cannot start, hang at start-up,
//! print garbage, flood stdout, answer twice or drop their error ids.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::support::{mcperr, report, scratch, MCPERR};

#[test]
fn misbehaving_servers_end_in_clear_errors_not_hangs() {
    // Cannot start: a one-line error and exit 2.
    let out = mcperr(&["run", "--stdio", "/nonexistent/mcp-server --flag"]);
    assert_eq!(out.code, Some(2));
    assert!(
        out.stderr
            .starts_with("mcperr: error: could not start `/nonexistent/mcp-server --flag`"),
        "{}",
        out.stderr
    );
    assert_eq!(out.stderr.lines().count(), 1);
    // Exits at once, or never answers: the handshake fails, exit 2, bounded by the timeout.
    for server in [
        "sh -c 'echo boom >&2; exit 3'",
        "sh -c 'cat >/dev/null'",
        "sh -c 'while read l; do echo garbage; done'",
    ] {
        let start = std::time::Instant::now();
        let out = mcperr(&[
            "run",
            "--stdio",
            server,
            "--timeout-ms",
            "300",
            "--startup-timeout-ms",
            "300",
        ]);
        assert_eq!(out.code, Some(2), "{server}: {}", out.stderr);
        assert!(
            out.stderr.contains("did not complete a handshake"),
            "{}",
            out.stderr
        );
        assert!(start.elapsed().as_secs() < 10);
    }
    // Bad flags are usage errors.
    assert_eq!(mcperr(&["run", "--era", "1999-01-01"]).code, Some(2));
    assert_eq!(mcperr(&["run", "--profile", "nope"]).code, Some(2));
    assert_eq!(mcperr(&["run", "--cases", "zzz/*"]).code, Some(2));
    assert_eq!(
        mcperr(&["run", "--baseline", "/nonexistent.toml"]).code,
        Some(2)
    );
    assert_eq!(mcperr(&["run", "--bogus"]).code, Some(2));
}

#[test]
fn a_server_that_hangs_at_start_up_still_gets_its_reports() {
    let dir = scratch("hang");
    let (json, xml, html) = (dir.join("r.json"), dir.join("r.xml"), dir.join("r.html"));
    let out = mcperr(&[
        "run",
        "--era",
        "2026-07-28",
        "--stdio",
        "sh -c 'echo starting >&2; echo not-json; cat >/dev/null'",
        "--startup-timeout-ms",
        "400",
        "--json",
        json.to_str().unwrap(),
        "--junit",
        xml.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
    ]);
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(
        out.stderr.contains("--startup-timeout-ms")
            && out.stderr.contains("not-json")
            && out.stderr.contains("starting"),
        "the message names the flag to raise and what the server printed: {}",
        out.stderr
    );
    let r = report(&json);
    let cases = r["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 1, "{r}");
    assert_eq!(cases[0]["verdict"], "error");
    assert_eq!(cases[0]["rule"], "J5", "garbage on stdout is J5's");
    assert_eq!(r["summary"]["error"], 1);
    let text = std::fs::read_to_string(&xml).unwrap();
    let doc = roxmltree::Document::parse(&text).expect("well-formed XML");
    assert_eq!(
        doc.descendants()
            .filter(|n| n.has_tag_name("error"))
            .count(),
        1
    );
    assert!(std::fs::read_to_string(&html)
        .unwrap()
        .contains("setup/connect"));
}

#[test]
fn an_id_null_error_is_judged_at_once_not_waited_out() {
    let dir = scratch("null-id");
    let json = dir.join("r.json");
    // Every error answer loses its id: with one request in flight, it can only
    // be that request's answer, so J1 fails it without waiting for the timeout.
    let server = format!(
        "sh -c '{MCPERR} reference | sed -u \"s/\\\"id\\\":[0-9]*,\\\"error\\\"/\\\"id\\\":null,\\\"error\\\"/\"'"
    );
    let start = std::time::Instant::now();
    let out = mcperr(&[
        "run",
        "--era",
        "2026-07-28",
        "--stdio",
        &server,
        "--json",
        json.to_str().unwrap(),
    ]);
    let took = start.elapsed();
    assert_eq!(out.code, Some(1), "{}{}", out.stdout, out.stderr);
    let r = report(&json);
    let j1: Vec<&serde_json::Value> = r["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["rule"] == "J1" && c["verdict"] == "fail")
        .collect();
    assert!(j1.len() >= 10, "{}", out.stdout);
    assert!(
        j1.iter()
            .all(|c| c["message"].as_str().unwrap().contains("null")),
        "{}",
        out.stdout
    );
    assert_eq!(r["summary"]["error"], 0, "{}", out.stdout);
    assert!(
        took.as_secs() < 15,
        "took {took:?}: the timeouts were waited out"
    );
    // Unjudged steps answered with id null are J1 too, on the case that sent them.
    let after_errors = r["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "jsonrpc/alive-after-errors")
        .unwrap();
    assert_eq!(
        (&after_errors["verdict"], &after_errors["rule"]),
        (&serde_json::json!("fail"), &serde_json::json!("J1")),
        "{after_errors}"
    );
}

#[test]
fn a_flooding_server_cannot_outrun_the_timeout() {
    let start = std::time::Instant::now();
    let out = mcperr(&[
        "run",
        "--stdio",
        "sh -c 'yes 0123456789'",
        "--timeout-ms",
        "500",
        "--startup-timeout-ms",
        "500",
    ]);
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(start.elapsed().as_secs() < 15, "took {:?}", start.elapsed());
}

#[test]
fn a_server_that_answers_twice_fails_j1_and_nothing_else_is_misjudged() {
    let dir = scratch("twice");
    let json = dir.join("r.json");
    let server = format!("sh -c '{MCPERR} reference | sed -u p'");
    let out = mcperr(&[
        "run",
        "--era",
        "2026-07-28",
        "--stdio",
        &server,
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(out.code, Some(1), "{}", out.stdout);
    let r = report(&json);
    let cases = r["cases"].as_array().unwrap();
    // Skips only where a lifecycle case judges a server without a capability.
    let confused: Vec<&Value> = cases
        .iter()
        .filter(|c| c["verdict"] == "skip")
        .filter(|c| {
            !crate::support::is_expected_skip(
                c["id"].as_str().unwrap(),
                "skip",
                c["message"].as_str().unwrap(),
            )
        })
        .collect();
    assert!(
        confused.is_empty(),
        "discovery was not confused: {confused:?}"
    );
    // sed doubles the progress notifications of the one case that asks for
    // progress too: on the wire the count then does not grow (U6), a true
    // deviation of what the client receives, and the only other failure.
    let failing: BTreeSet<(&str, &str)> = cases
        .iter()
        .filter(|c| c["verdict"] == "fail")
        .map(|c| (c["rule"].as_str().unwrap(), c["id"].as_str().unwrap()))
        .filter(|(rule, id)| *rule != "J1" || id.is_empty())
        .collect();
    assert_eq!(
        failing,
        BTreeSet::from([("U6", "utilities/progress-increases")]),
        "{}",
        out.stdout
    );
    let progress = cases
        .iter()
        .find(|c| c["id"] == "utilities/progress-increases")
        .unwrap();
    assert!(
        progress["message"]
            .as_str()
            .unwrap()
            .contains("progress went from 1 to 1"),
        "{progress}"
    );
    assert!(cases
        .iter()
        .any(|c| c["verdict"] == "fail" && c["rule"] == "J1"));
    assert!(
        crate::support::words(&out.stdout).contains("answered more than once"),
        "{}",
        out.stdout
    );
}

#[test]
fn stdout_noise_outside_the_judged_request_is_still_judged() {
    // A banner before the handshake, and noise after every line the server writes.
    let server = format!("sh -c 'echo Server starting...; {MCPERR} reference'");
    let out = mcperr(&[
        "run",
        "--stdio",
        &server,
        "--era",
        "2026-07-28",
        "--cases",
        "jsonrpc/*",
        "-v",
    ]);
    assert_eq!(out.code, Some(1), "{}", out.stdout);
    // The banner is its own J5 finding; the first case is not blamed for it.
    assert!(
        out.stdout.contains("FAIL  setup/stdout-noise [J5]"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("Server starting..."), "{}", out.stdout);
    assert!(
        out.stdout.contains("PASS  J4   jsonrpc/alive-after-crash"),
        "{}",
        out.stdout
    );
}

/// `big`'s answer: one line of a million bytes, the id first or (as the
/// TypeScript SDK writes it) last.
const OVERSIZED_CALL: &str = r#"        result = {"content": [{"type": "text", "text": "x" * 1000000}]}
        if mode == "last":
            send({"result": result, "jsonrpc": "2.0", "id": i})
        else:
            send({"jsonrpc": "2.0", "id": i, "result": result})"#;

#[test]
fn an_answer_over_the_cap_is_an_error_at_once_not_a_j5_failure_or_a_timeout() {
    let dir = scratch("oversized");
    let tools = r#"[{"name": "big", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": True}}]"#;
    let command = crate::support::python_stdio_server("oversized-server", tools, OVERSIZED_CALL);
    for end in ["first", "last"] {
        let json = dir.join(format!("{end}.json"));
        let server = format!("{command} {end}");
        let start = std::time::Instant::now();
        let out = mcperr(&[
            "run",
            "--stdio",
            &server,
            "--era",
            "2025-11-25",
            "--cases",
            "generated/tools/big/*",
            "--max-line",
            "65536",
            "--timeout-ms",
            "20000",
            "--json",
            json.to_str().unwrap(),
        ]);
        let took = start.elapsed();
        assert_eq!(out.code, Some(1), "{end}: {}{}", out.stdout, out.stderr);
        let r = report(&json);
        let case = &r["cases"][0];
        assert_eq!(case["verdict"], "error", "{end}: {case}");
        assert_eq!(case["rule"], "J1", "{end}: {case}");
        let message = case["message"].as_str().unwrap();
        assert!(message.contains("outgrew --max-line"), "{end}: {message}");
        assert!(
            !message.contains("J5"),
            "an unread line is no J5 failure: {message}"
        );
        assert!(
            took.as_secs() < 10,
            "{end}: took {took:?}, the timeout was waited out"
        );
    }
}

/// `big` answers every call with a line of a megabyte, and writes one more
/// such line, no JSON at all, before its first answer.
const OVERSIZED_AND_NOISY_CALL: &str = r#"        send.calls = getattr(send, "calls", 0) + 1
        if send.calls == 1:
            sys.stdout.write("x" * 1000000 + "\n"); sys.stdout.flush()
        send({"jsonrpc": "2.0", "id": i, "result": {"content": [{"type": "text", "text": "x" * 1000000}]}})"#;

#[test]
fn fuzzing_judges_an_oversized_answer_and_an_oversized_stray_line_and_holds_neither() {
    // The pipelined loop's side of the cap: an answer over --max-line is
    // judged as its request's (J1: discarded unread), a line over it that
    // answers nothing is J5 stray output; neither is kept in memory whole,
    // and the campaign goes on.
    let dir = scratch("oversized-fuzz");
    let tools = r#"[{"name": "big", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": True}}]"#;
    let command = crate::support::python_stdio_server(
        "oversized-fuzz-server",
        tools,
        OVERSIZED_AND_NOISY_CALL,
    );
    let json = dir.join("f.json");
    let out = mcperr(&[
        "fuzz",
        "--stdio",
        &format!("{command} any"),
        "--era",
        "2025-11-25",
        "--requests",
        "200",
        "--seed",
        "1",
        "--max-line",
        "65536",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(out.code, Some(1), "{}{}", out.stdout, out.stderr);
    let r = report(&json);
    let findings = r["findings"].as_array().unwrap();
    let about = |rule: &str, words: &str| {
        findings
            .iter()
            .any(|f| f["rule"] == rule && f["message"].as_str().is_some_and(|m| m.contains(words)))
    };
    assert!(about("J1", "outgrew --max-line"), "{findings:#?}");
    assert!(about("J5", ""), "{findings:#?}");
    assert_eq!(r["stats"]["requests"], 200, "{}", r["stats"]);
}
