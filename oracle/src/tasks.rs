//! K1, what any one answer about a task must be (2025-11-25
//! basic/utilities/tasks), judged on every exchange like the other
//! invariants: the `CreateTaskResult` of a task-augmented `tools/call`, the
//! task that `tasks/get` and `tasks/cancel` answer and `tasks/list` lists,
//! the related-task `_meta` that `tasks/result` must carry and the others
//! should not, and over HTTP a `tasks/get` answered without a stream. What
//! takes more than one answer (a task staying cancelled, `tasks/result`
//! blocking) is the cases' (fixtures/cases/tasks).

use mcperr_protocol::Era;
use serde_json::Value;

use crate::seen::Seen;
use crate::Violation;
use mcperr_model::rules::AspectId;
use mcperr_wire::exchange::Exchange;

/// The `_meta` key that ties a message to a task.
pub const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

const STATUSES: [&str; 5] = [
    "working",
    "input_required",
    "completed",
    "failed",
    "cancelled",
];

/// Whether `s` is an RFC 3339 date-time (section 5.6), the profile of ISO
/// 8601 the spec links: `2026-12-04T07:30:00Z`, fractions and offsets allowed.
pub fn is_rfc3339(s: &str) -> bool {
    let b = s.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| r.clone().all(|i| b.get(i).is_some_and(u8::is_ascii_digit));
    let date = b.len() >= 20
        && digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && matches!(b[10], b'T' | b't')
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19);
    if !date {
        return false;
    }
    let mut i = 19;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == start {
            return false;
        }
    }
    match &b[i..] {
        [b'Z' | b'z'] => true,
        [b'+' | b'-', h1, h2, b':', m1, m2] => [h1, h2, m1, m2].iter().all(|c| c.is_ascii_digit()),
        _ => false,
    }
}

/// K1 `declare-capability`: a task-augmented `tools/call` answered with a
/// `CreateTaskResult` by a server that did not declare
/// `tasks.requests.tools.call` (`declared`, when known).
pub fn undeclared_tasks(exchange: &Exchange, declared: Option<bool>) -> Option<Violation> {
    if declared != Some(false) {
        return None;
    }
    let request = &exchange.request;
    let tasked = request.get("method").and_then(Value::as_str) == Some("tools/call")
        && request
            .pointer("/params/task")
            .is_some_and(Value::is_object);
    let created = exchange
        .response()
        .and_then(|r| r.pointer("/result/task"))
        .is_some_and(Value::is_object);
    (tasked && created).then(|| {
        Violation::new(
            AspectId::K1DeclareCapability,
            "a task-augmented tools/call was answered with a CreateTaskResult, but the server's capabilities declare no tasks.requests.tools.call",
        )
    })
}

/// What is wrong with one task object as an answer shows it (`what` names
/// where it is); `in_get` adds `tasks/get`'s ttl.
fn task_faults(task: &Value, what: &str, in_get: bool) -> Vec<Violation> {
    let mut out = Vec::new();
    match task.get("taskId") {
        Some(Value::String(_)) => {}
        other => out.push(Violation::new(
            AspectId::K1IdString,
            format!("{what}: taskId is {}, not a string", show(other)),
        )),
    }
    if let Some(s) = task.get("status").and_then(Value::as_str) {
        if !STATUSES.contains(&s) {
            out.push(Violation::new(
                AspectId::K1CreateTaskResult,
                format!("{what}: status {s:?} is none of the five task statuses"),
            ));
        }
    }
    for (key, aspect) in [
        ("createdAt", AspectId::K1CreatedAt),
        ("lastUpdatedAt", AspectId::K1LastUpdatedAt),
    ] {
        match task.get(key) {
            Some(Value::String(t)) if is_rfc3339(t) => {}
            other => out.push(Violation::new(
                aspect,
                format!(
                    "{what}: {key} is {}, not an ISO 8601 (RFC 3339) timestamp",
                    show(other)
                ),
            )),
        }
    }
    let ttl_ok = matches!(task.get("ttl"), Some(Value::Null))
        || task.get("ttl").is_some_and(Value::is_number);
    if in_get && !ttl_ok {
        out.push(Violation::new(
            AspectId::K1TtlInGet,
            format!(
                "{what}: ttl is {}, not a number of milliseconds or null",
                show(task.get("ttl"))
            ),
        ));
    }
    out
}

fn show(v: Option<&Value>) -> String {
    v.map_or_else(|| "absent".to_string(), Value::to_string)
}

fn related(result: &Value) -> Option<&Value> {
    result.pointer("/_meta")?.get(RELATED_TASK)
}

