//! Nothing changes on the user's server that the user did not allow: a tool
//! that may write gets valid calls (arguments its schema accepts, which run
//! its body) only when the user named or allowed it, and then a bounded
//! number of them; every other tool gets only arguments its own schema
//! rejects. Proven on the Notes server (Python SDK), whose writing tools
//! log every body run.

use std::collections::BTreeMap;
use std::path::Path;

use crate::sdk_peers::python;
use crate::support::{mcperr_env, scratch};

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

/// How often each writing tool's body ran, from the Notes server's log.
fn bodies_run(log: &Path) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for line in std::fs::read_to_string(log).unwrap_or_default().lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        *out.entry(v["tool"].as_str().unwrap().to_string())
            .or_default() += 1;
    }
    out
}

/// Runs `mcperr` with `args` against the Notes server; what its writing
/// tools' bodies did meanwhile.
fn against_notes(name: &str, args: &[&str]) -> (BTreeMap<String, usize>, String) {
    let dir = scratch(&format!("consent-{name}"));
    let log = dir.join("bodies.log");
    let server = format!("{} {ROOT}/fixtures/servers/python/notes.py", python());
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--stdio", &server]);
    let out = mcperr_env(&all, &[("NOTES_BODY_LOG", log.to_str().unwrap())]);
    assert!(out.code.is_some_and(|c| c < 2), "{name}: {}", out.stderr);
    (bodies_run(&log), out.stdout)
}

#[test]
fn tools_that_write_run_their_bodies_only_when_allowed_and_then_a_bounded_number_of_times() {
    // Without a flag: the additive add_note, the un-annotated tag_note and the
    // destructive purge_notes never run, in a run or a campaign.
    for (name, args) in [
        // -v: the tools block a tool per line, as fuzz prints it.
        ("run", vec!["run", "-v"]),
        ("fuzz", vec!["fuzz", "--seconds", "4", "--seed", "3"]),
    ] {
        let (ran, stdout) = against_notes(name, &args);
        assert!(ran.is_empty(), "{name}: {ran:?}\n{stdout}");
        assert!(
            stdout.contains("add_note: invalid calls only (annotated destructiveHint: false: additive, it still writes; --allow-additive"),
            "{name}: {stdout}"
        );
    }
    // --allow-additive: add_note gets valid calls, 16 per era in a campaign
    // long enough to draw more (two eras, one job); the others never run.
    let (ran, stdout) = against_notes(
        "fuzz-additive",
        &[
            "fuzz",
            "--requests",
            "3000",
            "--seed",
            "3",
            "--allow-additive",
        ],
    );
    assert_eq!(ran.get("add_note"), Some(&32), "{ran:?}\n{stdout}");
    assert_eq!(ran.len(), 1, "{ran:?}");
    // --allow-destructive: every tool that writes gets its 16 per era at
    // most, purge_notes (no arguments: no envelope mutation reaches it) too.
    let (ran, stdout) = against_notes(
        "fuzz-destructive",
        &[
            "fuzz",
            "--requests",
            "3000",
            "--seed",
            "3",
            "--allow-destructive",
        ],
    );
    for tool in ["add_note", "tag_note", "purge_notes"] {
        let n = ran.get(tool).copied().unwrap_or(0);
        assert!((1..=32).contains(&n), "{tool}: {ran:?}\n{stdout}");
    }
    assert!(
        stdout.contains("add_note: valid calls (at most 16 per era and job in fuzz)"),
        "{stdout}"
    );
    let (ran, _) = against_notes("run-additive", &["run", "--allow-additive"]);
    assert!(ran.contains_key("add_note") && ran.len() == 1, "{ran:?}");
    // --allow-destructive: every tool may run, purge_notes included.
    let (ran, stdout) = against_notes("run-destructive", &["run", "--allow-destructive"]);
    for tool in ["add_note", "tag_note", "purge_notes"] {
        assert!(ran.contains_key(tool), "{tool}: {ran:?}\n{stdout}");
    }
}

#[test]
fn no_generated_valid_call_passes_without_a_success() {
    // On the Notes server: note_stats returns "Error: …" as a success (T9,
    // a warning, on any server), sync_status takes no arguments and always
    // fails (its isError answer is judged, and T8 skips: no success shown).
    let dir = scratch("consent-no-pass-without-success");
    let json = dir.join("r.json");
    let server = format!("{} {ROOT}/fixtures/servers/python/notes.py", python());
    let out = mcperr_env(
        &[
            "run",
            "--stdio",
            &server,
            "--era",
            "2026-07-28",
            "--cases",
            "generated/tools/*/valid-call",
            "--json",
            json.to_str().unwrap(),
        ],
        &[],
    );
    assert!(out.code.is_some_and(|c| c < 2), "{}", out.stderr);
    let r = crate::support::report(&json);
    let cases = r["cases"].as_array().unwrap();
    for c in cases {
        if c["verdict"] == "pass" {
            assert_ne!(
                c.pointer("/response/result/isError"),
                Some(&serde_json::json!(true)),
                "a T8 pass with isError: {c}"
            );
        }
    }
    let by_id = |id: &str| {
        cases
            .iter()
            .find(|c| c["id"] == format!("generated/tools/{id}/valid-call"))
            .unwrap_or_else(|| panic!("{id}: {}", out.stdout))
    };
    let stats = by_id("note_stats");
    assert_eq!(
        (&stats["rule"], &stats["verdict"]),
        (&"T9".into(), &"warn".into()),
        "{stats}"
    );
    let sync = by_id("sync_status");
    assert_eq!(sync["verdict"], "skip", "{sync}");
    assert!(
        sync["message"]
            .as_str()
            .unwrap()
            .contains("no success to judge"),
        "{sync}"
    );
    assert_eq!(by_id("find_notes")["verdict"], "pass");
    assert_eq!(
        r["valid_call_outcomes"]["tool_failed"], 1,
        "{}",
        r["valid_call_outcomes"]
    );
}
