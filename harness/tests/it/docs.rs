//! docs/rules/<ID>.md are generated from the rule table (`mcperr explain`):
//! a stale page fails here. `MCPERR_BLESS=1` writes them anew.

use mcperr_core::rules::RuleId;

#[test]
fn the_rule_pages_are_generated_from_the_table_and_current() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/rules");
    let bless = std::env::var("MCPERR_BLESS").is_ok_and(|v| v == "1");
    let mut stale = Vec::new();
    let mut index = String::from("# Rules\n\nGenerated from `fixtures/rules.toml` (`mcperr explain RULE` prints the same pages); do not edit.\n\n");
    for rule in RuleId::ALL {
        let page = mcperr::cli::rule_page(*rule);
        index.push_str(&format!("- [{rule}]({rule}.md): {}\n", rule.rule().title));
        let path = dir.join(format!("{rule}.md"));
        if bless {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &page).unwrap();
        } else if std::fs::read_to_string(&path).ok().as_deref() != Some(page.as_str()) {
            stale.push(path.display().to_string());
        }
    }
    let path = dir.join("README.md");
    if bless {
        std::fs::write(&path, &index).unwrap();
    } else if std::fs::read_to_string(&path).ok().as_deref() != Some(index.as_str()) {
        stale.push(path.display().to_string());
    }
    assert!(
        stale.is_empty(),
        "stale rule pages (run MCPERR_BLESS=1 cargo test -p mcperr --test it docs): {stale:?}"
    );
}

#[test]
fn explain_prints_a_rule_and_refuses_an_unknown_one() {
    let out = crate::support::mcperr(&["explain", "T4"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let text = &out.stdout;
    assert!(text.starts_with("# T4: "), "{text}");
    assert!(text.contains("T4.invalid-params-code"), "{text}");
    let bad = crate::support::mcperr(&["explain", "T99"]);
    assert_eq!(bad.code, Some(2));
    assert!(bad.stderr.contains("unknown rule"), "{}", bad.stderr);
}
