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
//!   most [`LANE_LIMIT`] of its requests wait at a time, so it cannot crowd
//!   the rest); not, it was never answered (J4), and so is every other
//!   dropped request of its lane: the lane is *hung*, and its later drops
//!   are judged at once. When the budget is spent, dropped requests wait one
//!   grace more at most: then a slow lane's get no verdict, the others were
//!   dropped (J4);
//! - if nothing comes back within another timeout, the server hangs (`Lost`);
//! - a request with a lone surrogate may go unanswered (a parser may refuse
//!   the line, RFC 8259 §8.2) or be answered by an id-null error.
//!
//! Ids whose answers may still come late (skipped, silenced, probes) are
//! handed to the client to ignore, so a later lockstep exchange never takes
//! a stale answer for its own.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use mcperr_core::exchange::{Ending, Exchange, Stray};
use mcperr_core::fuzz::{Class, FuzzInput};
use mcperr_core::reassemble::{Read, Reassembler};
use mcperr_core::text::line;
use mcperr_protocol::Era;
use serde_json::Value;

use super::probe::{alive_probe, count_in, count_params, probe, SILENCE_OK};
use super::width::Width;
use super::worker::{Stop, Worker, COUNT_WINDOW};
use crate::client::{is_response, Client, Conn};
use crate::transport::{LineConn, StdoutEvent};
use mcperr_core::lines::OverLong;

/// Late ids remembered, at most.
const LATE_KEPT: usize = 256;

/// The places taken in the window. Lone-surrogate requests, which a server
/// may leave unanswered for good, do not take a place (up to another
/// `width`). Nor does a request that requests sent after it have overtaken
/// (answered first) while it waits out its drop grace: the server has moved
/// past it, and a slot it held would only idle the server (a few per cent of
/// a campaign's requests go unanswered on most SDKs' servers).
struct Occupancy {
    silent: usize,
    live: usize,
}

impl Occupancy {
    /// Room for another request.
    fn has_room(&self, width: usize) -> bool {
        self.live < width && self.silent < width
    }

    /// A request just sent takes its place.
    fn add(&mut self, silent_ok: bool) {
        if silent_ok {
            self.silent += 1;
        } else {
            self.live += 1;
        }
    }
}

/// Answers judged per turn before the window is refilled, where the
/// transport holds the rest back (a server thread in process): the server
/// gets new lines while the fuzzer judges, instead of running dry.
const PER_TURN: usize = 8;
/// Dropped requests waiting for a late answer per lane (method and target),
/// at most: further inputs of a full lane are drawn again.
pub(crate) const LANE_LIMIT: usize = 4;
/// The drop grace is this many times the server's recent 90th-percentile
/// latency, and at least [`MIN_GRACE`].
const GRACE_FACTOR: u32 = 8;
const MIN_GRACE: Duration = Duration::from_millis(100);
/// Dropped requests waiting for a late answer, at most (beyond, a drop is
/// judged at once).
const MAX_STRAGGLERS: usize = 4096;
/// Latencies kept for the drop grace.
const LATENCIES_KEPT: usize = 128;

/// The server's recent answer times, and the grace after which a request
/// still unanswered is dropped (or, over HTTP, counts against its lane)
/// while later ones are answered.
#[derive(Default)]
pub(crate) struct Latency {
    recent: VecDeque<Duration>,
    seen: u64,
    grace: Option<Duration>,
}

impl Latency {
    /// Notes the time an answered request took, renewing the grace.
    pub(crate) fn observe(&mut self, took: Duration) {
        self.recent.push_back(took);
        if self.recent.len() > LATENCIES_KEPT {
            self.recent.pop_front();
        }
        // Renewed every 16 answers (counted: the window's length stays at
        // its cap, and renewing on every answer cost a tenth of a campaign).
        self.seen += 1;
        if self.seen.is_multiple_of(16) {
            let mut recent: Vec<Duration> = self.recent.iter().copied().collect();
            let at = recent.len() * 9 / 10;
            let p90 = *recent.select_nth_unstable(at).1;
            self.grace = Some((p90 * GRACE_FACTOR).max(MIN_GRACE));
        }
    }

    /// The grace: eight times the recent 90th percentile, at least 100 ms,
    /// at most `timeout` (and `timeout` until 16 answers are seen).
    pub(crate) fn grace(&self, timeout: Duration) -> Duration {
        self.grace.unwrap_or(timeout).min(timeout)
    }
}

/// The lane of a request: method and target, so one slow tool does not
/// hold up the others.
pub(crate) fn lane_of(input: &FuzzInput) -> String {
    format!("{} {}", input.method, input.target)
}

