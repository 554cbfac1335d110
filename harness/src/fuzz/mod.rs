//! Live fuzzing (`mcperr fuzz`): connect like a run, draw requests from what
//! the server publishes (mcperr-cases' [`Generator`]), keep many in flight, judge
//! every answer with the oracle's [`Judge`], find which request killed or
//! hung a server, shrink each distinct finding to a minimal input, and keep
//! it as a replayable case. The CLI only parses and prints.
//!
//! - [`campaign`]: the workers, concurrent batches over HTTP, and what runs
//!   after the campaign (the search for bodies that ran, shrinking).
//! - [`pipeline`]: the loop over stdio: one pipe, many requests in flight.
//! - [`probe`]: one request in lockstep (with `limited_calls` counted around
//!   it where that tells whether a body ran), culprit search, shrinking.
//! - [`regroup`]: after the campaign, the findings only an id style brings
//!   about, and one finding per group to shrink.

mod answers;
mod campaign;
mod pipe;
mod pipeline;
mod probe;
mod regroup;
mod store;
mod width;
mod worker;

pub(crate) use store::Store;
pub use store::{Found, SlowLane, UndecidedLane};

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcperr_cases::profile::Profile;
use mcperr_cases::select::{LeftOut, Selection};
use mcperr_core::baseline::Baseline;
use mcperr_core::report::TargetInfo;
use mcperr_oracle::findings::Finding;
use mcperr_protocol::Era;
use serde::{Deserialize, Serialize};

use crate::engine::{EngineError, EraChoice, RunSettings};

/// When a campaign ends: after so long, after so many requests, or both.
#[derive(Debug, Clone, Copy, Default)]
pub struct Budget {
    /// Wall time of the whole command (`--seconds`): finding the eras,
    /// starting the server, fuzzing, confirming and shrinking, split evenly
    /// over the eras the server speaks, the last server's closing included;
    /// each era fuzzes for at most [`FUZZ_SHARE`] of its share and confirms
    /// and shrinks in the rest.
    /// Read once, by [`fuzz`]: each era's budget carries `until` and
    /// `shrink_until` instead.
    pub time: Option<Duration>,
    /// Requests of the whole campaign, split the same way.
    pub requests: Option<u64>,
    /// This era's campaign stops sending here (set per era from `time`).
    pub until: Option<Instant>,
    /// This era's confirming and shrinking stop here; a finding not shrunk
    /// by then stands as found (set per era from `time`).
    pub shrink_until: Option<Instant>,
}

/// One era's budget: with `--seconds`, an even share of the time left
/// (`eras_left` eras to go), of which [`FUZZ_SHARE`] fuzzes and the rest
/// confirms and shrinks; with `--requests`, its share of the requests.
fn era_budget(
    time: Option<Duration>,
    started: Instant,
    requests: Option<u64>,
    eras_left: u64,
) -> Budget {
    let Some(time) = time else {
        return Budget {
            requests,
            ..Budget::default()
        };
    };
    let now = Instant::now();
    // The last server's closing (its stdin's end of file, then at most
    // CLOSE_GRACE before it is killed) comes after the last era's share,
    // within the budget (at most a tenth of it).
    let end = started + time - crate::transport::stdio::CLOSE_GRACE.min(time / 10);
    let share = end.saturating_duration_since(now) / eras_left.max(1) as u32;
    Budget {
        time: None,
        requests,
        until: Some(now + share.mul_f64(FUZZ_SHARE)),
        shrink_until: Some(now + share),
    }
}

/// The part of an era's share of `--seconds` spent sending requests; the
/// rest waits out the last answers, probes liveness, confirms and shrinks.
pub const FUZZ_SHARE: f64 = 0.7;

