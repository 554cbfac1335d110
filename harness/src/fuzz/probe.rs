//! Requests sent alone, in lockstep: a probe (with `limited_calls` counted
//! around an invalid `limited` call, so a body that ran shows), the search
//! for the request that killed or hung a server, and shrinking a finding to
//! the simplest input that still shows it.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use mcperr_cases::fuzz::shrink::candidates;
use mcperr_cases::fuzz::{Class, FuzzInput};
use mcperr_cases::plan::Message;
use mcperr_model::rules::AspectId;
use mcperr_wire::exchange::{Ending, Exchange};
use serde_json::Value;

use super::worker::Worker;
use super::Found;
use crate::client::Client;
use crate::engine::{connect, EraChoice};

/// How long a request with a lone surrogate may go unanswered.
pub(crate) const SILENCE_OK: Duration = Duration::from_secs(1);

/// Probes spent shrinking one finding, at most.
const SHRINK_PROBES: usize = 400;
/// Time spent shrinking one finding, at most.
const SHRINK_TIME: Duration = Duration::from_secs(10);

/// `limited_calls`'s count (structured, or the number in its text).
pub(crate) async fn count(client: &mut Client) -> Option<u64> {
    let ex = client
        .request("tools/call", Some(count_params()), true)
        .await;
    count_in(ex.response()?)
}

/// The params of a `limited_calls` call.
pub(crate) fn count_params() -> Value {
    mcperr_cases::bookshop::count_params()
}

/// The count in a `limited_calls` answer (structured, or the number in its text).
pub(crate) fn count_in(response: &Value) -> Option<u64> {
    let result = response.get("result")?;
    result
        .pointer("/structuredContent/count")
        .and_then(Value::as_u64)
        .or_else(|| {
            let text = result.pointer("/content/0/text")?.as_str()?;
            text.split(|c: char| !c.is_ascii_digit())
                .find(|s| !s.is_empty())?
                .parse()
                .ok()
        })
}

/// Sends `input` alone and waits for its answer; for an invalid `limited`
/// call, also whether its body ran (`limited_calls` before and after).
pub(crate) async fn probe(
    w: &mut Worker<'_>,
    client: &mut Client,
    input: &FuzzInput,
) -> (Exchange, Option<bool>) {
    let measure = w.counted
        && mcperr_cases::bookshop::is_counted_call(&input.method, &input.target)
        && matches!(input.class, Class::InvalidCall(_));
    let before = if measure { count(client).await } else { None };
    let msg = Message::of(w.era, input.message(w.era, w.next_n()));
    // A parser may refuse a lone surrogate in silence (RFC 8259 §8.2): such a
    // line waits as long as the campaign lets it, not a whole timeout.
    let timeout = client.timeout;
    if input.has_lone_surrogate() {
        client.set_timeout(timeout.min(SILENCE_OK));
    }
    let ex = client.exchange(msg).await;
    client.set_timeout(timeout);
    let after = if measure && ex.response().is_some() {
        count(client).await
    } else {
        None
    };
    (ex, before.zip(after).map(|(b, a)| a > b))
}

/// A request any server answers (`ping`, or `server/discover` in 2026-07-28),
/// with a string id no fuzz request uses.
pub(crate) fn alive_probe(era: mcperr_protocol::Era, n: u64) -> Value {
    let method = match era {
        mcperr_protocol::Era::Legacy => "ping",
        mcperr_protocol::Era::Modern => "server/discover",
    };
    let mut msg =
        serde_json::json!({"jsonrpc": "2.0", "id": format!("mcperr-alive-{n}"), "method": method});
    if let Some(p) = mcperr_cases::plan::params_for(era, None, true) {
        msg["params"] = p;
    }
    msg
}

