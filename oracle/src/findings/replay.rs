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

use super::judge::{finding_id, Finding};
use mcperr_cases::expect;
use mcperr_cases::fuzz::inputs::{Class, FuzzInput, IdStyle};
use mcperr_model::rules::RuleId;

#[derive(Serialize)]
struct CaseOut {
    id: String,
    rule: mcperr_model::rules::RuleId,
    /// The aspect the finding broke, where the expectation proves it.
    #[serde(skip_serializing_if = "Option::is_none")]
    aspect: Option<String>,
    /// The finding's aspect, which decides the replay's verdict.
    replays: String,
    title: String,
    eras: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    needs: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    checks: Vec<String>,
    /// Written only to turn the era's envelope off (the input breaks it).
    #[serde(skip_serializing_if = "Option::is_none")]
    envelope: Option<bool>,
    /// 0 for an unanswered request: the campaign waited for it already, so
    /// the replay costs one timeout, not a `--slow-ms` wait as well.
    #[serde(skip_serializing_if = "Option::is_none")]
    slow_ms: Option<u64>,
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
    let id = saved_id(finding, input);
    let Replayed {
        shape,
        mut needs,
        checks,
        aspect,
    } = replayed(finding, input, counted);
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
        rule: finding.rule,
        aspect,
        replays: finding.aspect.to_string(),
        title: format!(
            "found by mcperr fuzz: {}",
            first_line.chars().take(160).collect::<String>()
        ),
        eras: replay_eras(finding, era),
        needs,
        checks,
        envelope: (!input.envelope).then_some(false),
        slow_ms: unanswered(finding).then_some(0),
        request: RequestOut {
            method: input.method.clone(),
            id: (input.id_style != IdStyle::Counter)
                .then(|| finding.request.get("id").map(toml_of))
                .flatten(),
            params_json: mcperr_wire::text::as_sent(&input.params.to_string()),
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

/// The finding's own id (what the report and a baseline name), when set;
/// else one made from its rule, target and group.
fn saved_id(finding: &Finding, input: &FuzzInput) -> String {
    if !finding.id.is_empty() {
        return finding.id.clone();
    }
    let group = if finding.group.is_empty() {
        &finding.signature
    } else {
        &finding.group
    };
    finding_id(
        finding.rule.as_str(),
        super::judge::id_target(finding.aspect, input),
        group,
    )
}

/// What a saved case of a finding's kind expects: the judge's shape, the
/// named checks, the parts it needs and the aspect its `[expect]` proves.
struct Replayed {
    shape: Option<expect::Shape>,
    needs: Vec<String>,
    checks: Vec<String>,
    aspect: Option<String>,
}

/// The expectation of the finding's kind, as the judge states it
/// ([`mcperr_cases::expect`]): the replayed case grades the same answer by
/// the same aspect, so it gets the same verdict.
fn replayed(finding: &Finding, input: &FuzzInput, counted: bool) -> Replayed {
    let mut needs = vec![];
    let mut checks = vec![];
    let mut aspect = None;
    let shape = match (&input.class, finding.aspect.rule()) {
        (Class::InvalidCall(_), RuleId::T4) => {
            if counted && mcperr_cases::bookshop::is_counted_call(&input.method, &input.target) {
                needs = mcperr_cases::bookshop::counting_needs();
                checks.push("body-never-ran".into());
            }
            Some(expect::tool_rejection_shape())
        }
        (Class::UnknownMethod, RuleId::J2) => Some(expect::Shape {
            expect: json!({"error": {"code": mcperr_protocol::codes::METHOD_NOT_FOUND}}),
            warn: vec![],
        }),
        (Class::ResourceMissing, RuleId::R1) => {
            match finding.aspect.name() {
                // Judged by a named check under its own aspect: the shape
                // (any JSON-RPC error) would let the retired code pass.
                "retired-32002" => checks.push("no-retired-code".into()),
                "main" => {}
                name => aspect = Some(name.to_string()),
            }
            Some(expect::made_up_read_shape())
        }
        (Class::UnknownPrompt, RuleId::P1) | (Class::PromptMissingArgument, RuleId::P2) => {
            Some(expect::prompt_error_shape())
        }
        (Class::Envelope(_), RuleId::T6 | RuleId::R6) => Some(expect::made_up_read_shape()),
        (Class::ValidCall | Class::Observed, RuleId::T8)
            if finding.aspect == mcperr_model::rules::AspectId::T8AlsoText =>
        {
            checks.push("also-text".into());
            None
        }
        (Class::ValidCall, RuleId::T7 | RuleId::T8) => {
            checks.push("structured-output".into());
            None
        }
        // An error returned as a success: the same named check as a
        // generated valid call's.
        (Class::ValidCall | Class::Observed, RuleId::T9) => {
            checks.push("error-as-success".into());
            None
        }
        // J1, J4, J5, J7 and the shapes: the invariants judge every case.
        _ => None,
    };
    Replayed {
        shape,
        needs,
        checks,
        aspect,
    }
}

/// Whether the finding's request went unanswered (its J4 silence, a big
/// id's): the campaign waited for it already.
fn unanswered(finding: &Finding) -> bool {
    finding.response.is_null() || finding.signature.ends_with("no answer")
}

/// The eras a saved finding replays in: every era the campaign saw it in
/// (its request is era-neutral: the planner adds each era's envelope),
/// else the one it was found in.
fn replay_eras(finding: &Finding, era: Era) -> Vec<String> {
    let mut eras: Vec<String> = finding
        .eras
        .iter()
        .filter(|e| e.parse::<Era>().is_ok())
        .cloned()
        .collect();
    if !eras.contains(&era.version().to_string()) {
        eras.push(era.version().to_string());
    }
    eras
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcperr_model::verdict::Verdict;

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
            not_reproduced: None,
            rule: RuleId::T4,
            aspect: mcperr_model::rules::AspectId::T4ValidateInputs,
            verdict: Verdict::Fail,
            message: "the tool body ran".into(),
            request: json!({"id": 2147483649u64}),
            response: Value::Null,
            http_status: None,
            signature: "T4 tools/call limited {}".into(),
            group: "T4 tools/call result".into(),
            causes: vec![],
            hits: 3,
            eras: vec!["2025-11-25".into()],
            methods: vec!["tools/call".into()],
        };
        let (name, text) = case_file(&finding, &input, Era::Legacy, 42, true);
        // A group's id names its method, not the tool it was seen on.
        assert!(name.starts_with("t4-tools-call-"), "{name}");
        let case =
            mcperr_cases::case::Case::parse(&name, &text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(case.request.params, Some(input.params.clone()));
        assert_eq!(case.request.id, Some(json!(2147483649u64)));
        assert_eq!(case.checks, ["body-never-ran"]);
        assert_eq!(case.eras, ["2025-11-25"]);
        assert!(case.envelope);
        // Seen in both eras: it replays in both, not in the one that saved it.
        let both = Finding {
            eras: vec!["2026-07-28".into(), "2025-11-25".into()],
            ..finding
        };
        let (name, text) = case_file(&both, &input, Era::Legacy, 42, true);
        let case = mcperr_cases::case::Case::parse(&name, &text).unwrap();
        assert_eq!(case.eras, ["2026-07-28", "2025-11-25"]);
    }
}

/// A saved finding replayed as a case gets the same rule and verdict as in
/// the campaign: both grade the same answer through the same aspect.
#[cfg(test)]
mod same_verdict {
    use super::*;
    use crate::findings::judge::Judge;
    use crate::{judge as judge_case, Evidence};
    use mcperr_cases::plan::CasePlan;
    use mcperr_cases::profile::Profile;
    use mcperr_wire::exchange::{Ending, Exchange};
    use std::time::Duration;

