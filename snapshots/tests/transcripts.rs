//! Every case against every server under test as insta snapshots, and the
//! same matrix rendered as the HTML page and checked in headless Chromium.
//!
//! One run of the matrix feeds both tests (it is the slow part: the Python
//! SDK starts in about a second per process). Review loop: `cargo insta
//! test -p mcperr-snapshots`, then `cargo insta review` (or `accept`). With
//! `CI=true` a changed or missing snapshot fails `cargo test`, and no
//! `.snap.new` is written.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use mcperr::matrix::run_matrix;
use mcperr_cases::profile::Profile;
use mcperr_cases::select::Selection;
use mcperr_model::verdict::Verdict;
use mcperr_render::html::render_matrix;
use mcperr_render::matrix::Matrix;
use mcperr_render::snapshot::{Redactions, SnapFile};
use mcperr_snapshots::{eras_not_spoken, server_names, servers, snapshot, CANARY, ERAS};
use regex::Regex;

const PACKAGE: &str = env!("CARGO_MANIFEST_DIR");

/// The matrix of every server, judged once per test binary.
fn matrix() -> &'static Matrix {
    static MATRIX: OnceLock<Matrix> = OnceLock::new();
    MATRIX.get_or_init(|| {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let (servers, _children) = servers().unwrap_or_else(|e| panic!("{e}"));
        // `model`: the source documents' error model, under which every
        // deviation is a verdict (under `spec` many are "no verdict").
        let profile = Profile::load("model").unwrap();
        let (matrix, judged) = rt
            .block_on(run_matrix(&servers, &ERAS, &Selection::default(), &profile))
            .unwrap();
        for (s, j) in servers.iter().zip(&judged) {
            let lacking = eras_not_spoken(&s.name);
            match lacking.first() {
                None => assert!(j.notes.is_empty(), "{}: {:?}", s.name, j.notes),
                // One note per target that was asked for the era it lacks.
                Some(era) => {
                    let asked = s
                        .targets
                        .iter()
                        .filter(|t| t.era.is_none_or(|e| e.to_string() == *era))
                        .count();
                    assert!(
                        j.notes.len() == asked && j.notes.iter().all(|n| n.starts_with(era)),
                        "{} should lack exactly {era}: {:?}",
                        s.name,
                        j.notes
                    );
                }
            }
        }
        matrix
    })
}

/// What legitimately varies between runs, redacted, each for its reason:
/// mcperr's standard redactions (what changes in every run of any server:
/// versions, the canary, timestamps, minted ids), after our peers' own,
/// added as a user adds theirs.
fn redactions() -> Redactions {
    let mut ours = Redactions::new();
    let filter = |r: &mut Redactions, pattern: &str, with: &str| {
        r.filter(Regex::new(pattern).unwrap(), with);
    };
    // pydantic's validation messages link its docs under its minor version
    // (https://errors.pydantic.dev/2.11/v/int_parsing).
    filter(
        &mut ours,
        r"errors\.pydantic\.dev/[0-9.]+/",
        "errors.pydantic.dev/[version]/",
    );
    // Stack traces in error pages (the TypeScript SDK 1.x's express page for
    // bad JSON) name files under the checkout, which lives elsewhere on every
    // machine, and node's own frames, whose lines move with node's version.
    filter(&mut ours, &regex::escape(&repo_root()), "[repo]");
    filter(&mut ours, r"\(node:[a-z_/]+:\d+:\d+\)", "(node:[frame])");
    // The reference's task ids are drawn from a keyed hash (basic/utilities/
    // tasks' "cryptographically secure task IDs"), and also quoted in its
    // messages, where no selector reaches them.
    filter(&mut ours, r"task-[0-9a-f]{16,}", "[task-id]");
    // turbomcp names each SSE event of a GET stream by its session and a
    // random hex id after it.
    filter(
        &mut ours,
        r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-[0-9a-f]{32}-",
        "[uuid]-[event-id]-",
    );
    // Session ids travel only in HTTP headers, which transcripts do not hold,
    // and timings (`duration_ms`) are left out of transcripts for the same
    // reason as the judge's message: neither is the server's behaviour.
    ours.then(Redactions::standard(CANARY, None))
}

