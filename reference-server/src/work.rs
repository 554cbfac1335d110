//! Paced work: the reply of a slow tool held back while it works, step by
//! step, with a `notifications/progress` after each step when the call
//! carried a `progressToken`, and dropped unanswered when the call is
//! cancelled (basic/utilities/progress, basic/utilities/cancellation).
//!
//! Time is passed in, never read here: the stdio edge gives the wall clock,
//! the in-process transport a clock of its own, and tests any instant they
//! like. An edge that cannot pace (one HTTP reply body) takes a job's
//! messages all at once with [`at_once`].

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::faults::Fault;

/// How long one step of work takes.
pub const STEP: Duration = Duration::from_millis(10);

/// One held-back reply.
#[derive(Debug, Clone)]
struct Job {
    /// The request's id, as the response carries it.
    id: Value,
    token: Option<Value>,
    done: u32,
    steps: u32,
    next_at: Instant,
    response: Value,
}

/// The jobs of one connection that are still working.
#[derive(Debug, Default, Clone)]
pub struct Work {
    jobs: Vec<Job>,
}

/// The `notifications/progress` for step `done` of `steps`, as `fault` has it.
fn progress(token: &Value, done: u32, steps: u32, fault: Option<Fault>) -> Value {
    // Under progress-decreasing the count runs down instead of up.
    let value = if fault == Some(Fault::ProgressDecreasing) {
        steps + 1 - done
    } else {
        done
    };
    json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {
        "progressToken": token, "progress": value, "total": steps,
        "message": format!("step {done} of {steps}")}})
}

/// What follows a job's response: nothing, or under progress-after-response
/// one more progress notification for a token whose request is answered.
fn after_response(token: Option<&Value>, steps: u32, fault: Option<Fault>) -> Option<Value> {
    let token = token.filter(|_| fault == Some(Fault::ProgressAfterResponse))?;
    Some(progress(token, steps + 1, steps + 1, None))
}

impl Work {
    /// Holds `response` back for `steps` steps from `now`, reporting progress
    /// on `token` if there is one.
    pub fn start(&mut self, response: Value, token: Option<Value>, steps: u32, now: Instant) {
        let id = response.get("id").cloned().unwrap_or(Value::Null);
        self.jobs.push(Job {
            id,
            token,
            done: 0,
            steps,
            next_at: now + STEP,
            response,
        });
    }

    /// Drops the job of request `id`, so that it is never answered; false
    /// when no job of that id is working (or the fault ignores cancellations).
    pub fn cancel(&mut self, id: &Value, fault: Option<Fault>) -> bool {
        if fault == Some(Fault::CancelIgnored) {
            return false;
        }
        let before = self.jobs.len();
        self.jobs.retain(|j| &j.id != id);
        self.jobs.len() != before
    }

    /// When the next step ends, if any job is working.
    pub fn next_due(&self) -> Option<Instant> {
        self.jobs.iter().map(|j| j.next_at).min()
    }

    /// The messages due by `now`, in order: each finished step's progress
    /// notification and each finished job's response.
    pub fn due(&mut self, now: Instant, fault: Option<Fault>) -> Vec<Value> {
        let mut out = Vec::new();
        while let Some(i) = (0..self.jobs.len())
            .filter(|&i| self.jobs[i].next_at <= now)
            .min_by_key(|&i| self.jobs[i].next_at)
        {
            let job = &mut self.jobs[i];
            job.done += 1;
            job.next_at += STEP;
            if let Some(token) = &job.token {
                out.push(progress(token, job.done, job.steps, fault));
            }
            if job.done >= job.steps {
                let job = self.jobs.remove(i);
                out.push(job.response);
                out.extend(after_response(job.token.as_ref(), job.steps, fault));
            }
        }
        out
    }
}

/// A job's messages all at once, in the order [`Work::due`] would give them
/// over time: for an edge whose reply is one body.
pub fn at_once(
    response: Value,
    token: Option<&Value>,
    steps: u32,
    fault: Option<Fault>,
) -> Vec<Value> {
    let mut out: Vec<Value> = token
        .map(|t| {
            (1..=steps)
                .map(|done| progress(t, done, steps, fault))
                .collect()
        })
        .unwrap_or_default();
    out.push(response);
    out.extend(after_response(token, steps, fault));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn response(id: u32) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "result": {"content": []}})
    }

    #[test]
    fn a_job_reports_each_step_then_answers() {
        let t0 = Instant::now();
        let mut work = Work::default();
        work.start(response(1), Some(json!("tok")), 3, t0);
        assert!(work.due(t0, None).is_empty());
        let first = work.due(t0 + STEP, None);
        assert_eq!(first.len(), 1);
        assert_eq!(first[0]["params"]["progress"], 1);
        let rest = work.due(t0 + STEP * 10, None);
        let progress: Vec<_> = rest
            .iter()
            .filter_map(|m| m.pointer("/params/progress"))
            .collect();
        assert_eq!(progress, [&json!(2), &json!(3)]);
        assert_eq!(rest.last().unwrap()["id"], 1);
        assert_eq!(work.next_due(), None);
    }

    #[test]
    fn without_a_token_only_the_response_comes() {
        let t0 = Instant::now();
        let mut work = Work::default();
        work.start(response(2), None, 2, t0);
        assert_eq!(work.due(t0 + STEP * 2, None), vec![response(2)]);
    }

    #[test]
    fn a_cancelled_job_is_never_answered_unless_the_fault_ignores_it() {
        let t0 = Instant::now();
        let mut work = Work::default();
        work.start(response(3), None, 2, t0);
        assert!(!work.cancel(&json!(4), None), "an unknown id is ignored");
        assert!(work.cancel(&json!(3), None));
        assert!(work.due(t0 + STEP * 5, None).is_empty());
        work.start(response(3), None, 2, t0);
        assert!(!work.cancel(&json!(3), Some(Fault::CancelIgnored)));
        assert_eq!(work.due(t0 + STEP * 5, None), vec![response(3)]);
    }

    #[test]
    fn the_progress_faults_break_the_order_and_the_end() {
        let down = at_once(
            response(5),
            Some(&json!(7)),
            3,
            Some(Fault::ProgressDecreasing),
        );
        let values: Vec<_> = down
            .iter()
            .filter_map(|m| m.pointer("/params/progress"))
            .collect();
        assert_eq!(values, [&json!(3), &json!(2), &json!(1)]);
        let late = at_once(
            response(5),
            Some(&json!(7)),
            1,
            Some(Fault::ProgressAfterResponse),
        );
        assert_eq!(late.len(), 3);
        assert_eq!(late[1]["id"], 5);
        assert_eq!(late[2]["method"], "notifications/progress");
    }
}
