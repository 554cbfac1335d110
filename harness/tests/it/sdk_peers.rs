//! The Bookshop on the MCP Python SDK and on the TypeScript SDK, judged over
//! stdio in both eras under every profile, against the committed baselines
//! of their real deviations.

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

/// Judges the Bookshop at `target` (`--stdio CMD` or `--http URL`) in both
/// eras under each of `profiles` against
/// `fixtures/baselines/<sdk>.<transport>.<era>.<profile>.toml`.
pub fn judge_against_baselines(sdk: &str, profiles: &[&str], transport: &str, target: [&str; 2]) {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    for era in ["2026-07-28", "2025-11-25"] {
        for &profile in profiles {
            let baseline =
                format!("{root}/fixtures/baselines/{sdk}.{transport}.{era}.{profile}.toml");
            let out = mcperr(&[
                "run",
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
            assert_eq!(
                out.code,
                Some(0),
                "{transport} {era} {profile}:\n{}{}",
                out.stdout,
                out.stderr
            );
            assert!(out.stdout.contains(" 0 errors"), "{}", out.stdout);
        }
    }
}

#[test]
fn python_sdk_bookshop_matches_its_baselines() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let server = format!("{} {root}/fixtures/servers/python/bookshop.py", python());
    judge_against_baselines(
        "python-sdk",
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
        &["spec", "model"],
        "stdio",
        ["--stdio", &server],
    );
}
