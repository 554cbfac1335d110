//! The Bookshop on the MCP Python SDK and on the TypeScript SDK (2.x, and the
//! 1.x line), judged over stdio in every era each speaks under every profile,
//! against the committed baselines of their real deviations (HTTP: http.rs).

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

/// Both eras, for the SDKs that speak both.
pub const BOTH_ERAS: [&str; 2] = ["2026-07-28", "2025-11-25"];

/// Judges the Bookshop at `target` (`--stdio CMD` or `--http URL`) in each
/// of `eras` under each of `profiles` against
/// `fixtures/baselines/<sdk>.<transport>.<era>.<profile>.toml`, one run
/// after another (two at a time over stdio gained nothing on a CPU-bound
/// Python server, and the load it added stretched the timed tests beside).
pub fn judge_against_baselines(
    sdk: &str,
    eras: &[&str],
    profiles: &[&str],
    transport: &str,
    target: [&str; 2],
) {
    for &era in eras {
        for &profile in profiles {
            judge_one_run(sdk, era, profile, transport, target);
        }
    }
}

/// One run of [`judge_against_baselines`].
fn judge_one_run(sdk: &str, era: &str, profile: &str, transport: &str, target: [&str; 2]) {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let baseline = format!("{root}/fixtures/baselines/{sdk}.{transport}.{era}.{profile}.toml");
    let json =
        crate::support::scratch(&format!("peer-{sdk}-{transport}-{era}-{profile}")).join("r.json");
    let out = mcperr(&[
        "run",
        "--json",
        json.to_str().unwrap(),
        target[0],
        target[1],
        "--era",
        era,
        "--profile",
        profile,
        "--baseline",
        &baseline,
        "--timeout-ms",
        "10000",
    ]);
    if out.code == Some(1) && bless_stale(&baseline, &out.stdout) {
        return;
    }
    assert_eq!(
        out.code,
        Some(0),
        "{transport} {era} {profile}:\n{}{}",
        out.stdout,
        out.stderr
    );
    assert!(out.stdout.contains(" 0 errors"), "{}", out.stdout);
    let what = format!("{sdk} {transport} {era} {profile}");
    let r = crate::support::report(&json);
    crate::fixtures::assert_valid_calls_were_accepted(&r, &what);
    // Every Bookshop's read-only slow reports progress: the probe
    // finds it, not the contract's name (over stdio: over HTTP
    // mcp-framework sends no progress on the call's stream).
    assert!(
        transport != "stdio" || r["parts"]["progress"]["found"]["by"] == "probe",
        "{what}: {}",
        r["parts"]
    );
}

/// With `MCPERR_BLESS=1`: removes from `baseline` each entry the run called
/// stale (a rule's grading changed: the deviation is now a warning), and
/// says whether it removed any. The run is judged again on the next `cargo
/// test`; a new failure is never added this way.
pub fn bless_stale(baseline: &str, stdout: &str) -> bool {
    if std::env::var("MCPERR_BLESS").as_deref() != Ok("1") {
        return false;
    }
    let stale: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("STALE baseline entry "))
        .filter_map(|l| l.split_once(' ').map(|(entry, _)| entry))
        .collect();
    let text = std::fs::read_to_string(baseline).unwrap();
    let kept: Vec<&str> = text
        .lines()
        .filter(|l| {
            !stale
                .iter()
                .any(|e| l.trim_start().starts_with(&format!("\"{e}\"")))
        })
        .collect();
    std::fs::write(baseline, kept.join("\n") + "\n").unwrap();
    !stale.is_empty()
}

#[test]
fn python_sdk_bookshop_matches_its_baselines() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let server = format!("{} {root}/fixtures/servers/python/bookshop.py", python());
    judge_against_baselines(
        "python-sdk",
        &BOTH_ERAS,
        &PYTHON_PROFILES,
        "stdio",
        ["--stdio", &server],
    );
}

/// The profiles the Python SDK's baselines exist for.
pub const PYTHON_PROFILES: [&str; 3] = ["spec", "model", "python-sdk"];

/// The Bookshop on the TypeScript SDK (`@modelcontextprotocol/server` 2.x).
pub fn typescript_bookshop() -> String {
    let entry = crate::fixtures::typescript();
    std::path::Path::new(&entry)
        .with_file_name("bookshop.mjs")
        .display()
        .to_string()
}

#[test]
fn typescript_sdk_bookshop_matches_its_baselines() {
    let server = format!("node {}", typescript_bookshop());
    judge_against_baselines(
        "typescript-sdk",
        &BOTH_ERAS,
        &["spec", "model"],
        "stdio",
        ["--stdio", &server],
    );
}

