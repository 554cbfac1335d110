//! The task store's tests: a task works its steps off, completes, is
//! cancelled for good, is listed page by page, and waits for its input.

use super::*;

fn call(steps: u32) -> Answer {
    Answer::result(json!({"content": [{"type": "text", "text": "done"}]})).after_steps(steps)
}

fn id_of(a: &Answer) -> Value {
    a.reply.as_ref().unwrap().as_ref().unwrap()["task"]["taskId"].clone()
}

fn status(tasks: &Tasks, id: &Value) -> String {
    let a = tasks.get(Some(&json!({"taskId": id})), None);
    a.reply.unwrap().unwrap()["status"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn a_task_works_for_its_steps_counted_in_requests_then_completes() {
    let tasks = Tasks::default();
    let created = tasks.create(call(2), None, None);
    let id = id_of(&created);
    assert_eq!(created.reply.unwrap().unwrap()["task"]["status"], "working");
    tasks.tick();
    assert_eq!(status(&tasks, &id), "working");
    tasks.tick();
    assert_eq!(status(&tasks, &id), "completed");
}

#[test]
fn result_finishes_the_work_and_carries_the_related_task() {
    let tasks = Tasks::default();
    let id = id_of(&tasks.create(call(50), None, None));
    let r = tasks.result(Some(&json!({"taskId": id})), None);
    let r = r.reply.unwrap().unwrap();
    assert_eq!(r["_meta"][RELATED_TASK]["taskId"], id);
    assert_eq!(r["content"][0]["text"], "done");
    assert_eq!(status(&tasks, &id), "completed");
}

#[test]
fn cancel_is_sticky_and_a_terminal_task_is_not_cancelled_again() {
    let tasks = Tasks::default();
    let id = id_of(&tasks.create(call(1), None, None));
    let c = tasks.cancel(Some(&json!({"taskId": id})), None);
    assert_eq!(c.reply.unwrap().unwrap()["status"], "cancelled");
    assert_eq!(c.notifications.len(), 1);
    (0..5).for_each(|_| tasks.tick());
    assert_eq!(status(&tasks, &id), "cancelled");
    let again = tasks.cancel(Some(&json!({"taskId": id})), None);
    assert_eq!(again.reply.unwrap().unwrap_err().code, -32602);
}

#[test]
fn list_pages_with_an_opaque_cursor_and_refuses_a_made_up_one() {
    let tasks = Tasks::default();
    let ids: Vec<Value> = (0..3)
        .map(|_| id_of(&tasks.create(call(1), None, None)))
        .collect();
    let first = tasks.list(None, None).reply.unwrap().unwrap();
    assert_eq!(first["tasks"].as_array().unwrap().len(), PAGE);
    let next = first["nextCursor"].clone();
    let second = tasks.list(Some(&json!({"cursor": next})), None);
    let second = second.reply.unwrap().unwrap();
    assert_eq!(second["tasks"][0]["taskId"], ids[2]);
    assert!(second.get("nextCursor").is_none());
    let bad = tasks.list(Some(&json!({"cursor": "nope"})), None);
    assert_eq!(bad.reply.unwrap().unwrap_err().code, -32602);
}

#[test]
fn timestamps_are_rfc_3339_in_utc() {
    let t = timestamp();
    assert_eq!(t.len(), 24, "{t}");
    assert!(t.ends_with('Z') && t.as_bytes()[10] == b'T', "{t}");
    assert!(t.starts_with("20"), "{t}");
}

#[test]
fn a_task_that_asked_for_progress_reports_it_under_its_token_until_terminal() {
    let tasks = Tasks::default();
    let id = id_of(&tasks.create(call(3), None, Some(json!("p"))));
    let result = tasks.result(Some(&json!({"taskId": id})), None);
    let tokens: Vec<&Value> = result
        .notifications
        .iter()
        .map(|n| &n["params"]["progressToken"])
        .collect();
    assert_eq!(tokens, [&json!("p"), &json!("p"), &json!("p")]);
    assert_eq!(result.notifications[2]["params"]["progress"], json!(3));
    let after = tasks.get(Some(&json!({"taskId": id})), None);
    assert!(after.notifications.is_empty(), "none once completed");
}

#[test]
fn a_task_waiting_for_input_begins_working_then_waits_until_resolved() {
    let tasks = Tasks::default();
    let (created, id) = tasks.create_waiting(None, None);
    assert_eq!(id_of(&created), id);
    assert_eq!(created.reply.unwrap().unwrap()["task"]["status"], "working");
    assert_eq!(status(&tasks, &id), "input_required");
    tasks.resolve(&id, json!({"content": [], "isError": false}), None);
    assert_eq!(status(&tasks, &id), "completed");
}
