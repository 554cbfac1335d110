//! One era's campaign: `jobs` workers, each on its own server process, each
//! drawing inputs from its own seeded stream (seed + worker index). One job
//! runs on the caller's runtime; several run on a thread each, so a
//! campaign uses the machine's cores.
//!
//! Over stdio a worker keeps up to `in_flight` requests in the pipe and
//! matches answers by id (JSON-RPC allows any order); over HTTP it sends
//! batches of `in_flight` concurrent requests. Whatever cannot be judged in
//! flight is judged alone, in lockstep: a request with a lone surrogate
//! (an id-null error may answer it), requests whose answers came back with
//! ids nobody sent, the `limited` calls of a window whose `limited_calls`
//! count rose, and the requests in flight when the server died or hung.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use mcperr_cases::fuzz::{Class, Generator, Seeded};
use mcperr_cases::plan::Message;
use mcperr_cases::select::{LeftOut, ToolCalls};
use mcperr_oracle::findings::Judge;
use mcperr_protocol::Era;
use mcperr_wire::exchange::{Ending, Exchange};
use serde_json::Value;

use super::pipe::{lane_of, Latency, LANE_LIMIT};
use super::probe::{confirm, count, culprit, shrink};
use super::regroup::{attribute_ids, representatives};
use super::worker::{Stop, Worker, COUNT_WINDOW};
use super::{FuzzSettings, Store};
use crate::client::{Client, Conn};
use crate::engine::{connect, discover, EngineError, EraChoice};

/// Concurrent requests over HTTP, each a lockstep exchange on its own
/// client of the same session, up to `in_flight` at once; a finished one
/// makes room for the next. A request may take up to `--slow-ms`: one
/// answered after `--timeout-ms` makes its lane (method and target) slow;
/// one never answered while others were is J4 and makes its lane hung
/// (later ones get `--timeout-ms` only). A lane holds at most
/// [`LANE_LIMIT`] requests past `--timeout-ms`, so a slow tool cannot take
/// every slot.
async fn concurrent(w: &mut Worker<'_>, client: &mut Client) -> Stop {
    use futures_util::stream::{FuturesUnordered, StreamExt};
    let Conn::Http(http) = &client.conn else {
        unreachable!("an HTTP campaign on a line client")
    };
    let width = w.settings.in_flight.max(1);
    let (timeout, slow) = (w.settings.run.timeout, w.settings.run.slow_timeout);
    let mut idle: Vec<Client> = (0..width)
        .map(|_| {
            let mut c = http.fresh();
            c.session = http.session.clone();
            Client::new(Conn::Http(c), w.era, timeout)
        })
        .collect();
    let mut running = FuturesUnordered::new();
    let mut inflight = InFlight::default();
    let mut slow_lanes = std::collections::HashSet::new();
    let mut hung_lanes = std::collections::HashSet::new();
    let mut last_answer: Option<Instant> = None;
    let mut latency = Latency::default();
    let mut spent = false;
    loop {
        let mut redraws = 0;
        // A full window of invalid `limited` calls: let the requests in
        // flight finish, then count `limited_calls` alone.
        let counting = w.window.len() >= COUNT_WINDOW;
        if counting && running.is_empty() {
            super::probe::check_count(w, client).await;
            continue;
        }
        while !spent && !counting && !idle.is_empty() {
            if !w.take() {
                spent = true;
                break;
            }
            let input = w.gen.next(&mut w.src);
            let lane = lane_of(&input);
            // Once a lane is slow (or has a request out past the grace the
            // server's latency gives), all its requests in flight count
            // against its limit.
            let grace = latency.grace(timeout);
            if lane_full(&lane, &slow_lanes, &inflight, grace) {
                w.issued -= 1;
                redraws += 1;
                if redraws > 16 {
                    break;
                }
                continue;
            }
            let mut c = idle.pop().expect("checked above");
            c.set_timeout(if hung_lanes.contains(&lane) || slow <= timeout {
                timeout
            } else {
                slow
            });
            let n = w.next_n();
            let msg = Message::of(w.era, input.message(w.era, n));
            inflight.insert(n, (lane, Instant::now(), input.clone()));
            running.push(async move {
                let ex = c.exchange(msg).await;
                (c, n, input, ex)
            });
        }
        let next = if running.is_empty() {
            None
        } else {
            running.next().await
        };
        let Some((c, n, input, ex)) = next else {
            super::probe::check_count(w, client).await;
            return Stop::Done;
        };
        idle.push(c);
        let (lane, sent, _) = inflight.remove(&n).expect("sent above");
        w.settings.stats.requests.fetch_add(1, Ordering::Relaxed);
        match ex.ending {
            Ending::Died(_) => return Stop::Lost(suspects(input, &mut inflight)),
            Ending::Timeout if last_answer.is_some_and(|a| a > sent) => {
                // Unanswered while others were: never answered (J4), hung.
                hung_lanes.insert(lane);
                w.judge_and_record_alive(&input, &ex, None, true);
                continue;
            }
            Ending::Timeout => return Stop::Lost(suspects(input, &mut inflight)),
            _ => {}
        }
        last_answer = Some(Instant::now());
        latency.observe(ex.duration);
        if ex.duration > timeout && slow_lanes.insert(lane) {
            w.record_slow(&input, &ex, ex.duration, timeout);
        }
        counted(w, &input, &ex);
        w.judge_and_record(&input, &ex, None);
    }
}

