//! The Bookshop on the MCP Python SDK, judged over stdio in both eras under
//! both profiles, against the committed baselines of its real deviations.

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

#[test]
fn python_sdk_bookshop_matches_its_baselines() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let server = format!("{} {root}/fixtures/servers/python/bookshop.py", python());
    for era in ["2026-07-28", "2025-11-25"] {
        for profile in ["spec", "python-sdk"] {
            let baseline =
                format!("{root}/fixtures/baselines/python-sdk.stdio.{era}.{profile}.toml");
            let out = mcperr(&[
                "run",
                "--stdio",
                &server,
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
                "{era} {profile}:\n{}{}",
                out.stdout,
                out.stderr
            );
            assert!(out.stdout.contains("0 skipped, 0 errors"), "{}", out.stdout);
        }
    }
}
