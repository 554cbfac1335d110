//! The evidence the executor gathers around a case's exchange, for the
//! named checks: `limited_calls` counts, a protected server's metadata, a
//! request left in flight and what came after its cancellation, a task
//! looked for in `tasks/list`.

use mcperr_cases::plan::{CasePlan, Outgoing, Step};
use mcperr_core::report::CaseResult;
use mcperr_model::Verdict;
use mcperr_wire::exchange::Exchange;
use serde_json::Value;

use std::time::{Duration, Instant};

use crate::client::{Client, Conn, WatchEnds};

use super::send::id_for;

pub(super) fn count_of(ex: &Exchange) -> Option<Value> {
    let r = ex.response()?.get("result")?;
    if let Some(c) = r.pointer("/structuredContent/count") {
        return Some(c.clone());
    }
    let text = r.pointer("/content/0/text")?.as_str()?;
    Some(
        text.trim()
            .parse::<i64>()
            .map(Value::from)
            .unwrap_or_else(|_| Value::String(text.to_string())),
    )
}

pub(super) async fn limited_calls(client: &mut Client) -> Option<Value> {
    let params = Some(mcperr_cases::bookshop::count_params());
    let ex = client.request("tools/call", params, true).await;
    count_of(&ex)
}

/// Looks for a protected server's metadata as a client must (A1): the URL
/// the refusal's challenge names, then RFC 9728's well-known URIs; the first
/// that serves a JSON object ends the search. `None` over stdio.
pub(super) async fn resource_metadata(
    client: &Client,
    refused: &Exchange,
) -> Option<mcperr_oracle::auth::MetadataProbe> {
    use mcperr_oracle::auth;
    let Conn::Http(http) = &client.conn else {
        return None;
    };
    let named = refused
        .http
        .as_ref()
        .and_then(|a| a.header("www-authenticate"))
        .and_then(|h| {
            let (_, params) = auth::challenge(h);
            params
                .into_iter()
                .find(|(k, _)| k == "resource_metadata")
                .map(|(_, v)| v)
        });
    let mut probe = auth::MetadataProbe {
        named: named.clone(),
        ..Default::default()
    };
    for url in auth::metadata_urls(&http.target.url, named.as_deref()) {
        let got = http.get_url(&url).await.ok();
        probe.tried.push((url.clone(), got.as_ref().map(|g| g.0)));
        let doc = got
            .filter(|(status, _)| *status == 200)
            .and_then(|(_, body)| serde_json::from_str::<Value>(&body).ok())
            .filter(Value::is_object);
        if let Some(doc) = doc {
            probe.found = Some((url, doc));
            break;
        }
    }
    Some(probe)
}

/// How long an in-flight step waits for the first sign of work (a progress
/// notification) before the next step goes anyway.
pub(super) const IN_FLIGHT_FIRST: std::time::Duration = std::time::Duration::from_millis(500);

/// The longest watch of a request in flight after the steps (counted from
/// the server's answer to the probe that follows them): longer than the
/// Bookshop's `slow` works at most (50 steps of 10 ms). It is the watch of
/// a call whose pace the parts probe did not measure (a player the user
/// named); a measured call, or a subscription, is watched for less
/// ([`watch_until`]).
pub(super) const IN_FLIGHT_WATCH: Duration = Duration::from_millis(1000);

/// The least time anything is watched for after the probe's answer: a
/// concurrent server may write what it decided while reading the lines
/// before the probe just after the probe's answer.
const AFTER_PROBE: Duration = Duration::from_millis(200);

/// A request a case left in flight.
pub(super) struct InFlight {
    /// Its id.
    id: Value,
    /// The progress token it carries, if any.
    token: Option<Value>,
    /// When it was sent.
    sent: Instant,
    /// It is a `subscriptions/listen` (a stream, not a call that works).
    subscription: bool,
    /// The request as sent, shown when its case is skipped.
    request: Value,
}

impl InFlight {
    /// Its id.
    pub(super) fn id(&self) -> &Value {
        &self.id
    }
}