/// The HTTP campaign's requests in flight: request number -> (lane, when
/// sent, the input).
type InFlight = std::collections::HashMap<u64, (String, Instant, mcperr_cases::fuzz::FuzzInput)>;

/// Whether `lane` holds as many requests as it may: once a lane is slow
/// (or has a request out past the grace the server's latency gives), all
/// its requests in flight count against [`LANE_LIMIT`].
fn lane_full(
    lane: &str,
    slow_lanes: &std::collections::HashSet<String>,
    inflight: &InFlight,
    grace: Duration,
) -> bool {
    let limited = slow_lanes.contains(lane)
        || inflight
            .values()
            .any(|(l, sent, _)| l == lane && sent.elapsed() > grace);
    limited && inflight.values().filter(|(l, _, _)| l == lane).count() >= LANE_LIMIT
}

/// The server is gone or hangs: every request in flight is a suspect (in
/// the order sent), `input` first.
fn suspects(
    input: mcperr_cases::fuzz::FuzzInput,
    inflight: &mut InFlight,
) -> Vec<mcperr_cases::fuzz::FuzzInput> {
    let mut rest: Vec<_> = inflight.drain().collect();
    rest.sort_by_key(|(_, (_, sent, _))| *sent);
    std::iter::once(input)
        .chain(rest.into_iter().map(|(_, (_, _, i))| i))
        .collect()
}

