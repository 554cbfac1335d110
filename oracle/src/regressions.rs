//! Verdicts that were false before the rule table became the one home of
//! every level and quote, each pinned by a recorded answer.
#![cfg(test)]

use std::time::Duration;

use mcperr_protocol::Era;
use serde_json::{json, Value};

use crate::{judge, Evidence, Judgement};
use mcperr_cases::case::{builtin_cases, Case};
use mcperr_cases::plan::CasePlan;
use mcperr_cases::profile::Profile;
use mcperr_model::verdict::Verdict;
use mcperr_wire::exchange::{Ending, Exchange};

fn case(id: &str) -> Case {
    builtin_cases()
        .unwrap()
        .into_iter()
        .find(|c| c.id == id)
        .unwrap_or_else(|| panic!("no case {id}"))
}

/// `id` judged under `profile` in `era` (stdio), answered with `result` or
/// `error` (the response's id is the request's).
fn judged(id: &str, profile: &str, era: Era, answer: Value) -> (CasePlan, Judgement) {
    judged_case(&case(id), profile, era, answer)
}

/// `case` judged as [`judged`] judges a built-in one.
fn judged_case(case: &Case, profile: &str, era: Era, answer: Value) -> (CasePlan, Judgement) {
    let p = Profile::load(profile).unwrap();
    let plan = CasePlan::new(
        case,
        &p,
        era,
        "CANARY42",
        &[("tool".into(), "get_author".into())],
        false,
    );
    let request = json!({"jsonrpc": "2.0", "id": 5, "method": plan.request.method, "params": plan.request.params});
    let mut response = json!({"jsonrpc": "2.0", "id": 5});
    for (k, v) in answer.as_object().unwrap() {
        response[k] = v.clone();
    }
    if era == Era::Modern && response["result"].is_object() {
        response["result"]["resultType"] = json!("complete");
    }
    let ex = Exchange::bare(request, Ending::Answered(response));
    let j = judge(&plan, &ex, &Evidence::default());
    (plan, j)
}

/// A crash's text in an `isError` result: no published sentence of either
/// era asks a server to keep it out (the redaction checklist once quoted is
/// on an unmerged branch of the spec only), so no verdict under `spec`,
/// never the `isError` SHOULD quoted instead; the error model fails it.
#[test]
fn a_crash_text_leak_has_no_verdict_under_spec_and_fails_under_model() {
    let leaked = json!({"result": {"isError": true, "content": [{"type": "text", "text": "boom CANARY42"}]}});
    for era in [Era::Modern, Era::Legacy] {
        let (_, j) = judged("tools/crash-hides-text", "spec", era, leaked.clone());
        assert_eq!(
            (j.rule.as_str(), j.verdict),
            ("T3", Verdict::Pass),
            "{}",
            j.message
        );
        assert!(j.message.contains("T3.exception-text"), "{}", j.message);
        assert!(
            !j.message
                .contains("Any errors that originate from the tool"),
            "{}",
            j.message
        );
        let (_, j) = judged("tools/crash-hides-text", "model", era, leaked.clone());
        assert_eq!(
            (j.rule.as_str(), j.verdict),
            ("T3", Verdict::Fail),
            "{}",
            j.message
        );
    }
}

#[test]
fn a_missing_data_uri_gives_no_verdict_under_spec_in_2026_and_fails_under_model() {
    let no_uri =
        json!({"error": {"code": -32602, "message": "No book titled 'Nothing' in the catalog."}});
    let (_, j) = judged("resources/not-found", "spec", Era::Modern, no_uri.clone());
    assert_eq!(j.verdict, Verdict::Pass, "{}", j.message);
    assert!(j.message.contains("R1.data-uri"), "{}", j.message);
    let (_, j) = judged("resources/not-found", "model", Era::Modern, no_uri);
    assert_eq!(j.verdict, Verdict::Fail, "{}", j.message);
}

