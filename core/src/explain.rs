//! A rule explained, from the table alone: what it checks, each aspect's
//! level and sentence per era with its spec link, how the profiles grade it,
//! the reference faults that prove it can fail, and the cases and fuzz
//! classes that check it. `mcperr explain RULE` prints it; `docs/rules/<ID>.md`
//! are the same pages, generated (a test fails when they are stale).

use std::fmt::Write;

use mcperr_protocol::Era;

use mcperr_cases::case::{builtin_cases, Case};
use mcperr_cases::profile::Profile;
use mcperr_model::grading::{Grader, Grading};
use mcperr_model::rules::{AspectId, Level, RuleId};

/// The aspects the fuzz judge checks with no script, and on which inputs.
pub const FUZZ_CHECKS: &[(AspectId, &str)] = &[
    (
        AspectId::T4ValidateInputs,
        "invalid arguments to `limited`: the body never runs",
    ),
    (AspectId::T4Main, "invalid arguments: an isError result"),
    (
        AspectId::T4InvalidParamsCode,
        "invalid arguments answered -32602",
    ),
    (
        AspectId::J1FollowsJsonrpc,
        "schema-valid calls never answered -32700/-32600/-32601",
    ),
    (
        AspectId::T7Main,
        "valid calls: structuredContent fits the outputSchema",
    ),
    (
        AspectId::T8Main,
        "valid calls of a tool with an outputSchema carry structuredContent",
    ),
    (
        AspectId::R1Main,
        "reads of made-up values: never an isError result",
    ),
    (
        AspectId::R1NoEmptyContents,
        "reads of made-up values: never empty contents",
    ),
    (
        AspectId::R1Retired32002,
        "reads of made-up values: no -32002 in 2026-07-28",
    ),
    (AspectId::P1Main, "unknown prompt names: -32602"),
    (
        AspectId::P2Main,
        "prompts without a required argument: -32602",
    ),
    (
        AspectId::T6Main,
        "broken tools/call envelopes: a JSON-RPC error",
    ),
    (
        AspectId::R6Main,
        "broken resources/read envelopes: a JSON-RPC error",
    ),
    (AspectId::J2Main, "unknown methods: -32601"),
    (
        AspectId::J1ReservedCode,
        "every error: no undefined code of the reserved range",
    ),
    (
        AspectId::J1BigId,
        "ids beyond a double (RFC 8259 section 6 policy)",
    ),
];

/// Where a rule's page is, from the repository root (for report lines).
pub fn page_path(rule: RuleId) -> String {
    format!("docs/rules/{rule}.md")
}

/// The public page of a spec section in `era`.
pub fn spec_link(era: &str, section: &str) -> String {
    format!("https://modelcontextprotocol.io/specification/{era}/{section}")
}

fn level_cell(level: Level) -> &'static str {
    level.as_str()
}

/// The built-in profiles, in the order the pages list them.
const PROFILES: [&str; 3] = ["spec", "model", "python-sdk"];

/// The built-in profiles' gradings, by name, in [`PROFILES`] order.
fn profile_gradings() -> Vec<(&'static str, Grading)> {
    PROFILES
        .iter()
        .map(|name| {
            (
                *name,
                Profile::load(name).map(|p| p.grading).unwrap_or_default(),
            )
        })
        .collect()
}

/// What a deviation from `aspect` in `era` gets under each built-in profile
/// (`spec` warn, `model` fail, …), over the transport its sentence binds to.
fn graded_by_profile(
    gradings: &[(&str, Grading)],
    aspect: AspectId,
    era: Era,
    only_over: Option<&str>,
) -> String {
    let each: Vec<String> = gradings
        .iter()
        .map(|(name, grading)| {
            let grader = Grader {
                era,
                over_http: only_over == Some("http"),
                grading: *grading,
                strict: false,
            };
            let verdict = grader
                .deviation(aspect)
                .map_or("no verdict", |v| v.as_str());
            format!("`{name}` {verdict}")
        })
        .collect();
    each.join(", ")
}