/// Live counters, read by the progress line.
#[derive(Debug, Default)]
pub struct Stats {
    /// Requests answered or lost.
    pub requests: AtomicU64,
    /// Distinct findings so far.
    pub findings: AtomicU64,
    /// Set to stop the campaign early (Ctrl-C): no more requests, no shrinking.
    pub stop: AtomicBool,
    /// Findings dropped because their request, sent alone, showed others.
    pub misattributed: AtomicU64,
    /// Findings left as found because `--seconds` was spent before their
    /// shrinking.
    pub unshrunk: AtomicU64,
    /// CPU time the servers' processes used while the campaign sent to them
    /// (microseconds, over stdio on Linux; up to when the budget was spent,
    /// not the wait for the verdicts after it), and the wall time of those
    /// stretches: the server's busy share.
    pub server_cpu_us: AtomicU64,
    /// See `server_cpu_us`.
    pub server_wall_us: AtomicU64,
}

impl Stats {
    /// Notes a stretch of the campaign on one server: its wall time and
    /// the CPU time the server used meanwhile.
    pub(crate) fn server_stretch(&self, wall: Duration, cpu: Duration) {
        self.server_wall_us
            .fetch_add(wall.as_micros() as u64, Ordering::Relaxed);
        self.server_cpu_us
            .fetch_add(cpu.as_micros() as u64, Ordering::Relaxed);
    }

    /// The servers' CPU time over the wall time of the stretches noted, if
    /// any was (a campaign over HTTP or in process has none).
    fn server_busy(&self) -> Option<f64> {
        let wall = self.server_wall_us.load(Ordering::Relaxed);
        let cpu = self.server_cpu_us.load(Ordering::Relaxed);
        (wall > 0).then(|| cpu as f64 / wall as f64)
    }
}

/// Settings of one fuzz campaign.
#[derive(Clone)]
pub struct FuzzSettings {
    /// How to reach the server, timeouts, server processes (`jobs`).
    pub run: RunSettings,
    /// Which tools may be called.
    pub selection: Selection,
    /// How to grade.
    pub profile: Profile,
    /// The seed; the same seed repeats a single-job campaign exactly.
    pub seed: u64,
    /// How long.
    pub budget: Budget,
    /// Requests in flight per server process (over stdio, the most when
    /// `tune_in_flight`).
    pub in_flight: usize,
    /// Over stdio, choose the depth by measuring (a short survey of depths
    /// from 64 down, the best kept) instead of keeping `in_flight`.
    pub tune_in_flight: bool,
    /// Stop the campaign once this many distinct findings are recorded.
    pub max_findings: Option<u64>,
    /// Known findings.
    pub baseline: Option<Baseline>,
    /// Live counters (shared with the caller's progress line).
    pub stats: Arc<Stats>,
}

/// The campaign's totals (DESIGN.md §5 names `requests`, `elapsed_s`, `requests_per_s`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct FuzzStats {
    /// Requests sent during the campaign (shrinking not included).
    pub requests: u64,
    /// Wall time of the campaign, in seconds.
    pub elapsed_s: f64,
    /// `requests / elapsed_s`.
    pub requests_per_s: f64,
    /// Requests spent finding culprits and shrinking.
    pub shrink_requests: u64,
    /// Findings seen with requests in flight that their request, sent
    /// alone, did not show (its answer showed other findings, which are
    /// kept): answers the campaign matched to the wrong request.
    #[serde(default)]
    pub misattributed: u64,
    /// Findings left as found, not shrunk: `--seconds` was spent first.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unshrunk: u64,
    /// The share of the campaign's wall time the server's processes spent
    /// on a CPU (its process group's user and system time, from `/proc`;
    /// over stdio on Linux only). A single-threaded server near 1 was kept
    /// busy: mcperr was not what limited the rate. Well below 1, the server
    /// waited, on mcperr or on its own sleeps and timers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_busy: Option<f64>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The fuzz report (`--json`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FuzzReport {
    /// The server under test.
    pub target: TargetInfo,
    /// The eras fuzzed.
    pub eras: Vec<String>,
    /// Eras that could not be fuzzed, and why (with `--era auto`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_fuzzed: Vec<String>,
    /// The grading profile.
    pub profile: String,
    /// The seed (repeat with `--seed`).
    pub seed: u64,
    /// Every distinct finding, shrunk.
    pub findings: Vec<Finding>,
    /// Tools not called, and why.
    pub left_out: Vec<LeftOut>,
    /// The tools called, each with whether valid arguments were sent (its
    /// body ran) and why.
    #[serde(default)]
    pub valid_calls: Vec<mcperr_cases::select::ToolCalls>,
    /// Methods and targets that were slow, not hung.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub slow: Vec<SlowLane>,
    /// Methods and targets with requests still unanswered when the campaign
    /// ended, before `--slow-ms`: slow or hung is not known, so no verdict.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub undecided: Vec<UndecidedLane>,
    /// Totals.
    pub stats: FuzzStats,
    /// Stopped early by Ctrl-C (or `--deadline`).
    #[serde(default)]
    pub interrupted: bool,
    /// Stopped early because `--deadline` was reached.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub deadline_reached: bool,
}