/// Whether `input`, sent alone and followed at once by a liveness probe,
/// stays unanswered while the probe is answered (a J4 deviation), judged
/// within a short grace after the probe's answer instead of a whole
/// timeout, so that an unanswered request can be shrunk; with the request
/// as sent. `None` when neither came back (the server is lost) or over HTTP.
pub(crate) async fn unanswered_while_alive(
    w: &mut Worker<'_>,
    client: &mut Client,
    input: &FuzzInput,
) -> Option<(bool, Value)> {
    // How long the request may trail the probe's answer: ten round trips
    // of the probe, between 50 and 500 ms.
    let trail =
        |rtt: Duration| (rtt * 10).clamp(Duration::from_millis(50), Duration::from_millis(500));
    let sent = Instant::now();
    let msg = input.message(w.era, w.next_n());
    let ping = alive_probe(w.era, w.next_n());
    let (key, ping_key) = (msg["id"].to_string(), ping["id"].to_string());
    let crate::client::Conn::Lines(conn) = &mut client.conn else {
        return None;
    };
    let mut batch = mcperr_wire::text::line(&msg);
    batch.push(b'\n');
    batch.extend_from_slice(ping.to_string().as_bytes());
    conn.send_line(&batch).await;
    let deadline = Instant::now() + w.settings.run.timeout;
    let mut answered_ping: Option<Instant> = None;
    let verdict = loop {
        let until = answered_ping.map_or(deadline, |at| (at + trail(at - sent)).min(deadline));
        let now = Instant::now();
        if now >= until {
            break answered_ping.map(|_| true);
        }
        match conn.next_event(until - now).await {
            Some(crate::transport::StdoutEvent::Line(l)) => {
                let id = mcperr_cases::fuzz::inputs::parse_line(&l)
                    .ok()
                    .and_then(|v| v.get("id").map(Value::to_string));
                match id {
                    Some(i) if i == key => break Some(false),
                    Some(i) if i == ping_key => answered_ping = Some(Instant::now()),
                    _ => {}
                }
            }
            Some(crate::transport::StdoutEvent::Eof) => break None,
            _ => {}
        }
    };
    client.ignore([key, ping_key]);
    verdict.map(|v| (v, msg))
}

/// Whether `ex` was answered with its own id: the proof that a request
/// with a small id was answered, which an id-null error (the answer some
/// servers give an array `params` whatever its id) is not.
pub(crate) fn answered_own(ex: &Exchange) -> bool {
    matches!(&ex.ending, Ending::Answered(r) if r.get("id").is_some_and(|id| Some(id) == ex.request.get("id")))
}

pub(crate) fn lost(ex: &Exchange) -> bool {
    matches!(ex.ending, Ending::Died(_) | Ending::Timeout)
}

/// The server died or hung with `suspects` in flight: sends them alone, in
/// order, on a fresh server until one kills or hangs it, and records that
/// one. If none does alone, records the loss with the first suspect.
pub(crate) async fn culprit(w: &mut Worker<'_>, suspects: Vec<FuzzInput>) {
    let Ok((mut client, _)) = connect(&w.settings.run, EraChoice::Pinned(w.era)).await else {
        return;
    };
    client.begin_case();
    // A suspect left unanswered while the server answers others explains the
    // stall: no separate loss is recorded then.
    let mut explained = false;
    for input in &suspects {
        if w.settings.stats.stop.load(Ordering::Relaxed) {
            break;
        }
        let (ex, ran) = probe(w, &mut client, input).await;
        w.shrink_requests.fetch_add(1, Ordering::Relaxed);
        if input.has_lone_surrogate() && ex.ending == Ending::Timeout {
            // Silence is allowed for a line a parser may refuse (J6); the
            // next suspect shows whether the server still lives.
            continue;
        }
        // A request that is never answered by a server that still answers
        // others is said so, not called a hung server.
        let alive = ex.ending == Ending::Timeout && client.probe().await.response().is_some();
        w.judge_and_record_alive(input, &ex, ran, alive);
        // Answered, and then gone (a server that exits after an error): this
        // is the culprit, judged as a run judges a case after which the
        // server stops answering, so that its replay agrees.
        if ex.response().is_some() {
            let next = client.probe().await;
            if next.response().is_none() {
                let how = match &next.ending {
                    Ending::Died(how) => how.clone(),
                    _ => "it gave no answer to the next request".to_string(),
                };
                let found = w.judge.stopped_after(input, &ex, &how);
                w.store.record(&w.settings.stats, found, input, w.counted);
                client.conn.close().await;
                return;
            }
        }
        if alive {
            explained = true;
            continue;
        }
        if lost(&ex) {
            client.conn.close().await;
            return;
        }
    }
    client.conn.close().await;
    if let (Some(first), false) = (suspects.first(), explained) {
        // Not reproduced alone: still a server that stopped answering (J4).
        let ex = Exchange {
            request: first.message(w.era, 0),
            ending: Ending::Died(format!(
                "the server stopped answering with {} requests in flight; none of them alone reproduces it",
                suspects.len()
            )),
            strays: vec![],
            duration: Duration::ZERO,
            http: None,
        };
        w.judge_and_record(first, &ex, None);
    }
}

