//! docs/rules/<ID>.md are generated from the rule table (`mcperr explain`),
//! docs/requirements/<era>.md from the requirement registry (`mcperr
//! requirements`): a stale page fails here. `MCPERR_BLESS=1` writes them anew.

use mcperr_model::rules::RuleId;

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

/// One era's levels of `rule` for the overview: the central sentence's,
/// then each other level its aspects have, with the aspects at it (their
/// count where more than four: the rule's page lists them).
fn levels_cell(rule: RuleId, era: mcperr_protocol::Era) -> String {
    let main = rule.main().text(era).level;
    let mut others: Vec<(mcperr_model::rules::Level, Vec<&str>)> = Vec::new();
    for aspect in mcperr_model::rules::AspectId::ALL
        .iter()
        .filter(|a| a.rule() == rule && a.name() != "main")
    {
        let level = aspect.text(era).level;
        if level == main {
            continue;
        }
        match others.iter_mut().find(|(l, _)| *l == level) {
            Some((_, names)) => names.push(aspect.name()),
            None => others.push((level, vec![aspect.name()])),
        }
    }
    let mut cell = main.as_str().to_string();
    for (level, names) in others {
        let which = match names.len() {
            1..=4 => names.join(", "),
            n => format!("{n} aspects"),
        };
        cell.push_str(&format!("; {}: {which}", level.as_str()));
    }
    cell
}

/// The overview of the rules in docs/error-model.md, between
/// `<!-- rules-overview -->` markers: each rule's title and its levels per
/// era, made from the table, never written by hand.
#[test]
fn the_error_model_s_overview_of_the_rules_comes_from_the_table() {
    use mcperr_protocol::Era;
    let mut block = String::from("<!-- rules-overview -->\n");
    block.push_str("| rule | what is checked | `spec` level 2025-11-25 | `spec` level 2026-07-28 |\n|---|---|---|---|\n");
    for rule in RuleId::ALL {
        block.push_str(&format!(
            "| [{rule}](rules/{rule}.md) | {} | {} | {} |\n",
            rule.rule().title.replace('|', "\\|"),
            levels_cell(*rule, Era::Legacy),
            levels_cell(*rule, Era::Modern)
        ));
    }
    block.push_str("<!-- /rules-overview -->\n");
    generated_block("docs/error-model.md", "rules-overview", &block);
}

/// Checks that the block between `<!-- MARKER -->` and `<!-- /MARKER -->`
/// in `file` (from the repository's root) is `block`, markers included; with
/// `MCPERR_BLESS=1`, writes it there instead.
fn generated_block(file: &str, marker: &str, block: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    let (open, close) = (
        format!("<!-- {marker} -->\n"),
        format!("<!-- /{marker} -->\n"),
    );
    let (head, rest) = text
        .split_once(&open)
        .unwrap_or_else(|| panic!("{file} has no {open:?} marker"));
    let (_, tail) = rest.split_once(&close).unwrap();
    let want = format!("{head}{block}{tail}");
    if std::env::var("MCPERR_BLESS").is_ok_and(|v| v == "1") {
        std::fs::write(&path, want).unwrap();
    } else {
        assert!(
            want == text,
            "stale {marker} in {file} (run MCPERR_BLESS=1 cargo test -p mcperr --test it docs)"
        );
    }
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

#[test]
fn the_requirement_pages_are_generated_from_the_registry_and_current() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/requirements");
    let bless = std::env::var("MCPERR_BLESS").is_ok_and(|v| v == "1");
    let mut stale = Vec::new();
    for era in mcperr_protocol::Era::ALL {
        let page = mcperr_model::requirements::page(era);
        let path = dir.join(format!("{era}.md"));
        if bless {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &page).unwrap();
        } else if std::fs::read_to_string(&path).ok().as_deref() != Some(page.as_str()) {
            stale.push(path.display().to_string());
        }
    }
    assert!(
        stale.is_empty(),
        "stale requirement pages (run MCPERR_BLESS=1 cargo test -p mcperr --test it docs): {stale:?}"
    );
}

