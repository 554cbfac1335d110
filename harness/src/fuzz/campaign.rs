//! One era's campaign: `jobs` workers, each on its own server process, each
//! drawing inputs from its own seeded stream (seed + worker index).
//!
//! Over stdio a worker keeps up to `in_flight` requests in the pipe and
//! matches answers by id (JSON-RPC allows any order); over HTTP it sends
//! batches of `in_flight` concurrent requests. Whatever cannot be judged in
//! flight is judged alone, in lockstep: a request with a lone surrogate
//! (an id-null error may answer it), requests whose answers came back with
//! ids nobody sent, the `limited` calls of a window whose `limited_calls`
//! count rose, and the requests in flight when the server died or hung.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use mcperr_core::exchange::{Ending, Exchange, Stray};
use mcperr_core::fuzz::inputs::line;
use mcperr_core::fuzz::{Class, FuzzInput, Generator, Judge, Seeded};
use mcperr_core::select::LeftOut;
use mcperr_protocol::Era;
use serde_json::Value;

use super::probe::{count, count_in, count_params, culprit, probe, shrink};
use super::{FuzzSettings, Store};
use crate::client::{is_response, Client, Conn};
use crate::engine::{connect, discover, EngineError, EraChoice};
use crate::transport::{LineConn, StdoutEvent};

/// Check `limited_calls` after this many invalid `limited` calls.
const COUNT_WINDOW: usize = 64;
/// Calls of windows whose count rose kept for the search, at most.
const MAX_SUSPECTS: usize = 4 * COUNT_WINDOW;

/// One worker's state: its generator, judge, choices and counters.
pub(crate) struct Worker<'a> {
    pub(crate) settings: &'a FuzzSettings,
    pub(crate) store: &'a Store,
    pub(crate) gen: Generator,
    pub(crate) judge: Judge,
    pub(crate) src: Seeded,
    pub(crate) era: Era,
    /// The server has `limited` and `limited_calls`: bodies can be counted.
    pub(crate) counted: bool,
    next_n: u64,
    /// Invalid `limited` calls since the last count.
    window: Vec<FuzzInput>,
    /// Successful valid `limited` calls since the last count.
    valid_ok: u64,
    last_count: Option<u64>,
    /// Calls of windows whose count rose, searched after the campaign.
    suspects: Vec<FuzzInput>,
    /// Requests issued by this worker (for `--requests`).
    issued: u64,
    quota: Option<u64>,
    deadline: Option<Instant>,
    pub(crate) shrink_requests: &'a AtomicU64,
}