/// A `limited` call's part in counting: an invalid one joins the window
/// the next count checks, a valid one that succeeded raises what the count
/// may rise by.
fn counted(w: &mut Worker<'_>, input: &mcperr_cases::fuzz::FuzzInput, ex: &Exchange) {
    if !w.is_counted_call(input) {
        return;
    }
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

/// Fuzzes one era, on `connected` (its server and handshake result) if
/// the eras were found first, else on a server it starts; returns the tools
/// left out, the campaign's wall time (shrinking excluded) and the server,
/// for the caller to close (beside the next era's campaign).
pub(crate) async fn era(
    settings: &FuzzSettings,
    budget: &super::Budget,
    (era, connected): (Era, Option<(Client, Value)>),
    store: &Store,
    shrink_requests: &AtomicU64,
) -> Result<(Vec<LeftOut>, Vec<ToolCalls>, Duration, Option<Client>), EngineError> {
    let (mut first, info) = match connected {
        Some(c) => c,
        None => connect(&settings.run, EraChoice::Pinned(era)).await?,
    };
    // The handshake's notification is behind us: an id-null error now is an answer.
    first.begin_case();
    let discovery = discover(&mut first, info).await;
    let (tools, calls, left_out) = settings.selection.fuzzable_tools(&discovery)?;
    let names = |n: &str| {
        tools
            .iter()
            .any(|t| t.get("name").and_then(Value::as_str) == Some(n))
    };
    let counted = mcperr_cases::bookshop::can_count(names);
    let jobs = settings.run.jobs.max(1);
    let quota = budget.requests.map(|r| r.div_ceil(jobs as u64));
    let start = Instant::now();
    // Set per era from --seconds (era_budget in fuzz/mod.rs).
    let deadline = budget.until;
    let judge = Judge {
        era,
        profile: settings.profile.clone(),
        over_http: settings.run.target.is_http(),
    };
    let worker = |i: usize| Worker {
        settings,
        store,
        gen: Generator::new(&discovery, &tools, era)
            .with_valid_calls(&calls)
            .with_canary(mcperr_cases::fuzz::inputs::canary_of_seed(settings.seed)),
        judge: judge.clone(),
        src: Seeded::new(settings.seed.wrapping_add(i as u64)),
        era,
        counted,
        next_n: 1 << 20,
        window: vec![],
        valid_ok: 0,
        last_count: None,
        suspects: vec![],
        big_ids: Default::default(),
        issued: 0,
        quota,
        deadline,
        // Set per era from --seconds: the drain after the campaign, the
        // confirming and the shrinking end within the era's share.
        shrink_until: budget.shrink_until,
        shrink_requests,
        spent_mark: None,
    };
    let (mut w, mut client, ended) = if jobs == 1 {
        let mut w = worker(0);
        let client = run_worker(&mut w, first).await;
        (w, client, Instant::now())
    } else {
        // One thread per job, each with its own runtime and server: the
        // workers share nothing but the store and the counters, so a
        // campaign scales with the cores (a shared runtime did not: its
        // cross-thread wake-ups cost more than they brought). The outer
        // runtime has nothing left to run while they work.
        first.conn.close().await;
        let workers: Vec<Worker> = (0..jobs).map(worker).collect();
        let meet = Start {
            barrier: std::sync::Barrier::new(jobs),
            failed: Default::default(),
        };
        let done = std::thread::scope(|s| {
            let threads: Vec<_> = workers
                .into_iter()
                .map(|w| s.spawn(|| on_own_thread(w, &meet)))
                .collect();
            threads
                .into_iter()
                .map(|t| t.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect::<Vec<_>>()
        });
        let mut first_done = None;
        let mut ended = start;
        for result in done {
            let (w, e) = result?;
            ended = ended.max(e);
            first_done.get_or_insert(w);
        }
        // Shrinking below reconnects: every worker's server is closed.
        (first_done.expect("jobs >= 2"), None, ended)
    };
    let elapsed = ended - start;
    // Shrinking: each finding once, on the first worker's server.
    match client.as_mut() {
        Some(c) => confirm(&mut w, c).await,
        None => w.flush_big_ids(),
    }
    if !settings.stats.stop.load(Ordering::Relaxed) {
        // Which findings only an id style brings about, then one shrink per
        // group (its smallest example so far), the rest folded into it.
        client = attribute_ids(&mut w, client, store).await;
        for found in representatives(store.unshrunk(), store) {
            if w.out_of_time() {
                // Stands as found; the summary counts it.
                settings.stats.unshrunk.fetch_add(1, Ordering::Relaxed);
                continue;
            }
            let signature = found.finding.signature.clone();
            let (shrunk, c) = shrink(&mut w, client, found).await;
            client = c;
            if shrunk.misattributed {
                store.drop_misattributed(&settings.stats, &signature);
            } else {
                store.put(&signature, shrunk);
            }
        }
    }
    Ok((left_out, calls, elapsed, client))
}

/// Where the jobs of a multi-job campaign meet once connected: none starts
/// fuzzing unless every one has its server (a job that cannot connect fails
/// the era at once, instead of after the others spent their budget).
struct Start {
    barrier: std::sync::Barrier,
    failed: std::sync::atomic::AtomicBool,
}

/// A worker of a multi-job campaign on the current (its own) thread: it
/// connects its own server, fuzzes, confirms its suspects and closes.
/// Returns the worker and when its campaign ended (its confirming is not
/// campaign time, as with one job).
fn on_own_thread<'a>(
    mut w: Worker<'a>,
    start: &Start,
) -> Result<(Worker<'a>, Instant), EngineError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build();
    let rt = match rt {
        Ok(rt) => rt,
        Err(e) => {
            start.failed.store(true, Ordering::SeqCst);
            start.barrier.wait();
            return Err(EngineError::Setup(crate::engine::SetupError {
                rule: mcperr_model::rules::RuleId::J4,
                spawn: true,
                unjudged: false,
                message: format!("a fuzz worker's runtime: {e}"),
            }));
        }
    };
    // Every job reaches the barrier exactly once, even when its connect
    // panics, so no job waits there for ever.
    let connected = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        rt.block_on(connect(&w.settings.run, EraChoice::Pinned(w.era)))
    }));
    if !matches!(connected, Ok(Ok(_))) {
        start.failed.store(true, Ordering::SeqCst);
    }
    start.barrier.wait();
    let (mut c, _) = match connected {
        Ok(connected) => connected?,
        Err(panic) => std::panic::resume_unwind(panic),
    };
    rt.block_on(async {
        if start.failed.load(Ordering::SeqCst) {
            c.conn.close().await;
            return Ok((w, Instant::now()));
        }
        c.begin_case();
        let client = run_worker(&mut w, c).await;
        let ended = Instant::now();
        match client {
            Some(mut c) => {
                confirm(&mut w, &mut c).await;
                c.conn.close().await;
            }
            None => w.flush_big_ids(),
        }
        Ok((w, ended))
    })
}

/// Runs a worker's loop until its budget is spent, finding culprits and
/// restarting the server whenever it dies or hangs. Returns its client, if
/// one is still connected.
async fn run_worker(w: &mut Worker<'_>, mut client: Client) -> Option<Client> {
    if w.counted {
        w.last_count = count(&mut client).await;
    }
    loop {
        let (began, cpu) = (Instant::now(), client.conn.cpu_time());
        let stop = match client.conn {
            Conn::Lines(_) => super::pipeline::pipelined(w, &mut client).await,
            Conn::Http(_) => concurrent(w, &mut client).await,
        };
        // The server's busy share over this stretch, up to when the budget
        // was spent: the wait after it for the verdicts of requests still
        // unanswered is no sending (a server that died has no CPU time left
        // to read: its stretch is not counted).
        let (ended, after) = match w.spent_mark.take() {
            Some((at, cpu_then)) => (at, cpu_then),
            None => (Instant::now(), client.conn.cpu_time()),
        };
        if let (Some(before), Some(after)) = (cpu, after) {
            let used = after.saturating_sub(before);
            w.settings
                .stats
                .server_stretch(ended.duration_since(began), used);
        }
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
                client.begin_case();
                if w.counted {
                    w.last_count = count(&mut client).await;
                }
            }
        }
    }
}