#[test]
fn the_2025_not_found_case_shows_the_code_its_verdict_is_about() {
    let p = Profile::load("spec").unwrap();
    for id in ["resources/not-found", "resources/unknown-resource"] {
        let plan = CasePlan::new(&case(id), &p, Era::Legacy, "c", &[], false);
        let shown = plan.shown_expectation();
        assert_eq!(shown["error"]["code"], -32002, "{id}");
        assert!(
            shown["error"].get("data").is_none(),
            "{id}: data.uri is not judged here: {shown}"
        );
    }
    let answer = json!({"error": {"code": -32602, "message": "x", "data": {"uri": "mcperr-unknown://nothing/here"}}});
    let (_, j) = judged("resources/unknown-resource", "spec", Era::Legacy, answer);
    assert_eq!(j.verdict, Verdict::Warn, "{}", j.message);
}

#[test]
fn an_unknown_tool_answered_as_an_is_error_result_warns_as_described_behaviour() {
    let answer = json!({"result": {"isError": true, "content": [{"type": "text", "text": "Unknown tool: mcperr_no_such_tool"}]}});
    let (_, j) = judged("tools/unknown-tool", "spec", Era::Modern, answer);
    assert_eq!(
        (j.rule.as_str(), j.verdict),
        ("T5", Verdict::Warn),
        "{}",
        j.message
    );
    assert!(
        j.message.contains("without an RFC 2119 keyword"),
        "{}",
        j.message
    );
}

#[test]
fn every_case_cites_its_own_aspect_and_no_case_cites_an_sdk() {
    let p = Profile::load("spec").unwrap();
    let plan = CasePlan::new(
        &case("http/bad-origin-403"),
        &p,
        Era::Modern,
        "c",
        &[],
        true,
    );
    assert!(plan.citation.contains("`Origin`"), "{}", plan.citation);
    for c in builtin_cases().unwrap() {
        for era in Era::ALL {
            let cite = mcperr_cases::plan::citation(&c, era);
            assert!(!cite.contains("Python SDK"), "{} {era}: {cite}", c.id);
        }
    }
}

#[test]
fn a_result_off_the_eras_schema_warns_under_spec_citing_the_source_of_truth_sentence() {
    let bad = json!({"result": {"isError": true, "content": "not a list"}});
    let (_, j) = judged("tools/tool-error-is-result", "spec", Era::Legacy, bad);
    assert!(j.message.contains("source of truth"), "{}", j.message);
    assert_ne!(j.verdict, Verdict::Fail, "{}", j.message);
}

#[test]
fn an_sse_event_with_a_lone_surrogate_escape_is_read_like_a_stdio_line() {
    let body =
        b"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"t\":\"\\ud800\"}}\n\n"
            .to_vec();
    let r = mcperr_wire::sse::decode(vec![body], Some(json!(1)));
    assert!(r.problem.is_none(), "{:?}", r.problem);
    assert_eq!(r.messages.len(), 1);
    let line = br#"{"jsonrpc":"2.0","id":1,"result":{"t":"\ud800"}}"#;
    assert_eq!(mcperr_wire::text::decode(line).unwrap(), r.messages[0]);
}

#[test]
fn empty_contents_for_a_missing_resource_breaks_its_own_aspect_in_2026() {
    let empty = json!({"result": {"contents": []}});
    let (_, j) = judged("resources/not-found", "spec", Era::Modern, empty);
    assert_eq!(j.verdict, Verdict::Fail, "{}", j.message);
    assert!(
        j.message.contains("[R1.no-empty-contents]"),
        "{}",
        j.message
    );
    assert!(
        j.message
            .contains("**MUST NOT** return an empty `contents`"),
        "{}",
        j.message
    );
}

#[test]
fn a_request_left_unanswered_while_the_server_answers_others_is_a_j4_failure_not_an_error() {
    let p = Profile::load("spec").unwrap();
    let plan = CasePlan::new(
        &case("tools/unknown-tool"),
        &p,
        Era::Legacy,
        "c",
        &[],
        false,
    );
    let ex = Exchange {
        request: json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call"}),
        ending: Ending::Timeout,
        strays: vec![],
        duration: Duration::from_millis(1000),
        http: None,
    };
    let lost = judge(&plan, &ex, &Evidence::default());
    assert_eq!(
        (lost.rule.as_str(), lost.verdict),
        ("J4", Verdict::Error),
        "{}",
        lost.message
    );
    let alive = Evidence {
        answered_after: true,
        ..Evidence::default()
    };
    let j = judge(&plan, &ex, &alive);
    assert_eq!(
        (j.rule.as_str(), j.verdict),
        ("J4", Verdict::Fail),
        "{}",
        j.message
    );
    assert!(
        j.message.contains("went on answering others"),
        "{}",
        j.message
    );
}