/// insta's settings for a snapshot written as mcperr writes it.
fn settings() -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    s.set_prepend_module_to_snapshot(false);
    s.set_omit_expression(true);
    s
}

/// The checkout's absolute path, as servers print it.
fn repo_root() -> String {
    Path::new(PACKAGE)
        .parent()
        .unwrap()
        .canonicalize()
        .unwrap()
        .display()
        .to_string()
}

#[test]
fn every_case_against_every_server_matches_its_transcript() {
    let m = matrix();
    let redactions = redactions();
    let mut expected = BTreeSet::new();
    let snaps: Vec<_> = m
        .cells
        .iter()
        .filter_map(|c| snapshot(c, &redactions))
        .collect();
    for snap in &snaps {
        assert!(
            expected.insert(snap.path()),
            "two cells share the snapshot {}",
            snap.path().display()
        );
    }
    // As `mcperr run --snapshots` writes them: the secrets of the
    // environment and secret-shaped text redacted.
    let redactor = mcperr_oracle::redact::Redactor::from_env(std::env::vars());
    for snap in mcperr::snapshots::for_disk(snaps, &redactor) {
        let mut s = settings();
        s.set_snapshot_path(Path::new(PACKAGE).join(&snap.dir));
        s.set_description(&snap.file.description);
        let (name, contents) = (&snap.name, &snap.file.contents);
        s.bind(|| insta::assert_snapshot!(name.as_str(), contents));
        // The file insta keeps reads back, through mcperr's own reader, as
        // the contents mcperr writes: `mcperr run --snapshots` sees no
        // change where insta sees none.
        let kept = std::fs::read_to_string(Path::new(PACKAGE).join(snap.path()))
            .ok()
            .and_then(|t| SnapFile::parse(&t));
        if let Some(kept) = kept {
            assert_eq!(&kept.contents, contents, "{}", snap.path().display());
        }
    }
    // A snapshot nothing produces any more is a case or a server that went
    // away: it must be deleted, not left to rot.
    let mut orphans = Vec::new();
    for server in server_names().unwrap_or_else(|e| panic!("{e}")) {
        for file in mcperr::snapshots::files(&Path::new(PACKAGE).join(&server), ".snap") {
            let rel = file.strip_prefix(PACKAGE).unwrap().to_path_buf();
            if !expected.contains(&rel) {
                orphans.push(rel.display().to_string());
            }
        }
    }
    assert!(
        orphans.is_empty(),
        "snapshots no case produces (delete them, or run `cargo insta test --unreferenced=delete`): {orphans:?}"
    );
}

/// A headless Chromium: `MCPERR_CHROMIUM`, or `chromium` on PATH (scripts/
/// chromium.sh installs Debian's).
fn chromium() -> Option<String> {
    if let Ok(p) = std::env::var("MCPERR_CHROMIUM") {
        return Some(p);
    }
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|c| {
            Command::new(c)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
        .map(String::from)
}

/// The page's DOM after its scripts ran, opened at `fragment`. A browser
/// that does not finish within two minutes is killed and fails the test.
fn dom(browser: &str, page: &Path, fragment: &str) -> String {
    let profile = Path::new(env!("CARGO_TARGET_TMPDIR")).join("chromium-profile");
    let out_file = Path::new(env!("CARGO_TARGET_TMPDIR")).join("chromium-dom.html");
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-extensions",
            &format!("--user-data-dir={}", profile.display()),
            "--virtual-time-budget=5000",
            "--dump-dom",
        ])
        .arg(format!("file://{}{fragment}", page.display()))
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_file).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromium starts");
    let deadline = Instant::now() + Duration::from_secs(120);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within 120 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "chromium failed: {status}");
    std::fs::read_to_string(&out_file).expect("UTF-8 DOM")
}

/// The opening tags of `<tr class="case" …>` rows in a DOM dump.
fn case_rows(dom: &str) -> Vec<&str> {
    dom.split("<tr class=\"case\"")
        .skip(1)
        .map(|rest| &rest[..rest.find('>').unwrap()])
        .collect()
}