impl Worker<'_> {
    /// The next request number (ids are drawn from it in every style).
    pub(crate) fn next_n(&mut self) -> u64 {
        self.next_n += 1;
        self.next_n
    }

    fn take(&mut self) -> bool {
        let stats = &self.settings.stats;
        if stats.stop.load(Ordering::Relaxed)
            || self
                .settings
                .max_findings
                .is_some_and(|m| stats.findings.load(Ordering::Relaxed) >= m)
            || self.quota.is_some_and(|q| self.issued >= q)
            || self.deadline.is_some_and(|d| Instant::now() >= d)
        {
            return false;
        }
        self.issued += 1;
        true
    }

    /// Judges an exchange and records what it shows.
    pub(crate) fn judge_and_record(&self, input: &FuzzInput, ex: &Exchange, ran: Option<bool>) {
        self.judge_and_record_alive(input, ex, ran, false)
    }

    /// As [`Worker::judge_and_record`]; `alive`: the request went
    /// unanswered while the server answered others.
    pub(crate) fn judge_and_record_alive(
        &self,
        input: &FuzzInput,
        ex: &Exchange,
        ran: Option<bool>,
        alive: bool,
    ) {
        let output = matches!(input.class, Class::ValidCall)
            .then(|| self.gen.output_validator(&input.target))
            .flatten();
        let mut findings = self.judge.judge(input, ex, ran, output);
        if alive {
            Judge::unanswered_while_alive(&mut findings);
        }
        self.store
            .record(&self.settings.stats, findings, input, self.counted);
    }

    fn record_strays(&self, strays: Vec<Stray>) {
        let findings = self.judge.strays(strays);
        let input = FuzzInput {
            method: "(stdout)".into(),
            params: Value::Null,
            envelope: false,
            id_style: mcperr_core::fuzz::IdStyle::Counter,
            class: Class::UnknownMethod,
            target: "stdout".into(),
        };
        self.store
            .record(&self.settings.stats, findings, &input, self.counted);
    }

    fn is_counted_call(&self, input: &FuzzInput) -> bool {
        self.counted && input.target == "limited" && input.method == "tools/call"
    }

    /// Sends the calls of the windows whose count rose alone, each counted
    /// around, to find which ran its body.
    async fn confirm(&mut self, client: &mut Client) {
        for input in std::mem::take(&mut self.suspects) {
            let (ex, ran) = probe(self, client, &input).await;
            self.shrink_requests.fetch_add(3, Ordering::Relaxed);
            self.judge_and_record(&input, &ex, ran);
        }
    }

    /// After a window of invalid `limited` calls: did `limited_calls` rise
    /// by more than the valid calls that succeeded? Then find which ran.
    async fn check_count(&mut self, client: &mut Client) {
        if !self.counted || self.window.is_empty() {
            return;
        }
        let mut window = std::mem::take(&mut self.window);
        let now = count(client).await;
        if let (Some(now), Some(before)) = (now, self.last_count) {
            if now > before + self.valid_ok {
                self.suspect(&mut window);
            }
        }
        self.last_count = now;
        self.valid_ok = 0;
    }

    /// Keeps the calls of a window whose count rose, for [`Worker::confirm`]
    /// after the campaign (a search needs the pipe to itself).
    fn suspect(&mut self, window: &mut Vec<FuzzInput>) {
        if self.suspects.len() < MAX_SUSPECTS {
            self.suspects.append(window);
        }
        window.clear();
    }
}

/// Why a worker's loop stopped.
pub(crate) enum Stop {
    /// The budget is spent.
    Done,
    /// The server died or stopped answering with these requests in flight.
    Lost(Vec<FuzzInput>),
}

struct Pending {
    input: FuzzInput,
    msg: Value,
    sent: Instant,
    /// A lone surrogate: silence is an allowed answer.
    silent_ok: bool,
}

fn lines(client: &mut Client) -> &mut LineConn {
    match &mut client.conn {
        Conn::Lines(c) => c,
        Conn::Http(_) => unreachable!("a line campaign on an HTTP client"),
    }
}

/// How long a request with a lone surrogate may go unanswered: a parser
/// may refuse the line, and over stdio silence is then allowed (J6) as long
/// as the server lives, which the other answers show.
const SILENCE_OK: Duration = Duration::from_secs(1);

