//! A1 on a protected server: the reference with `--auth-token`, judged with
//! `--auth-required`. The faithful server passes every auth case in both
//! eras; each `auth-*` fault is caught by A1 at its level; and nothing of it
//! is guessed: without the flag the auth cases are not in the run, and a
//! protected server that gets no token is a setup error naming the flags.

use std::collections::BTreeSet;

use mcperr_reference::Fault;
use serde_json::Value;

use crate::http::HttpServer;
use crate::support::{mcperr, report, scratch};

const TOKEN: &str = "mcperr-test-token";
const LIMITED: &str = "mcperr-test-readonly";

fn protected(fault: Option<Fault>) -> HttpServer {
    let mut args = vec!["--auth-token", TOKEN, "--auth-limited-token", LIMITED];
    if let Some(f) = fault {
        args.extend(["--fault", f.name()]);
    }
    HttpServer::reference(&args)
}

/// One judged auth case: era, case id, verdict, deciding aspect.
type Judged = (String, String, String, String);

/// The auth cases' verdicts of a judged run, with its exit code.
fn judged(server: &HttpServer, name: &str) -> (Option<i32>, Vec<Judged>) {
    let json = scratch(name).join("r.json");
    let token = format!("Authorization: Bearer {TOKEN}");
    let limited = format!("Authorization: Bearer {LIMITED}");
    let out = mcperr(&[
        "run",
        "--http",
        &server.url,
        "--header",
        &token,
        "--auth-required",
        "--auth-limited-header",
        &limited,
        "--cases",
        "auth/*",
        "--json",
        json.to_str().unwrap(),
    ]);
    let r = report(&json);
    let runs: Vec<Value> = match r.get("runs").and_then(Value::as_array) {
        Some(runs) => runs.clone(),
        None => vec![r.clone()],
    };
    let mut cases = Vec::new();
    for run in runs {
        let era = run["era"].as_str().unwrap_or_default().to_string();
        for c in run["cases"].as_array().unwrap() {
            cases.push((
                era.clone(),
                c["id"].as_str().unwrap().to_string(),
                c["verdict"].as_str().unwrap().to_string(),
                c["aspect"].as_str().unwrap_or_default().to_string(),
            ));
        }
    }
    (out.code, cases)
}

#[test]
fn a_faithful_protected_server_passes_every_auth_case_in_both_eras() {
    let server = protected(None);
    let (code, cases) = judged(&server, "auth-faithful");
    assert_eq!(code, Some(0), "{cases:?}");
    let ids: BTreeSet<&str> = cases.iter().map(|c| c.1.as_str()).collect();
    assert_eq!(
        ids,
        BTreeSet::from([
            "auth/forged-token-401",
            "auth/insufficient-scope-403",
            "auth/no-token-401",
            "auth/resource-metadata",
            "auth/session-without-token",
            "auth/tool-call-without-token",
        ])
    );
    assert!(cases.iter().all(|c| c.2 == "pass"), "{cases:?}");
    // session-without-token is 2025-11-25's alone: 2026-07-28 has no sessions.
    assert_eq!(cases.len(), 11, "{cases:?}");
}

#[test]
fn each_auth_fault_is_caught_by_a1_at_its_aspect_s_level() {
    // (fault, the case that catches it, its verdict under spec)
    let expected = [
        (Fault::AuthUnchecked, "auth/no-token-401", "fail"),
        (Fault::AuthForgedAccepted, "auth/forged-token-401", "fail"),
        (Fault::AuthNoChallenge, "auth/no-token-401", "fail"),
        (Fault::AuthNoMetadata, "auth/resource-metadata", "fail"),
        (
            Fault::AuthMetadataNoServers,
            "auth/resource-metadata",
            "fail",
        ),
        (Fault::AuthChallengeNoScope, "auth/no-token-401", "warn"),
        (
            Fault::AuthRefusalWithData,
            "auth/tool-call-without-token",
            "fail",
        ),
        (
            Fault::AuthSessionAuthenticates,
            "auth/session-without-token",
            "fail",
        ),
        (Fault::AuthScope401, "auth/insufficient-scope-403", "warn"),
        (Fault::AuthOfflineAccess, "auth/resource-metadata", "warn"),
    ];
    let auth_faults: Vec<Fault> = Fault::ALL
        .iter()
        .copied()
        .filter(|f| f.auth_only())
        .collect();
    assert_eq!(
        auth_faults.len(),
        expected.len(),
        "a new auth fault needs a row here"
    );
    let mut misses = Vec::new();
    for (fault, case, verdict) in expected {
        assert_eq!(fault.rule(), "A1");
        let server = protected(Some(fault));
        let (code, cases) = judged(&server, &format!("auth-{}", fault.name()));
        let hit = cases.iter().any(|c| c.1 == case && c.2 == verdict);
        let want_code = if verdict == "fail" { Some(1) } else { Some(0) };
        if !hit || code != want_code {
            misses.push(format!("{}: exit {code:?}, {cases:?}", fault.name()));
        }
    }
    assert!(misses.is_empty(), "{misses:#?}");
}

#[test]
fn authorization_is_never_guessed() {
    let server = protected(None);
    // Without a token: a setup error that says what to give.
    let out = mcperr(&["run", "--http", &server.url, "--era", "2026-07-28"]);
    assert_eq!(out.code, Some(2), "{}", out.stdout);
    assert!(
        out.stderr
            .contains("--header \"Authorization: Bearer TOKEN\""),
        "{}",
        out.stderr
    );
    // With the token but without --auth-required: no auth case is in the run.
    let token = format!("Authorization: Bearer {TOKEN}");
    let run = mcperr(&[
        "run",
        "--http",
        &server.url,
        "--header",
        &token,
        "--era",
        "2026-07-28",
    ]);
    assert_eq!(run.code, Some(0), "{}", run.stdout);
    assert!(!run.stdout.contains("auth/"), "{}", run.stdout);
    // --auth-required without a token, or without --http, is a usage error.
    let bare = mcperr(&["run", "--http", &server.url, "--auth-required"]);
    assert_eq!(bare.code, Some(2));
    assert!(
        bare.stderr.contains("--auth-required needs the token"),
        "{}",
        bare.stderr
    );
    let stdio = mcperr(&["run", "--auth-required"]);
    assert_eq!(stdio.code, Some(2));
    assert!(
        stdio.stderr.contains("give its URL with --http"),
        "{}",
        stdio.stderr
    );
}
