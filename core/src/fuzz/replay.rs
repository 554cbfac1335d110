//! A shrunk finding as an ordinary case file: `mcperr fuzz --save DIR`
//! writes one per distinct finding, and `mcperr run --cases-dir DIR`
//! replays it. The case fails while the server keeps the deviation and
//! passes once it is fixed: its expectation is what the finding's rule
//! wants (an `isError` result for invalid arguments, −32601 for an unknown
//! method, an error for a missing resource…), and invariant findings (ids,
//! shapes, leaks, liveness) need no expectation, since every case is judged
//! by the invariants too.

use mcperr_protocol::Era;
use serde::Serialize;
use serde_json::{json, Value};

use super::inputs::{Class, FuzzInput, IdStyle};
use super::judge::Finding;
use crate::expect;
use crate::rules::RuleId;

#[derive(Serialize)]
struct CaseOut {
    id: String,
    rule: String,
    /// The aspect the finding broke, where the expectation proves it.
    #[serde(skip_serializing_if = "Option::is_none")]
    aspect: Option<String>,
    title: String,
    eras: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    needs: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    checks: Vec<String>,
    /// Written only to turn the era's envelope off (the input breaks it).
    #[serde(skip_serializing_if = "Option::is_none")]
    envelope: Option<bool>,
    request: RequestOut,
    expect: toml::Value,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    warn: Vec<WarnOut>,
}

#[derive(Serialize)]
struct RequestOut {
    method: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<toml::Value>,
    params_json: String,
}

#[derive(Serialize)]
struct WarnOut {
    aspect: String,
    #[serde(rename = "match")]
    pattern: toml::Value,
}

fn toml_of(v: &Value) -> toml::Value {
    toml::Value::try_from(v).unwrap_or_else(|_| toml::Value::Table(Default::default()))
}

/// A short stable hex digest (FNV-1a) of `s`, for file names.
pub fn digest(s: &str) -> String {
    let h = s.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{:08x}", h as u32)
}

/// A finding's stable id: the saved case's id and what a baseline lists.
pub fn finding_id(rule: &str, target: &str, signature: &str) -> String {
    let slug: String = target
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .take(24)
        .collect();
    format!(
        "fuzz/{}-{}-{}",
        rule.to_lowercase(),
        slug.trim_matches('-'),
        digest(signature)
    )
}

/// The case file for `finding` (found with `input` in `era`): its file
/// name and its text. `counted`: the server has `limited` and
/// `limited_calls`, so a T4 case also checks that the body never ran.
pub fn case_file(
    finding: &Finding,
    input: &FuzzInput,
    era: Era,
    seed: u64,
    counted: bool,
) -> (String, String) {
    // The finding's own id (what the report and a baseline name), when set.
    let id = if finding.id.is_empty() {
        finding_id(&finding.rule, &input.target, &finding.signature)
    } else {
        finding.id.clone()
    };
    let mut needs = vec![];
    let mut checks = vec![];
    let mut aspect = None;
    // The expectation of the finding's kind, as the judge states it
    // ([`crate::expect`]): the replayed case grades the same answer by the
    // same aspect, so it gets the same verdict.
    let shape = match (&input.class, finding.aspect.rule()) {
        (Class::InvalidCall(_), RuleId::T4) => {
            if counted && input.target == "limited" {
                needs = vec!["tool:limited".into(), "tool:limited_calls".into()];
                checks.push("body-never-ran".into());
            }
            Some(expect::tool_rejection_shape())
        }
        (Class::UnknownMethod, RuleId::J2) => Some(expect::Shape {
            expect: json!({"error": {"code": -32601}}),
            warn: vec![],
        }),
        (Class::ResourceMissing, RuleId::R1) => {
            let name = finding.aspect.name();
            if name != "main" {
                aspect = Some(name.to_string());
            }
            Some(expect::made_up_read_shape())
        }
        (Class::UnknownPrompt, RuleId::P1) | (Class::PromptMissingArgument, RuleId::P2) => {
            Some(expect::prompt_error_shape())
        }
        (Class::Envelope(_), RuleId::T6 | RuleId::R6) => Some(expect::made_up_read_shape()),
        (Class::ValidCall, RuleId::T7 | RuleId::T8) => {
            checks.push("structured-output".into());
            None
        }
        // J1, J4, J5, J7 and the shapes: the invariants judge every case.
        _ => None,
    };
    let (expect, warn) = match shape {
        Some(s) => (
            s.expect,
            s.warn
                .into_iter()
                .map(|(aspect, p)| WarnOut {
                    aspect: aspect.into(),
                    pattern: toml_of(&p),
                })
                .collect(),
        ),
        None => (json!({}), vec![]),
    };
    if input.class == Class::ValidCall || matches!(input.class, Class::InvalidCall(_)) {
        needs.push(format!("tool:{}", input.target));
        needs.dedup();
    }
    let first_line = finding.message.lines().next().unwrap_or_default();
    let case = CaseOut {
        id: id.clone(),
        rule: finding.rule.clone(),
        aspect,
        title: format!(
            "found by mcperr fuzz: {}",
            first_line.chars().take(160).collect::<String>()
        ),
        eras: vec![era.version().to_string()],
        needs,
        checks,
        envelope: (!input.envelope).then_some(false),
        request: RequestOut {
            method: input.method.clone(),
            id: (input.id_style != IdStyle::Counter)
                .then(|| finding.request.get("id").map(toml_of))
                .flatten(),
            params_json: input.params.to_string(),
        },
        expect: toml_of(&expect),
        warn,
    };
    let body = toml::to_string(&case).unwrap_or_default();
    let text = format!(
        "# Saved by `mcperr fuzz --seed {seed}` ({verdict} under {rule}).\n# {msg}\n# Replay: mcperr run --cases-dir THIS_FILES_DIR [target]\n{body}",
        verdict = finding.verdict.as_str(),
        rule = finding.rule,
        msg = first_line.replace('\n', " "),
    );
    (format!("{}.toml", id.trim_start_matches("fuzz/")), text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::Verdict;

    #[test]
    fn a_saved_finding_is_a_case_file_that_loads() {
        let input = FuzzInput {
            method: "tools/call".into(),
            params: json!({"name": "limited", "arguments": {"limit": 56, "x": null}}),
            envelope: true,
            id_style: IdStyle::Above31,
            class: Class::InvalidCall("limit breaks its maximum 50".into()),
            target: "limited".into(),
        };
        let finding = Finding {
            id: String::new(),
            era: "2025-11-25".into(),
            baselined: false,
            rule: "T4".into(),
            aspect: crate::rules::AspectId::T4ValidateInputs,
            verdict: Verdict::Fail,
            message: "the tool body ran".into(),
            request: json!({"id": 2147483649u64}),
            response: Value::Null,
            http_status: None,
            signature: "T4 tools/call limited {}".into(),
            hits: 3,
        };
        let (name, text) = case_file(&finding, &input, Era::Legacy, 42, true);
        assert!(name.starts_with("t4-limited-"), "{name}");
        let case = crate::case::Case::parse(&name, &text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(case.request.params, Some(input.params.clone()));
        assert_eq!(case.request.id, Some(json!(2147483649u64)));
        assert_eq!(case.checks, ["body-never-ran"]);
        assert_eq!(case.eras, ["2025-11-25"]);
        assert!(case.envelope);
    }
}
