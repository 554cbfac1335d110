#![cfg(test)]
//! The observer judges a host's traffic as fuzzing judges its own: each
//! test feeds the lines a host and a server would exchange.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::*;

fn observer(profile: &str) -> Observer {
    Observer::new(Profile::load(profile).unwrap(), None)
}

fn host(o: &mut Observer, v: Value) {
    o.from_host(v.to_string().as_bytes(), Instant::now());
}

fn server(o: &mut Observer, v: Value) {
    o.from_server(v.to_string().as_bytes(), Instant::now());
}

/// The 2025-11-25 handshake and a listing of one tool with a bounded
/// integer argument, and one prompt with a required argument.
fn handshake(o: &mut Observer) {
    host(
        o,
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "host", "version": "1"}}}),
    );
    server(
        o,
        json!({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}, "prompts": {}}, "serverInfo": {"name": "s", "version": "1"}}}),
    );
    host(
        o,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    host(
        o,
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    );
    server(
        o,
        json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "limited", "inputSchema": {"type": "object", "properties": {"limit": {"type": "integer", "maximum": 50}}, "required": ["limit"]}}]}}),
    );
    host(
        o,
        json!({"jsonrpc": "2.0", "id": 2, "method": "prompts/list"}),
    );
    server(
        o,
        json!({"jsonrpc": "2.0", "id": 2, "result": {"prompts": [{"name": "greet", "arguments": [{"name": "name", "required": true}]}]}}),
    );
}

fn rules(found: &[(Finding, FuzzInput)]) -> Vec<(String, u64)> {
    found
        .iter()
        .map(|(f, _)| (f.rule.to_string(), f.hits))
        .collect()
}

fn call(id: u64, limit: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "limited", "arguments": {"limit": limit}}})
}

fn ok(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": "ok"}]}})
}

#[test]
fn a_clean_conversation_has_no_finding_and_names_its_era() {
    let mut o = observer("spec");
    handshake(&mut o);
    host(&mut o, call(3, json!(7)));
    server(&mut o, ok(3));
    assert_eq!(o.era(), Era::Legacy);
    let (found, seen) = o.finish(Instant::now());
    assert_eq!(rules(&found), vec![]);
    assert_eq!(
        seen,
        Seen {
            requests: 4,
            judged: 4,
            unanswered: 0,
            rejected: 0
        }
    );
}

#[test]
fn an_answer_under_another_id_is_a_stray_and_its_request_unanswered() {
    let mut o = observer("spec");
    handshake(&mut o);
    host(&mut o, call(3, json!(7)));
    server(&mut o, ok(33));
    host(&mut o, call(4, json!(8)));
    server(&mut o, ok(4));
    let (found, seen) = o.finish(Instant::now() + Duration::from_secs(1));
    let found = rules(&found);
    assert!(found.iter().any(|(r, _)| r == "J1"), "{found:?}");
    // Request 3 was passed by 4's answer: never answered (J4).
    assert!(found.iter().any(|(r, _)| r == "J4"), "{found:?}");
    assert_eq!(seen.unanswered, 1);
}

#[test]
fn invalid_arguments_answered_as_a_success_break_t4_once_per_root_cause() {
    let mut o = observer("spec");
    handshake(&mut o);
    // Above the schema's maximum, twice: one finding, two hits.
    host(&mut o, call(3, json!(99)));
    server(&mut o, ok(3));
    host(&mut o, call(4, json!(98)));
    server(&mut o, ok(4));
    let (found, _) = o.finish(Instant::now());
    let t4: Vec<_> = rules(&found)
        .into_iter()
        .filter(|(r, _)| r == "T4")
        .collect();
    assert_eq!(t4, vec![("T4".to_string(), 2)]);
    // The same arguments refused as a tool error pass.
    let mut o = observer("spec");
    handshake(&mut o);
    host(&mut o, call(3, json!(99)));
    server(
        &mut o,
        json!({"jsonrpc": "2.0", "id": 3, "result": {"content": [{"type": "text", "text": "limit: must be at most 50"}], "isError": true}}),
    );
    assert_eq!(rules(&o.finish(Instant::now()).0), vec![]);
}

#[test]
fn an_unlisted_prompt_must_be_refused_with_invalid_params() {
    let mut o = observer("spec");
    handshake(&mut o);
    host(
        &mut o,
        json!({"jsonrpc": "2.0", "id": 3, "method": "prompts/get", "params": {"name": "nope"}}),
    );
    server(
        &mut o,
        json!({"jsonrpc": "2.0", "id": 3, "error": {"code": -32603, "message": "Unknown prompt: nope"}}),
    );
    let found = rules(&o.finish(Instant::now()).0);
    assert!(found.iter().any(|(r, _)| r == "P1"), "{found:?}");
    let mut o = observer("spec");
    handshake(&mut o);
    host(
        &mut o,
        json!({"jsonrpc": "2.0", "id": 3, "method": "prompts/get", "params": {"name": "nope"}}),
    );
    server(
        &mut o,
        json!({"jsonrpc": "2.0", "id": 3, "error": {"code": -32602, "message": "Unknown prompt: nope"}}),
    );
    assert_eq!(rules(&o.finish(Instant::now()).0), vec![]);
}

