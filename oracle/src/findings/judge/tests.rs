//! The fuzz judge's tests: one root cause is one finding, and each class of
//! input is judged by the rules its answer must keep.

use super::*;
use mcperr_cases::fuzz::inputs::IdStyle;
use mcperr_protocol::codes::Code;
use serde_json::json;
use std::time::Duration;

fn judge(era: Era, profile: &str) -> Judge {
    Judge {
        era,
        profile: Profile::load(profile).unwrap(),
        over_http: false,
    }
}

#[test]
fn one_root_cause_is_one_finding_whatever_the_id_method_era_or_echoed_value() {
    let unanswered = |i: &FuzzInput, era: Era| {
        let ex = Exchange {
            request: i.message(era, 1),
            ending: Ending::Timeout,
            strays: vec![],
            duration: Duration::from_secs(5),
            http: None,
        };
        judge(era, "spec").judge_with(i, &ex, None, None, None, true)
    };
    let envelope = |method: &str, what: &str, id| FuzzInput {
        method: method.into(),
        target: method.into(),
        ..input(Class::Envelope(what.into()), id)
    };
    let a = unanswered(
        &envelope("prompts/get", "params.name = 7", IdStyle::Counter),
        Era::Modern,
    );
    let b = unanswered(
        &envelope("resources/read", "params.name = \"é\"", IdStyle::Text),
        Era::Legacy,
    );
    assert_eq!((a.len(), b.len()), (1, 1));
    assert_eq!((&a[0].signature, &a[0].id), (&b[0].signature, &b[0].id));
    // Another part of the request broken is another root cause.
    let c = unanswered(
        &envelope("prompts/get", "params is an array", IdStyle::Counter),
        Era::Modern,
    );
    assert_ne!(a[0].signature, c[0].signature);
    // A tool's accepted invalid call is one finding whatever the result held.
    let accepted = |result: Value| {
        let i = input(
            Class::InvalidCall("limit breaks its maximum 50".into()),
            IdStyle::Counter,
        );
        let r = json!({"jsonrpc": "2.0", "id": 1, "result": result});
        let ex = exchange(i.message(Era::Legacy, 1), r);
        judge(Era::Legacy, "spec").judge(&i, &ex, None, None)
    };
    let one = accepted(json!({"content": [{"type": "text", "text": "ok 56"}]}));
    let two = accepted(json!({"content": [], "structuredContent": {"n": 1}}));
    let sig = |f: &[Finding]| {
        f.iter()
            .find(|f| f.rule == "T4")
            .map(|f| f.signature.clone())
    };
    assert!(sig(&one).is_some());
    assert_eq!(sig(&one), sig(&two));
}

#[test]
fn invalid_calls_of_two_tools_answered_alike_are_one_group_of_two_causes() {
    let accepted = |tool: &str, what: &str| {
        let i = FuzzInput {
            target: tool.into(),
            ..input(Class::InvalidCall(what.into()), IdStyle::Counter)
        };
        let r = json!({"jsonrpc": "2.0", "id": 1, "result": {"content": []}});
        let ex = exchange(i.message(Era::Legacy, 1), r);
        judge(Era::Legacy, "spec")
            .judge(&i, &ex, Some(true), None)
            .into_iter()
            .find(|f| f.rule == "T4")
            .expect("a body that ran on invalid arguments")
    };
    let a = accepted("limited", "limit breaks its maximum 50");
    let b = accepted("get_author", "title breaks its type");
    assert_ne!(a.signature, b.signature, "each shrinks as its own cause");
    assert_eq!((&a.group, &a.id), (&b.group, &b.id), "one deviation");
    assert!(a.id.starts_with("fuzz/t4-tools-call-"), "{}", a.id);
    let folded = crate::findings::group::group(vec![
        (a, input(Class::ValidCall, IdStyle::Counter)),
        (b, input(Class::ValidCall, IdStyle::Counter)),
    ]);
    assert_eq!(folded.len(), 1);
    assert_eq!(folded[0].0.hits, 2);
    assert_eq!(folded[0].0.causes.len(), 2);
}

#[test]
fn an_error_path_that_drops_the_id_is_one_finding_whatever_the_input_broke() {
    let idless = |what: &str, code: i64| {
        let i = FuzzInput {
            method: "prompts/get".into(),
            target: "prompts/get".into(),
            ..input(Class::Envelope(what.into()), IdStyle::Counter)
        };
        let r = json!({"jsonrpc": "2.0", "error": {"code": code, "message": "Invalid request"}});
        let ex = exchange(i.message(Era::Legacy, 1), r);
        judge(Era::Legacy, "spec")
            .judge(&i, &ex, None, None)
            .into_iter()
            .find(|f| f.aspect == AspectId::J1ErrorId)
            .expect("an error without the request's id fails J1.error-id")
    };
    let array = idless("params is an array", -32600);
    let missing = idless("params.name missing", -32600);
    assert_eq!(
        (&array.signature, &array.id),
        (&missing.signature, &missing.id)
    );
    // Another kind of answer is another error path.
    assert_ne!(
        array.signature,
        idless("params is an array", -32700).signature
    );
}

