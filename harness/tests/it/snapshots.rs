//! `--snapshots DIR` on servers that are not the reference: the Recipes
//! server on the MCP Python SDK and on the TypeScript SDK (other tools,
//! other SDKs). A first run leaves every transcript pending, accepting them
//! (with `mcperr review` or `cargo insta accept`) makes the next run write
//! nothing and pass, and a fault leaves pending exactly the cases whose
//! transcript it changed.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::fixtures::typescript;
use crate::sdk_peers::python;
use crate::support::{mcperr_env, report, scratch, Output, MCPERR};

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

/// Off CI, so insta's `auto` mode writes `.snap.new` files (on CI it
/// writes nothing, as insta does: tested below).
const LOCAL: &[(&str, &str)] = &[("CI", "false")];

pub(crate) fn python_recipes(fault: Option<&str>) -> String {
    let fault = fault.map(|f| format!(" --fault {f}")).unwrap_or_default();
    format!(
        "{} {ROOT}/fixtures/servers/python/recipes.py{fault}",
        python()
    )
}

fn run(server: &str, dir: &Path, extra: &[&str], env: &[(&str, &str)]) -> Output {
    let dir = dir.display().to_string();
    let mut args = vec!["run", "-q", "--stdio", server, "--snapshots", &dir];
    args.extend(extra);
    mcperr_env(&args, env)
}