#[test]
fn the_matrix_page_shows_every_cell_and_filters_in_a_real_browser() {
    let m = matrix();
    // scripts/test.sh sets MCPERR_SKIP_BROWSER=1 only off CI on a machine
    // where it could not install chromium (it says so); CI never skips.
    if std::env::var_os("MCPERR_SKIP_BROWSER").is_some() && std::env::var_os("CI").is_none() {
        eprintln!("skipped: MCPERR_SKIP_BROWSER is set");
        return;
    }
    let browser = chromium().expect("no chromium: scripts/chromium.sh installs Debian's");
    let page = Path::new(env!("CARGO_TARGET_TMPDIR")).join("matrix.html");
    std::fs::write(&page, render_matrix(m)).unwrap();
    let (rows, cols) = (m.rows.len(), m.columns.len());
    // The reference in both eras over both transports, and each peer column
    // in the eras and over the transports its manifest lists.
    let peers = mcperr_peers::columns(Path::new(mcperr_snapshots::ROOT)).unwrap();
    let expected: usize = 4 + peers
        .iter()
        .map(|c| c.eras().len() * c.peer.manifest.transports.len())
        .sum::<usize>();
    assert_eq!(
        cols, expected,
        "a column per server, transport and era spoken"
    );

    // Unfiltered: a cell per case per column, each coloured by its verdict.
    let all = dom(&browser, &page, "");
    assert!(all.contains("data-ready=\"1\""), "the page's script ran");
    let classes = |v: &str| all.matches(&format!("class=\"cell {v}")).count();
    let count = |v: Option<Verdict>| m.cells.iter().filter(|c| c.verdict == v).count();
    assert_eq!(all.matches("class=\"cell v-").count(), rows * cols);
    for (class, verdict) in [
        ("v-pass", Some(Verdict::Pass)),
        ("v-fail", Some(Verdict::Fail)),
        ("v-warn", Some(Verdict::Warn)),
        ("v-skip", Some(Verdict::Skip)),
        ("v-error", Some(Verdict::Error)),
        ("v-none", None),
    ] {
        assert_eq!(classes(class), count(verdict), "{class}");
    }
    assert!(count(Some(Verdict::Fail)) > 0, "the SDKs' deviations show");
    assert!(case_rows(&all).iter().all(|r| !r.contains("hidden")));

    // Filtered to failures: exactly the rows with a failing cell stay.
    let failing: usize = (0..rows)
        .filter(|&r| (0..cols).any(|c| m.cell(r, c).verdict == Some(Verdict::Fail)))
        .count();
    let only_fail = dom(&browser, &page, "#verdict=fail");
    let shown = case_rows(&only_fail)
        .iter()
        .filter(|r| !r.contains("hidden"))
        .count();
    assert_eq!(shown, failing);
    assert!(failing < rows, "the filter hides rows");
    assert!(only_fail.contains(&format!("{failing} of {rows} cases shown")));

    // A rule filter keeps that rule's rows only.
    let t2 = dom(&browser, &page, "#rule=T2");
    for r in case_rows(&t2) {
        assert_eq!(r.contains("data-rule=\"T2\""), !r.contains("hidden"), "{r}");
    }

    // A cell opens its detail: the request, the response, the spec section.
    let (r, c) = (0..rows)
        .flat_map(|r| (0..cols).map(move |c| (r, c)))
        .find(|&(r, c)| m.cell(r, c).verdict == Some(Verdict::Fail))
        .unwrap();
    let cell = m.cell(r, c);
    let opened = dom(&browser, &page, &format!("#cell={},{c}", cell.case));
    let panel = &opened[opened.find("<aside id=\"detail\"").unwrap()..];
    let panel = &panel[..panel.find("</aside>").unwrap()];
    assert!(
        !panel[..panel.find('>').unwrap()].contains("hidden"),
        "the panel opened"
    );
    let column = format!("{} · {} {}", cell.server, cell.transport, cell.era);
    for part in [
        cell.case.as_str(),
        &column,
        "request",
        "response",
        "spec",
        "fail",
    ] {
        assert!(panel.contains(part), "the detail shows {part}: {panel}");
    }
}