/// The page for `rule`. `faults`: the reference server's faults as (name,
/// rule it breaks, what it does), from the caller (core has no server).
pub fn page(rule: RuleId, faults: &[(&str, RuleId, &str)]) -> String {
    let r = rule.rule();
    let mut s = String::new();
    let _ = writeln!(s, "# {rule}: {}\n", r.title);
    let _ = writeln!(
        s,
        "Area: {}. Seen over: {}. Generated from `fixtures/rules.toml` by `mcperr explain {rule}`; do not edit.\n",
        r.area,
        r.transports.join(", ")
    );
    let aspects: Vec<AspectId> = AspectId::ALL
        .iter()
        .copied()
        .filter(|a| a.rule() == rule)
        .collect();
    let _ = writeln!(s, "## Aspects, per era\n");
    let gradings = profile_gradings();
    for a in &aspects {
        let name = if a.name() == "main" {
            format!("`{rule}` (the central sentence)")
        } else {
            format!("`{a}`")
        };
        let what = a.text(Era::Modern).what;
        let what = if what.is_empty() {
            a.text(Era::Legacy).what
        } else {
            what
        };
        let _ = writeln!(s, "### {name}\n\n{what}\n");
        for era in Era::ALL {
            let t = a.text(era);
            let from = t.from_era.unwrap_or(era.version());
            let link = spec_link(from, t.section);
            let _ = write!(
                s,
                "- **{era}**: {} ([{}]({link}))",
                level_cell(t.level),
                t.section
            );
            if !t.sentence.is_empty() {
                let _ = write!(s, ": \"{}\"", t.sentence.trim());
            }
            if let Some(f) = t.from_era {
                let _ = write!(s, " (the {f} sentence: this era's page is not stored)");
            }
            if t.at_most_warn {
                let _ = write!(s, " At most a warning under every profile.");
            }
            if let Some(o) = t.only_over {
                let _ = write!(s, " Binds only over {o}.");
            }
            if !t.note.is_empty() {
                let _ = write!(s, "\n  Note: {}", t.note);
            }
            let _ = write!(
                s,
                "\n  A deviation: {}.",
                graded_by_profile(&gradings, *a, era, t.only_over)
            );
            s.push('\n');
        }
        s.push('\n');
    }
    let _ = writeln!(
        s,
        "## How the profiles grade it\n\n- `spec`: by the level above in the era under test: {} and {} fail; {} and `{}` (stated as fact without a keyword) warn; {} and `{}` give no verdict. Message texts are not compared.\n- `model`: a deviation from the source documents' error model fails (the rows the table marks `error_model`: tools, resources, prompts and the crash row, J7), except an aspect capped at a warning; every other aspect is graded as under `spec`.\n- `python-sdk`: `model` plus the MCP Python SDK's documented texts and log lines.\n- Each era's line above ends with what a deviation gets under each profile.\n- `--strict`: every warning fails.\n",
        Level::Must.as_str(),
        Level::MustNot.as_str(),
        Level::Should.as_str(),
        Level::Described.as_str(),
        Level::May.as_str(),
        Level::None.as_str(),
    );
    let _ = writeln!(s, "## Proven able to fail by\n");
    let mine: Vec<_> = faults.iter().filter(|(_, r, _)| *r == rule).collect();
    if mine.is_empty() {
        let _ = writeln!(s, "- no reference fault names this rule\n");
    }
    for (name, _, what) in mine {
        let _ = writeln!(s, "- `mcperr reference --fault {name}`: {what}");
    }
    let _ = writeln!(s, "\n## Checked by\n");
    let cases: Vec<Case> = builtin_cases()
        .unwrap_or_default()
        .into_iter()
        .filter(|c| c.rule_id() == rule)
        .collect();
    for c in &cases {
        let mut named = vec![c.aspect_id()];
        named.extend(c.aspects.keys().map(|k| c.aspect_named(Some(k))));
        let list: Vec<String> = named.iter().map(|a| format!("`{a}`")).collect();
        let _ = writeln!(s, "- case `{}` ({}): {}", c.id, list.join(", "), c.title);
    }
    for (a, what) in FUZZ_CHECKS.iter().filter(|(a, _)| a.rule() == rule) {
        let _ = writeln!(s, "- fuzzing (`{a}`): {what}");
    }
    let mut on_every_exchange = false;
    for invariant in mcperr_oracle::registry::INVARIANTS {
        let judged: Vec<String> = invariant
            .judges
            .iter()
            .filter(|a| a.rule() == rule)
            .map(|a| format!("`{a}`"))
            .collect();
        if !judged.is_empty() {
            on_every_exchange = true;
            let (name, list) = (invariant.name, judged.join(", "));
            let _ = writeln!(s, "- on every exchange (the invariant `{name}`): {list}");
        }
    }
    if cases.is_empty() && !on_every_exchange && !FUZZ_CHECKS.iter().any(|(a, _)| a.rule() == rule)
    {
        let _ = writeln!(s, "- the oracle's invariants, on every answer");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every source file of a crate directory, its non-test part.
    fn sources(dir: &std::path::Path, out: &mut Vec<(String, String)>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                sources(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let text = std::fs::read_to_string(&p).unwrap();
                // A module's tests kept apart (`mod tests;`) are test code.
                if text.contains("#![cfg(test)]") || p.file_name().is_some_and(|n| n == "tests.rs")
                {
                    continue;
                }
                let code = text.split("#[cfg(test)]").next().unwrap_or("").to_string();
                out.push((p.display().to_string(), code));
            }
        }
    }

    fn all_sources() -> Vec<(String, String)> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .unwrap();
        let mut out = Vec::new();
        for krate in [
            "model", "wire", "cases", "oracle", "core", "render", "harness",
        ] {
            sources(&root.join(krate).join("src"), &mut out);
        }
        out
    }

    /// Used: declared by an invariant of the oracle's registry, named by a
    /// case (its aspect, `[aspects.*]`, an alternative, a named check), or
    /// reported by code outside the registry (a case's own judgement, the
    /// fuzz judge, the HTTP refusals), found in the sources.
    #[test]
    fn every_aspect_of_the_table_is_used_by_a_check_or_a_case() {
        let code: String = all_sources()
            .into_iter()
            .filter(|(path, _)| !path.ends_with("oracle/src/registry.rs"))
            .map(|(_, c)| c)
            .collect();
        let mut used: Vec<AspectId> = AspectId::ALL
            .iter()
            .copied()
            .filter(|a| code.contains(&format!("AspectId::{a:?}")))
            .collect();
        for invariant in mcperr_oracle::registry::INVARIANTS {
            used.extend(invariant.judges);
        }
        for c in builtin_cases().unwrap() {
            used.push(c.aspect_id());
            used.extend(c.aspects.keys().map(|k| c.aspect_named(Some(k))));
            let alts = c.also_pass.iter().chain(&c.warn).chain(
                c.profile
                    .values()
                    .flat_map(|o| o.also_pass.iter().chain(&o.warn)),
            );
            used.extend(
                alts.filter_map(|a| a.aspect.as_deref())
                    .map(|n| c.aspect_named(Some(n))),
            );
            let checks = c.checks.iter().filter_map(|k| k.parse().ok());
            used.extend(checks.map(|k| mcperr_oracle::named::entry(k).aspect(&c)));
        }
        let shape = mcperr_cases::expect::tool_rejection_shape();
        used.extend(
            shape
                .warn
                .iter()
                .filter_map(|(n, _)| AspectId::find(RuleId::T4, n)),
        );
        let unused: Vec<String> = AspectId::ALL
            .iter()
            .filter(|a| !used.contains(a))
            .map(|a| a.to_string())
            .collect();
        assert!(unused.is_empty(), "aspects no check uses: {unused:?}");
    }

    #[test]
    fn no_rule_id_or_spec_quote_is_written_in_code_outside_the_table() {
        let mut found = Vec::new();
        for (path, code) in all_sources() {
            for (n, line) in code.lines().enumerate() {
                let t = line.trim_start();
                if t.starts_with("//") {
                    continue;
                }
                // String literals on the line (naive, enough for this code base).
                let mut rest = t;
                while let Some(i) = rest.find('"') {
                    let after = &rest[i + 1..];
                    let Some(j) = after.find('"') else { break };
                    let lit = &after[..j];
                    let id = RuleId::ALL.iter().any(|r| lit == r.as_str());
                    let quote = ["MUST", "SHOULD"].iter().any(|k| {
                        lit.contains(&format!(" {k} ")) || lit.contains(&format!("**{k}"))
                    });
                    if id || quote {
                        found.push(format!("{path}:{}: {lit:?}", n + 1));
                    }
                    rest = &after[j + 1..];
                }
            }
        }
        assert!(
            found.is_empty(),
            "literals outside the table:\n{}",
            found.join("\n")
        );
    }

    #[test]
    fn a_page_lists_levels_per_era_and_the_checks() {
        let p = page(RuleId::T4, &[("t4-body-runs", RuleId::T4, "runs the body")]);
        assert!(p.contains("`T4.validate-inputs`"), "{p}");
        assert!(p.contains("- **2026-07-28**: MUST"), "{p}");
        assert!(p.contains("--fault t4-body-runs"), "{p}");
        assert!(p.contains("case `tools/invalid-args-out-of-range`"), "{p}");
    }
}