#[test]
fn a_request_the_host_left_before_any_later_answer_gets_no_verdict() {
    let mut o = observer("spec");
    handshake(&mut o);
    host(&mut o, call(3, json!(7)));
    let (found, seen) = o.finish(Instant::now() + Duration::from_secs(60));
    assert_eq!(rules(&found), vec![]);
    assert_eq!(seen.unanswered, 1);
}

/// Findings of equal verdict come by rule id as text (J5 before T4), not
/// in the rule table's order (where T4 comes first).
#[test]
fn findings_of_equal_verdict_are_listed_by_rule_id() {
    let mut o = observer("model");
    handshake(&mut o);
    host(&mut o, call(3, json!(99)));
    server(&mut o, ok(3));
    o.from_server(b"INFO starting the catalog", Instant::now());
    let (found, _) = o.finish(Instant::now());
    let order: Vec<(String, &str)> = found
        .iter()
        .map(|(f, _)| (f.rule.to_string(), f.verdict.as_str()))
        .collect();
    assert_eq!(
        order,
        vec![("J5".to_string(), "fail"), ("T4".to_string(), "fail")],
        "{order:?}"
    );
}

#[test]
fn a_log_line_on_stdout_breaks_j5() {
    let mut o = observer("spec");
    handshake(&mut o);
    o.from_server(b"INFO starting the catalog", Instant::now());
    let found = o.finish(Instant::now()).0;
    assert_eq!(rules(&found), vec![("J5".to_string(), 1)]);
    assert!(found[0].1.is_stray_output());
}

#[test]
fn the_envelope_of_a_2026_request_names_its_era_and_results_must_carry_result_type() {
    let mut o = observer("spec");
    host(
        &mut o,
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}, "io.modelcontextprotocol/clientInfo": {"name": "h", "version": "1"}}}}),
    );
    assert_eq!(o.era(), Era::Modern);
    // 2026-07-28 results MUST carry resultType.
    server(
        &mut o,
        json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": []}}),
    );
    let found = rules(&o.finish(Instant::now()).0);
    assert!(found.iter().any(|(r, _)| r == "J1"), "{found:?}");
}

#[test]
fn a_pinned_era_is_kept_whatever_the_handshake_says() {
    let mut o = Observer::new(Profile::load("spec").unwrap(), Some(Era::Modern));
    handshake(&mut o);
    assert_eq!(o.era(), Era::Modern);
}

#[test]
fn versions_before_2026_07_28_speak_the_initialize_era() {
    assert_eq!(era_of_version("2024-11-05"), Era::Legacy);
    assert_eq!(era_of_version("2025-06-18"), Era::Legacy);
    assert_eq!(era_of_version("2025-11-25"), Era::Legacy);
    assert_eq!(era_of_version("2026-07-28"), Era::Modern);
}

/// Over HTTP: `v` as the JSON body of the response on `channel`.
fn http_json(o: &mut Observer, channel: u64, status: u16, v: Option<Value>) {
    let mut answer = HttpAnswer::head(
        status,
        vec![("content-type".into(), "application/json".into())],
    );
    answer.body = v.map(|v| v.to_string()).unwrap_or_default();
    o.http_body(channel, answer, Instant::now());
}

fn http_host(o: &mut Observer, channel: u64, v: Value) {
    o.from_host_on(channel, v.to_string().as_bytes(), Instant::now());
}

#[test]
fn over_http_each_post_is_its_own_channel_so_two_sessions_may_reuse_an_id() {
    let mut o = observer("spec").over_http();
    http_host(&mut o, 1, call(5, json!(7)));
    http_host(&mut o, 2, call(5, json!(8)));
    // Each answer goes with its own POST, in any order.
    http_json(&mut o, 2, 200, Some(ok(5)));
    http_json(&mut o, 1, 200, Some(ok(5)));
    let (found, seen) = o.finish(Instant::now());
    assert_eq!(rules(&found), vec![]);
    assert_eq!((seen.requests, seen.judged, seen.unanswered), (2, 2, 0));
}

#[test]
fn over_http_a_response_without_the_answer_is_judged_and_a_refusal_is_not() {
    let mut o = observer("spec").over_http();
    // 200 with an empty body: no JSON-RPC response to a request (J1).
    http_host(&mut o, 1, call(1, json!(7)));
    http_json(&mut o, 1, 200, None);
    // An SSE stream that ends without the answer (H3).
    http_host(&mut o, 2, call(2, json!(7)));
    let sse = HttpAnswer::head(
        200,
        vec![("content-type".into(), "text/event-stream".into())],
    );
    o.sse_event(2, "message", r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}"#, &sse, Instant::now());
    o.end_channel(2, &sse, ChannelEnd::Complete, Instant::now());
    // 400 with an id-less error: the server refused the input at the HTTP
    // level, which it MUST do for input it cannot accept: not judged.
    http_host(&mut o, 3, call(3, json!(7)));
    http_json(
        &mut o,
        3,
        400,
        Some(
            json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": "Bad Request: no session"}}),
        ),
    );
    // The host dropped the stream: nothing is known of the server.
    http_host(&mut o, 4, call(4, json!(7)));
    o.end_channel(4, &sse, ChannelEnd::Abandoned, Instant::now());
    let (found, seen) = o.finish(Instant::now());
    let mut got = rules(&found);
    got.sort();
    assert_eq!(got, vec![("H3".into(), 1), ("J1".into(), 1)], "{found:#?}");
    assert_eq!((seen.rejected, seen.unanswered), (1, 1));
}
