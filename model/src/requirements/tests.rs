//! The registry's loading rules, and the links between it and the rule table.

use super::*;

const ENTRY: &str = r#"
[[requirement]]
id = "x"
keyword = "MUST"
sentence = "Servers **MUST** do x."
section = "basic/index#x"
party = "server"
"#;

fn load(extra: &str) -> Result<Vec<Requirement>, RequirementsError> {
    parse(Era::Legacy, "test.toml", &format!("{ENTRY}{extra}"))
}

/// Entry `x` with `extra`, judged by the checks `linked` (as the rule
/// table's `requirements` links would say).
fn linked(extra: &str, linked: &[&str]) -> Result<Vec<Requirement>, RequirementsError> {
    let checks = |id: &str| {
        let ids = linked.iter().map(|c| c.to_string());
        if id == "x" {
            ids.collect()
        } else {
            vec![]
        }
    };
    parse_linked(
        Era::Legacy,
        "test.toml",
        &format!("{ENTRY}{extra}"),
        &checks,
    )
}

#[test]
fn both_built_in_registries_load_with_every_requirement_covered() {
    for era in Era::ALL {
        let reqs = for_era(era);
        let t = totals(reqs);
        assert!(t.total > 200, "{era}: {t:?}");
        assert_eq!(t.checked + t.not_checked.values().sum::<usize>(), t.total);
    }
}

#[test]
fn an_entry_needs_exactly_one_of_a_check_or_a_reason() {
    assert!(load("").unwrap_err().to_string().contains("neither"));
    let both = linked("not_checked = \"client-side: x\"\n", &["T1"]);
    assert!(both.unwrap_err().to_string().contains("both"));
    // The checks are the table's links, never written in the registry.
    let written = load("checked_by = [\"T1\"]\n").unwrap_err().to_string();
    assert!(written.contains("fixtures/rules.toml"), "{written}");
    let bad_reason = load("not_checked = \"hard to do\"\n").unwrap_err();
    assert!(
        bad_reason.to_string().contains("not yet checked"),
        "{bad_reason}"
    );
    let ok = load("not_checked = \"not yet checked: send y, expect z\"\n").unwrap();
    assert!(matches!(
        ok[0].coverage,
        Coverage::NotChecked {
            category: Category::NotYetChecked,
            ..
        }
    ));
}

#[test]
fn a_check_must_be_a_rule_or_aspect_that_judges_the_era() {
    assert!(linked("", &["T1"]).is_ok());
    assert!(linked("", &["J1.error-id"]).is_ok());
    let unknown = linked("", &["J1.no-such"]).unwrap_err();
    assert!(unknown.to_string().contains("no aspect"), "{unknown}");
    // T2 has no sentence of the spec behind it: it cannot check one.
    let none = linked("", &["T2"]).unwrap_err();
    assert!(none.to_string().contains("level none"), "{none}");
    // The keyword must be the sentence's own.
    let lowercase = ENTRY.replace("**MUST**", "must");
    let err = parse_linked(Era::Legacy, "t", &lowercase, &|_| vec!["T1".into()]).unwrap_err();
    assert!(err.to_string().contains("does not hold"), "{err}");
}

/// A link of the rule table names a requirement of its era's registry:
/// a misspelt id would leave the requirement without its check.
#[test]
fn every_requirement_the_table_links_is_in_its_era_s_registry() {
    for era in Era::ALL {
        let ids: std::collections::HashSet<&str> =
            for_era(era).iter().map(|r| r.id.as_str()).collect();
        for rule in crate::rules::all() {
            let Some(text) = rule.text(era) else { continue };
            let links = text
                .requirements
                .iter()
                .map(|r| (rule.id.clone(), r))
                .chain(text.aspects.iter().flat_map(|a| {
                    a.requirements
                        .iter()
                        .map(move |r| (format!("{}.{}", rule.id, a.id), r))
                }));
            for (check, id) in links {
                assert!(
                    ids.contains(id.as_str()),
                    "{check} links {id:?}, which fixtures/requirements/{era}.toml does not have"
                );
            }
        }
    }
}

/// Every aspect the table judges in an era with an RFC 2119 level is
/// the check of some requirement of that era: the registry knows every
/// check mcperr makes.
#[test]
fn every_check_of_the_table_answers_a_requirement() {
    for era in Era::ALL {
        let cited = checking(era);
        for aspect in AspectId::ALL {
            let level = aspect.text(era).level;
            if matches!(level, Level::None | Level::Described) {
                continue;
            }
            assert!(
                cited.contains(aspect),
                "{era}: {} ({level:?}) checks no requirement of fixtures/requirements/{era}.toml",
                aspect.qualified()
            );
        }
    }
}
