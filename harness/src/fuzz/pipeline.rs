//! The pipelined loop over a line connection (a stdio child or the
//! reference server in process): up to `in_flight` requests wait in the pipe,
//! answers are matched by id (JSON-RPC lets a server answer in any order),
//! and a refill is one write.
//!
//! What an overdue request means is decided carefully, so that a slow but
//! correct server gets no finding:
//! - a request still unanswered while requests sent after it have been
//!   answered is *dropped* from the window after a short grace derived from
//!   the server's observed latency (not the whole `--timeout-ms`), which
//!   frees its slot; so is one overdue when a liveness probe sent after it
//!   is answered. A dropped request waits, out of the window, up to
//!   `--slow-ms` for a late answer: answered, its lane (method and target)
//!   is *slow* (judged on the answer, J4 `slow` once, and from then on at
//!   most [`super::pipe::LANE_LIMIT`] of its requests wait at a time, so it cannot crowd
//!   the rest); not, it was never answered (J4), and so is every other
//!   dropped request of its lane: the lane is *hung*, and its later drops
//!   are judged at once. When the budget is spent, dropped requests wait one
//!   grace more at most: then a hung lane's are never answered (J4), the
//!   others get no verdict (a slow lane's), or are listed as *undecided*
//!   (slow or hung is not known before `--slow-ms`). A request that breaks
//!   its own params (an array, a name missing…) names no slow work: in a
//!   lane where such a request was answered within `--timeout-ms` (and no
//!   work of the method is known slow), it is due within `--timeout-ms`,
//!   and waited for that long even after the budget (not past `--seconds`
//!   or `--deadline`), so a server that drops such requests is found
//!   however short the campaign;
//! - if nothing comes back within another timeout, the server hangs (`Lost`);
//! - a request with a lone surrogate may go unanswered (a parser may refuse
//!   the line, RFC 8259 §8.2) or be answered by an id-null error.
//!
//! Ids whose answers may still come late (skipped, silenced, probes) are
//! handed to the client to ignore, so a later lockstep exchange never takes
//! a stale answer for its own.

use std::sync::atomic::Ordering;
use std::time::Instant;

use mcperr_cases::fuzz::Class;
use mcperr_wire::exchange::Ending;
use mcperr_wire::text::line;
use serde_json::Value;

use super::answers::{
    answer, counted_call, never_answered, never_answered_within, skipped, too_long,
};
use super::pipe::{broken_params, lane_of, remember, Pending, Pipe, PER_TURN};
use super::probe::{alive_probe, probe};
use super::width::Width;
use super::worker::{Stop, Worker, COUNT_WINDOW};
use crate::client::{Client, Conn};
use crate::transport::{LineConn, StdoutEvent};

fn lines(client: &mut Client) -> &mut LineConn {
    match &mut client.conn {
        Conn::Lines(c) => c,
        Conn::Http(_) => unreachable!("a line campaign on an HTTP client"),
    }
}

/// Runs until the budget is spent or the server is lost.
pub(crate) async fn pipelined(w: &mut Worker<'_>, client: &mut Client) -> Stop {
    let mut pipe = Pipe::default();
    let stop = pipeline(w, client, &mut pipe).await;
    // The server was lost: what was provisional is settled now.
    settle_provisional(w, &mut pipe);
    // Lines held as the start of a message split over lines that never
    // came whole are what they are: stray output.
    let held = pipe.reader.flush();
    if !held.is_empty() {
        w.record_strays(held);
    }
    stop
}

/// The campaign is over: each request still judged never answered after
/// the short wait is J4, unless its lane was found slow meanwhile (one of
/// its requests answered after `--timeout-ms`): then, cut off by the
/// campaign's end, it has no verdict, as a slow lane's straggler has none.
fn settle_provisional(w: &mut Worker<'_>, pipe: &mut Pipe) {
    for (key, p, waited) in std::mem::take(&mut pipe.provisional) {
        w.settings.stats.requests.fetch_add(1, Ordering::Relaxed);
        if !pipe.slow_lanes.contains(&lane_of(&p.input)) {
            never_answered_within(w, p, waited);
        }
        // Either way its answer may still come, and is its own.
        pipe.left_waiting.push(key);
    }
}

