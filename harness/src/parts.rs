//! The parts probe: one valid call, with a `progressToken`, of each tool the
//! run may give valid calls, to see which tools report progress, ask the
//! client for input, or succeed, and a `prompts/get` of each prompt with one
//! required argument, to see which render ([`mcperr_cases::parts`] decides who plays
//! what from it). Its answers are not judged: the cases that need a part
//! judge its player. Made only when a selected case needs such a part and
//! the user named no player for it.

use std::time::Instant;

use mcperr_cases::discovery::Discovery;
use mcperr_cases::parts::finders::{self, Probe, ProbeCall};
use mcperr_cases::plan::Message;
use mcperr_cases::select::Selection;
use mcperr_protocol::era::META_CLIENT_CAPABILITIES;
use mcperr_protocol::Era;
use mcperr_wire::exchange::{progress_token, Stray};
use serde_json::{json, Value};

use crate::client::Client;

/// How many tool parts [`finders::from_probe`] can find.
const PROBED_TOOL_PARTS: usize = 4;

/// The prefix of the probe's progress tokens.
const TOKEN: &str = "mcperr-part-probe";

/// Calls each tool `selection` lets the run call validly (never one that
/// may only run as a task) and reports what each call showed. A tool whose
/// first call reported progress once is called again with its bounded
/// integers at their maximum ([`finders::stretched`]), to see whether it
/// reports progress long enough to be cancelled in flight.
pub async fn probe(
    client: &mut Client,
    d: &Discovery,
    selection: &Selection,
    deadline: Option<Instant>,
) -> Probe {
    let mut out = Probe::default();
    // `--deadline` bounds the probe too: past it no call is made.
    let past = || deadline.is_some_and(|d| Instant::now() >= d);
    for (prompt, argument) in finders::one_argument_prompts(d) {
        if past() {
            return out;
        }
        let params = json!({"name": prompt, "arguments": {argument: "mcperr"}});
        let ex = client.request("prompts/get", Some(params), true).await;
        let messages = ex.response().and_then(|r| r.pointer("/result/messages"));
        if messages
            .and_then(Value::as_array)
            .is_some_and(|m| !m.is_empty())
        {
            out.rendered.push(prompt);
        }
    }
    for tool in &d.tools {
        if past() {
            break;
        }
        if !selection.may_call(tool) || mcperr_cases::generate::task_required(tool) {
            continue;
        }
        let Some(name) = tool.get("name").and_then(Value::as_str) else {
            continue;
        };
        let Some(arguments) = finders::valid_arguments(tool, d) else {
            continue;
        };
        let mut call = call_once(client, name, arguments).await;
        if call.progress == 1 && !past() {
            if let Some(longer) = finders::stretched(tool, &call.arguments) {
                call = call_once(client, name, longer).await;
            }
        }
        out.calls.push(call);
        // Every part a probe reveals has a player: the other tools need no call.
        if finders::from_probe(&out.calls, &d.tools).len() == PROBED_TOOL_PARTS {
            break;
        }
    }
    // Late progress of the probe's calls is nobody's case.
    let rest: Vec<Stray> = client
        .drain()
        .into_iter()
        .filter(|s| !s.message().is_some_and(is_probe_message))
        .collect();
    client.requeue(rest);
    out
}

fn is_probe_message(m: &Value) -> bool {
    progress_token(m)
        .and_then(Value::as_str)
        .is_some_and(|t| t.starts_with(TOKEN))
}

/// One call of `name`, with a fresh progress token (and, in 2026-07-28,
/// the form-mode elicitation capability, so that a tool that needs input
/// says so instead of failing).
async fn call_once(client: &mut Client, name: &str, arguments: Value) -> ProbeCall {
    let id = client.fresh_id();
    let token = format!("{TOKEN}-{id}");
    let mut meta = json!({"progressToken": token});
    if client.era == Era::Modern {
        meta[META_CLIENT_CAPABILITIES] = json!({"elicitation": {"form": {}}});
    }
    let params = json!({"name": name, "arguments": arguments, "_meta": meta});
    let msg = Message::request(client.era, &id, "tools/call", Some(params), true);
    let key = id.to_value().to_string();
    let ex = client.exchange(msg).await;
    if ex.response().is_none() {
        // Its answer may still come, during a case: it is nobody's.
        client.ignore([key]);
    }
    // Steps of work, not lines: a notification repeated (a relay that
    // writes each line twice) reports no further progress, and a call
    // counted long by its copies would end before it could be cancelled.
    let mut steps: Vec<&Value> = ex
        .strays
        .iter()
        .filter_map(|s| match s {
            Stray::Progress(m) | Stray::ProgressLate(m)
                if progress_token(m).and_then(Value::as_str) == Some(token.as_str()) =>
            {
                Some(m.pointer("/params/progress").unwrap_or(&Value::Null))
            }
            _ => None,
        })
        .collect();
    steps.dedup();
    let progress = steps.len();
    let asked_by_request = ex.strays.iter().any(|s| {
        matches!(s, Stray::ServerRequest(m)
            if m.get("method").and_then(Value::as_str) == Some("elicitation/create"))
    });
    let result = ex.response().and_then(|r| r.get("result"));
    let input_required = result
        .and_then(|r| r.get("resultType"))
        .and_then(Value::as_str)
        == Some("input_required");
    let succeeded = result.is_some_and(|r| {
        r.get("isError") != Some(&Value::Bool(true)) && !input_required && r.get("task").is_none()
    });
    ProbeCall {
        tool: name.to_string(),
        arguments: ex
            .request
            .pointer("/params/arguments")
            .cloned()
            .unwrap_or(json!({})),
        progress,
        asked_input: input_required || asked_by_request,
        succeeded,
        took: ex.duration,
    }
}