#[test]
fn requirements_lists_each_era_with_its_totals_and_refuses_an_unknown_era() {
    let out = crate::support::mcperr(&["requirements", "--era", "2025-11-25", "--json"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let era = &v[0];
    assert_eq!(era["era"], "2025-11-25");
    let list = era["requirements"].as_array().unwrap();
    assert_eq!(era["totals"]["total"], list.len());
    // Each is checked by rules of the table, or says why not: never neither.
    for r in list {
        assert!(
            r["checked_by"].is_array() != r["not_checked"].is_object(),
            "{r}"
        );
    }
    let text = crate::support::mcperr(&["requirements"]);
    assert!(text.stdout.contains("2025-11-25: ") && text.stdout.contains("2026-07-28: "));
    assert!(
        text.stdout.contains("checked by J1.error-id"),
        "{}",
        text.stdout
    );
    let bad = crate::support::mcperr(&["requirements", "--era", "2024-01-01"]);
    assert_eq!(bad.code, Some(2));
    assert!(
        bad.stderr.contains("2025-11-25 or 2026-07-28"),
        "{}",
        bad.stderr
    );
}

/// The README states the coverage figures; they are the registry's.
/// `MCPERR_BLESS=1` writes the registry's figures into its sentence.
#[test]
fn the_readme_states_the_registry_s_coverage() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md");
    let mut readme = std::fs::read_to_string(path).unwrap();
    let t = |era| mcperr_model::requirements::totals(mcperr_model::requirements::for_era(era));
    let (legacy, modern) = (
        t(mcperr_protocol::Era::Legacy),
        t(mcperr_protocol::Era::Modern),
    );
    let not_yet = |t: &mcperr_model::requirements::Totals| {
        t.not_checked
            .get("not yet checked")
            .copied()
            .unwrap_or_default()
    };
    let rest = match (not_yet(&legacy), not_yet(&modern)) {
        (0, 0) => ", and none is left \"not yet checked\" in either era".to_string(),
        (l, m) => format!(" ({l} and {m} of the rest"),
    };
    let said = format!(
        "{} of the {} requirements of 2025-11-25 are\nchecked and {} of the {} of 2026-07-28{rest}",
        legacy.checked, legacy.total, modern.checked, modern.total,
    );
    if std::env::var("MCPERR_BLESS").is_ok_and(|v| v == "1") {
        let sentence = regex::Regex::new(
            r#"\d+\s+of the \d+ requirements of 2025-11-25 are\s+checked and \d+ of the \d+ of 2026-07-28(, and none is left "not yet checked" in either era| \(\d+ and \d+ of the rest)"#,
        )
        .unwrap();
        readme = sentence.replace(&readme, said.as_str()).into_owned();
        std::fs::write(path, &readme).unwrap();
    }
    assert!(
        readme.replace('\n', " ").contains(&said.replace('\n', " ")),
        "README.md should say: {said} (MCPERR_BLESS=1 cargo test -p mcperr --test it docs writes it)"
    );
}

/// Every mcperr case the official-suite comparison names exists, so the
/// mapping cannot point at a case that was renamed or removed.
#[test]
fn the_official_suite_mapping_names_existing_cases() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../fixtures/official-suite/checks.toml"
    );
    let table: toml::Value = toml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let known: std::collections::BTreeSet<String> = mcperr_cases::case::builtin_cases()
        .unwrap()
        .into_iter()
        .map(|c| c.id)
        .collect();
    let mut named = 0;
    for section in ["check", "asked"] {
        for entry in table[section].as_array().unwrap() {
            let cases = entry["cases"].as_array().unwrap();
            let covered = !cases.is_empty() || entry.get("not_covered").is_some();
            assert!(covered, "{entry}: no case and no reason");
            for case in cases.iter().map(|c| c.as_str().unwrap()) {
                // One entry says in prose that every case runs over stdio.
                if case.contains(' ') {
                    continue;
                }
                assert!(known.contains(case), "{path}: no case {case}");
                named += 1;
            }
        }
    }
    assert!(named >= 8, "{named}");
}

/// The one line per SDK column that its users should know (each manifest's
/// `summary`), in the README and the findings page, between
/// `<!-- peer-summaries -->` markers: written from the manifests, never by
/// hand. `MCPERR_BLESS=1` writes them anew.
#[test]
fn each_sdk_s_one_line_summary_comes_from_its_manifest() {
    let root = mcperr_peers::root();
    let peers = mcperr_peers::all(&root).unwrap();
    let block = |link: &str| {
        let mut s = String::from("<!-- peer-summaries -->\n");
        for p in &peers {
            let m = &p.manifest;
            let name = &m.column[0].name;
            s.push_str(&format!(
                "- [{} {}]({link}{name}.md) ({}): {}\n",
                m.package, m.version, m.registry, m.summary
            ));
        }
        s + "<!-- /peer-summaries -->\n"
    };
    let bless = std::env::var("MCPERR_BLESS").is_ok_and(|v| v == "1");
    let mut stale = Vec::new();
    for (file, link) in [
        ("README.md", "docs/findings/"),
        ("docs/findings/README.md", ""),
    ] {
        let path = root.join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        let (head, rest) = text
            .split_once("<!-- peer-summaries -->\n")
            .unwrap_or_else(|| panic!("{file} has no <!-- peer-summaries --> marker"));
        let (_, tail) = rest.split_once("<!-- /peer-summaries -->\n").unwrap();
        let want = format!("{head}{}{tail}", block(link));
        if want != text {
            if bless {
                std::fs::write(&path, want).unwrap();
            } else {
                stale.push(file);
            }
        }
    }
    assert!(
        stale.is_empty(),
        "stale SDK summaries (run MCPERR_BLESS=1 cargo test -p mcperr --test it docs): {stale:?}"
    );
}

/// The named checks of the case format, between `<!-- named-checks -->`
/// markers in fixtures/cases/README.md: each check's name and doc comment
/// (`named_checks!`) and what its failure breaks (its registry entry in
/// mcperr-oracle), never written by hand. `MCPERR_BLESS=1` writes it anew.
#[test]
fn the_case_format_s_named_checks_come_from_their_declarations() {
    use mcperr_cases::case::Check;
    let mut block = String::from("<!-- named-checks -->\n");
    for check in Check::ALL {
        let doc: Vec<&str> = check.doc().lines().map(str::trim).collect();
        block.push_str(&format!(
            "- `{}`: {} ({}.)\n",
            check.name(),
            doc.join(" "),
            mcperr_oracle::named::entry(*check).breaks_text()
        ));
    }
    block.push_str("<!-- /named-checks -->\n");
    generated_block("fixtures/cases/README.md", "named-checks", &block);
}