/// Sends an in-flight step; the request left in flight, or the skip result
/// when it was answered before the next step could go.
pub(super) async fn start_in_flight(
    client: &mut Client,
    plan: &CasePlan,
    o: &Outgoing,
) -> Result<InFlight, CaseResult> {
    let id = id_for(client, &o.id).unwrap_or_else(|| client.fresh_id());
    let msg = o.finish(client.era, Some(&id));
    let sent = Instant::now();
    match client.send_in_flight(&msg, IN_FLIGHT_FIRST).await {
        Ok(()) => Ok(InFlight {
            id: id.to_value(),
            token: msg.token,
            sent,
            subscription: o.method == "subscriptions/listen",
            request: msg.body,
        }),
        Err(answer) => {
            let why = "the next step could be sent, so nothing was left in flight";
            Err(raced(plan, Some(msg.body), answer, why))
        }
    }
}

/// How every skip of a case whose request left in flight was answered too
/// soon begins ([`raced`]): the executor tries such a case again.
pub(super) const RACED: &str = "not judged: the in-flight request was answered before ";

/// The skip of a case whose request left in flight was answered before
/// `why`: the race between the server's work and the client's next step
/// was lost, and nothing the case is about was seen (its next try may win
/// it: a loaded machine delays the client's step, not the server's work).
fn raced(plan: &CasePlan, request: Option<Value>, answer: Value, why: &str) -> CaseResult {
    let j = mcperr_oracle::Judgement::new(Verdict::Skip, plan.case.rule, format!("{RACED}{why}"));
    CaseResult::planned(plan, &plan.citation, j, request, Some(answer), 0)
}

/// Whether `result` is the skip of a lost race ([`raced`]).
pub(super) fn lost_race(result: &CaseResult) -> bool {
    result.verdict == Verdict::Skip && result.message.starts_with(RACED)
}

/// Watches the request left in flight after the steps. When a step
/// cancelled it, what came about it after the server had shown that it read
/// the cancellation (U7); otherwise nothing: it was only in flight.
///
/// The watch lasts as long as the server's own pace makes necessary: it
/// ends when the request's answer has come (and, for a subscription the
/// server ends, its `notifications/cancelled`): nothing more can be
/// learnt; otherwise at [`watch_until`].
///
/// Stdio's "MUST NOT send any further messages for it" counts from the
/// server's receipt of the cancellation, and the spec's Timing
/// Considerations (basic/patterns/cancellation) let messages cross it. The
/// client cannot see the receipt, only a bound: the answer to a probe sent
/// after the cancellation proves the server read it. What arrives before
/// that answer is excused, and so is the first progress notification after
/// it: a worker may have had it in hand when the server read the
/// cancellation (a concurrent server writes it through the same queue as
/// the probe's answer). A response, or any second progress notification,
/// is judged. A server that ignores the cancellation answers within three
/// times the call's uncancelled duration and is seen; an excuse counted
/// only from the cancellation's send, as before, failed rmcp under load.
///
/// A response that came before the probe's answer means the call ended
/// before the server read its cancellation: nothing U7 is about was seen,
/// and the case is the skip of a lost race (`Err`), which the executor
/// tries again.
pub(super) async fn watch_cancelled(
    client: &mut Client,
    plan: &CasePlan,
    in_flight: &InFlight,
) -> Result<Vec<Value>, CaseResult> {
    let (id, token) = (&in_flight.id, in_flight.token.as_ref());
    // The probe after the steps: its answer proves the server read them.
    let asked = Instant::now();
    let barrier = client.read_barrier(id, token).await;
    let answered_at = Instant::now();
    let until = match barrier {
        Ok(_) => watch_until(in_flight, plan.parts_took, asked, answered_at),
        Err(_) => answered_at + IN_FLIGHT_WATCH,
    };
    let barrier_answered = barrier.is_ok();
    let (Ok(mut about) | Err(mut about)) = barrier;
    if !cancelled_by_case(plan, id) {
        // Left open: a subscription's notifications are the judged case's
        // (U9 reads them in order); its answer, which a server that ends a
        // subscription sends, is kept for the teardown's judgement; the
        // progress of a call left in flight is its own business, as before.
        let early = client.late_answer(id);
        let ends = WatchEnds {
            answered: early.is_some() || about.iter().any(is_answer),
            and_cancelled: in_flight.subscription,
        };
        about.extend(client.watch_in_flight(id, token, until, ends).await);
        for m in about {
            if is_answer(&m) {
                client.note_late_answer(id, m);
            } else if mcperr_wire::exchange::subscription_id(&m).is_some() {
                client.requeue(
                    mcperr_wire::exchange::Stray::of_server_message(&m)
                        .into_iter()
                        .collect(),
                );
            }
        }
        if let Some(answer) = early {
            client.note_late_answer(id, answer);
        }
        return Ok(vec![]);
    }
    // Answered, the probe excuses what crossed it; unanswered, it proves
    // nothing: what came during it is judged with the watch then, its first
    // progress notification excused as above.
    if barrier_answered {
        if let Some(answer) = about.iter().find(|m| is_answer(m)).cloned() {
            let why = "the server had shown it read the cancellation (its answer to a probe sent after it), so the cancellation came too late to judge";
            return Err(raced(plan, Some(in_flight.request.clone()), answer, why));
        }
        about.clear();
    }
    let ends = WatchEnds {
        answered: about.iter().any(is_answer),
        and_cancelled: false,
    };
    about.extend(client.watch_in_flight(id, token, until, ends).await);
    if about.first().is_some_and(|m| !is_answer(m)) {
        about.remove(0);
    }
    Ok(about)
}