/// Shrinks a finding: keeps the first simpler input that still shows the
/// same finding (same signature), until none does or the budget is spent.
/// First the finding's own input is sent alone: a finding it does not show
/// then (seen only with other requests in flight, or blamed on a request
/// after the one that killed the server) is kept, marked as not reproduced,
/// and not saved as a case, whose replay would disagree.
/// `client` is reused while it lives; a probe that kills it gets a new one.
pub(crate) async fn shrink(
    w: &mut Worker<'_>,
    mut client: Option<Client>,
    mut best: Found,
) -> (Found, Option<Client>) {
    // Stray output has no input; a request that went unanswered costs a
    // whole timeout per try, so it is kept as found.
    let sig = &best.finding.signature;
    // An unanswered request is re-tried with a probe behind it, judged a
    // short grace after the probe's answer (not a whole timeout per try).
    let unanswered = sig.ends_with("no answer");
    if best.input.is_stray_output() || sig.ends_with("(alive)") {
        return (best, client);
    }
    // A valid call of a tool that writes ran its body once already: it is
    // not sent again, alone or shrunk (the consent is for a bounded number).
    if best.input.class == Class::ValidCall && w.gen.writes(&best.input.target) {
        return (best, client);
    }
    if unanswered && w.settings.run.target.is_http() {
        return (best, client);
    }
    let signature = best.finding.signature.clone();
    // A server that stopped after an answered request is seen only by a
    // probe behind it.
    let after = best.finding.aspect == mcperr_model::rules::AspectId::J4Main
        && best.finding.response.is_object();
    // Ids beyond a double are judged with the proof of a re-send: their
    // findings stand as found.
    let about_ids = matches!(
        best.finding.aspect,
        AspectId::J1IdType | AspectId::J1BigId | AspectId::J1ErrorId
    ) && best.finding.group.starts_with("ids ");
    // One the server never answers stands as found too: each simpler
    // candidate would wait out --timeout-ms unanswered (no re-send proof
    // follows a silence) and cost the server a restart, and none could show
    // the finding. Against the TypeScript SDK, which never answers an id past
    // 2^53, that was five timeouts and five restarts after every campaign.
    if about_ids && best.finding.response.is_null() {
        return (best, client);
    }
    if !about_ids {
        let original = best.input.clone();
        match try_alone(w, &mut client, &original, unanswered, after).await {
            Some((found, _)) if found.iter().any(|f| f.signature == signature) => {}
            Some((found, true))
                if !found.is_empty() && !unanswered && !after && !own_answer(&best.finding) =>
            {
                // Answered alone, and the answer shows other findings: the
                // campaign matched an answer to the wrong request.
                w.store
                    .record(&w.settings.stats, found, &original, best.counted);
                best.misattributed = true;
                return (best, client);
            }
            Some(_) => {
                best.finding.not_reproduced = Some(
                    "the request alone did not show it (seen with other requests in flight, after another request that stopped the server, or answered otherwise when asked again)".into(),
                );
                return (best, client);
            }
            None => return (best, client),
        }
    }
    let start = Instant::now();
    let mut probes = 0;
    'outer: loop {
        let all: Vec<FuzzInput> = candidates(&best.input)
            .into_iter()
            .filter_map(|c| w.gen.reclassify(c))
            .collect();
        for cand in all {
            if probes >= SHRINK_PROBES || start.elapsed() > SHRINK_TIME || w.out_of_time() {
                break 'outer;
            }
            probes += 1;
            let Some((findings, _)) = try_alone(w, &mut client, &cand, unanswered, after).await
            else {
                break 'outer;
            };
            if let Some(f) = findings.into_iter().find(|f| f.signature == signature) {
                best.finding = f;
                best.input = cand;
                continue 'outer;
            }
        }
        break;
    }
    (best, client)
}