/// The loop of [`pipelined`], over a pipe it flushes afterwards: refill
/// the window in one write, then take the answers that came (or wait for
/// the first), until the budget is spent and the pipe drained.
async fn pipeline(w: &mut Worker<'_>, client: &mut Client, pipe: &mut Pipe) -> Stop {
    let timeout = w.settings.run.timeout;
    let mut width = if w.settings.tune_in_flight {
        Width::surveyed(Instant::now())
    } else {
        Width::fixed(w.settings.in_flight)
    };
    let mut draining = false;
    let mut spent = false;
    let mut batch: Vec<u8> = Vec::new();
    loop {
        if !draining && !spent {
            spent = fill(w, pipe, &mut batch, width.get());
            if spent {
                w.spent_mark = Some((Instant::now(), client.conn.cpu_time()));
            }
        }
        if !draining {
            ask_count(w, pipe, &mut batch);
        }
        if let Some((k, sent, _)) = &pipe.counting {
            if sent.elapsed() > timeout {
                let k = k.clone();
                remember(&mut pipe.late, k);
                pipe.counting = None; // unanswered: the next window asks again
            }
        }
        if !batch.is_empty() {
            // A server that stops reading must not hang the campaign.
            let sent = tokio::time::timeout(timeout, lines(client).send_line(&batch)).await;
            batch.clear();
            if sent.is_err() {
                return lost(pipe);
            }
        }
        let stragglers_left = spent && !pipe.stragglers.is_empty();
        // Nothing in the window but dropped requests out (full slow lanes):
        // wait for their answers rather than spin.
        let idle = !spent && !draining && pipe.pending.is_empty() && !pipe.stragglers.is_empty();
        if pipe.waiting() == 0
            && !stragglers_left
            && !idle
            && (pipe.pending.is_empty() || draining || spent)
        {
            // Requests a parser may refuse do not hold up a drain.
            for k in std::mem::take(&mut pipe.order) {
                pipe.pending.remove(&k);
                remember(&mut pipe.surrogates, k);
                w.settings.stats.requests.fetch_add(1, Ordering::Relaxed);
            }
            draining = false;
            pipe.unknown = 0;
            if spent {
                // Before the ids whose answers may still come are handed
                // over: a provisional request left waiting is one of them.
                settle_provisional(w, pipe);
                client.ignore(pipe.stale_ids());
                w.window.append(&mut pipe.checking);
                super::probe::check_count(w, client).await;
                return Stop::Done;
            }
            continue;
        }
        let Some((events, oldest)) = next_events(w, client, pipe, width.get()).await else {
            continue;
        };
        for event in events {
            match event {
                None => {
                    if let Some(stop) = overdue(w, client, pipe, &oldest).await {
                        return stop;
                    }
                }
                Some((StdoutEvent::Eof, _)) => return lost(pipe),
                Some((StdoutEvent::TooLong(o), _)) => too_long(w, pipe, &o),
                Some((StdoutEvent::Line(bytes), decoded)) => {
                    width.answered(Instant::now());
                    if answer(w, pipe, &bytes, decoded) {
                        draining = true;
                    }
                }
            }
        }
        if pipe.unknown > 0 && pipe.waiting() <= pipe.unknown {
            if let Some(stop) = suspects_alone(w, client, pipe).await {
                return stop;
            }
        }
    }
}

/// Draws inputs into `batch` while the window has room for `width`;
/// whether the budget is spent (or the drain is due).
fn fill(w: &mut Worker<'_>, pipe: &mut Pipe, batch: &mut Vec<u8>, width: usize) -> bool {
    let mut redraws = 0;
    let mut held = pipe.occupancy();
    // Nothing is judged while the window fills: read once, not per input.
    let provisional_full = provisional_full(w, pipe);
    while held.has_room(width) {
        if drain_due(w, pipe) || provisional_full || !w.take() {
            pipe.spent_at = Some(Instant::now());
            return true;
        }
        let input = w.gen.next(&mut w.src);
        if pipe.lane_full(&lane_of(&input)) {
            // A slow lane has its dropped requests out: draw another
            // input (a few times; then wait for answers).
            w.issued -= 1;
            redraws += 1;
            if redraws > 16 {
                break;
            }
            continue;
        }
        let msg = input.message(w.era, w.next_n());
        let key = msg["id"].to_string();
        if !batch.is_empty() {
            batch.push(b'\n');
        }
        batch.extend_from_slice(&line(&msg));
        if w.is_counted_call(&input) && matches!(input.class, Class::InvalidCall(_)) {
            w.window.push(input.clone());
        }
        pipe.order.push_back(key.clone());
        let silent_ok = input.has_lone_surrogate();
        held.add(silent_ok);
        pipe.pending.insert(
            key,
            Pending {
                input,
                msg,
                sent: Instant::now(),
                silent_ok,
            },
        );
    }
    false
}