/// Whether `m` is a response (to the request in flight), not a notification.
fn is_answer(m: &Value) -> bool {
    m.get("method").is_none()
}

/// Until when a request in flight is watched after the probe that follows
/// the steps (`asked`, answered at `answered`): a subscription only as long
/// as [`AFTER_PROBE`] (or four of the probe's round trips, if longer): the
/// server has read every step by then, and what they make it write it
/// writes as it reads them. A call the parts probe timed (`took`) until
/// three times its uncancelled duration has passed since it was sent (a
/// server that ignores the cancellation answers by then), at least that
/// long after the probe. Never longer than [`IN_FLIGHT_WATCH`] after the
/// probe's answer, which is also the watch of a call not timed.
fn watch_until(
    in_flight: &InFlight,
    took: Option<Duration>,
    asked: Instant,
    answered: Instant,
) -> Instant {
    let after_probe = answered + AFTER_PROBE.max((answered - asked) * 4);
    let longest = answered + IN_FLIGHT_WATCH;
    let paced = if in_flight.subscription {
        after_probe
    } else if let Some(took) = took {
        (in_flight.sent + took * 3).max(after_probe)
    } else {
        longest
    };
    paced.min(longest)
}

/// Most `tasks/list` pages followed for `task-listed`.
pub(super) const MOST_TASK_PAGES: usize = 100;

/// `task-listed`'s evidence: `task`, the ids on the judged `tasks/list`
/// page and every page its `nextCursor` leads to, and why the walk
/// stopped before a page without one, if it did.
pub(super) async fn task_listing(
    client: &mut Client,
    ex: &Exchange,
    task: Value,
) -> (Value, Vec<Value>, Option<String>) {
    let mut ids = Vec::new();
    let mut page = ex.response().and_then(|r| r.get("result")).cloned();
    for _ in 0..MOST_TASK_PAGES {
        let Some(result) = page.take() else {
            return (task, ids, Some("a page was no tasks/list result".into()));
        };
        ids.extend(
            result
                .get("tasks")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|t| t.get("taskId").cloned()),
        );
        let Some(cursor) = result.get("nextCursor").filter(|c| !c.is_null()) else {
            return (task, ids, None);
        };
        let next = client
            .request(
                "tasks/list",
                Some(serde_json::json!({"cursor": cursor})),
                true,
            )
            .await;
        page = next.response().and_then(|r| r.get("result")).cloned();
    }
    let why = format!("more than {MOST_TASK_PAGES} pages");
    (task, ids, Some(why))
}

/// Whether a step of the case cancels in-flight request `id`.
pub(super) fn cancelled_by_case(plan: &CasePlan, id: &Value) -> bool {
    plan.steps.iter().any(|s| {
        matches!(s, Step::Send(o) if o.method == "notifications/cancelled"
            && o.params.as_ref().and_then(|p| p.get("requestId")) == Some(id))
    })
}
