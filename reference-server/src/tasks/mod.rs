//! Tasks (2025-11-25, basic/utilities/tasks): a task-augmented `tools/call`
//! answered with a `CreateTaskResult`, and `tasks/get`, `tasks/result`,
//! `tasks/cancel` and `tasks/list` with their protocol errors (rule K1).
//!
//! Work is counted in requests, not read from a clock: a task created by a
//! call of `steps` steps is `working` until the server has handled `steps`
//! more requests, so that a test sees the same statuses on every machine.
//! `tasks/result` on a working task does the rest of its work before it
//! answers, which is the blocking the spec asks for without a wait. The
//! timestamps are the wall clock's, since the spec asks for real ones.

use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use mcperr_protocol::{codes, ErrorObject};
use serde_json::{json, Map, Value};

use crate::answer::Answer;
use crate::faults::Fault;

/// The `_meta` key that ties a message to a task.
pub const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

/// Most tasks one server keeps: past it, task-augmented calls are refused
/// with -32603 (the spec's "internal errors"), so that a long fuzzing
/// campaign cannot grow the store without bound.
pub const MAX_TASKS: usize = 1024;

/// Tasks a `tasks/list` page holds: small, so that pagination shows.
pub const PAGE: usize = 2;

/// What `tasks/get` suggests as a polling interval, in milliseconds.
const POLL_MS: u64 = 10;

#[derive(Debug)]
struct Task {
    id: Value,
    created_at: String,
    updated_at: String,
    /// The status last reported, so that a change moves `lastUpdatedAt`.
    shown: &'static str,
    done_at: u64,
    finished: bool,
    cancelled: bool,
    outcome: Result<Value, ErrorObject>,
    /// The call's `progressToken`, kept for the task's whole life
    /// (basic/utilities/progress#behavior-requirements).
    token: Option<Value>,
    /// Steps of work, and how many progress has reported.
    total: u64,
    reported: u64,
    /// Waiting for input the server asked its client for (a request of
    /// its own): `input_required` until [`Tasks::resolve`].
    waiting: bool,
}

impl Task {
    fn failed(&self) -> bool {
        match &self.outcome {
            Err(_) => true,
            Ok(r) => r.get("isError") == Some(&Value::Bool(true)),
        }
    }

    fn status(&mut self, now: u64, fault: Option<Fault>) -> &'static str {
        let worked_off = self.finished || now >= self.done_at;
        // Under task-cancel-not-sticky a cancelled task that finishes its
        // work anyway is reported by how the work ended.
        let cancelled =
            self.cancelled && !(fault == Some(Fault::TaskCancelNotSticky) && worked_off);
        let status = match (cancelled, worked_off, self.failed()) {
            (true, _, _) => "cancelled",
            (false, _, _) if self.waiting && fault == Some(Fault::TaskInputHidden) => "working",
            (false, _, _) if self.waiting => "input_required",
            (false, true, true) => "failed",
            (false, true, false) => "completed",
            (false, false, _) => "working",
        };
        if status != self.shown {
            self.shown = status;
            self.updated_at = timestamp();
        }
        status
    }

    /// A progress notification at `step` of the task's work, under the
    /// call's token (none without one); under task-progress-new-token, under
    /// a token of the task's own.
    fn progress(&mut self, step: u64, fault: Option<Fault>) -> Option<Value> {
        let token = match fault {
            Some(Fault::TaskProgressNewToken) => {
                json!(format!("progress-{}", self.id.as_str().unwrap_or_default()))
            }
            _ => self.token.clone()?,
        };
        self.reported = self.reported.max(step);
        Some(
            json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {
            "progressToken": token, "progress": step, "total": self.total}}),
        )
    }

    fn terminal(&mut self, now: u64, fault: Option<Fault>) -> bool {
        self.status(now, fault) != "working"
    }

    fn json(&mut self, now: u64, fault: Option<Fault>) -> Value {
        let status = self.status(now, fault);
        let mut task = json!({"taskId": self.id, "status": status,
            "createdAt": self.created_at, "lastUpdatedAt": self.updated_at,
            "ttl": null, "pollInterval": POLL_MS});
        let message = match status {
            "failed" if fault != Some(Fault::TaskFailedNoMessage) => {
                Some("the tool call ended in an error: tasks/result returns it")
            }
            "cancelled" => Some("cancelled at the client's request"),
            _ => None,
        };
        if let Some(m) = message {
            task["statusMessage"] = m.into();
        }
        if fault == Some(Fault::TaskNoTimestamps) {
            task.as_object_mut().map(|t| t.remove("createdAt"));
            task.as_object_mut().map(|t| t.remove("lastUpdatedAt"));
        }
        if fault == Some(Fault::TaskNoTtl) {
            task.as_object_mut().map(|t| t.remove("ttl"));
        }
        task
    }
}

