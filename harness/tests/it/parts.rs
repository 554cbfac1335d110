//! Parts, not names: on servers built differently from the reference (the
//! Recipes servers on the Python and TypeScript SDKs, whose long-running
//! tools are simmer_sauce and knead_dough), the parts a case needs are
//! found from what they list and how they answer (their full runs are
//! fixtures.rs's; [`assert_parts_reach`] checks them), a user can name a
//! player, no case skips for want of a tool name, and each run counts its
//! coverage.

use serde_json::Value;

use crate::fixtures::recipes;
use crate::support::mcperr;

fn verdict<'a>(r: &'a Value, id: &str) -> &'a str {
    r["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == id)
        .and_then(|c| c["verdict"].as_str())
        .unwrap_or("absent")
}

/// What a full run of a Recipes server (`name`: python or typescript)
/// shows of parts (fixtures.rs makes the runs, in both eras and profiles):
/// its own long-running tool plays progress, found by a valid call with a
/// progressToken; progress and in-flight cancellation are judged; no skip
/// asks for a tool by the reference's name (each names a part and the flag,
/// a capability, or the era); and the run counts what it judged.
pub fn assert_parts_reach(r: &Value, name: &str, what: &str) {
    let player = if name == "python" {
        "simmer_sauce"
    } else {
        "knead_dough"
    };
    assert_eq!(
        r["parts"]["progress"]["plays"], player,
        "{what}: {}",
        r["parts"]
    );
    assert_eq!(r["parts"]["progress"]["found"]["by"], "probe", "{what}");
    for id in ["utilities/progress-increases", "utilities/cancel-in-flight"] {
        assert_eq!(verdict(r, id), "pass", "{what}: {id}");
    }
    for c in r["cases"].as_array().unwrap() {
        let why = c["message"].as_str().unwrap_or("");
        if c["verdict"] == "skip" {
            assert!(!why.contains("lacks tool:"), "{what}: {} {why}", c["id"]);
        }
        if why.starts_with("no part ") && !why.contains("Bookshop fixture contract") {
            assert!(why.contains("--part "), "{what}: {why}");
        }
    }
    let cov = &r["coverage"];
    let (judged, applicable) = (
        cov["judged"].as_u64().unwrap(),
        cov["applicable"].as_u64().unwrap(),
    );
    assert!(judged > 0 && judged < applicable, "{what}: {cov}");
    assert_eq!(
        cov["unreached"].as_array().unwrap().len() as u64,
        applicable - judged,
        "{what}"
    );
}

#[test]
fn a_named_player_wins_and_a_bad_name_is_a_usage_error() {
    let (_, python) = recipes().remove(0);
    let out = mcperr(&[
        "list",
        "--stdio",
        &python,
        "--era",
        "2026-07-28",
        "--part",
        r#"progress=simmer_sauce:{"minutes": 4}"#,
        "--part",
        r#"crash=fetch_page:{"url": "{{canary}}"}"#,
    ]);
    assert_eq!(out.code, Some(0), "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains(r#"progress            simmer_sauce {"minutes":4}  (named by --part)"#),
        "{}",
        out.stdout
    );
    // What nothing plays says what would, and the flag that names it.
    assert!(
        out.stdout
            .contains("echo-error          none: a tool that fails its call")
            && out
                .stdout
                .contains("--part echo-error=TOOL[:ARGUMENTS-JSON]"),
        "{}",
        out.stdout
    );
    for (flag, says) in [
        ("slowness=simmer_sauce", "there is no part \"slowness\""),
        (
            "progress=no_such_tool",
            "the server lists no tool named \"no_such_tool\"",
        ),
        (
            "progress=simmer_sauce:{oops",
            "its arguments are not a JSON object",
        ),
    ] {
        let out = mcperr(&[
            "list",
            "--stdio",
            &python,
            "--era",
            "2026-07-28",
            "--part",
            flag,
        ]);
        assert_eq!(out.code, Some(2), "{flag}: {}{}", out.stdout, out.stderr);
        assert!(out.stderr.contains(says), "{flag}: {}", out.stderr);
        assert_eq!(
            out.stderr.trim().lines().count(),
            1,
            "{flag}: {}",
            out.stderr
        );
    }
}

#[test]
fn min_coverage_fails_a_run_that_judged_too_little() {
    let (_, python) = recipes().remove(0);
    let low = mcperr(&[
        "run",
        "--stdio",
        &python,
        "--era",
        "2026-07-28",
        "--cases",
        "utilities/*",
        "--min-coverage",
        "100",
    ]);
    assert_eq!(low.code, Some(1), "{}", low.stdout);
    assert!(
        low.stdout.contains("COVERAGE 2026-07-28 over stdio judged")
            && low.stdout.contains("below --min-coverage 100"),
        "{}",
        low.stdout
    );
    let ok = mcperr(&["run", "--era", "2026-07-28", "--min-coverage", "50"]);
    assert_eq!(ok.code, Some(0), "{}", ok.stdout);
    // The summary's line under the run's counts: `coverage P %: judged N of the M …`.
    assert!(
        ok.stdout.contains("\n    coverage ") && ok.stdout.contains(" %: judged "),
        "{}",
        ok.stdout
    );
}