/// A full window of invalid `limited` calls: ask `limited_calls` in the
/// pipeline. A count can only lag behind (a call still running), never
/// run ahead, so a rise over the valid calls that succeeded is real.
fn ask_count(w: &mut Worker<'_>, pipe: &mut Pipe, batch: &mut Vec<u8>) {
    if w.window.len() < COUNT_WINDOW || pipe.counting.is_some() {
        return;
    }
    let msg = counted_call(w.era, w.next_n());
    pipe.counting = Some((msg["id"].to_string(), Instant::now(), w.valid_ok));
    pipe.checking.append(&mut w.window);
    if !batch.is_empty() {
        batch.push(b'\n');
    }
    batch.extend_from_slice(msg.to_string().as_bytes());
}

/// The events to take this turn: what has arrived, without a wait (nor
/// the deadlines worked out); else the first event, waited for until the
/// oldest request's deadline (`None` in the list when it passed), and what
/// arrived with it. With the key of that oldest request (empty when
/// nothing was waited for); `None` when no request has a deadline.
async fn next_events(
    w: &Worker<'_>,
    client: &mut Client,
    pipe: &Pipe,
    width: usize,
) -> Option<(Vec<Option<(StdoutEvent, Option<Value>)>>, String)> {
    let ready = lines(client).ready_answers(PER_TURN);
    if !ready.is_empty() {
        let mut events: Vec<_> = ready.into_iter().map(Some).collect();
        // A dropped request's wait is over even while answers keep coming:
        // it is judged after them (one may be its own, late).
        let run = &w.settings.run;
        let grace = pipe.latency.grace(run.timeout);
        let due = pipe.first_straggler_due(run.timeout, run.slow_timeout, w.shrink_until, grace);
        if let Some((key, _)) = due.filter(|(_, at)| *at <= Instant::now()) {
            events.push(None);
            return Some((events, key.clone()));
        }
        return Some((events, String::new()));
    }
    let (oldest, deadline) = pipe.first_deadline(
        w.settings.run.timeout,
        w.settings.run.slow_timeout,
        w.shrink_until,
        width,
    )?;
    let wait = deadline.saturating_duration_since(Instant::now());
    let first = lines(client).next_answer(wait).await;
    let more = match first {
        Some((StdoutEvent::Line(_), _)) => lines(client).ready_answers(PER_TURN),
        _ => vec![],
    };
    let events = std::iter::once(first)
        .chain(more.into_iter().map(Some))
        .collect();
    Some((events, oldest))
}

/// The requests still waiting are the ones answered with wrong ids: each
/// is asked again alone, where its answer is unambiguous (a request a
/// parser may refuse cannot be told apart that way). `Some` when the
/// server was lost doing so.
async fn suspects_alone(w: &mut Worker<'_>, client: &mut Client, pipe: &mut Pipe) -> Option<Stop> {
    let suspects: Vec<Pending> = std::mem::take(&mut pipe.order)
        .into_iter()
        .filter_map(|k| pipe.pending.remove(&k))
        .collect();
    pipe.unknown = 0;
    client.ignore(pipe.stale_ids());
    for p in suspects {
        if p.silent_ok {
            remember(&mut pipe.surrogates, p.msg["id"].to_string());
            continue;
        }
        let (ex, ran) = probe(w, client, &p.input).await;
        w.settings.stats.requests.fetch_add(1, Ordering::Relaxed);
        w.judge_and_record(&p.input, &ex, ran);
        if matches!(ex.ending, Ending::Died(_) | Ending::Timeout) {
            return Some(Stop::Lost(vec![p.input]));
        }
    }
    None
}

/// Whether sending must stop so that a request dropped now is still known
/// as dropped within the era's share of `--seconds`: the drain after the
/// campaign waits up to one drop grace for it, and under load that grace
/// (eight times the 90th percentile) reaches seconds. Before the grace is
/// known (16 answers), only the campaign's own deadline stops it.
/// `--max-findings` reached once the provisional J4s count: the campaign
/// stops where it would have had they been recorded when judged.
fn provisional_full(w: &Worker<'_>, pipe: &Pipe) -> bool {
    let found = w.settings.stats.findings.load(Ordering::Relaxed);
    !pipe.provisional.is_empty()
        && w.settings
            .max_findings
            .is_some_and(|m| found + pipe.provisional_findings() >= m)
}

fn drain_due(w: &Worker<'_>, pipe: &Pipe) -> bool {
    match (w.shrink_until, pipe.latency.grace) {
        (Some(end), Some(grace)) => Instant::now() + grace >= end,
        _ => false,
    }
}