    fn input(method: &str, class: Class, id_style: IdStyle, params: Value) -> FuzzInput {
        FuzzInput {
            method: method.into(),
            params,
            envelope: true,
            id_style,
            class,
            target: "t".into(),
        }
    }

    /// Judges `response` to `input` in the campaign and as the replayed
    /// case, and asserts one finding with the same rule and verdict both ways.
    fn both_ways(era: Era, profile: &str, input: FuzzInput, id: Value, response: Value) {
        let request =
            json!({"jsonrpc": "2.0", "id": id, "method": input.method, "params": input.params});
        let mut response = response;
        if era == Era::Modern && response["result"].is_object() {
            response["result"]["resultType"] = json!("complete");
        }
        let ending = if response["id"] == request["id"] {
            Ending::Answered(response)
        } else {
            Ending::WrongId(response)
        };
        let ex = Exchange {
            request,
            ending,
            strays: vec![],
            duration: Duration::ZERO,
            http: None,
        };
        let p = Profile::load(profile).unwrap();
        let judge = Judge {
            era,
            profile: p.clone(),
            over_http: false,
        };
        let findings = judge.judge(&input, &ex, None, None);
        assert!(!findings.is_empty(), "{profile} {era}: no finding");
        // Each finding, saved and replayed, is decided by its own rule.
        for f in &findings {
            let (name, text) = case_file(f, &input, era, 1, false);
            let case = mcperr_cases::case::Case::parse(&name, &text)
                .unwrap_or_else(|e| panic!("{e}\n{text}"));
            let plan = CasePlan::new(&case, &p, era, "c", &[], false);
            let j = judge_case(&plan, &ex, &Evidence::default());
            assert_eq!(
                (j.rule.as_str(), j.verdict),
                (f.rule.as_str(), f.verdict),
                "{profile} {era}: campaign {} / replay {}",
                f.message,
                j.message
            );
        }
    }

