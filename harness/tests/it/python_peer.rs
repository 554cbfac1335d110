//! The Bookshop on the MCP Python SDK, judged over stdio in both eras under
//! every profile, against the committed baselines of its real deviations.

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
/// eras under both profiles against `fixtures/baselines/python-sdk.<transport>.<era>.<profile>.toml`.
pub fn judge_against_baselines(transport: &str, target: [&str; 2]) {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    for era in ["2026-07-28", "2025-11-25"] {
        for profile in ["spec", "model", "python-sdk"] {
            let baseline =
                format!("{root}/fixtures/baselines/python-sdk.{transport}.{era}.{profile}.toml");
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
    judge_against_baselines("stdio", ["--stdio", &server]);
}