impl FuzzReport {
    /// 1 when a finding that is not baselined fails or is an error (an input
    /// after which the server died or hung), else 0. Warnings do not fail a
    /// campaign (unless --strict made them failures), nor does an
    /// unconfirmed finding (its request alone did not show it).
    pub fn exit_code(&self) -> i32 {
        let failing = self.findings.iter().any(|f| {
            !f.baselined
                && f.not_reproduced.is_none()
                && matches!(
                    f.verdict,
                    mcperr_model::Verdict::Fail | mcperr_model::Verdict::Error
                )
        });
        i32::from(failing)
    }

    /// The JSON text.
    pub fn to_json(&self) -> String {
        // A lone surrogate sent shows as the escape sent, not the placeholder.
        mcperr_wire::text::as_sent(&serde_json::to_string_pretty(self).unwrap_or_default())
    }
}

/// What a campaign produced: the report, and each finding with its input.
pub struct FuzzOutcome {
    /// The report.
    pub report: FuzzReport,
    /// The findings with their inputs, for `--save`.
    pub found: Vec<Found>,
}

/// Whether the in-process reference server gets a thread of its own: only
/// with a core to spare beside the jobs' own threads (on a busy machine the
/// hand-over between threads costs more than it gains).
fn server_thread_pays(settings: &FuzzSettings) -> bool {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    !settings.run.target.is_http() && settings.run.jobs.max(1) * 2 <= cores
}

/// Fuzzes every era `choice` names that the server speaks (found first, so
/// the budget is split over those alone), on `settings.run.jobs` server
/// processes per era.
pub async fn fuzz(
    settings: &FuzzSettings,
    choice: EraChoice,
    target: TargetInfo,
) -> Result<FuzzOutcome, EngineError> {
    // --seconds is the wall time of the whole command: the handshakes
    // below count against it.
    let started = Instant::now();
    let threaded;
    let settings = if server_thread_pays(settings) {
        let mut run = settings.run.clone();
        run.server_thread = true;
        threaded = FuzzSettings {
            run,
            ..settings.clone()
        };
        &threaded
    } else {
        settings
    };
    let mut not_fuzzed = Vec::new();
    // The server of each era, connected once: with --era auto the
    // handshake that finds the eras it speaks is the one its campaign uses.
    let (eras, mut connected) = match choice {
        EraChoice::Pinned(e) => (vec![e], vec![None]),
        EraChoice::Auto => spoken_eras(settings, &mut not_fuzzed).await?,
    };
    let n = eras.len() as u64;
    let requests = settings.budget.requests.map(|r| r.div_ceil(n).max(1));
    let mut campaign_time = Duration::ZERO;
    let store = Arc::new(Store::default());
    let mut fuzzed = Vec::new();
    let mut left_out = Vec::new();
    let mut valid_calls = Vec::new();
    let shrink_requests = AtomicU64::new(0);
    // Each era's server closes beside the next era's campaign.
    let mut closing = Vec::new();
    for (i, era) in eras.into_iter().enumerate() {
        if settings.stats.stop.load(Ordering::Relaxed) {
            break;
        }
        let budget = era_budget(settings.budget.time, started, requests, n - i as u64);
        let conn = connected[i].take();
        match campaign::era(settings, &budget, (era, conn), &store, &shrink_requests).await {
            Ok((l, calls, took, client)) => {
                closing.extend(client.map(|c| tokio::spawn(c.conn.close())));
                fuzzed.push(era.to_string());
                left_out = l;
                valid_calls = calls;
                campaign_time += took;
            }
            Err(EngineError::Setup(e)) if choice == EraChoice::Auto && !e.spawn => {
                not_fuzzed.push(format!("{era}: {e}"));
            }
            Err(e) => {
                // The earlier eras' servers are reaped, not left to the
                // runtime's end.
                for close in closing {
                    let _ = close.await;
                }
                return Err(e);
            }
        }
    }
    // An era left unfuzzed (Ctrl-C, --deadline) still has its server.
    for (c, _) in connected.into_iter().flatten() {
        c.conn.close().await;
    }
    for close in closing {
        let _ = close.await;
    }
    if fuzzed.is_empty() {
        return Err(none_fuzzed(&not_fuzzed));
    }
    let elapsed = campaign_time.as_secs_f64();
    let requests = settings.stats.requests.load(Ordering::Relaxed);
    let found = grouped(&store, settings);
    let report = FuzzReport {
        target,
        eras: fuzzed,
        not_fuzzed,
        profile: settings.profile.name.clone(),
        seed: settings.seed,
        findings: found.iter().map(|f| f.finding.clone()).collect(),
        left_out,
        valid_calls,
        slow: store.slow_lanes(),
        undecided: store.undecided_lanes(),
        stats: FuzzStats {
            requests,
            elapsed_s: elapsed,
            requests_per_s: if elapsed > 0.0 {
                requests as f64 / elapsed
            } else {
                0.0
            },
            shrink_requests: shrink_requests.load(Ordering::Relaxed),
            misattributed: settings.stats.misattributed.load(Ordering::Relaxed),
            unshrunk: settings.stats.unshrunk.load(Ordering::Relaxed),
            server_busy: settings.stats.server_busy(),
        },
        interrupted: settings.stats.stop.load(Ordering::Relaxed),
        deadline_reached: false,
    };
    Ok(FuzzOutcome { report, found })
}