/// Every K1 violation of `exchange` in `era`: nothing outside 2025-11-25,
/// whose core protocol is the only one with tasks.
pub fn task_answers(exchange: &Exchange, era: Option<Era>) -> Vec<Violation> {
    if era != Some(Era::Legacy) {
        return vec![];
    }
    let request = &exchange.request;
    let method = request
        .get("method")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let Some(response) = exchange.response() else {
        return vec![];
    };
    let mut out = Vec::new();
    if method == "tasks/get" {
        if let Some(http) = exchange.http.as_ref().filter(|h| h.sse) {
            out.push(Violation::new(
                AspectId::K1NoSseOnGet,
                format!(
                    "tasks/get was answered with an SSE stream (HTTP {}), though the client polls",
                    http.status
                ),
            ));
        }
    }
    let Some(result) = response.get("result") else {
        return out;
    };
    let asked = request.pointer("/params/taskId");
    let tasked_call = method == "tools/call"
        && request
            .pointer("/params/task")
            .is_some_and(Value::is_object);
    match method {
        "tools/call" if tasked_call => match result.get("task") {
            Some(task) if task.is_object() => {
                out.extend(task_faults(task, "the CreateTaskResult's task", false));
                if let Some(s) = task.get("status").filter(|s| s.as_str() != Some("working")) {
                    out.push(Violation::new(
                        AspectId::K1BeginWorking,
                        format!("the CreateTaskResult shows the new task {s}, not working"),
                    ));
                }
            }
            // A plain CallToolResult: the server did not accept the task,
            // which only one without the capability may do (a case judges it).
            _ if result.get("content").is_some() => {}
            _ => out.push(Violation::new(
                AspectId::K1CreateTaskResult,
                format!("a task-augmented tools/call was answered neither with a CreateTaskResult nor as a plain call: {result}"),
            )),
        },
        "tasks/get" | "tasks/cancel" => {
            out.extend(task_faults(result, &format!("{method}'s task"), method == "tasks/get"));
            if let (Some(asked), Some(got)) = (asked, result.get("taskId")) {
                if asked != got {
                    out.push(Violation::new(
                        AspectId::K1TaskidAuthoritative,
                        format!("{method} asked for task {asked} and answered task {got}"),
                    ));
                }
            }
            if method == "tasks/cancel" {
                if let Some(s) = result.get("status").filter(|s| s.as_str() != Some("cancelled")) {
                    out.push(Violation::new(
                        AspectId::K1CancelTransition,
                        format!("tasks/cancel answered the task {s}, not cancelled"),
                    ));
                }
            }
        }
        "tasks/list" => {
            for (i, task) in result.get("tasks").and_then(Value::as_array).into_iter().flatten().enumerate() {
                out.extend(task_faults(task, &format!("tasks/list's task {i}"), false));
                if related(task).is_some() {
                    out.push(Violation::new(
                        AspectId::K1NoRelatedTaskOnResults,
                        format!("tasks/list's task {i} carries {RELATED_TASK} in _meta"),
                    ));
                }
            }
        }
        "tasks/result" => {
            let id = related(result).and_then(|r| r.get("taskId"));
            if id.is_none() || id != asked {
                out.push(Violation::new(
                    AspectId::K1ResultRelatedTask,
                    format!("tasks/result for task {} answered with {RELATED_TASK} {} in _meta", show(asked), show(related(result))),
                ));
            }
        }
        _ => {}
    }
    if matches!(method, "tasks/get" | "tasks/list" | "tasks/cancel") && related(result).is_some() {
        out.push(Violation::new(
            AspectId::K1NoRelatedTaskOnResults,
            format!("the {method} result carries {RELATED_TASK} in _meta, though the taskId is in the result"),
        ));
    }
    out
}

/// K1: a `notifications/tasks/status` with the related-task `_meta`.
pub fn status_notification(v: &Value) -> Option<Violation> {
    let meta = v.pointer("/params/_meta")?.get(RELATED_TASK)?;
    Some(Violation::new(
        AspectId::K1StatusNotificationNoRelatedTask,
        format!("a notifications/tasks/status carries {RELATED_TASK} {meta} in _meta: {v}"),
    ))
}

/// The registry's entry point ([`crate::registry::INVARIANTS`]): the task answers, and tasks the tool did not declare.
pub(crate) fn task_invariants(s: &Seen) -> Vec<Violation> {
    if s.framed.is_none() {
        return Vec::new();
    }
    let mut out = task_answers(s.exchange, s.ctx.era);
    out.extend(undeclared_tasks(s.exchange, s.ctx.tool_tasks_declared));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_read_as_rfc_3339() {
        for ok in [
            "2026-12-04T07:30:00Z",
            "2026-12-04T07:30:00.123Z",
            "2026-12-04t07:30:00+01:00",
        ] {
            assert!(is_rfc3339(ok), "{ok}");
        }
        for bad in [
            "2026-12-04",
            "2026-12-04 07:30:00Z",
            "1733300000",
            "2026-12-04T07:30:00",
            "2026-12-04T07:30:00.Z",
        ] {
            assert!(!is_rfc3339(bad), "{bad}");
        }
    }
}