#[derive(Debug, Default)]
struct Store {
    tasks: Vec<Task>,
    /// Requests handled so far: the clock tasks work by.
    now: u64,
    minted: u64,
    /// The keys task ids are hashed with, random per process.
    keys: std::hash::RandomState,
}

impl Store {
    fn find(&mut self, id: &Value) -> Option<&mut Task> {
        self.tasks.iter_mut().find(|t| &t.id == id)
    }
}

/// The tasks of one server, shared by every connection.
#[derive(Debug, Default)]
pub struct Tasks {
    store: Mutex<Store>,
}

/// The current time as RFC 3339 (`2026-12-04T07:30:00.123Z`).
fn timestamp() -> String {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let secs = since.as_secs();
    let (days, rest) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rest / 3_600,
        rest % 3_600 / 60,
        rest % 60,
        since.subsec_millis()
    )
}

fn invalid(message: impl Into<String>) -> Answer {
    Answer::error(ErrorObject::new(codes::INVALID_PARAMS, message))
}

/// Adds `related` to a result's `_meta`.
fn with_related(mut result: Value, id: &Value) -> Value {
    if let Some(r) = result.as_object_mut() {
        let meta = r.entry("_meta").or_insert_with(|| json!({}));
        if let Some(m) = meta.as_object_mut() {
            m.insert(RELATED_TASK.into(), json!({"taskId": id}));
        }
    }
    result
}

/// The task a `tasks/get`, `tasks/result` or `tasks/cancel` names: its
/// `taskId` param, or under task-meta-overrides-id the `_meta`'s.
fn named(params: Option<&Value>, fault: Option<Fault>) -> Result<Value, ErrorObject> {
    let from_meta = params
        .and_then(|p| p.pointer("/_meta"))
        .and_then(|m| m.get(RELATED_TASK))
        .and_then(|r| r.get("taskId"))
        .filter(|_| fault == Some(Fault::TaskMetaOverridesId));
    match from_meta.or_else(|| params.and_then(|p| p.get("taskId"))) {
        Some(id @ (Value::String(_) | Value::Number(_))) => Ok(id.clone()),
        _ => Err(ErrorObject::new(
            codes::INVALID_PARAMS,
            "Invalid params: \"taskId\" must be a string",
        )),
    }
}

impl Tasks {
    /// Counts one request handled: tasks work by it.
    pub fn tick(&self) {
        if let Ok(mut s) = self.store.lock() {
            s.now += 1;
        }
    }

    /// Starts a task for a call whose own answer is `answer` (worked for
    /// `answer.steps` requests, at least one): the `CreateTaskResult`. A
    /// call that asked for progress (`token`) gets it for the task's work,
    /// under the same token, until the task is terminal.
    pub fn create(&self, answer: Answer, fault: Option<Fault>, token: Option<Value>) -> Answer {
        let Some(outcome) = answer.reply else {
            return answer;
        };
        let Ok(mut s) = self.store.lock() else {
            return Answer::error(ErrorObject::new(codes::INTERNAL_ERROR, "task store lost"));
        };
        if s.tasks.len() >= MAX_TASKS {
            return Answer::error(ErrorObject::new(
                codes::INTERNAL_ERROR,
                format!("task limit reached: this server keeps at most {MAX_TASKS} tasks"),
            ));
        }
        s.minted += 1;
        let id = match fault {
            Some(Fault::TaskIdNumber) => json!(s.minted),
            Some(Fault::TaskIdReused) => json!("task-1"),
            _ => {
                // Unique (the counter) and not guessable from another id:
                // SipHash under the process's random keys, 128 bits
                // (basic/utilities/tasks#task-isolation-and-access-control).
                use std::hash::BuildHasher;
                let keyed = |lane: u8| s.keys.hash_one((s.minted, lane));
                json!(format!("task-{:016x}{:016x}", keyed(1), keyed(2)))
            }
        };
        s.tasks.retain(|t| t.id != id);
        let now = s.now;
        let created = timestamp();
        let mut task = Task {
            id,
            created_at: created.clone(),
            updated_at: created,
            shown: "working",
            done_at: now + u64::from(answer.steps.max(1)),
            finished: false,
            cancelled: false,
            outcome,
            token,
            total: u64::from(answer.steps.max(1)),
            reported: 0,
            waiting: false,
        };
        let mut shown = task.json(now, fault);
        if fault == Some(Fault::TaskCreatedCompleted) {
            shown["status"] = "completed".into();
        }
        s.tasks.push(task);
        Answer {
            logs: answer.logs,
            ..Answer::result(json!({"task": shown}))
        }
    }