/// A server connected for each era it speaks, found by a handshake each
/// before any fuzzing (the eras it does not speak are noted in
/// `not_fuzzed`); an error when it speaks none, or cannot be started.
async fn spoken_eras(
    settings: &FuzzSettings,
    not_fuzzed: &mut Vec<String>,
) -> Result<(Vec<Era>, Vec<Option<Connected>>), EngineError> {
    let mut spoken = Vec::new();
    let mut connected = Vec::new();
    for era in [Era::Modern, Era::Legacy] {
        match crate::engine::connect(&settings.run, EraChoice::Pinned(era)).await {
            Ok(c) => {
                connected.push(Some(c));
                spoken.push(era);
            }
            Err(e) if !e.spawn => not_fuzzed.push(format!("{era}: {e}")),
            Err(e) => return Err(e.into()),
        }
    }
    if spoken.is_empty() {
        return Err(none_fuzzed(not_fuzzed));
    }
    Ok((spoken, connected))
}

/// A server connected in one era, with its handshake's result.
type Connected = (crate::client::Client, serde_json::Value);

/// The setup error of a campaign that fuzzed no era: each era's reason.
fn none_fuzzed(not_fuzzed: &[String]) -> EngineError {
    EngineError::Setup(crate::engine::SetupError {
        rule: mcperr_model::rules::RuleId::J4,
        spawn: false,
        unjudged: false,
        message: not_fuzzed.join("; "),
    })
}

/// One deviation, one finding: each group's worst, smallest example,
/// marked where the baseline lists it, the worst first.
fn grouped(store: &Store, settings: &FuzzSettings) -> Vec<Found> {
    let mut found = mcperr_oracle::findings::group::group(store.all());
    for f in &mut found {
        f.finding.baselined = settings
            .baseline
            .as_ref()
            .is_some_and(|b| b.lists_finding(&f.finding.id, f.finding.rule));
    }
    // Among equals by rule id as text (H1 before J1 before T4), as ever:
    // RuleId's own order is the table's.
    found.sort_by(|a, b| {
        (
            b.finding.verdict.weight(),
            a.finding.rule.as_str(),
            &a.finding.id,
        )
            .cmp(&(
                a.finding.verdict.weight(),
                b.finding.rule.as_str(),
                &b.finding.id,
            ))
    });
    found
}