struct Pending {
    input: FuzzInput,
    msg: Value,
    sent: Instant,
    /// A lone surrogate: silence, or an id-null error, answers it.
    silent_ok: bool,
}

#[derive(Default)]
struct Pipe {
    pending: HashMap<String, Pending>,
    order: VecDeque<String>,
    /// Answers with these ids may still come and are let through.
    late: VecDeque<String>,
    /// Silenced lone-surrogate requests: an id-null error may answer one.
    surrogates: VecDeque<String>,
    /// Answers with ids nobody sent, not yet matched to a request.
    unknown: usize,
    /// When the latest-sent request that got an answer was sent.
    answered_sent: Option<Instant>,
    /// A liveness probe in flight (id key, when sent).
    alive: Option<(String, Instant)>,
    /// A `limited_calls` call in flight (id key, when sent, valid calls by then).
    counting: Option<(String, Instant, u64)>,
    /// The invalid `limited` calls the count in flight checks.
    checking: Vec<FuzzInput>,
    /// Dropped requests, out of the window, waiting up to `--slow-ms` for
    /// a late answer.
    stragglers: HashMap<String, Pending>,
    /// Dropped requests per lane.
    lanes: HashMap<String, usize>,
    /// Lanes whose dropped request was answered late, and those never answered.
    slow_lanes: std::collections::HashSet<String>,
    hung_lanes: std::collections::HashSet<String>,
    /// Recent latencies of answered requests, and the grace they give.
    latency: Latency,
    /// When the budget was spent: stragglers then wait one drop grace more at most.
    spent_at: Option<Instant>,
    /// Whether the server has echoed an id beyond a double: then an id-less
    /// error is not its parser refusing a big id.
    big_ids_held: bool,
    /// Lines that are no message alone, held in case they join into one.
    reader: Reassembler,
}

fn remember(list: &mut VecDeque<String>, key: String) {
    list.push_back(key);
    while list.len() > LATE_KEPT {
        list.pop_front();
    }
}

impl Pipe {
    fn take(&mut self, key: &str) -> Option<Pending> {
        let p = self.pending.remove(key)?;
        // Answers mostly come in the order sent: the front first.
        if let Some(i) = self.order.iter().position(|k| k == key) {
            self.order.remove(i);
        }
        Some(p)
    }

    fn waiting(&self) -> usize {
        self.pending.values().filter(|p| !p.silent_ok).count()
    }

    /// The places the requests out hold, counted once per refill of the
    /// window (see [`Occupancy`]).
    fn occupancy(&self) -> Occupancy {
        let (mut silent, mut live) = (0, 0);
        for p in self.pending.values() {
            if p.silent_ok {
                silent += 1;
            } else if self.answered_sent.is_none_or(|s| s <= p.sent) {
                live += 1;
            }
        }
        Occupancy { silent, live }
    }

    /// The request whose deadline comes first, and that deadline: for a
    /// request in the window a timeout after it was sent, or the drop grace
    /// once a request sent after it was answered (or, while a liveness probe
    /// is out, the probe's timeout); for a straggler `--slow-ms` (or a grace
    /// after the budget was spent, if sooner).
    fn first_deadline(&self, timeout: Duration, slow: Duration) -> Option<(String, Instant)> {
        let mut first: Option<(&String, Instant)> = None;
        let grace = self.latency.grace(timeout);
        let probe_due = self.alive.as_ref().map(|(_, sent)| *sent + timeout);
        for k in &self.order {
            if let Some(p) = self.pending.get(k) {
                let passed = self.answered_sent.is_some_and(|s| s > p.sent);
                let wait = match (p.silent_ok, passed) {
                    (true, _) => timeout.min(SILENCE_OK),
                    (false, true) => grace,
                    (false, false) => timeout,
                };
                let mut d = p.sent + wait;
                if let (false, false, Some(at)) = (p.silent_ok, passed, self.spent_at) {
                    // After the budget nothing is sent after it that could
                    // pass it: a grace after the last send, the liveness probe
                    // asks instead of a whole timeout's wait (which a
                    // campaign's rate would count in full).
                    d = d.min(at.max(p.sent) + grace);
                }
                let d = probe_due.unwrap_or(d);
                if first.is_none_or(|(_, f)| d < f) {
                    first = Some((k, d));
                }
            }
        }
        for (k, p) in &self.stragglers {
            let mut d = p.sent + slow.max(timeout);
            if let Some(at) = self.spent_at {
                // After the budget: one grace more, not a whole timeout (a
                // campaign's rate counts its tail).
                d = d.min(at + grace);
            }
            if first.is_none_or(|(_, f)| d < f) {
                first = Some((k, d));
            }
        }
        first.map(|(k, d)| (k.clone(), d))
    }