/// The pipelined loop over a line connection (stdio child or in process).
async fn pipelined(w: &mut Worker<'_>, client: &mut Client) -> Stop {
    let timeout = w.settings.run.timeout;
    let width = w.settings.in_flight.max(1);
    let mut pending: HashMap<String, Pending> = HashMap::new();
    let mut order: VecDeque<String> = VecDeque::new();
    let mut silenced: VecDeque<String> = VecDeque::new();
    let mut unknown = 0usize;
    // Id-null errors still to be taken as late answers to silenced requests.
    let mut absorb = 0usize;
    let mut draining = false;
    let mut spent = false;
    let mut batch: Vec<u8> = Vec::new();
    // When an answer last came: a request older than that which is still
    // unanswered at its deadline was skipped, not a sign of a hung server.
    let mut last_answer = Instant::now();
    // A liveness probe in flight (its id key and when it went): sent when a
    // request is overdue and nothing was answered since it was sent, to tell
    // a request the server skipped from a server that hangs.
    let mut alive: Option<(String, Instant)> = None;
    // A `limited_calls` call in flight (id key, when, valid calls counted by
    // then), and the invalid `limited` calls it checks.
    let mut counting: Option<(String, Instant, u64)> = None;
    let mut checking: Vec<FuzzInput> = Vec::new();
    loop {
        while !draining && !spent && pending.len() < width {
            if !w.take() {
                spent = true;
                break;
            }
            let input = w.gen.next(&mut w.src);
            let msg = input.message(w.era, w.next_n());
            let key = msg["id"].to_string();
            // One write for the whole refill: a syscall per request would
            // cost more than the server's work.
            if !batch.is_empty() {
                batch.push(b'\n');
            }
            batch.extend_from_slice(&line(&msg));
            if w.is_counted_call(&input) && matches!(input.class, Class::InvalidCall(_)) {
                w.window.push(input.clone());
            }
            order.push_back(key.clone());
            let silent_ok = input.has_lone_surrogate();
            pending.insert(
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
        if w.window.len() >= COUNT_WINDOW && counting.is_none() && !draining {
            let n = w.next_n();
            let msg = counted_call(w.era, n);
            counting = Some((msg["id"].to_string(), Instant::now(), w.valid_ok));
            checking.append(&mut w.window);
            if !batch.is_empty() {
                batch.push(b'\n');
            }
            batch.extend_from_slice(msg.to_string().as_bytes());
        }
        if counting
            .as_ref()
            .is_some_and(|(_, sent, _)| sent.elapsed() > timeout)
        {
            counting = None; // unanswered: the next window asks again
        }
        if !batch.is_empty() {
            lines(client).send_line(&batch).await;
            batch.clear();
        }
        let only_silent = pending.values().all(|p| p.silent_ok);
        if only_silent && (pending.is_empty() || draining || spent) {
            // Requests a parser may refuse do not hold up a drain: their
            // late answers, if any, are let through below.
            for k in order.drain(..) {
                pending.remove(&k);
                silenced.push_back(k);
                absorb += 1;
                w.settings.stats.requests.fetch_add(1, Ordering::Relaxed);
            }
            while silenced.len() > 64 {
                silenced.pop_front();
            }
            if spent {
                w.window.append(&mut checking);
                w.check_count(client).await;
            }
            draining = false;
            unknown = 0;
            if spent {
                return Stop::Done;
            }
            continue;
        }
        // The request whose deadline comes first (a lone surrogate's is short).
        let (oldest_key, deadline) = {
            let mut first: Option<(&String, Instant)> = None;
            for k in &order {
                if let Some(p) = pending.get(k) {
                    let wait = if p.silent_ok {
                        timeout.min(SILENCE_OK)
                    } else {
                        timeout
                    };
                    let d = p.sent + wait;
                    if first.is_none_or(|(_, f)| d < f) {
                        first = Some((k, d));
                    }
                }
            }
            first.map_or_else(|| (String::new(), Instant::now()), |(k, d)| (k.clone(), d))
        };
        let deadline = alive.as_ref().map_or(deadline, |(_, sent)| *sent + timeout);
        let wait = deadline.saturating_duration_since(Instant::now());
        // The first event waits; whatever else has arrived is taken with it,
        // so a refill sends many requests in one write.
        let first = lines(client).next_event(wait).await;
        let more = match first {
            Some(StdoutEvent::Line(_)) => lines(client).pending(),
            _ => vec![],
        };
        for event in std::iter::once(first).chain(more.into_iter().map(Some)) {
            match event {
                None if pending.get(&oldest_key).is_some_and(|p| p.silent_ok) => {
                    // Unanswered input a parser may refuse: silence is allowed.
                    pending.remove(&oldest_key);
                    order.retain(|k| *k != oldest_key);
                    silenced.push_back(oldest_key.clone());
                    absorb += 1;
                    if silenced.len() > 64 {
                        silenced.pop_front();
                    }
                    w.settings.stats.requests.fetch_add(1, Ordering::Relaxed);
                }
                None if unknown > 0 => {
                    // Answered with a wrong id, most likely: asked again alone below.
                    unknown = pending.len();
                }
                None if pending
                    .get(&oldest_key)
                    .is_some_and(|p| p.sent < last_answer) =>
                {
                    let p = pending.remove(&oldest_key).expect("the oldest is pending");
                    order.retain(|k| *k != oldest_key);
                    silenced.push_back(oldest_key.clone());
                    w.settings.stats.requests.fetch_add(1, Ordering::Relaxed);
                    let ex = Exchange {
                        request: p.msg,
                        ending: Ending::Timeout,
                        strays: vec![],
                        duration: p.sent.elapsed(),
                        http: None,
                    };
                    w.judge_and_record_alive(&p.input, &ex, None, true);
                }
                None if alive.is_none() => {
                    let n = w.next_n();
                    let msg = alive_probe(w.era, n);
                    alive = Some((msg["id"].to_string(), Instant::now()));
                    lines(client).send_line(msg.to_string().as_bytes()).await;
                }
                None | Some(StdoutEvent::Eof) => {
                    let lost = order
                        .iter()
                        .filter_map(|k| pending.remove(k))
                        .map(|p| p.input)
                        .collect();
                    return Stop::Lost(lost);
                }
                Some(StdoutEvent::TooLong(n)) => w.record_strays(vec![Stray::TooLong(n)]),
                Some(StdoutEvent::Line(bytes)) => {
                    if bytes.iter().all(u8::is_ascii_whitespace) {
                        continue;
                    }
                    let Ok(value @ Value::Object(_)) =
                        mcperr_core::fuzz::inputs::parse_line(&bytes)
                    else {
                        let text = String::from_utf8_lossy(&bytes).into_owned();
                        w.record_strays(vec![Stray::NotJson(text)]);
                        continue;
                    };
                    if !is_response(&value) {
                        continue; // a server-to-client request or notification: allowed
                    }
                    let id = value.get("id").cloned().unwrap_or(Value::Null);
                    let mut key = id.to_string();
                    if counting.as_ref().is_some_and(|(k, _, _)| *k == key) {
                        let (_, _, valid) = counting.take().expect("checked above");
                        last_answer = Instant::now();
                        match (count_in(&value), w.last_count) {
                            (Some(now), Some(before)) if now > before + valid => {
                                w.suspect(&mut checking);
                                w.last_count = Some(now);
                                w.valid_ok -= valid.min(w.valid_ok);
                            }
                            (Some(now), _) => {
                                w.last_count = Some(now);
                                w.valid_ok -= valid.min(w.valid_ok);
                                checking.clear();
                            }
                            _ => {}
                        }
                        continue;
                    }
                    if alive.as_ref().is_some_and(|(k, _)| *k == key) {
                        // Alive: what is overdue was skipped, not a hang.
                        alive = None;
                        last_answer = Instant::now();
                        continue;
                    }
                    if id.is_null() && value.get("error").is_some() {
                        // An id-null error answers input the server could not read:
                        // the oldest request it may have refused, if one is in flight.
                        if let Some(k) = order
                            .iter()
                            .find(|k| pending.get(*k).is_some_and(|p| p.silent_ok))
                        {
                            key = k.clone();
                        }
                    }
                    last_answer = Instant::now();
                    if let Some(p) = pending.remove(&key) {
                        order.retain(|k| *k != key);
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
                    } else if id.is_null() && absorb > 0 && value.get("error").is_some() {
                        absorb -= 1;
                    } else if id.is_null() {
                        w.record_strays(vec![Stray::NullIdResponse(value)]);
                    } else if silenced.contains(&key) {
                        absorb = absorb.saturating_sub(1);
                    } else {
                        // An id nobody sent answers one of the requests in flight:
                        // stop sending until only the unanswered ones are left.
                        unknown += 1;
                        draining = true;
                    }
                }
            }
        }
        let waiting = pending.values().filter(|p| !p.silent_ok).count();
        if unknown > 0 && waiting <= unknown {
            // The requests still waiting are the ones answered with wrong ids:
            // each is asked again alone, where its answer is unambiguous. A
            // request a parser may refuse cannot be told apart that way.
            let suspects: Vec<Pending> =
                order.drain(..).filter_map(|k| pending.remove(&k)).collect();
            unknown = 0;
            for p in suspects {
                if p.silent_ok {
                    absorb += 1;
                    continue;
                }
                let (ex, ran) = probe(w, client, &p.input).await;
                w.settings.stats.requests.fetch_add(1, Ordering::Relaxed);
                if p.silent_ok && ex.ending == Ending::Timeout {
                    continue;
                }
                w.judge_and_record(&p.input, &ex, ran);
                if matches!(ex.ending, Ending::Died(_) | Ending::Timeout) {
                    return Stop::Lost(vec![p.input]);
                }
            }
        }
    }
}

/// A `limited_calls` call with a string id no fuzz request uses.
fn counted_call(era: Era, n: u64) -> Value {
    let mut msg = serde_json::json!({"jsonrpc": "2.0", "id": format!("mcperr-count-{n}"), "method": "tools/call"});
    if let Some(p) = mcperr_core::plan::params_for(era, Some(count_params()), true) {
        msg["params"] = p;
    }
    msg
}

/// A request any server answers (`ping`, or `server/discover` in 2026-07-28),
/// with a string id no fuzz request uses.
fn alive_probe(era: Era, n: u64) -> Value {
    let method = match era {
        Era::Legacy => "ping",
        Era::Modern => "server/discover",
    };
    let mut msg =
        serde_json::json!({"jsonrpc": "2.0", "id": format!("mcperr-alive-{n}"), "method": method});
    if let Some(p) = mcperr_core::plan::params_for(era, None, true) {
        msg["params"] = p;
    }
    msg
}

/// Batches of concurrent requests over HTTP, each a lockstep exchange on
/// its own client of the same session.
async fn concurrent(w: &mut Worker<'_>, client: &mut Client) -> Stop {
    let Conn::Http(http) = &client.conn else {
        unreachable!("an HTTP campaign on a line client")
    };
    let width = w.settings.in_flight.max(1);
    let mut subs: Vec<Client> = (0..width)
        .map(|_| {
            let mut c = http.fresh();
            c.session = http.session.clone();
            let mut client = Client::new(Conn::Http(c), w.era, w.settings.run.timeout);
            client.set_timeout(w.settings.run.timeout);
            client
        })
        .collect();
    loop {
        let mut batch = Vec::new();
        while batch.len() < width && w.take() {
            let input = w.gen.next(&mut w.src);
            let n = w.next_n();
            batch.push((input, n));
        }
        if batch.is_empty() {
            w.check_count(client).await;
            return Stop::Done;
        }
        let era = w.era;
        let exchanges = futures_util::future::join_all(subs.iter_mut().zip(&batch).map(
            |(c, (input, n))| async move {
                let msg = input.message(era, *n);
                let id = mcperr_protocol::Id::from_value(&msg["id"])
                    .expect("ids are numbers or strings");
                c.exchange(id, msg).await
            },
        ))
        .await;
        let mut lost = Vec::new();
        for ((input, _), ex) in batch.into_iter().zip(exchanges) {
            w.settings.stats.requests.fetch_add(1, Ordering::Relaxed);
            if matches!(ex.ending, Ending::Died(_) | Ending::Timeout) {
                lost.push(input);
                continue;
            }
            if w.is_counted_call(&input) {
                match input.class {
                    Class::InvalidCall(_) => w.window.push(input.clone()),
                    Class::ValidCall
                        if ex
                            .response()
                            .and_then(|r| r.get("result"))
                            .is_some_and(|r| r.get("isError") != Some(&Value::Bool(true))) =>
                    {
                        w.valid_ok += 1
                    }
                    _ => {}
                }
            }
            w.judge_and_record(&input, &ex, None);
        }
        if !lost.is_empty() {
            return Stop::Lost(lost);
        }
        if w.window.len() >= COUNT_WINDOW {
            w.check_count(client).await;
        }
    }
}

/// Fuzzes one era; returns the tools left out and the campaign's wall time
/// (shrinking excluded).
pub(crate) async fn era(
    settings: &FuzzSettings,
    era: Era,
    store: &Store,
    shrink_requests: &AtomicU64,
) -> Result<(Vec<LeftOut>, Duration), EngineError> {
    let (mut first, info) = connect(&settings.run, EraChoice::Pinned(era)).await?;
    let discovery = discover(&mut first, info).await;
    let (tools, left_out) = settings.selection.fuzzable_tools(&discovery)?;
    let names = |n: &str| {
        tools
            .iter()
            .any(|t| t.get("name").and_then(Value::as_str) == Some(n))
    };
    let counted = names("limited") && names("limited_calls");
    let jobs = settings.run.jobs.max(1);
    let quota = settings.budget.requests.map(|r| r.div_ceil(jobs as u64));
    let start = Instant::now();
    let deadline = settings.budget.time.map(|t| start + t);
    let mut clients = vec![first];
    for _ in 1..jobs {
        let (c, _) = connect(&settings.run, EraChoice::Pinned(era)).await?;
        clients.push(c);
    }
    let judge = Judge {
        era,
        profile: settings.profile.clone(),
        over_http: settings.run.target.is_http(),
    };
    let workers = clients.into_iter().enumerate().map(|(i, client)| {
        let mut w = Worker {
            settings,
            store,
            gen: Generator::new(&discovery, &tools, era),
            judge: judge.clone(),
            src: Seeded::new(settings.seed.wrapping_add(i as u64)),
            era,
            counted,
            next_n: 1 << 20,
            window: vec![],
            valid_ok: 0,
            last_count: None,
            suspects: vec![],
            issued: 0,
            quota,
            deadline,
            shrink_requests,
        };
        async move {
            let client = run_worker(&mut w, client).await;
            (w, client)
        }
    });
    let done = futures_util::future::join_all(workers).await;
    let elapsed = start.elapsed();
    // Shrinking: each finding once, on the first worker's server.
    let mut done = done.into_iter();
    if let Some((mut w, mut client)) = done.next() {
        for (mut other, c) in done {
            if let Some(mut c) = c {
                other.confirm(&mut c).await;
                c.conn.close().await;
            }
        }
        if let Some(c) = client.as_mut() {
            w.confirm(c).await;
        }
        if !settings.stats.stop.load(Ordering::Relaxed) {
            for found in store.unshrunk() {
                let signature = found.finding.signature.clone();
                let (shrunk, c) = shrink(&mut w, client, found).await;
                client = c;
                store.put(&signature, shrunk);
            }
        }
        if let Some(c) = client {
            c.conn.close().await;
        }
    }
    Ok((left_out, elapsed))
}

/// Runs a worker's loop until its budget is spent, finding culprits and
/// restarting the server whenever it dies or hangs. Returns its client, if
/// one is still connected.
async fn run_worker(w: &mut Worker<'_>, mut client: Client) -> Option<Client> {
    if w.counted {
        w.last_count = count(&mut client).await;
    }
    loop {
        let stop = match client.conn {
            Conn::Lines(_) => pipelined(w, &mut client).await,
            Conn::Http(_) => concurrent(w, &mut client).await,
        };
        match stop {
            Stop::Done => return Some(client),
            Stop::Lost(suspects) => {
                client.conn.close().await;
                w.window.clear();
                culprit(w, suspects).await;
                let Ok((c, _)) = connect(&w.settings.run, EraChoice::Pinned(w.era)).await else {
                    return None; // it will not come back: the findings say why
                };
                client = c;
                if w.counted {
                    w.last_count = count(&mut client).await;
                }
            }
        }
    }
}