fn input(class: Class, id_style: IdStyle) -> FuzzInput {
    FuzzInput {
        method: "tools/call".into(),
        params: json!({"name": "limited", "arguments": {"limit": 56}}),
        envelope: true,
        id_style,
        class,
        target: "limited".into(),
    }
}

fn exchange(request: Value, response: Value) -> Exchange {
    Exchange::bare(request, Ending::Answered(response))
}

#[test]
fn invalid_arguments_that_run_the_body_fail_on_the_must_validate() {
    let i = input(
        Class::InvalidCall("limit breaks its maximum 50".into()),
        IdStyle::Counter,
    );
    let req = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call"});
    let ok = json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "ok 56"}]}});
    let f =
        judge(Era::Legacy, "spec").judge(&i, &exchange(req.clone(), ok.clone()), Some(true), None);
    let verdicts: Vec<_> = f.iter().map(|f| (f.rule.as_str(), f.verdict)).collect();
    assert_eq!(verdicts, [("T4", Verdict::Fail), ("T4", Verdict::Warn)]);
    let err = json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "bad"}});
    let f = judge(Era::Legacy, "model").judge(&i, &exchange(req.clone(), err), Some(false), None);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].verdict, Verdict::Warn);
    let fine = json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [], "isError": true}});
    assert!(judge(Era::Legacy, "model")
        .judge(&i, &exchange(req, fine), Some(false), None)
        .is_empty());
}

#[test]
fn an_id_beyond_a_double_that_comes_back_rounded_only_warns() {
    let i = input(Class::InvalidCall("x".into()), IdStyle::Above53);
    let req = json!({"jsonrpc": "2.0", "id": 9007199254740993u64, "method": "tools/call"});
    let res = json!({"jsonrpc": "2.0", "id": 9007199254740992u64, "result": {"content": [], "isError": true}});
    let f = judge(Era::Legacy, "spec").judge(&i, &exchange(req, res), None, None);
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!((f[0].rule.as_str(), f[0].verdict), ("J1", Verdict::Warn));
    let i = input(Class::InvalidCall("x".into()), IdStyle::Above31);
    let req = json!({"jsonrpc": "2.0", "id": 2147483648u64, "method": "tools/call"});
    let res =
        json!({"jsonrpc": "2.0", "id": -2147483648i64, "result": {"content": [], "isError": true}});
    let f = judge(Era::Legacy, "spec").judge(&i, &exchange(req, res), None, None);
    assert_eq!((f[0].rule.as_str(), f[0].verdict), ("J1", Verdict::Fail));
}

#[test]
fn reserved_codes_warn_in_2026_under_spec_and_model_alike() {
    let i = input(Class::UnknownMethod, IdStyle::Counter);
    let req = json!({"jsonrpc": "2.0", "id": 1, "method": "mcperr/unknown"});
    let res = json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32500, "message": "?"}});
    // Over stdio J2's -32601 has no keyword in either era (its MUST is
    // HTTP's 404); 2026-07-28 asks for application codes outside the
    // reserved range (SHOULD).
    let spec =
        judge(Era::Modern, "spec").judge(&i, &exchange(req.clone(), res.clone()), None, None);
    let rules: Vec<&str> = spec.iter().map(|f| f.rule.as_str()).collect();
    assert_eq!(rules, ["J1"], "{spec:?}");
    // Neither is the error model's: `model` grades them as `spec` does.
    let model = judge(Era::Modern, "model").judge(&i, &exchange(req, res), None, None);
    let rules: Vec<&str> = model.iter().map(|f| f.rule.as_str()).collect();
    assert_eq!(rules, ["J1"], "{model:?}");
    use crate::codes::reserved_undefined;
    assert!(
        !reserved_undefined(Code(-32050), Era::Modern)
            && reserved_undefined(Code(-32500), Era::Legacy)
    );
}

#[test]
fn shapes_keep_codes_and_flags_and_drop_texts() {
    let a = shape(&json!({"error": {"code": -32602, "message": "x"}, "id": 3}));
    let b = shape(&json!({"id": 4, "error": {"message": "yy", "code": -32602}}));
    assert_eq!(a, b);
    assert_ne!(
        a,
        shape(&json!({"error": {"code": -32603, "message": "x"}, "id": 3}))
    );
}