    /// Starts a task that waits for input the server asks its client for
    /// (2025-11-25's `confirm_purchase` as a task): its `CreateTaskResult`
    /// and its id. [`Tasks::resolve`] gives it
    /// its call's answer once the client has answered.
    pub fn create_waiting(&self, fault: Option<Fault>, token: Option<Value>) -> (Answer, Value) {
        let mut waiting = Answer::result(json!({}));
        waiting.steps = 1;
        let created = self.create(waiting, fault, token);
        let id = created
            .reply
            .as_ref()
            .and_then(|r| r.as_ref().ok())
            .and_then(|r| r.pointer("/task/taskId"))
            .cloned()
            .unwrap_or(Value::Null);
        // It begins working ("Tasks MUST begin in the working status"), and
        // is input_required from the next look on, until the input is in.
        if let Ok(mut s) = self.store.lock() {
            if let Some(task) = s.find(&id) {
                task.waiting = true;
            }
        }
        (created, id)
    }

    /// The input task `id` waited for is in: its call's `result`, and it is
    /// done (under task-input-stuck it stays `input_required`).
    pub fn resolve(&self, id: &Value, result: Value, fault: Option<Fault>) {
        if let Ok(mut s) = self.store.lock() {
            if let Some(task) = s.find(id) {
                task.outcome = Ok(result);
                task.finished = true;
                task.waiting = fault == Some(Fault::TaskInputStuck);
            }
        }
    }

    /// `tasks/get`: the task as it stands.
    pub fn get(&self, params: Option<&Value>, fault: Option<Fault>) -> Answer {
        self.with_task(params, fault, |task, now| {
            let shown = task.json(now, fault);
            let mut answer = Answer::result(shown);
            if fault == Some(Fault::TaskProgressAfterTerminal) && task.terminal(now, fault) {
                // One more report after the work ended.
                answer
                    .notifications
                    .extend(task.progress(task.total, fault));
            }
            answer
        })
    }

    /// `tasks/result`: the call's own answer once the task is terminal,
    /// its work done first when it is not.
    pub fn result(&self, params: Option<&Value>, fault: Option<Fault>) -> Answer {
        self.with_task(params, fault, |task, now| {
            let mut notes = Vec::new();
            if !task.terminal(now, fault) && fault != Some(Fault::TaskResultEarly) {
                // The rest of the work, reported as it is done.
                for step in task.reported + 1..=task.total {
                    notes.extend(task.progress(step, fault));
                }
                task.finished = true;
                task.status(now, fault);
            }
            if task.waiting {
                return Answer::error(ErrorObject::new(
                    codes::INTERNAL_ERROR,
                    "the task waits for input the client has not given",
                ));
            }
            if task.shown == "cancelled" {
                return Answer::error(ErrorObject::new(
                    codes::INTERNAL_ERROR,
                    "the task was cancelled before its call finished",
                ));
            }
            let mut answer = match &task.outcome {
                Ok(result) => {
                    let mut result = result.clone();
                    if fault == Some(Fault::TaskResultAltered) {
                        result = json!({"content": [{"type": "text", "text": "task finished"}]});
                    }
                    if fault != Some(Fault::TaskResultNoRelatedTask) {
                        result = with_related(result, &task.id);
                    }
                    Answer::result(result)
                }
                Err(_) if fault == Some(Fault::TaskResultErrorRecoded) => Answer::error(
                    ErrorObject::new(codes::INTERNAL_ERROR, "the task's call failed"),
                ),
                Err(e) => Answer::error(e.clone()),
            };
            answer.notifications.splice(0..0, notes);
            answer
        })
    }