/// Every file under `dir` with its contents.
pub(crate) fn tree(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else {
                out.push((p.clone(), std::fs::read_to_string(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

fn with_suffix(dir: &Path, suffix: &str) -> BTreeSet<String> {
    tree(dir)
        .into_iter()
        .filter_map(|(p, _)| {
            let rel = p.strip_prefix(dir).unwrap().display().to_string();
            rel.strip_suffix(suffix).map(String::from)
        })
        .collect()
}

/// The snapshot (without `.snap`) of each case whose transcript differs
/// between two JSON reports: its verdict, rule, HTTP status, or the
/// response apart from the id mcperr numbered.
fn transcripts_that_differ(before: &Value, after: &Value) -> BTreeSet<String> {
    let key = |run: &Value, case: &Value| {
        let (dir, name) = mcperr_render::snapshot::place(
            None,
            run["transport"].as_str().unwrap(),
            run["era"].as_str().unwrap(),
            case["id"].as_str().unwrap(),
        );
        dir.join(name).display().to_string()
    };
    let shape = |case: &Value| {
        let mut response = case["response"].clone();
        if let Some(o) = response.as_object_mut() {
            o.remove("id");
        }
        (
            case["verdict"].clone(),
            case["rule"].clone(),
            case["http_status"].clone(),
            response,
        )
    };
    let index = |r: &Value| {
        let mut m = std::collections::BTreeMap::new();
        for run in r["runs"].as_array().unwrap() {
            for case in run["cases"].as_array().unwrap() {
                m.insert(key(run, case), shape(case));
            }
        }
        m
    };
    let (a, b) = (index(before), index(after));
    assert_eq!(a.len(), b.len(), "the same cases ran");
    a.iter()
        .filter(|(k, v)| b.get(*k) != Some(v))
        .map(|(k, _)| k.clone())
        .collect()
}

#[test]
fn a_user_server_s_snapshots_are_pending_then_accepted_then_unchanged_and_a_fault_changes_exactly_its_cases(
) {
    let dir = scratch("snapshots-python-recipes");
    let snaps = dir.join("snaps");
    let cases = ["--cases", "tools/*", "--cases", "generated/tools/*"];
    let clean = python_recipes(None);

    let first = run(&clean, &snaps, &cases, LOCAL);
    assert_eq!(
        first.code,
        Some(1),
        "pending snapshots fail the run: {}",
        first.stdout
    );
    let pending = with_suffix(&snaps, ".snap.new");
    assert!(pending.len() > 40, "{pending:?}");
    assert!(with_suffix(&snaps, ".snap").is_empty());
    assert!(first
        .stdout
        .contains(&format!("0 unchanged, {} new, 0 changed", pending.len())));
    assert!(
        first.stdout.contains("review: mcperr review"),
        "{}",
        first.stdout
    );
    // The tools' own names, not the reference's.
    assert!(
        pending.iter().any(|p| p.contains("find_recipe")),
        "{pending:?}"
    );

    let listed = mcperr_env(&["review", snaps.to_str().unwrap(), "--list"], &[]);
    assert_eq!(listed.code, Some(0));
    assert_eq!(listed.stdout.lines().count(), pending.len());
    assert!(listed.stdout.lines().all(|l| l.starts_with("new ")));
    let accepted = mcperr_env(&["review", snaps.to_str().unwrap(), "--accept"], &[]);
    assert_eq!(accepted.code, Some(0), "{}", accepted.stderr);
    assert_eq!(with_suffix(&snaps, ".snap"), pending);
    assert!(with_suffix(&snaps, ".snap.new").is_empty());

    // Unchanged: nothing written, and the exit a run without snapshots has.
    let before = tree(&snaps);
    let json_clean = dir.join("clean.json");
    let mut extra = cases.to_vec();
    extra.extend(["--json", json_clean.to_str().unwrap()]);
    let second = run(&clean, &snaps, &extra, LOCAL);
    let plain = mcperr_env(
        &[
            "run", "-q", "--stdio", &clean, cases[0], cases[1], cases[2], cases[3],
        ],
        LOCAL,
    );
    assert_eq!(second.code, plain.code, "{}", second.stdout);
    assert_eq!(second.code, Some(0));
    assert!(second
        .stdout
        .contains(&format!("{} unchanged, 0 new, 0 changed", pending.len())));
    assert_eq!(tree(&snaps), before, "an unchanged server writes nothing");
    // Each run's report says what became of its snapshots.
    let runs = report(&json_clean)["runs"].as_array().unwrap().clone();
    let unchanged: u64 = runs
        .iter()
        .map(|r| r["snapshots"]["unchanged"].as_u64().unwrap())
        .sum();
    assert_eq!(unchanged as usize, pending.len());

    // A deviation: pending for exactly the cases whose transcript changed.
    let json_fault = dir.join("fault.json");
    let mut extra = cases.to_vec();
    extra.extend(["--json", json_fault.to_str().unwrap()]);
    let faulty = run(
        &python_recipes(Some("no-validation")),
        &snaps,
        &extra,
        LOCAL,
    );
    assert_eq!(faulty.code, Some(1), "{}", faulty.stdout);
    let expected = transcripts_that_differ(&report(&json_clean), &report(&json_fault));
    assert!(!expected.is_empty());
    let changed: BTreeSet<String> = with_suffix(&snaps, ".snap.new")
        .into_iter()
        .map(|p| p.trim_end_matches(".snap").to_string())
        .collect();
    assert_eq!(changed, expected);
    // mcperr review --reject leaves the accepted ones as they were.
    let rejected = mcperr_env(&["review", snaps.to_str().unwrap(), "--reject"], &[]);
    assert_eq!(rejected.code, Some(0));
    assert_eq!(tree(&snaps), before);
}

/// `cargo insta` from the test script's tools (target/tools/bin on PATH);
/// `None` off CI where it is not installed.
fn cargo_insta() -> Option<()> {
    let ok = Command::new("cargo")
        .args(["insta", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok && std::env::var_os("CI").is_some() {
        panic!("cargo-insta is not on PATH: scripts/test.sh installs it under target/tools/bin");
    }
    ok.then_some(())
}

fn insta(project: &Path, args: &[&str]) -> String {
    // Bounded, as every wait: cargo-insta runs `cargo metadata`.
    let o = Command::new("timeout")
        .args(["120", "cargo", "insta"])
        .args(args)
        .current_dir(project)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "cargo insta {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn cargo_insta_reviews_the_snapshots_of_a_typescript_server_in_a_cargo_package() {
    if cargo_insta().is_none() {
        eprintln!("skipped: cargo-insta is not on PATH (scripts/test.sh installs it)");
        return;
    }
    // Outside the checkout: cargo-insta skips what a .gitignore covers,
    // and target/ is one.
    let project = std::env::temp_dir().join(format!("mcperr-insta-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&project);
    std::fs::create_dir_all(project.join("src")).unwrap();
    std::fs::write(
        project.join("Cargo.toml"),
        "[package]\nname = \"my-server\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    )
    .unwrap();
    std::fs::write(project.join("src/lib.rs"), "").unwrap();
    let snaps = project.join("tests/snapshots");
    let server = format!("node {}", typescript());
    let cases = ["--cases", "tools/*", "--cases", "generated/tools/*"];

    let first = run(&server, &snaps, &cases, LOCAL);
    assert_eq!(first.code, Some(1), "{}", first.stdout);
    let pending = with_suffix(&snaps, ".snap.new");
    let listed = insta(&project, &["pending-snapshots"]);
    let listed = listed.lines().filter(|l| l.trim_end().ends_with(".snap"));
    assert_eq!(listed.count(), pending.len());
    insta(&project, &["accept"]);
    assert_eq!(with_suffix(&snaps, ".snap"), pending);
    assert!(with_suffix(&snaps, ".snap.new").is_empty());

    // Files cargo-insta rewrote on accepting read as unchanged.
    let before = tree(&snaps);
    let second = run(&server, &snaps, &cases, LOCAL);
    assert_eq!(second.code, Some(0), "{}", second.stdout);
    assert_eq!(tree(&snaps), before);

    let faulty = format!("{server} --fault no-validation");
    assert_eq!(run(&faulty, &snaps, &cases, LOCAL).code, Some(1));
    assert!(!with_suffix(&snaps, ".snap.new").is_empty());
    insta(&project, &["reject"]);
    assert_eq!(tree(&snaps), before);
    let _ = std::fs::remove_dir_all(&project);
}

#[test]
fn insta_s_update_modes_redactions_and_unreferenced_snapshots_do_what_they_say() {
    let dir = scratch("snapshots-modes");
    let snaps = dir.join("snaps");
    let server = python_recipes(None);
    let one = ["--era", "2026-07-28", "--cases", "tools/unknown-tool"];

    // On CI insta's default writes nothing, and the run fails.
    let ci = run(&server, &snaps, &one, &[("CI", "true")]);
    assert_eq!(ci.code, Some(1));
    assert!(ci.stdout.contains("not written: on CI"), "{}", ci.stdout);
    assert!(tree(&snaps).is_empty());

    // always: accepted in place, the run passes.
    let always = run(&server, &snaps, &one, &[("INSTA_UPDATE", "always")]);
    assert_eq!(always.code, Some(0), "{}", always.stdout);
    assert_eq!(with_suffix(&snaps, ".snap").len(), 1);
    assert!(with_suffix(&snaps, ".snap.new").is_empty());

    // The user's own redactions, from DIR/redactions.toml and --redact.
    std::fs::write(
        snaps.join("redactions.toml"),
        "[redactions]\n'.response.result.content[0].text' = '[message]'\n[filters]\n'no_such' = 'NO-SUCH'\n",
    )
    .unwrap();
    let mine = run(
        &server,
        &snaps,
        &[&one[..], &["--redact", ".case=[case]"]].concat(),
        &[("INSTA_UPDATE", "always")],
    );
    assert_eq!(mine.code, Some(0));
    let (_, text) = tree(&snaps)
        .into_iter()
        .find(|(p, _)| p.extension().is_some_and(|e| e == "snap"))
        .unwrap();
    assert!(text.contains("\"text\": \"[message]\""), "{text}");
    assert!(text.contains("\"case\": \"[case]\""), "{text}");
    assert!(text.contains("\"mcperr_NO-SUCH_tool\""), "{text}");
    std::fs::remove_file(snaps.join("redactions.toml")).unwrap();

    // A snapshot no case produces any more: listed, failing with reject,
    // deleted with delete (only a run of the whole suite can tell).
    let gone = snaps.join("stdio-2026-07-28/tools/gone.snap");
    std::fs::write(&gone, "---\nsource: mcperr\n---\n{}\n").unwrap();
    let era = ["--era", "2026-07-28"];
    let env = [("INSTA_UPDATE", "always")];
    let rejecting = run(
        &server,
        &snaps,
        &[&era[..], &["--unreferenced", "reject"]].concat(),
        &env,
    );
    assert_eq!(rejecting.code, Some(1), "{}", rejecting.stdout);
    assert!(
        rejecting
            .stdout
            .contains("stdio-2026-07-28/tools/gone.snap"),
        "{}",
        rejecting.stdout
    );
    // A run that narrows the suite cannot tell what went away.
    let narrowed = [
        &era[..],
        &["--tools", "find_recipe", "--unreferenced", "reject"],
    ]
    .concat();
    assert_eq!(run(&server, &snaps, &narrowed, &env).code, Some(0));
    let deleting = run(
        &server,
        &snaps,
        &[&era[..], &["--unreferenced", "delete"]].concat(),
        &env,
    );
    assert_eq!(deleting.code, Some(0), "{}", deleting.stdout);
    assert!(!gone.exists());
}

#[test]
fn bad_snapshot_input_is_one_line_and_exit_2() {
    let dir = scratch("snapshots-bad");
    let snaps = dir.join("snaps");
    let s = snaps.to_str().unwrap();
    let expect_2 = |o: Output, says: &str| {
        assert_eq!(o.code, Some(2), "{}", o.stderr);
        assert_eq!(o.stderr.lines().count(), 1, "{}", o.stderr);
        assert!(o.stderr.contains(says), "{}", o.stderr);
    };
    expect_2(
        mcperr_env(&["run", "--snapshots", s, "--redact", "serverInfo"], &[]),
        "is not an insta selector",
    );
    expect_2(
        mcperr_env(&["run", "--snapshots", s], &[("INSTA_UPDATE", "sometimes")]),
        "INSTA_UPDATE=\"sometimes\"",
    );
    std::fs::write(snaps.join("redactions.toml"), "[filters]\n'(' = 'x'\n").unwrap();
    expect_2(
        mcperr_env(&["run", "--snapshots", s], &[]),
        "redactions.toml",
    );
    expect_2(
        mcperr_env(&["review", dir.join("nope").to_str().unwrap()], &[]),
        "not a folder",
    );
    std::fs::create_dir_all(snaps.join("stdio-2026-07-28")).unwrap();
    std::fs::write(
        snaps.join("stdio-2026-07-28/x.snap.new"),
        "---\nsource: mcperr\n---\n{}\n",
    )
    .unwrap();
    expect_2(
        mcperr_env(&["review", s], &[]),
        "pass --accept, --reject or --list",
    );
}

#[test]
fn the_library_gives_the_snapshots_the_cli_writes_and_says_why_it_cannot_run() {
    use mcperr::conformance::{Conformance, ConformanceError};
    let server = format!("node {}", typescript());
    let outcome = Conformance::stdio(&server)
        .unwrap()
        .cases("tools/unknown-tool")
        .cases("tools/invalid-args-*")
        .run()
        .unwrap();
    assert!(outcome.not_judged.is_empty(), "{:?}", outcome.not_judged);
    assert!(outcome.snapshots().len() >= 2, "both eras");

    let dir = scratch("snapshots-library");
    let cli = run(
        &server,
        &dir,
        &[
            "--cases",
            "tools/unknown-tool",
            "--cases",
            "tools/invalid-args-*",
        ],
        &[("INSTA_UPDATE", "always")],
    );
    assert_eq!(cli.code, Some(0), "{}", cli.stdout);
    let written = tree(&dir);
    assert_eq!(written.len(), outcome.snapshots().len());
    for snap in outcome.snapshots() {
        let text = std::fs::read_to_string(dir.join(snap.path())).unwrap();
        assert_eq!(text, snap.file.to_text(), "{}", snap.path().display());
    }

    let refused = |r: Result<Conformance, ConformanceError>| match r {
        Err(ConformanceError::Input(why)) => why,
        other => panic!("expected an input error, got {other:?}"),
    };
    assert!(refused(Conformance::stdio("")).contains("needs a command"));
    assert!(!refused(Conformance::stdio("x").unwrap().era("1999-01-01")).is_empty());
    assert!(refused(Conformance::stdio("x").unwrap().redact("nope", "")).contains("insta selector"));
    let unstartable = Conformance::stdio("/nonexistent/server").unwrap().run();
    assert!(
        matches!(unstartable, Err(ConformanceError::Unjudged(_))),
        "{unstartable:?}"
    );
}

#[test]
fn mcperr_review_shows_each_diff_and_asks_on_a_terminal() {
    // A terminal from util-linux's `script` (Debian's bsdutils, always there).
    if Command::new("script").arg("--version").output().is_err() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI needs `script` (bsdutils)"
        );
        eprintln!("skipped: no `script` here to give mcperr review a terminal");
        return;
    }
    let dir = scratch("snapshots-review");
    let column = dir.join("stdio-2026-07-28/tools");
    std::fs::create_dir_all(&column).unwrap();
    let file = |name: &str, body: &str| {
        let text = format!("---\nsource: mcperr\ndescription: \"stdio in 2026-07-28: tools/{name}\"\n---\n{body}\n");
        std::fs::write(column.join(name), text).unwrap();
    };
    file("changed.snap", "{\n  \"a\": 1\n}");
    file("changed.snap.new", "{\n  \"a\": 2\n}");
    file("new.snap.new", "{}");
    file("skipped.snap.new", "[]");
    // Bounded: a review that waited for input forever fails the test.
    let mut child = Command::new("timeout")
        .args([
            "60",
            "script",
            "-qec",
            &format!("{MCPERR} review {}", dir.display()),
            "/dev/null",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    child.stdin.take().unwrap().write_all(b"a\nr\ns\n").unwrap();
    let out = child.wait_with_output().unwrap();
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{shown}");
    assert!(
        shown.contains("[1/3] stdio-2026-07-28/tools/changed.snap (changed)"),
        "{shown}"
    );
    assert!(
        shown.contains("  -   \"a\": 1") && shown.contains("  +   \"a\": 2"),
        "{shown}"
    );
    assert!(
        shown.contains("accepted 1, rejected 1, skipped 1"),
        "{shown}"
    );
    let read = |name: &str| std::fs::read_to_string(column.join(name)).ok();
    assert!(
        read("changed.snap").unwrap().contains("\"a\": 2"),
        "accepted"
    );
    assert!(read("changed.snap.new").is_none());
    assert!(
        read("new.snap").is_none() && read("new.snap.new").is_none(),
        "rejected"
    );
    assert!(read("skipped.snap.new").is_some(), "skipped stays pending");
}