/// The Bookshop on the TypeScript SDK's 1.x line (`@modelcontextprotocol/sdk`).
pub fn typescript_v1_bookshop() -> String {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../fixtures/servers/typescript-v1"
    );
    assert!(
        std::path::Path::new(&format!("{dir}/node_modules/@modelcontextprotocol/sdk")).exists(),
        "the TypeScript SDK 1.x fixture is not installed: run scripts/test.sh, or fixtures/servers/typescript-v1/setup.sh"
    );
    format!("{dir}/bookshop.mjs")
}

/// 1.x speaks 2025-11-25 only: `--era auto` notes 2026-07-28 as not
/// spoken, in the terminal and in every report.
#[test]
fn typescript_sdk_v1_bookshop_matches_its_baselines() {
    let server = format!("node {}", typescript_v1_bookshop());
    judge_against_baselines(
        "typescript-sdk-v1",
        &["2025-11-25"],
        &["spec", "model"],
        "stdio",
        ["--stdio", &server],
    );
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

/// The entry of an npm Bookshop fixture in `fixtures/servers/<dir>`,
/// installed by its setup.sh (scripts/test.sh runs it).
pub fn npm_bookshop(dir: &str, package: &str) -> String {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/servers");
    assert!(
        std::path::Path::new(&format!("{root}/{dir}/node_modules/{package}")).exists(),
        "the {dir} fixture is not installed: run scripts/test.sh, or fixtures/servers/{dir}/setup.sh"
    );
    format!("{root}/{dir}/bookshop.mjs")
}

/// The Bookshop on FastMCP (PyPI `fastmcp` 4.x), in its own venv.
pub fn fastmcp_bookshop() -> String {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let python = std::env::var("MCPERR_FASTMCP_PYTHON")
        .unwrap_or_else(|_| format!("{root}/target/fastmcp-venv/bin/python"));
    assert!(
        std::path::Path::new(&python).exists(),
        "the FastMCP fixture is not installed: run scripts/test.sh, or fixtures/servers/fastmcp/setup.sh and set MCPERR_FASTMCP_PYTHON"
    );
    format!("{python} {root}/fixtures/servers/fastmcp/bookshop.py")
}

#[test]
fn fastmcp_bookshop_matches_its_baselines() {
    let server = fastmcp_bookshop();
    judge_against_baselines(
        "fastmcp",
        &BOTH_ERAS,
        &["spec", "model"],
        "stdio",
        ["--stdio", &server],
    );
    // FastMCP(mask_error_details=True), its own column: the crash texts go.
    let masked = format!("{server} --mask-errors");
    judge_against_baselines(
        "fastmcp-masked",
        &BOTH_ERAS,
        &["spec", "model"],
        "stdio",
        ["--stdio", &masked],
    );
}

/// The Bookshop on rmcp (crates.io, the official Rust SDK), built by
/// fixtures/servers/rust/setup.sh outside the workspace.
pub fn rmcp_bookshop() -> String {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let binary = std::env::var("MCPERR_RMCP_BOOKSHOP")
        .unwrap_or_else(|_| format!("{root}/target/rmcp-fixture/release/bookshop-rmcp"));
    assert!(
        std::path::Path::new(&binary).exists(),
        "the rmcp fixture is not built: run scripts/test.sh, or fixtures/servers/rust/setup.sh and set MCPERR_RMCP_BOOKSHOP"
    );
    binary
}

#[test]
fn rmcp_bookshop_matches_its_baselines() {
    let server = rmcp_bookshop();
    judge_against_baselines(
        "rmcp",
        &BOTH_ERAS,
        &["spec", "model"],
        "stdio",
        ["--stdio", &server],
    );
}

/// punkpeye's fastmcp (npm) and mcp-framework sit on the SDK's 1.x line:
/// 2025-11-25 only.
#[test]
fn fastmcp_ts_and_mcp_framework_bookshops_match_their_baselines() {
    for (sdk, package) in [
        ("fastmcp-ts", "fastmcp"),
        ("mcp-framework", "mcp-framework"),
    ] {
        let server = format!("node {}", npm_bookshop(sdk, package));
        judge_against_baselines(
            sdk,
            &["2025-11-25"],
            &["spec", "model"],
            "stdio",
            ["--stdio", &server],
        );
    }
}

/// rmcp answers request params it cannot take (an array, a missing or
/// mistyped field) with an error that has no id, and drops a line with a
/// lone surrogate in silence. Fuzzing it: each id-less error is that broken
/// request's answer, one J1.error-id finding in all; no other request (an id
/// beyond a double, a lone surrogate, a valid call) is blamed for it, and
/// silence on a lone surrogate is no finding.
#[test]
fn fuzzing_rmcp_blames_its_idless_errors_on_the_broken_requests_alone() {
    let server = rmcp_bookshop();
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
