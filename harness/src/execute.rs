//! The executor: sends what a [`CasePlan`] says, collects the exchange and
//! the evidence around it (counts, the server's log, liveness), and hands
//! them to the oracle. It builds nothing and decides nothing itself.

use mcperr_core::exchange::{Ending, Exchange};
use mcperr_core::oracle::{self, Evidence};
use mcperr_core::plan::{CasePlan, IdChoice, Outgoing, SessionMode, Step, BOGUS_SESSION};
use mcperr_core::report::CaseResult;
use mcperr_core::rules::AspectId;
use mcperr_core::Verdict;
use mcperr_protocol::Id;
use serde_json::Value;

use crate::client::{legacy_handshake, Client, Conn};

fn count_of(ex: &Exchange) -> Option<Value> {
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

async fn limited_calls(client: &mut Client) -> Option<Value> {
    let params = Some(mcperr_core::bookshop::count_params());
    let ex = client.request("tools/call", params, true).await;
    count_of(&ex)
}

fn id_for(client: &mut Client, choice: &IdChoice) -> Option<Id> {
    match choice {
        IdChoice::Fresh => Some(client.fresh_id()),
        IdChoice::Given(id) => Some(id.clone()),
        IdChoice::Notification => None,
    }
}

/// Sends one unjudged step: the answer of a step request, `Err` when it got none.
async fn step(client: &mut Client, step: &Step) -> Result<Option<Exchange>, Exchange> {
    match step {
        Step::Raw(raw) => client.send_raw(raw).await,
        Step::Send(o) if o.id == IdChoice::Notification => {
            client.notify(&o.method, o.params.clone()).await
        }
        // Sent by the caller, which keeps what it needs to watch it.
        Step::InFlight(_) => {}
        Step::Send(o) => {
            let ex = client.request(&o.method, o.params.clone(), false).await;
            return match ex.response() {
                Some(_) => Ok(Some(ex)),
                None => Err(ex),
            };
        }
    }
    Ok(None)
}

/// The values step `index`'s `answer` gives the later ones (`capture`), or
/// why the case cannot go on without them: `Err(true)` skips the case (an
/// optional value is absent), `Err(false)` fails it.
fn capture(
    plan: &CasePlan,
    index: usize,
    answer: Option<&Value>,
    vars: &mut Vec<(String, Value)>,
) -> Result<(), (bool, String)> {
    let Some((_, wanted)) = plan.captures.iter().find(|(i, _)| *i == index) else {
        return Ok(());
    };
    let answer = answer.unwrap_or(&Value::Null);
    for (name, spec) in wanted {
        let (skip, why) = match mcperr_core::capture::take(answer, spec) {
            Ok(v) => {
                vars.push((name.clone(), v));
                continue;
            }
            Err(mcperr_core::capture::Missing::Optional(why)) => (true, why),
            Err(mcperr_core::capture::Missing::Required(why)) => (false, why),
        };
        let step = format!("step {} ({})", index + 1, answer["id"]);
        return Err(if skip {
            (
                true,
                format!(
                    "not judged: {step} {why}: the server took a path this case does not follow: {}",
                    clip(&answer.to_string())
                ),
            )
        } else {
            (
                false,
                format!(
                    "{step} {why}, which the case goes on with: {}",
                    clip(&answer.to_string())
                ),
            )
        });
    }
    Ok(())
}

fn no_sessions() -> Ending {
    Ending::NotApplicable(
        "the server minted no Mcp-Session-Id: it runs without sessions, which 2025-11-25 allows"
            .into(),
    )
}

/// A session id that the server minted and then ended with DELETE, or why
/// there is none to test with.
async fn deleted_session(client: &Client) -> Result<String, Ending> {
    let Conn::Http(http) = &client.conn else {
        return Err(Ending::NotApplicable("not an HTTP client".into()));
    };
    let mut fresh = Client::new(Conn::Http(http.fresh()), client.era, client.timeout);
    if legacy_handshake(&mut fresh).await.is_err() {
        return Err(Ending::SetupFailed(
            "a second initialize, to get a session to delete, failed".into(),
        ));
    }
    let Conn::Http(h) = &fresh.conn else {
        unreachable!("built as HTTP")
    };
    let Some(id) = h.session.clone() else {
        return Err(no_sessions());
    };
    match h.close().await {
        Some(s) if (200..300).contains(&s) => Ok(id),
        Some(405) => Err(Ending::NotApplicable(
            "the server does not let clients end sessions (DELETE 405), which the spec allows"
                .into(),
        )),
        Some(s) => Err(Ending::SetupFailed(format!(
            "DELETE of a fresh session was answered {s}"
        ))),
        None => Err(Ending::SetupFailed(
            "DELETE of a fresh session failed".into(),
        )),
    }
}

/// Sends the judged request of an `[http]` case as its shape says.
async fn shaped_exchange(client: &mut Client, plan: &CasePlan) -> Exchange {
    let shape = plan.http.as_ref().expect("an [http] plan");
    let id = id_for(client, &plan.request.id);
    let msg = plan.request.message(id.as_ref());
    let mut overrides = shape.overrides.clone();
    let has_session = matches!(&client.conn, Conn::Http(h) if h.session.is_some());
    if shape.session != SessionMode::Current && !has_session {
        return Exchange::unsent(msg, no_sessions());
    }
    match shape.session {
        SessionMode::Without => overrides.push(("Mcp-Session-Id".into(), None)),
        SessionMode::Bogus => overrides.push(("Mcp-Session-Id".into(), Some(BOGUS_SESSION.into()))),
        SessionMode::Deleted => match deleted_session(client).await {
            Ok(id) => overrides.push(("Mcp-Session-Id".into(), Some(id))),
            Err(ending) => return Exchange::unsent(msg, ending),
        },
        SessionMode::Current => {}
    }
    let (request, body) = match (&shape.raw_body, shape.method.as_str()) {
        (_, "GET" | "DELETE") => (Value::Null, None),
        (Some(raw), _) => (Value::String(raw.clone()), Some(raw.clone().into_bytes())),
        (None, _) => (msg.clone(), Some(msg.to_string().into_bytes())),
    };
    let Conn::Http(http) = &client.conn else {
        unreachable!("HTTP plans run on HTTP clients")
    };
    let headers = http.headers_for(client.era, &msg);
    let id = if shape.raw_body.is_some() { None } else { id };
    client
        .http_exchange(id, request, &shape.method, headers, &overrides, body)
        .await
}

/// `get-stream-quiet`: the case's GET, and while its stream is listened to,
/// a `ping` POSTed in the same session on a connection of its own; the
/// ping's answer (its messages) for the check.
async fn get_with_side_post(
    client: &mut Client,
    plan: &CasePlan,
) -> (Exchange, Result<Vec<Value>, String>) {
    let Conn::Http(http) = &client.conn else {
        unreachable!("HTTP plans run on HTTP clients")
    };
    let mut side = http.fresh();
    side.session = http.session.clone();
    let ping_id = client.fresh_id();
    let ping = mcperr_protocol::jsonrpc::request(&ping_id, "ping", None);
    let headers = side.headers_for(client.era, &ping);
    let post = async move {
        // After the GET is on its way: the stream is open when the ping lands.
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        let body = ping.to_string().into_bytes();
        let want = ping_id.to_value();
        match side
            .send("POST", headers, &Vec::new(), Some(&want), Some(body))
            .await
        {
            Ok(answer) => Ok(answer.messages),
            Err(e) => Err(e.to_string()),
        }
    };
    tokio::join!(shaped_exchange(client, plan), post)
}

/// `resumed-own-stream`: the judged GET resumes the first request step's
/// SSE stream from its first event id (`Last-Event-ID`); the second step's
/// stream is the one it must not replay. A server that answered with JSON,
/// put no id on its events (resumability is a MAY), or opened no stream for
/// the GET has nothing to judge: the case does not apply.
async fn resumed_get(
    client: &mut Client,
    plan: &CasePlan,
    streams: &[Exchange],
) -> (Exchange, Option<mcperr_core::oracle::checks::Resumption>) {
    let not_applicable = |why: String| {
        let ex = Exchange::unsent(Value::Null, Ending::NotApplicable(why));
        (ex, None)
    };
    let sse = |i: usize| {
        streams
            .get(i)
            .and_then(|s| s.http.as_ref())
            .filter(|a| a.sse)
    };
    let (Some(first), Some(second)) = (sse(0), sse(1)) else {
        return not_applicable(
            "the server answered the case's requests without SSE streams, so there is no stream to resume".into(),
        );
    };
    let Some(last) = first.event_ids.first().cloned() else {
        return not_applicable(
            "the server's SSE events carry no id, so no stream can be resumed (resumability is a MAY)".into(),
        );
    };
    let mut shaped = plan.clone();
    if let Some(http) = shaped.http.as_mut() {
        http.overrides
            .push(("Last-Event-ID".into(), Some(last.clone())));
    }
    let mut ex = shaped_exchange(client, &shaped).await;
    // What the first stream carried, replayed, is redelivered, not new: no
    // stray (its progress after its response, say).
    ex.strays
        .retain(|s| !s.message().is_some_and(|m| first.messages.contains(m)));
    if let Some(answer) = ex.http.as_ref().filter(|a| !a.sse) {
        let why = format!(
            "the GET with Last-Event-ID {last:?} resumed no stream (HTTP {})",
            answer.status
        );
        ex.ending = Ending::NotApplicable(why);
    }
    let resumption = mcperr_core::oracle::checks::Resumption {
        last_event_id: last,
        other_id: streams[1].request.get("id").cloned().unwrap_or(Value::Null),
        other: second.messages.clone(),
    };
    (ex, Some(resumption))
}

async fn plain_exchange(client: &mut Client, request: &Outgoing) -> Exchange {
    let id = id_for(client, &request.id).unwrap_or_else(|| client.fresh_id());
    let msg = request.message(Some(&id));
    client.exchange(id, msg).await
}

/// Runs one planned case on a live client. The second value is false when
/// the server stopped answering (the caller restarts it).
///
/// A generated valid call with further argument sets to try is sent again
/// with the next set while the tool refuses (an error or an `isError`
/// result that is otherwise well-formed): only an accepted call can pass,
/// and a call none of whose sets is accepted is a skip that says so. Any
/// refusal that breaks a rule (a leak in its text, a wrong shape) is the
/// verdict at once.
pub async fn execute(client: &mut Client, plan: &CasePlan) -> (CaseResult, bool) {
    if let Some(rebase) = &plan.case.rebase {
        return rebased(client, plan, rebase).await;
    }
    let Some(tries) = &plan.case.arguments_to_try else {
        return execute_once(client, plan).await;
    };
    let mut attempt = plan.clone();
    let mut refusals = Vec::new();
    for next in tries.iter().map(Some).chain([None]) {
        let (result, alive) = execute_once(client, &attempt).await;
        let refused = result
            .response
            .as_ref()
            .is_some_and(mcperr_core::expect::refusal);
        if !alive || result.verdict != Verdict::Pass || !refused {
            return (result, alive);
        }
        refusals.push(short_answer(result.response.as_ref()));
        let Some(args) = next else {
            let mut result = result;
            if plan.case.takes_no_arguments && is_error_result(result.response.as_ref()) {
                // Nothing to vary: the tool ran on its one valid call and
                // reported its own failure, which T8 allows (isError needs
                // no structuredContent); the answer was judged above.
                result.message = format!(
                    "{}, not a refusal of the call: {}",
                    mcperr_core::report::TOOL_FAILED,
                    refusals.join("; ")
                );
                return (result, alive);
            }
            result.verdict = Verdict::Skip;
            let sets = match refusals.len() {
                1 => "the one schema-derived argument set".to_string(),
                n => format!("all {n} schema-derived argument sets (the last is shown)"),
            };
            result.message = format!(
                "no valid call to judge: the tool refused {sets}; answers: {}",
                refusals.join("; ")
            );
            return (result, alive);
        };
        if let Some(p) = attempt
            .request
            .params
            .as_mut()
            .and_then(Value::as_object_mut)
        {
            p.insert("arguments".into(), args.clone());
        }
    }
    unreachable!("the loop returns on its last set")
}

/// Whether an answer is an `isError` result (not a JSON-RPC error).
fn is_error_result(response: Option<&Value>) -> bool {
    response.and_then(|r| mcperr_core::wire::at(r, &["result", "isError"]))
        == Some(&Value::Bool(true))
}

/// A T4 case sent on an argument set the tool is first seen to accept
/// ([`mcperr_core::case::Rebase`]): valid sets go unjudged (their strays
/// go to the case) until one is accepted, then the case's call is that set
/// with its change. When the tool refuses every set, the case is sent on the
/// last one and its passing refusal counts only if it says something the
/// set's own refusal did not, beyond the extra property's name and value
/// (else the tool failed for another reason, perhaps quoting its
/// arguments): a skip.
async fn rebased(
    client: &mut Client,
    plan: &CasePlan,
    rebase: &mcperr_core::case::Rebase,
) -> (CaseResult, bool) {
    let tool = plan
        .case
        .request
        .params
        .as_ref()
        .and_then(|p| p.get("name"))
        .cloned();
    let with_args = |args: Value| {
        let mut attempt = plan.clone();
        if let Some(p) = attempt
            .request
            .params
            .as_mut()
            .and_then(Value::as_object_mut)
        {
            p.insert("arguments".into(), args);
        }
        attempt
    };
    // A hung tools/call: the case is an error at once, as any of its cases.
    if client.pace.hung("tools/call").is_some() {
        return execute_once(client, plan).await;
    }
    let mark = client.stderr().mark();
    let mut last = None;
    let mut accepted = None;
    let normal = client.timeout;
    client.set_timeout(client.pace.timeout_for("tools/call", normal));
    for set in &rebase.sets {
        let params = serde_json::json!({"name": tool, "arguments": set});
        let ex = client.request("tools/call", Some(params), true).await;
        let Some(answer) = ex.response() else {
            // No answer to a valid call: not the extra property's doing.
            client.set_timeout(normal);
            let alive = client.probe().await.response().is_some();
            let j = mcperr_core::oracle::Judgement::new(
                Verdict::Error,
                &plan.case.rule,
                format!(
                    "not judged: the valid call this case stands on got no answer ({:?}): arguments {set}",
                    ex.ending
                ),
            );
            return (
                CaseResult::planned(plan, &plan.citation, j, Some(ex.request), None, 0),
                alive,
            );
        };
        if !mcperr_core::expect::refusal(answer) {
            accepted = Some(set);
            break;
        }
        last = Some((set, mcperr_core::expect::answer_text(answer)));
    }
    client.set_timeout(normal);
    // What the unjudged calls logged is not the case's (a crash's traceback
    // would break a log check): it is let through before the case's mark.
    if client.has_stderr() && plan.wants_log() {
        client.settle_stderr(mark).await;
    }
    if let Some(set) = accepted {
        return execute_once(client, &with_args(rebase.apply(set))).await;
    }
    let Some((set, refused)) = last else {
        return execute_once(client, plan).await;
    };
    let (result, alive) = execute_once(client, &with_args(rebase.apply(set))).await;
    let case_text = result
        .response
        .as_ref()
        .map(mcperr_core::expect::answer_text)
        .unwrap_or_default();
    if result.verdict != Verdict::Pass
        || mcperr_core::expect::refusal_says_more(&case_text, &refused, rebase)
    {
        return (result, alive);
    }
    let mut result = result;
    result.verdict = Verdict::Skip;
    result.message = format!(
        "not judged: the tool refused every valid argument set ({} tried), and its refusal of the extra property says nothing its refusal of the same set without it did not (without: {:?}; with: {:?}): it may have failed for another reason",
        rebase.sets.len(),
        clip(&refused),
        clip(&case_text)
    );
    (result, alive)
}

fn clip(s: &str) -> String {
    s.chars().take(80).collect()
}

/// An answer in a few words, for the message of a skipped valid call.
fn short_answer(response: Option<&Value>) -> String {
    let Some(r) = response else {
        return "no answer".into();
    };
    let text = clip(&mcperr_core::expect::answer_text(r));
    match r.pointer("/error/code") {
        Some(c) => format!("error {c} {text:?}"),
        None => format!("isError {text:?}"),
    }
}

/// Looks for a protected server's metadata as a client must (A1): the URL
/// the refusal's challenge names, then RFC 9728's well-known URIs; the first
/// that serves a JSON object ends the search. `None` over stdio.
async fn resource_metadata(
    client: &Client,
    refused: &Exchange,
) -> Option<mcperr_core::oracle::auth::MetadataProbe> {
    use mcperr_core::oracle::auth;
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
const IN_FLIGHT_FIRST: std::time::Duration = std::time::Duration::from_millis(500);

/// How long the in-flight request is watched after the steps: longer than
/// the Bookshop's `slow` works at most (50 steps of 10 ms), so that a server
/// that ignores the cancellation is seen answering.
const IN_FLIGHT_WATCH: std::time::Duration = std::time::Duration::from_millis(1000);

/// Sends an in-flight step; its id and progress token, or the skip result
/// when it was answered before the next step could go.
async fn start_in_flight(
    client: &mut Client,
    plan: &CasePlan,
    o: &Outgoing,
) -> Result<(Value, Option<Value>), CaseResult> {
    let id = id_for(client, &o.id).unwrap_or_else(|| client.fresh_id());
    let msg = o.message(Some(&id));
    match client.send_in_flight(&id, &msg, IN_FLIGHT_FIRST).await {
        Ok(()) => {
            let token = mcperr_core::exchange::progress_token(&msg).cloned();
            Ok((id.to_value(), token))
        }
        Err(answer) => {
            let j = mcperr_core::oracle::Judgement::new(
                Verdict::Skip,
                &plan.case.rule,
                "not judged: the in-flight request was answered before the next step could be sent, so nothing was left in flight".to_string(),
            );
            Err(CaseResult::planned(
                plan,
                &plan.citation,
                j,
                Some(msg),
                Some(answer),
                0,
            ))
        }
    }
}

/// Watches the in-flight request `id` after the steps. When a step
/// cancelled it, what came about it after the server had shown that it read
/// the cancellation (U7); otherwise nothing: it was only in flight.
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
/// is judged. A server that ignores the cancellation keeps working for the
/// whole watch and is still seen; an excuse counted only from the
/// cancellation's send, as before, failed rmcp under load.
async fn watch_cancelled(
    client: &mut Client,
    plan: &CasePlan,
    id: &Value,
    token: Option<&Value>,
) -> Vec<Value> {
    if !cancelled_by_case(plan, id) {
        // Left open: a subscription's notifications are the judged case's
        // (U9 reads them in order); its answer, which a server that ends a
        // subscription sends, is kept for the teardown's judgement; the
        // progress of a call left in flight is its own business, as before.
        let early = client.late_answer(id);
        for m in client.watch_in_flight(id, token, IN_FLIGHT_WATCH).await {
            if m.get("method").is_none() {
                client.note_late_answer(id, m);
            } else if mcperr_core::exchange::subscription_id(&m).is_some() {
                client.requeue(
                    mcperr_core::exchange::Stray::of_server_message(&m)
                        .into_iter()
                        .collect(),
                );
            }
        }
        if let Some(answer) = early {
            client.note_late_answer(id, answer);
        }
        return vec![];
    }
    // Unanswered, the probe proves nothing: what came during it is judged
    // with the watch then, its first progress notification excused as above.
    let mut about = match client.read_barrier(id, token).await {
        Ok(_crossed) => Vec::new(),
        Err(seen) => seen,
    };
    about.extend(client.watch_in_flight(id, token, IN_FLIGHT_WATCH).await);
    if about.first().is_some_and(|m| m.get("method").is_some()) {
        about.remove(0);
    }
    about
}

/// Most `tasks/list` pages followed for `task-listed`.
const MOST_TASK_PAGES: usize = 100;

/// `task-listed`'s evidence: `task`, the ids on the judged `tasks/list`
/// page and every page its `nextCursor` leads to, and why the walk
/// stopped before a page without one, if it did.
async fn task_listing(
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
fn cancelled_by_case(plan: &CasePlan, id: &Value) -> bool {
    plan.steps.iter().any(|s| {
        matches!(s, Step::Send(o) if o.method == "notifications/cancelled"
            && o.params.as_ref().and_then(|p| p.get("requestId")) == Some(id))
    })
}

/// The error result of a case not sent because its method is hung.
fn hung_result(
    plan: &CasePlan,
    method: &str,
    first: &str,
    slow: std::time::Duration,
) -> CaseResult {
    // An error of J4 (the first request's unanswered deviation), not of the
    // case's own rule, which this case could not test.
    let j = mcperr_core::oracle::Judgement::new(
        Verdict::Error,
        mcperr_core::rules::RuleId::J4.as_str(),
        format!(
            "not sent: {method} is hung on this server: its request in case {first} got no answer within --slow-ms {} while the server answered others",
            slow.as_millis()
        ),
    );
    CaseResult::planned(plan, &plan.citation, j, None, None, 0)
}

/// The methods a case sends requests of: its judged one, then its steps'.
fn methods_of(plan: &CasePlan) -> Vec<&str> {
    let steps = plan.steps.iter().filter_map(|s| match s {
        Step::Send(o) if o.id != IdChoice::Notification => Some(o.method.as_str()),
        _ => None,
    });
    std::iter::once(plan.request.method.as_str())
        .chain(steps)
        .collect()
}

async fn execute_once(client: &mut Client, plan: &CasePlan) -> (CaseResult, bool) {
    let methods = methods_of(plan);
    for &m in &methods {
        if let Some(first) = client.pace.hung(m) {
            let first = first.to_string();
            return (hung_result(plan, m, &first, client.pace.slow_timeout), true);
        }
    }
    // Every request of the case (steps included) gets the slowest of their
    // methods' timeouts: --slow-ms once one of them is known slow.
    let normal = client.timeout;
    let paced = methods
        .iter()
        .map(|m| client.pace.timeout_for(m, normal))
        .max()
        .unwrap_or(normal);
    client.set_timeout(paced);
    if plan.case.hold_asks {
        client.hold_asks();
    }
    let out = execute_paced(client, plan).await;
    client.release_held().await;
    client.set_timeout(normal);
    out
}

async fn execute_paced(client: &mut Client, plan: &CasePlan) -> (CaseResult, bool) {
    let early = client.begin_case();
    let mark = client.stderr().mark();
    let before = if plan.wants_counts() {
        limited_calls(client).await
    } else {
        None
    };
    let mut evidence = Evidence {
        other_session: client.other_session.clone(),
        ..Evidence::default()
    };
    let mut in_flight = None;
    let resumes = plan
        .expectation
        .checks
        .contains(&mcperr_core::case::Check::ResumedOwnStream);
    let mut streams = Vec::new();
    let mut vars: Vec<(String, Value)> = Vec::new();
    let with_values;
    let mut plan = plan;
    for (index, s) in plan.steps.iter().enumerate() {
        let filled;
        let s = if vars.is_empty() {
            s
        } else {
            filled = plan.with_values(&vars).steps[index].clone();
            &filled
        };
        if let Step::InFlight(o) = s {
            match start_in_flight(client, plan, o).await {
                Ok(started) => in_flight = Some(started),
                Err(skipped) => return (skipped, true),
            }
            continue;
        }
        let sent = step(client, s).await;
        if let Ok(answered) = &sent {
            let answer = answered.as_ref().and_then(Exchange::response).cloned();
            if let Err((skip, why)) = capture(plan, index, answer.as_ref(), &mut vars) {
                let j = if skip {
                    mcperr_core::oracle::Judgement::new(Verdict::Skip, &plan.case.rule, why)
                } else {
                    let v = mcperr_core::grading::Violation::new(plan.case.aspect_id(), why);
                    let graded = plan.grader().graded(&v, false).into_iter().collect();
                    mcperr_core::oracle::Judgement::of(graded, &plan.case.rule, String::new())
                };
                let result = CaseResult::planned(plan, &plan.citation, j, None, answer.clone(), 0);
                return (result, true);
            }
        }
        let ex = match sent {
            Ok(answered) => {
                if resumes {
                    streams.extend(answered);
                }
                continue;
            }
            Err(ex) => ex,
        };
        {
            let ms = ex.duration.as_millis() as u64;
            // A step left unanswered while the server answers a probe: the
            // step's method is hung (its later cases are errors at once),
            // the server is not lost.
            if ex.ending == Ending::Timeout && client.probe().await.response().is_some() {
                let method = ex.request["method"].as_str().unwrap_or("?").to_string();
                if slow_step(client, &method, &ex).await {
                    // The case again, the step's method now with --slow-ms.
                    return Box::pin(execute_once(client, plan)).await;
                }
                client.pace.mark_hung(&method, &plan.case.id);
                let v = mcperr_core::grading::Violation::new(
                    AspectId::J4Main,
                    format!(
                        "the case's {method} step was never answered (within {} ms) while the server went on answering others; {method} is hung, its later requests are not sent",
                        client.timeout.as_millis()
                    ),
                );
                let graded = plan.grader().graded(&v, false).into_iter().collect();
                let j = mcperr_core::oracle::Judgement::of(graded, &plan.case.rule, String::new());
                let citation = j.citation.clone().unwrap_or_else(|| plan.citation.clone());
                let result = CaseResult::planned(plan, &citation, j, Some(ex.request), None, ms);
                return (result, true);
            }
            let j = oracle::judge(plan, &ex, &evidence);
            let result = CaseResult::planned(plan, &plan.citation, j, Some(ex.request), None, ms);
            return (result, false);
        }
    }
    if !vars.is_empty() {
        with_values = plan.with_values(&vars);
        plan = &with_values;
    }
    if let Some((id, token)) = &in_flight {
        evidence.after_cancel = watch_cancelled(client, plan, id, token.as_ref()).await;
        // A subscription left in flight: how it ended, if the server ended it.
        if let Some(listen) = plan.listens().into_iter().find(|l| l.get("id") == Some(id)) {
            evidence.ended = Some(mcperr_core::oracle::subscriptions::Ended {
                listen,
                answer: client.late_answer(id),
                cancelled_by_client: cancelled_by_case(plan, id),
            });
        }
    }
    let quiet_get = plan
        .expectation
        .checks
        .contains(&mcperr_core::case::Check::GetStreamQuiet);
    let mut ex = if plan.http.is_some() && quiet_get {
        let (ex, side) = get_with_side_post(client, plan).await;
        evidence.side_post = Some(side);
        ex
    } else if plan.http.is_some() && resumes {
        let (ex, resumption) = resumed_get(client, plan, &streams).await;
        evidence.resumption = resumption;
        ex
    } else if plan.http.is_some() {
        shaped_exchange(client, plan).await
    } else {
        plain_exchange(client, &plan.request).await
    };
    ex.strays.splice(
        0..0,
        early.into_iter().map(mcperr_core::exchange::Stray::outside),
    );
    // hold_asks judges the server while it waits for input it asked for:
    // one that asked nothing by its answer waits for nothing.
    if client.held() == Some(0) && ex.response().is_some() {
        ex.ending = Ending::NotApplicable(format!(
            "the server sent no request of its own (no elicitation, sampling or roots request) before it answered {}, so it waited for no input",
            plan.request.method
        ));
    }
    // An id beyond a double that got silence or an id-null error: the same
    // request with a small id shows whether the id alone was the problem
    // (the RFC 8259 section 6 policy, as in fuzzing).
    if plan.http.is_none()
        && matches!(
            mcperr_core::wire::big_id_answer(&ex),
            Some(
                mcperr_core::wire::BigIdAnswer::Silent
                    | mcperr_core::wire::BigIdAnswer::NullIdError
            )
        )
    {
        let small = Outgoing {
            id: IdChoice::Fresh,
            ..plan.request.clone()
        };
        let again = plain_exchange(client, &small).await;
        evidence.small_id_answered = Some(matches!(again.ending, Ending::Answered(_)));
    }
    if plan.wants_counts() {
        evidence.counts = Some((before, limited_calls(client).await));
    }
    if plan
        .expectation
        .checks
        .contains(&mcperr_core::case::Check::TaskListed)
    {
        if let Some((_, task)) = vars.iter().find(|(k, _)| k == "task") {
            evidence.listing = Some(task_listing(client, &ex, task.clone()).await);
        }
    }
    if plan
        .expectation
        .checks
        .contains(&mcperr_core::case::Check::ResourceMetadata)
    {
        evidence.metadata = resource_metadata(client, &ex).await;
    }
    // Log checks need the server's stderr: only a line server's is ours to read.
    if client.has_stderr() && plan.wants_log() {
        client.settle_stderr(mark).await;
        evidence.stderr = Some(client.stderr().since(mark));
    }
    // The liveness probe runs before judging, so that whatever the server
    // wrote during the case (steps, counts, probe included) is judged here.
    let mut alive = ex.response().is_some() || ex.http.is_some();
    if ex.ending == Ending::Timeout && plan.http.is_none() {
        // No answer: does the server still answer others? Then this request
        // is slow (answered within --slow-ms) or left unanswered (J4, and
        // its method hung), not the server lost.
        let probe = client.probe().await;
        if probe.response().is_some() {
            alive = true;
            match slow_answer(client, plan, &ex).await {
                Some((answer, elapsed)) => {
                    client.pace.mark_slow(&plan.request.method, elapsed);
                    evidence.slow = Some((elapsed, client.timeout));
                    ex.ending = answer.ending;
                    ex.request = answer.request;
                    ex.duration = elapsed;
                }
                None => {
                    client.pace.mark_hung(&plan.request.method, &plan.case.id);
                    evidence.answered_after = true;
                }
            }
            let strays = client.drain();
            ex.strays.extend(strays);
        }
    } else if alive {
        let probe = client.probe().await;
        if probe.response().is_none() {
            alive = false;
            evidence.stopped = Some(match &probe.ending {
                Ending::Died(how) => how.clone(),
                _ => "it gave no answer to the next request".to_string(),
            });
        }
    }
    let late = client.drain();
    ex.strays
        .extend(late.into_iter().map(mcperr_core::exchange::Stray::outside));
    client.note_server_requests(&mut ex.strays);
    // Last, as it ends the connection: does the server exit at end of input?
    if plan
        .expectation
        .checks
        .contains(&mcperr_core::case::Check::ExitOnEof)
    {
        evidence.eof_exit = client
            .close_stdin(mcperr_core::oracle::checks::EOF_WAIT)
            .await;
        alive = false;
    }
    let mut judgement = oracle::judge(plan, &ex, &evidence);
    if judgement.verdict == Verdict::Error && client.has_stderr() {
        let tail = client.stderr().tail(10);
        if !tail.is_empty() && !judgement.message.contains("stderr tail") {
            judgement.message = format!("{}; stderr tail:\n{tail}", judgement.message);
        }
    }
    let ms = ex.duration.as_millis() as u64;
    // The citation of the aspect that decided (the table's), else the case's own.
    let citation = judgement
        .citation
        .clone()
        .unwrap_or_else(|| plan.citation.clone());
    let mut result = CaseResult::planned(
        plan,
        &citation,
        judgement,
        Some(ex.request.clone()),
        ex.response().cloned(),
        ms,
    );
    result.http_status = ex.http.as_ref().map(|a| a.status);
    if result.response.is_none() {
        result.body = ex
            .http
            .as_ref()
            .filter(|a| !a.body.trim().is_empty())
            .map(|a| clip_body(&a.body));
    }
    (result, alive)
}

/// The answer to a request that timed out while the server answered a
/// probe, if it comes within `--slow-ms` (counted from when it was sent),
/// with the time it took. Over a line transport the answer is awaited;
/// over HTTP, where the timed-out POST is gone, the same request is sent
/// once more with `--slow-ms` as its timeout. A method already known slow
/// had its `--slow-ms`: nothing more is waited for.
async fn slow_answer(
    client: &mut Client,
    plan: &CasePlan,
    ex: &Exchange,
) -> Option<(Exchange, std::time::Duration)> {
    let slow = client.pace.slow_timeout;
    if !client
        .pace
        .worth_waiting(&plan.request.method, client.timeout)
    {
        return None;
    }
    if matches!(client.conn, Conn::Http(_)) {
        let normal = client.timeout;
        client.set_timeout(slow);
        let again = plain_exchange(client, &plan.request).await;
        client.set_timeout(normal);
        let elapsed = again.duration;
        return again.response().is_some().then_some((again, elapsed));
    }
    let (answer, elapsed) = late_answer(client, ex).await?;
    let mut answered = ex.clone();
    answered.ending = Ending::Answered(answer);
    Some((answered, elapsed))
}

/// Over a line transport: the late answer to `ex`'s timed-out request if it
/// comes within `--slow-ms` of its sending, with the time it took in all.
async fn late_answer(client: &mut Client, ex: &Exchange) -> Option<(Value, std::time::Duration)> {
    let id = ex.request.get("id").cloned().unwrap_or(Value::Null);
    let started = std::time::Instant::now();
    let wait = client.pace.slow_timeout.saturating_sub(ex.duration);
    let answer = client.await_late(&id, wait).await?;
    Some((answer, ex.duration + started.elapsed()))
}

/// Whether a step request that timed out (while the server answered a
/// probe) is slow rather than hung, marking its method slow if so: its
/// answer comes within `--slow-ms` over a line transport; over HTTP, where
/// the POST is gone, the case is tried once more with `--slow-ms` (a method
/// already slow is hung when that times out too).
async fn slow_step(client: &mut Client, method: &str, ex: &Exchange) -> bool {
    if !client.pace.worth_waiting(method, client.timeout) {
        return false;
    }
    if matches!(client.conn, Conn::Http(_)) {
        client.pace.mark_slow(method, client.timeout);
        return true;
    }
    match late_answer(client, ex).await {
        Some((_, elapsed)) => {
            client.pace.mark_slow(method, elapsed);
            true
        }
        None => false,
    }
}

/// An HTTP body kept in a report: its first 4,000 characters.
fn clip_body(body: &str) -> String {
    const MAX: usize = 4000;
    match body.char_indices().nth(MAX) {
        Some((at, _)) => format!("{}… ({} bytes in all)", &body[..at], body.len()),
        None => body.to_string(),
    }
}