/// Sends `input` alone (on `client`, or a fresh server) and returns its
/// findings, and whether it was answered (with its own id): of an
/// unanswered try with a probe behind it (`unanswered`), or of its answer,
/// with a probe behind it when `after` asks whether the server stopped once
/// it had answered. `None` when no server can be had.
/// Whether the finding's answer carries its request's own id (typed): ids
/// are unique on a connection, so it was that request's answer, and an
/// answer alone that differs is the server answering differently (under
/// load, say), not the campaign matching another request's answer.
fn own_answer(finding: &mcperr_oracle::findings::Finding) -> bool {
    let id = finding.request.get("id");
    id.is_some_and(|id| !id.is_null()) && finding.response.get("id") == id
}

async fn try_alone(
    w: &mut Worker<'_>,
    client: &mut Option<Client>,
    input: &FuzzInput,
    unanswered: bool,
    after: bool,
) -> Option<(Vec<mcperr_oracle::findings::Finding>, bool)> {
    let mut c = match client.take() {
        Some(c) => c,
        None => match connect(&w.settings.run, EraChoice::Pinned(w.era)).await {
            Ok((mut c, _)) => {
                c.begin_case();
                c
            }
            Err(_) => return None,
        },
    };
    if unanswered {
        w.shrink_requests.fetch_add(2, Ordering::Relaxed);
        let sent = match unanswered_while_alive(w, &mut c, input).await {
            None => {
                c.conn.close().await;
                return Some((vec![], false));
            }
            Some((still, sent)) => {
                *client = Some(c);
                if !still {
                    return Some((vec![], true));
                }
                sent
            }
        };
        let ex = Exchange {
            request: sent,
            ending: Ending::Timeout,
            strays: vec![],
            duration: w.settings.run.timeout,
            http: None,
        };
        return Some((
            w.judge.judge_with(input, &ex, None, None, None, true),
            false,
        ));
    }
    let (ex, ran) = probe(w, &mut c, input).await;
    w.shrink_requests.fetch_add(1, Ordering::Relaxed);
    // An id beyond a double answered by an id-null error: the same request
    // with a small id is the proof the RFC 8259 section 6 policy needs, as
    // in the campaign ([`resend_big_ids`]); without it a lone try would
    // judge what the campaign excused.
    let proof = if input.id_style == mcperr_cases::fuzz::IdStyle::Above53
        && mcperr_wire::edges::big_id_answer(&ex)
            == Some(mcperr_wire::edges::BigIdAnswer::NullIdError)
    {
        let mut small = input.clone();
        small.id_style = mcperr_cases::fuzz::IdStyle::Counter;
        let (again, _) = probe(w, &mut c, &small).await;
        w.shrink_requests.fetch_add(1, Ordering::Relaxed);
        Some(answered_own(&again))
    } else {
        None
    };
    let output = matches!(input.class, Class::ValidCall)
        .then(|| w.gen.output_validator(&input.target))
        .flatten();
    let mut found = w.judge.judge_with(input, &ex, ran, output, proof, false);
    let answered = matches!(ex.ending, Ending::Answered(_));
    if lost(&ex) {
        c.conn.close().await;
        return Some((found, false));
    }
    if after {
        let next = c.probe().await;
        w.shrink_requests.fetch_add(1, Ordering::Relaxed);
        if next.response().is_none() {
            let how = match &next.ending {
                Ending::Died(how) => how.clone(),
                _ => "it gave no answer to the next request".to_string(),
            };
            found.extend(w.judge.stopped_after(input, &ex, &how));
            c.conn.close().await;
            return Some((found, answered));
        }
    }
    *client = Some(c);
    Some((found, answered))
}