    /// Whether a slow lane holds as many dropped requests as it may.
    fn lane_full(&self, lane: &str) -> bool {
        self.slow_lanes.contains(lane) && self.lanes.get(lane).is_some_and(|n| *n >= LANE_LIMIT)
    }

    /// Takes a straggler out, keeping its lane's count.
    fn unstraggle(&mut self, key: &str) -> Option<Pending> {
        let p = self.stragglers.remove(key)?;
        if let Some(n) = self.lanes.get_mut(&lane_of(&p.input)) {
            *n = n.saturating_sub(1);
        }
        remember(&mut self.late, key.to_string());
        Some(p)
    }

    /// Every id whose answer may still come (before a lockstep phase).
    fn stale_ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.late.iter().chain(&self.surrogates).cloned().collect();
        ids.extend(self.stragglers.keys().cloned());
        ids.extend(self.alive.iter().map(|(k, _)| k.clone()));
        ids.extend(self.counting.iter().map(|(k, _, _)| k.clone()));
        ids
    }
}

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
    // Lines held as the start of a message split over lines that never
    // came whole are what they are: stray output.
    let held = pipe.reader.flush();
    if !held.is_empty() {
        w.record_strays(held);
    }
    stop
}

/// The loop of [`pipelined`], over a pipe it flushes afterwards.
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
        let mut redraws = 0;
        let mut held = pipe.occupancy();
        while !draining && !spent && held.has_room(width.get()) {
            if !w.take() {
                spent = true;
                pipe.spent_at = Some(Instant::now());
                break;
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
        // A full window of invalid `limited` calls: ask `limited_calls` in the
        // pipeline. A count can only lag behind (a call still running), never
        // run ahead, so a rise over the valid calls that succeeded is real.
        if w.window.len() >= COUNT_WINDOW && pipe.counting.is_none() && !draining {
            let msg = counted_call(w.era, w.next_n());
            pipe.counting = Some((msg["id"].to_string(), Instant::now(), w.valid_ok));
            pipe.checking.append(&mut w.window);
            if !batch.is_empty() {
                batch.push(b'\n');
            }
            batch.extend_from_slice(msg.to_string().as_bytes());
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
                client.ignore(pipe.stale_ids());
                w.window.append(&mut pipe.checking);
                super::probe::check_count(w, client).await;
                return Stop::Done;
            }
            continue;
        }
        // What has arrived is taken without a wait (nor the deadlines worked
        // out); else the first event waits, and what arrived with it is taken.
        let ready = lines(client).ready_answers(PER_TURN);
        let (events, oldest) = if ready.is_empty() {
            let Some((oldest, deadline)) =
                pipe.first_deadline(timeout, w.settings.run.slow_timeout)
            else {
                continue;
            };
            let wait = deadline.saturating_duration_since(Instant::now());
            let first = lines(client).next_answer(wait).await;
            let more = match first {
                Some((StdoutEvent::Line(_), _)) => lines(client).ready_answers(PER_TURN),
                _ => vec![],
            };
            let events: Vec<_> = std::iter::once(first)
                .chain(more.into_iter().map(Some))
                .collect();
            (events, oldest)
        } else {
            (ready.into_iter().map(Some).collect(), String::new())
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
            // The requests still waiting are the ones answered with wrong ids:
            // each is asked again alone, where its answer is unambiguous (a
            // request a parser may refuse cannot be told apart that way).
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
                    return Stop::Lost(vec![p.input]);
                }
            }
        }
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
        let waited_out = elapsed >= run.slow_timeout.max(run.timeout);
        if !waited_out && pipe.spent_at.is_none() {
            // Woken early (another deadline): it waits on.
            return None;
        }
        let p = pipe.unstraggle(key).expect("looked up above");
        let lane = lane_of(&p.input);
        if !waited_out {
            // The campaign ended first (a grace after the budget was spent):
            // unanswered for a whole timeout while later ones were answered
            // is J4, unless its lane is slow; a shorter wait is no verdict.
            w.settings.stats.requests.fetch_add(1, Ordering::Relaxed);
            if elapsed >= run.timeout && !pipe.slow_lanes.contains(&lane) {
                never_answered(w, p);
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
        pipe.alive = Some((msg["id"].to_string(), Instant::now()));
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

/// A request unanswered while the server answered later ones: dropped from
/// the window, its slot freed. It waits for a late answer up to `--slow-ms`
/// unless its lane is hung (one of its requests had that wait in vain):
/// then it is judged never answered (J4) at once.
fn skipped(w: &mut Worker<'_>, pipe: &mut Pipe, key: &str) {
    let Some(p) = pipe.take(key) else {
        return;
    };
    let lane = lane_of(&p.input);
    // A hung lane's drops are judged at once; any other waits out of the
    // window, up to --slow-ms and at least the timeout (a drop by the grace
    // alone is no verdict: a concurrent server may answer out of order).
    let wait = !pipe.hung_lanes.contains(&lane) && pipe.stragglers.len() < MAX_STRAGGLERS;
    if wait {
        *pipe.lanes.entry(lane).or_default() += 1;
        pipe.stragglers.insert(key.to_string(), p);
        return;
    }
    remember(&mut pipe.late, key.to_string());
    w.settings.stats.requests.fetch_add(1, Ordering::Relaxed);
    never_answered(w, p);
}

/// Whose answer an error without an id (absent or null) is.
enum Claim {
    /// A request in flight (its key).
    Request(String),
    /// A lone-surrogate request already dropped in silence.
    Silenced,
    /// Nobody's: a stray.
    Nobody,
}

/// An error without an id answers input the server could not read, or read
/// without its id: the oldest request in flight of the kind the error's
/// code points to. `-32600` (not a valid Request object) points to a broken
/// envelope first (rmcp answers params given as an array so, id-less);
/// anything else (`-32700` for a line it could not decode) to a lone
/// surrogate first (a parser may refuse it, RFC 8259 §8.2), in flight or
/// already dropped in silence. Then an id beyond a double, unless the server
/// has echoed one (the RFC 8259 §6 policy judges it, wire::big_id). Claimed,
/// it is judged as that request's answer (J1 error-id) at once, not left to
/// wait out the drop grace, and never taken later for the answer of a
/// lockstep request that follows.
fn claim_idless(pipe: &mut Pipe, value: &Value) -> Claim {
    let oldest = |pipe: &Pipe, kind: &dyn Fn(&Pending) -> bool| {
        pipe.order
            .iter()
            .find(|k| pipe.pending.get(*k).is_some_and(kind))
            .cloned()
    };
    let envelope = |p: &Pending| matches!(p.input.class, Class::Envelope(_));
    let surrogate = |p: &Pending| p.silent_ok;
    let big_id = |p: &Pending| mcperr_core::wire::beyond_double(&p.msg["id"]);
    let not_a_request = value.pointer("/error/code").and_then(Value::as_i64) == Some(-32600);
    if not_a_request {
        if let Some(k) = oldest(pipe, &envelope) {
            return Claim::Request(k);
        }
    }
    if let Some(k) = oldest(pipe, &surrogate) {
        return Claim::Request(k);
    }
    if pipe.surrogates.pop_front().is_some() {
        return Claim::Silenced;
    }
    if !pipe.big_ids_held {
        if let Some(k) = oldest(pipe, &big_id) {
            return Claim::Request(k);
        }
    }
    match oldest(pipe, &envelope) {
        Some(k) => Claim::Request(k),
        None => Claim::Nobody,
    }
}

/// Judges a request that was never answered while others were (J4).
fn never_answered(w: &mut Worker<'_>, p: Pending) {
    let ex = Exchange {
        request: p.msg,
        ending: Ending::Timeout,
        strays: vec![],
        duration: p.sent.elapsed(),
        http: None,
    };
    w.judge_and_record_alive(&p.input, &ex, None, true);
}

/// One line from the server, with its value if the transport decoded it
/// already. Returns true when the pipe must drain (an answer with an id
/// nobody sent).
fn answer(w: &mut Worker<'_>, pipe: &mut Pipe, bytes: &[u8], decoded: Option<Value>) -> bool {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return false;
    }
    // The one reading of a line a case gets too ([`Reassembler`]): a
    // message split over lines, or not UTF-8, is read and named.
    let value = match decoded {
        Some(v @ Value::Object(_)) => v,
        _ => match pipe.reader.feed(bytes) {
            Read::Message(v, found) => {
                if !found.is_empty() {
                    w.record_strays(found);
                }
                v
            }
            Read::Strays(found) => {
                w.record_strays(found);
                return false;
            }
            Read::Held => return false,
        },
    };
    if !is_response(&value) {
        // A server-to-client request or notification: judged only where it
        // carries an id.
        if let Some(s) = Stray::of_server_message(&value) {
            w.record_strays(vec![s]);
        }
        return false;
    }
    let id = value.get("id").cloned().unwrap_or(Value::Null);
    let mut key = id.to_string();
    if let Some((k, sent)) = &pipe.alive {
        if *k == key {
            // Alive: what was sent before the probe and is overdue was skipped.
            let probe_sent = *sent;
            pipe.alive = None;
            pipe.answered_sent = pipe.answered_sent.max(Some(probe_sent));
            let timeout = w.settings.run.timeout;
            let overdue: Vec<String> = pipe
                .order
                .iter()
                .filter(|k| {
                    pipe.pending.get(*k).is_some_and(|p| {
                        !p.silent_ok && p.sent < probe_sent && p.sent.elapsed() >= timeout
                    })
                })
                .cloned()
                .collect();
            for k in overdue {
                skipped(w, pipe, &k);
            }
            return false;
        }
    }
    if pipe.counting.as_ref().is_some_and(|(k, _, _)| *k == key) {
        let (_, _, valid) = pipe.counting.take().expect("checked above");
        match (count_in(&value), w.last_count) {
            (Some(now), Some(before)) if now > before + valid => {
                w.suspect(&mut pipe.checking);
                w.last_count = Some(now);
                w.valid_ok -= valid.min(w.valid_ok);
            }
            (Some(now), _) => {
                w.last_count = Some(now);
                w.valid_ok -= valid.min(w.valid_ok);
                pipe.checking.clear();
            }
            _ => {}
        }
        return false;
    }
    if id.is_null() && value.get("error").is_some() {
        match claim_idless(pipe, &value) {
            Claim::Request(k) => key = k,
            Claim::Silenced => return false,
            Claim::Nobody => {}
        }
    }
    if let Some(p) = pipe.unstraggle(&key) {
        // A dropped request answered after all: late, and slow if past the timeout.
        let lane = lane_of(&p.input);
        let took = p.sent.elapsed();
        w.settings.stats.requests.fetch_add(1, Ordering::Relaxed);
        let ex = Exchange {
            request: p.msg,
            ending: Ending::Answered(value),
            strays: vec![],
            duration: took,
            http: None,
        };
        let timeout = w.settings.run.timeout;
        if took > timeout && pipe.slow_lanes.insert(lane) {
            w.record_slow(&p.input, &ex, took, timeout);
        }
        w.judge_and_record(&p.input, &ex, None);
        return false;
    }
    let Some(p) = pipe.take(&key) else {
        if id.is_null() {
            w.record_strays(vec![Stray::NullIdResponse(value)]);
        } else if let Some(i) = pipe.surrogates.iter().position(|k| *k == key) {
            pipe.surrogates.remove(i);
        } else if !pipe.late.contains(&key) {
            pipe.unknown += 1;
            return true;
        }
        return false;
    };
    pipe.answered_sent = pipe.answered_sent.max(Some(p.sent));
    // Its own id echoed (not an id-less error claimed for it).
    pipe.big_ids_held |= mcperr_core::wire::beyond_double(&id);
    pipe.latency.observe(p.sent.elapsed());
    w.settings.stats.requests.fetch_add(1, Ordering::Relaxed);
    let ok = value
        .get("result")
        .is_some_and(|r| r.get("isError") != Some(&Value::Bool(true)));
    if ok && w.is_counted_call(&p.input) && p.input.class == Class::ValidCall {
        w.valid_ok += 1;
    }
    let ex = Exchange {
        request: p.msg,
        ending: Ending::Answered(value),
        strays: vec![],
        duration: p.sent.elapsed(),
        http: None,
    };
    w.judge_and_record(&p.input, &ex, None);
    false
}

/// A line over the cap: the answer to the request its id names, which ends
/// there (unread, it cannot be judged), or else a stray.
fn too_long(w: &mut Worker<'_>, pipe: &mut Pipe, line: &OverLong) {
    let taken = line.id().and_then(|id| {
        pipe.take(&id.to_string())
            .or_else(|| pipe.unstraggle(&id.to_string()))
    });
    let Some(p) = taken else {
        w.record_strays(vec![Stray::TooLong(line.len)]);
        return;
    };
    w.settings.stats.requests.fetch_add(1, Ordering::Relaxed);
    let ex = Exchange {
        request: p.msg,
        ending: Ending::TooLarge(line.len),
        strays: vec![],
        duration: p.sent.elapsed(),
        http: None,
    };
    w.judge_and_record(&p.input, &ex, None);
}

/// A `limited_calls` call with a string id no fuzz request uses.
fn counted_call(era: Era, n: u64) -> Value {
    let mut msg = serde_json::json!({"jsonrpc": "2.0", "id": format!("mcperr-count-{n}"), "method": "tools/call"});
    if let Some(p) = mcperr_core::plan::params_for(era, Some(count_params()), true) {
        msg["params"] = p;
    }
    msg
}