#[test]
fn a_generated_not_found_read_is_judged_as_the_scripted_one_era_by_era() {
    let model = case(mcperr_cases::generate::NOT_FOUND_MODEL);
    let t = json!({"uriTemplate": "items://{id}"});
    let c = mcperr_cases::generate::template_not_found(&t, &model).unwrap();
    let uri = c.request.params.as_ref().unwrap()["uri"]
        .as_str()
        .unwrap()
        .replace("{{canary}}", "CANARY42");
    let err = |code: i64| json!({"error": {"code": code, "message": "no such item", "data": {"uri": uri}}});
    // 2026-07-28: "servers MUST return a JSON-RPC error with code -32602".
    // A -32603 passed before, as any error did.
    let verdict = |era, answer| judged_case(&c, "spec", era, answer).1.verdict;
    assert_eq!(verdict(Era::Modern, err(-32603)), Verdict::Fail);
    assert_eq!(verdict(Era::Modern, err(-32602)), Verdict::Pass);
    assert_eq!(
        verdict(Era::Modern, json!({"result": {"contents": []}})),
        Verdict::Fail
    );
    let real = json!({"result": {"contents": [{"uri": uri, "text": "x"}], "ttlMs": 0, "cacheScope": "private"}});
    let j = judged_case(&c, "spec", Era::Modern, real.clone()).1;
    assert_eq!(j.verdict, Verdict::Pass, "{}", j.message);
    // A real result is not held to the error's data.uri, under any profile.
    assert!(!j.message.contains("data-uri"), "{}", j.message);
    let j = judged_case(&c, "model", Era::Modern, real.clone()).1;
    assert_eq!(j.verdict, Verdict::Pass, "{}", j.message);
    // 2025-11-25: SHOULD -32002, so -32602 warns there, as in resources/not-found.
    assert_eq!(verdict(Era::Legacy, err(-32002)), Verdict::Pass);
    assert_eq!(verdict(Era::Legacy, err(-32602)), Verdict::Warn);
    let real_2025 = json!({"result": {"contents": [{"uri": uri, "text": "x"}]}});
    assert_eq!(verdict(Era::Legacy, real_2025), Verdict::Pass);
    for era in [Era::Modern, Era::Legacy] {
        let scripted = judged(mcperr_cases::generate::NOT_FOUND_MODEL, "spec", era, json!({"error": {"code": -32603, "message": "No book titled 'Nothing' in the catalog.", "data": {"uri": "books://Nothing"}}})).1.verdict;
        assert_eq!(verdict(era, err(-32603)), scripted, "{era}");
    }
}

#[test]
fn an_empty_template_value_is_judged_for_empty_contents_and_is_error() {
    let t = json!({"uriTemplate": "items://{id}"});
    let c = mcperr_cases::generate::template_empty_value(&t, &[]).unwrap();
    assert_eq!(c.request.params.as_ref().unwrap()["uri"], "items://");
    let verdict = |era, answer| judged_case(&c, "spec", era, answer).1;
    let empty = json!({"result": {"contents": []}});
    let j = verdict(Era::Modern, empty.clone());
    assert_eq!(
        (j.verdict, j.rule.as_str()),
        (Verdict::Fail, "R1"),
        "{}",
        j.message
    );
    // 2025-11-25 forbids no empty contents: no verdict.
    assert_eq!(verdict(Era::Legacy, empty).verdict, Verdict::Skip);
    let is_error =
        json!({"result": {"isError": true, "contents": [{"uri": "items://", "text": "bad"}]}});
    assert_eq!(
        verdict(Era::Modern, is_error.clone()).verdict,
        Verdict::Fail
    );
    assert_eq!(verdict(Era::Legacy, is_error).verdict, Verdict::Warn);
    assert_eq!(
        verdict(
            Era::Modern,
            json!({"error": {"code": -32603, "message": "x"}})
        )
        .verdict,
        Verdict::Pass
    );
    // A listed resource with that URI is a real read, not this case.
    assert!(
        mcperr_cases::generate::template_empty_value(&t, &[json!({"uri": "items://"})]).is_none()
    );
}