    #[test]
    fn every_finding_kind_replays_with_its_campaign_verdict() {
        let call = |class| {
            input(
                "tools/call",
                class,
                IdStyle::Counter,
                json!({"name": "t", "arguments": {"x": 1}}),
            )
        };
        let bad = || Class::InvalidCall("x breaks its type".into());
        for (era, profile) in [(Era::Legacy, "spec"), (Era::Modern, "model")] {
            both_ways(
                era,
                profile,
                call(bad()),
                json!(1),
                json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "bad x"}}),
            );
            both_ways(
                era,
                profile,
                call(bad()),
                json!(1),
                json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "ok"}]}}),
            );
            let prompt = input(
                "prompts/get",
                Class::UnknownPrompt,
                IdStyle::Counter,
                json!({"name": "nope"}),
            );
            both_ways(
                era,
                profile,
                prompt,
                json!(2),
                json!({"jsonrpc": "2.0", "id": 2, "error": {"code": 0, "message": "Unknown prompt: nope"}}),
            );
            let read = input(
                "resources/read",
                Class::ResourceMissing,
                IdStyle::Counter,
                json!({"uri": "books://zz"}),
            );
            both_ways(
                era,
                profile,
                read,
                json!(3),
                json!({"jsonrpc": "2.0", "id": 3, "result": {"isError": true, "contents": [{"uri": "books://zz", "text": "x"}]}}),
            );
            let big = input(
                "tools/call",
                Class::InvalidCall("x".into()),
                IdStyle::Above53,
                json!({"name": "t", "arguments": {"x": "s"}}),
            );
            both_ways(
                era,
                profile,
                big,
                json!(9007199254740993u64),
                json!({"jsonrpc": "2.0", "id": 9007199254740992u64, "result": {"isError": true, "content": []}}),
            );
        }
        // The retired -32002 for a made-up read (a MUST NOT in 2026-07-28).
        let read = input(
            "resources/read",
            Class::ResourceMissing,
            IdStyle::Counter,
            json!({"uri": "books://zz"}),
        );
        both_ways(
            Era::Modern,
            "spec",
            read,
            json!(5),
            json!({"jsonrpc": "2.0", "id": 5, "error": {"code": -32002, "message": "not found"}}),
        );
        let unknown = input(
            "mcperr/nope",
            Class::UnknownMethod,
            IdStyle::Counter,
            json!({}),
        );
        both_ways(
            Era::Modern,
            "model",
            unknown,
            json!(4),
            // An undefined code of the reserved range (J1, a SHOULD in
            // 2026-07-28): over stdio J2's -32601 has no level, so this is
            // the finding an unknown method gets there.
            json!({"jsonrpc": "2.0", "id": 4, "error": {"code": -32500, "message": "?"}}),
        );
    }
}
