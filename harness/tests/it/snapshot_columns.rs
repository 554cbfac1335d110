//! `matrix --snapshots`: each server's columns in a folder of its own, and
//! `--unreferenced delete` only in the columns the run judged.

use crate::fixtures::typescript;
use crate::snapshots::python_recipes;
use crate::support::{mcperr_env, scratch};

#[test]
fn matrix_snapshots_keep_each_server_s_columns_and_delete_only_in_columns_it_ran() {
    let dir = scratch("snapshots-matrix");
    let snaps = dir.join("snaps");
    let s = snaps.to_str().unwrap();
    let py = format!("py=stdio:{}", python_recipes(None));
    let ts = format!("ts=stdio:node {}", typescript());
    let env = [("INSTA_UPDATE", "always")];
    let args = [
        "matrix",
        "-q",
        "--server",
        &py,
        "--server",
        &ts,
        "--era",
        "2025-11-25",
        "--snapshots",
        s,
    ];
    let first = mcperr_env(&args, &env);
    assert_eq!(first.code, Some(0), "{}", first.stdout);
    for server in ["py", "ts"] {
        assert!(
            snaps.join(server).join("stdio-2025-11-25/tools").is_dir(),
            "{server}"
        );
    }
    // Another era's accepted snapshot, in a column this run did not judge,
    // and one in a judged column that no case produces.
    let other = snaps.join("py/stdio-2026-07-28/tools/kept.snap");
    std::fs::create_dir_all(other.parent().unwrap()).unwrap();
    std::fs::write(&other, "---\nsource: mcperr\n---\n{}\n").unwrap();
    let gone = snaps.join("py/stdio-2025-11-25/tools/gone.snap");
    std::fs::write(&gone, "---\nsource: mcperr\n---\n{}\n").unwrap();
    let deleting = mcperr_env(&[&args[..], &["--unreferenced", "delete"]].concat(), &env);
    assert_eq!(deleting.code, Some(0), "{}", deleting.stdout);
    assert!(!gone.exists(), "{}", deleting.stdout);
    assert!(other.exists(), "a column not judged is left alone");
}
