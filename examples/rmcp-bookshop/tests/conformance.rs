//! The Bookshop on rmcp, judged by mcperr from its own `cargo test`: every
//! tools, resources and prompts case in both eras, each transcript (the
//! request, the answer, the verdict and its rule) asserted as an insta
//! snapshot under tests/snapshots/<transport>-<era>/. A change of the
//! server's error behaviour is a changed snapshot: `cargo insta review`.

use std::path::Path;

use mcperr::conformance::Conformance;

/// The server: `MCPERR_RMCP_BOOKSHOP`, or where its setup.sh builds it.
/// (Your own server's test would use `env!("CARGO_BIN_EXE_my-server")`.)
fn server() -> String {
    let built = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../target/rust-peers/release/bookshop-rmcp"
    );
    let server = std::env::var("MCPERR_RMCP_BOOKSHOP").unwrap_or_else(|_| built.to_string());
    assert!(
        Path::new(&server).exists(),
        "the rmcp Bookshop is not built: run fixtures/servers/rust/setup.sh (or set MCPERR_RMCP_BOOKSHOP)"
    );
    server
}

#[test]
fn the_error_behaviour_matches_the_reviewed_transcripts() {
    let outcome = Conformance::stdio(&server())
        .unwrap()
        .cases("tools/*")
        .cases("resources/*")
        .cases("prompts/*")
        .run()
        .unwrap();
    assert!(
        outcome.not_judged.is_empty(),
        "rmcp speaks both eras: {:?}",
        outcome.not_judged
    );
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots");
    for snap in outcome.snapshots() {
        let mut settings = insta::Settings::clone_current();
        settings.set_snapshot_path(root.join(&snap.dir));
        settings.set_prepend_module_to_snapshot(false);
        settings.set_omit_expression(true);
        settings.set_description(&snap.file.description);
        settings.bind(|| insta::assert_snapshot!(snap.name.as_str(), &snap.file.contents));
    }
}