    /// `tasks/cancel`: a working task becomes `cancelled` before the
    /// answer; a terminal one is refused with -32602. The status change is
    /// also announced with `notifications/tasks/status`.
    pub fn cancel(&self, params: Option<&Value>, fault: Option<Fault>) -> Answer {
        self.with_task(params, fault, |task, now| {
            let status = task.status(now, fault);
            if status != "working" && fault != Some(Fault::TaskCancelTerminalAccepted) {
                return invalid(format!(
                    "Invalid params: task {} is already {status} and cannot be cancelled",
                    task.id
                ));
            }
            let mut before = task.json(now, fault);
            if status == "working" {
                task.cancelled = true;
            }
            let after = task.json(now, fault);
            let mut note = json!({"jsonrpc": "2.0", "method": "notifications/tasks/status",
                "params": after.clone()});
            if fault == Some(Fault::TaskStatusRelatedTask) {
                note["params"]["_meta"] = json!({RELATED_TASK: {"taskId": task.id}});
            }
            let mut answer = if fault == Some(Fault::TaskCancelReportsWorking) {
                before["status"] = "working".into();
                Answer::result(before)
            } else {
                Answer::result(after)
            };
            answer.notifications.push(note);
            answer
        })
    }

    /// `tasks/list`: every task, [`PAGE`] a page, oldest first, with an
    /// opaque cursor to the next page.
    pub fn list(&self, params: Option<&Value>, fault: Option<Fault>) -> Answer {
        let Ok(mut s) = self.store.lock() else {
            return Answer::error(ErrorObject::new(codes::INTERNAL_ERROR, "task store lost"));
        };
        let cursor = params
            .and_then(|p| p.get("cursor"))
            .filter(|c| !c.is_null());
        let start = match cursor {
            None => 0,
            Some(c) => match c.as_str().and_then(parse_cursor) {
                Some(n) if n <= s.tasks.len() => n,
                _ if fault == Some(Fault::TaskCursorIgnored) => 0,
                _ => return invalid("Invalid params: unknown cursor"),
            },
        };
        let now = s.now;
        // Under task-list-incomplete the newest task is on no page.
        let listed = if fault == Some(Fault::TaskListIncomplete) {
            s.tasks.len().saturating_sub(1)
        } else {
            s.tasks.len()
        };
        let end = (start + PAGE).min(listed);
        let tasks: Vec<Value> = s.tasks[start.min(end)..end]
            .iter_mut()
            .map(|t| ops_result(t.json(now, fault), &t.id, fault))
            .collect();
        let mut result = json!({"tasks": tasks});
        if end < listed && fault != Some(Fault::TaskListNoCursor) {
            result["nextCursor"] = format!("tasks:{end:x}").into();
        }
        Answer::result(result)
    }

    fn with_task(
        &self,
        params: Option<&Value>,
        fault: Option<Fault>,
        f: impl FnOnce(&mut Task, u64) -> Answer,
    ) -> Answer {
        let id = match named(params, fault) {
            Ok(id) => id,
            Err(e) => return Answer::error(e),
        };
        let Ok(mut s) = self.store.lock() else {
            return Answer::error(ErrorObject::new(codes::INTERNAL_ERROR, "task store lost"));
        };
        let now = s.now;
        match s.find(&id) {
            Some(task) => {
                let mut answer = f(task, now);
                if let Some(Ok(r)) = &mut answer.reply {
                    if r.get("taskId").is_some() {
                        *r = ops_result(r.take(), &id, fault);
                    }
                }
                answer
            }
            None if fault == Some(Fault::TaskUnknownInternal) => Answer::error(ErrorObject::new(
                codes::INTERNAL_ERROR,
                format!("no task {id}"),
            )),
            None => invalid(format!("Invalid params: unknown task {id}")),
        }
    }
}

/// A `tasks/get`, `tasks/list` or `tasks/cancel` result: without the
/// related-task `_meta` (SHOULD NOT), unless task-ops-carry-related-task.
fn ops_result(result: Value, id: &Value, fault: Option<Fault>) -> Value {
    if fault == Some(Fault::TaskOpsCarryRelatedTask) {
        with_related(result, id)
    } else {
        result
    }
}

fn parse_cursor(c: &str) -> Option<usize> {
    usize::from_str_radix(c.strip_prefix("tasks:")?, 16).ok()
}

/// The `task` param of a `tools/call`: `Some` when the call asks to run as a
/// task (an object), `Err` when the field is there but not an object.
pub fn requested(params: Option<&Value>) -> Result<Option<&Map<String, Value>>, ErrorObject> {
    match params.and_then(|p| p.get("task")) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(t)) => Ok(Some(t)),
        Some(_) => Err(ErrorObject::new(
            codes::INVALID_PARAMS,
            "Invalid params: \"task\" must be an object",
        )),
    }
}

#[cfg(test)]
mod tests;