/// The server is gone or hangs: everything in flight is a suspect.
fn lost(pipe: &mut Pipe) -> Stop {
    let order = std::mem::take(&mut pipe.order);
    Stop::Lost(
        order
            .iter()
            .filter_map(|k| pipe.pending.remove(k))
            .map(|p| p.input)
            .collect(),
    )
}

/// No event before the first deadline: decide what the overdue request means.
async fn overdue(
    w: &mut Worker<'_>,
    client: &mut Client,
    pipe: &mut Pipe,
    key: &str,
) -> Option<Stop> {
    if let Some(p) = pipe.stragglers.get(key) {
        let run = &w.settings.run;
        let elapsed = p.sent.elapsed();
        let slow_methods = pipe.slow_methods();
        let due = pipe.straggler_due(p, run.timeout, run.slow_timeout, &slow_methods);
        let waited_out = elapsed >= due;
        if !waited_out && pipe.spent_at.is_none() {
            // Woken early (another deadline): it waits on.
            return None;
        }
        let p = pipe.unstraggle(key).expect("looked up above");
        if waited_out && due < run.slow_timeout.max(run.timeout) {
            // Broken params in a prompt lane, unanswered for --timeout-ms:
            // never answered (J4), and so is the lane's next request broken
            // the same way. The lane is not hung: its other requests were
            // answered. The verdict is provisional until the campaign ends
            // (an answer that comes meanwhile withdraws it: slow, not dropped).
            if let Some(kind) = broken_params(&p.input) {
                pipe.dropped_kinds.insert((lane_of(&p.input), kind));
            }
            pipe.provisional.push((key.to_string(), p, elapsed));
            return None;
        }
        let lane = lane_of(&p.input);
        if !waited_out {
            // The campaign ended first (a grace after the budget was spent).
            // Slow is not dead: without its --slow-ms wait, a request is
            // never answered (J4) only in a lane already found hung; in a
            // lane found slow it is no verdict, and in any other it is
            // undecided (listed, no verdict): a 10 s tool in a 7 s campaign
            // is not hung.
            w.settings.stats.requests.fetch_add(1, Ordering::Relaxed);
            if pipe.hung_lanes.contains(&lane) {
                never_answered(w, p);
                return None;
            }
            // Its answer may still come, after the campaign: never another's.
            pipe.left_waiting.push(key.to_string());
            if !pipe.slow_lanes.contains(&lane) && elapsed >= run.timeout {
                let what = match broken_params(&p.input) {
                    Some(kind) => format!("{} with {kind}", p.input.method),
                    None => lane,
                };
                w.store.note_undecided(w.era, what, elapsed);
            }
            return None;
        }
        // No late answer within --slow-ms: never answered, and neither are
        // the lane's other dropped requests (their wait is cut short).
        let same: Vec<String> = pipe
            .stragglers
            .iter()
            .filter(|(_, s)| lane_of(&s.input) == lane)
            .map(|(k, _)| k.clone())
            .collect();
        pipe.hung_lanes.insert(lane);
        for p in std::iter::once(p).chain(same.iter().filter_map(|k| pipe.unstraggle(k))) {
            w.settings.stats.requests.fetch_add(1, Ordering::Relaxed);
            never_answered(w, p);
        }
        return None;
    }
    let p = pipe.pending.get(key)?;
    if p.silent_ok {
        // Unanswered input a parser may refuse: silence is allowed.
        pipe.take(key);
        remember(&mut pipe.surrogates, key.to_string());
        w.settings.stats.requests.fetch_add(1, Ordering::Relaxed);
        return None;
    }
    if pipe.unknown > 0 {
        // Answered with a wrong id, most likely: asked again alone.
        pipe.unknown = pipe.waiting();
        return None;
    }
    if pipe.answered_sent.is_some_and(|s| s > p.sent) {
        skipped(w, pipe, key);
        return None;
    }
    if pipe.alive.is_none() {
        let msg = alive_probe(w.era, w.next_n());
        let timeout = w.settings.run.timeout;
        let due = (Instant::now() + timeout).max(p.sent + timeout * 2);
        pipe.alive = Some((msg["id"].to_string(), Instant::now(), due));
        let sent = tokio::time::timeout(
            w.settings.run.timeout,
            lines(client).send_line(msg.to_string().as_bytes()),
        )
        .await;
        return sent.is_err().then(|| lost(pipe));
    }
    // Neither the overdue request nor the probe sent after it came back.
    Some(lost(pipe))
}