/// Re-sends each held big-id request with a small id: answered, its
/// silence or id-null error was the id's alone (the RFC 8259 section 6
/// warning); not answered either, it is judged as any other request.
pub(crate) async fn resend_big_ids(w: &mut Worker<'_>, client: &mut Client) {
    let held = std::mem::take(&mut *w.big_ids.lock().expect("not poisoned"));
    let mut gone = false;
    let mut silent = 0;
    for group in held.groups {
        // Once stopped (Ctrl-C), once the server died on a re-send, or after
        // a few re-sends that were not answered either (over HTTP each waits
        // out the timeout; over a line transport a probe sent behind it
        // bounds the wait), the rest are recorded without the proof:
        // bounded, nothing lost.
        let most_silent = if w.settings.run.target.is_http() {
            3
        } else {
            64
        };
        let (first, _, _) = &group.kept[0];
        let writes = first.class == Class::ValidCall && w.gen.writes(&first.target);
        let proof = if w.settings.stats.stop.load(Ordering::Relaxed) || gone || writes {
            // A valid call of a tool that writes is not sent again.
            None
        } else {
            let (input, _, _) = &group.kept[0];
            let mut small = input.clone();
            small.id_style = mcperr_cases::fuzz::IdStyle::Counter;
            w.shrink_requests.fetch_add(1, Ordering::Relaxed);
            let answered = if w.settings.run.target.is_http() {
                let (again, _) = probe(w, client, &small).await;
                gone = matches!(again.ending, Ending::Died(_));
                Some(answered_own(&again))
            } else {
                let again = unanswered_while_alive(w, client, &small).await;
                gone = again.is_none();
                again.map(|(unanswered, _)| !unanswered)
            };
            silent += usize::from(answered == Some(false));
            gone |= silent >= most_silent;
            answered
        };
        for (input, ex, alive) in group.all() {
            w.record_judged(input, ex, None, *alive, proof);
        }
    }
}

/// Sends the calls of the windows whose count rose alone, each counted
/// around, to find which ran its body.
pub(crate) async fn confirm(w: &mut Worker<'_>, client: &mut Client) {
    for input in std::mem::take(&mut w.suspects) {
        if w.settings.stats.stop.load(Ordering::Relaxed) {
            break;
        }
        let (ex, ran) = probe(w, client, &input).await;
        w.shrink_requests.fetch_add(3, Ordering::Relaxed);
        w.judge_and_record(&input, &ex, ran);
    }
    // Last: the suspects above may hold big-id requests too.
    resend_big_ids(w, client).await;
}

/// After a window of invalid `limited` calls: did `limited_calls` rise
/// by more than the valid calls that succeeded? Then find which ran.
pub(crate) async fn check_count(w: &mut Worker<'_>, client: &mut Client) {
    if !w.counted || w.window.is_empty() {
        return;
    }
    let mut window = std::mem::take(&mut w.window);
    let now = count(client).await;
    if let (Some(now), Some(before)) = (now, w.last_count) {
        if now > before + w.valid_ok {
            w.suspect(&mut window);
        }
    }
    w.last_count = now;
    w.valid_ok = 0;
}
