//! The pipeline's state: the requests in the window and out of it
//! (stragglers waiting for a late answer), lanes found slow or hung, the
//! latencies that set the drop grace, and the ids whose answers may still
//! come. [`super::pipeline`] runs the loop on it; [`super::answers`] takes
//! each line the server writes.

use std::collections::{HashMap, HashSet, VecDeque};
use std::time::{Duration, Instant};

use mcperr_cases::fuzz::FuzzInput;
use mcperr_wire::reassemble::Reassembler;
use serde_json::Value;

use super::probe::SILENCE_OK;

/// Late ids remembered, at most.
pub(super) const LATE_KEPT: usize = 256;

/// The places taken in the window. Lone-surrogate requests, which a server
/// may leave unanswered for good, do not take a place (up to another
/// `width`). Nor does a request that requests sent after it have overtaken
/// (answered first) while it waits out its drop grace: the server has moved
/// past it, and a slot it held would only idle the server (a few per cent of
/// a campaign's requests go unanswered on most SDKs' servers).
pub(super) struct Occupancy {
    pub(super) silent: usize,
    pub(super) live: usize,
}

impl Occupancy {
    /// Room for another request.
    pub(super) fn has_room(&self, width: usize) -> bool {
        self.live < width && self.silent < width
    }

    /// A request just sent takes its place.
    pub(super) fn add(&mut self, silent_ok: bool) {
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
pub(super) const PER_TURN: usize = 8;
/// Dropped requests waiting for a late answer per lane (method and target),
/// at most: further inputs of a full lane are drawn again.
pub(crate) const LANE_LIMIT: usize = 4;
/// The drop grace is this many times the server's recent 90th-percentile
/// latency, and at least [`MIN_GRACE`].
pub(super) const GRACE_FACTOR: u32 = 8;
pub(super) const MIN_GRACE: Duration = Duration::from_millis(100);
/// Dropped requests waiting for a late answer, at most (beyond, a drop is
/// judged at once).
pub(super) const MAX_STRAGGLERS: usize = 4096;
/// Latencies kept for the drop grace.
pub(super) const LATENCIES_KEPT: usize = 128;

/// The server's recent answer times, and the grace after which a request
/// still unanswered is dropped (or, over HTTP, counts against its lane)
/// while later ones are answered.
#[derive(Default)]
pub(crate) struct Latency {
    pub(super) recent: VecDeque<Duration>,
    pub(super) seen: u64,
    pub(super) grace: Option<Duration>,
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

/// What a request that breaks its own params breaks (`params is an array`,
/// `params.name`…, a value left out), or `None` for any other request.
pub(super) fn broken_params(input: &FuzzInput) -> Option<String> {
    match &input.class {
        mcperr_cases::fuzz::Class::Envelope(what) => {
            Some(what.split(" = ").next().unwrap_or(what).to_string())
        }
        _ => None,
    }
}

/// The lane of a request: method and target, so one slow tool does not
/// hold up the others.
pub(crate) fn lane_of(input: &FuzzInput) -> String {
    format!("{} {}", input.method, input.target)
}

pub(super) struct Pending {
    pub(super) input: FuzzInput,
    pub(super) msg: Value,
    pub(super) sent: Instant,
    /// A lone surrogate: silence, or an id-null error, answers it.
    pub(super) silent_ok: bool,
}

#[derive(Default)]
pub(super) struct Pipe {
    pub(super) pending: HashMap<String, Pending>,
    pub(super) order: VecDeque<String>,
    /// Answers with these ids may still come and are let through.
    pub(super) late: VecDeque<String>,
    /// Requests left unanswered when the campaign ended, without a verdict
    /// (a slow or undecided lane's) or with a J4 given after the short wait:
    /// every one of their answers may still come, so none is dropped from
    /// the list (unlike [`Pipe::late`]).
    pub(super) left_waiting: Vec<String>,
    /// Silenced lone-surrogate requests: an id-null error may answer one.
    pub(super) surrogates: VecDeque<String>,
    /// Answers with ids nobody sent, not yet matched to a request.
    pub(super) unknown: usize,
    /// When the latest-sent request that got an answer was sent.
    pub(super) answered_sent: Option<Instant>,
    /// A liveness probe in flight (id key, when sent).
    /// (With when it is given up: a timeout after it was sent, or, asked
    /// early by a stalled window, no sooner than the overdue request's own
    /// timeout and a timeout more, as when it was asked only then: a
    /// server busy with slow work is not called lost any sooner.)
    pub(super) alive: Option<(String, Instant, Instant)>,
    /// A `limited_calls` call in flight (id key, when sent, valid calls by then).
    pub(super) counting: Option<(String, Instant, u64)>,
    /// The invalid `limited` calls the count in flight checks.
    pub(super) checking: Vec<FuzzInput>,
    /// Dropped requests, out of the window, waiting for a late answer up to
    /// their due time ([`Pipe::straggler_due`]).
    pub(super) stragglers: HashMap<String, Pending>,
    /// Dropped requests per lane.
    pub(super) lanes: HashMap<String, usize>,
    /// Lanes whose dropped request was answered late, and those never answered.
    pub(super) slow_lanes: HashSet<String>,
    pub(super) hung_lanes: HashSet<String>,
    /// Lanes of requests that break their own params (one lane a method)
    /// with one answered within `--timeout-ms`: such a request of theirs,
    /// which names no work, is due within `--timeout-ms` too
    /// ([`Pipe::straggler_due`]).
    pub(super) prompt_lanes: HashSet<String>,
    /// Tools a valid call of which was answered within `--timeout-ms`: a
    /// lenient server that runs a call whose `_meta` or `arguments` alone
    /// is broken runs a prompt body then.
    pub(super) prompt_bodies: HashSet<String>,
    /// Broken params (lane and what is broken) found never answered: the
    /// lane's later requests broken the same way are judged at once, as a
    /// hung lane's are.
    pub(super) dropped_kinds: HashSet<(String, String)>,
    /// Requests judged never answered after the short wait (`--timeout-ms`,
    /// [`Pipe::straggler_due`]), in the order judged, their J4 not yet
    /// recorded: an answer that comes while the campaign runs withdraws it
    /// (the request was slow, not dropped); [`Pipe::take_provisional`].
    /// Each with how long it had gone unanswered when judged, which its J4
    /// states.
    pub(super) provisional: Vec<(String, Pending, Duration)>,
    /// Recent latencies of answered requests, and the grace they give.
    pub(super) latency: Latency,
    /// When the budget was spent: stragglers then wait one drop grace more at most.
    pub(super) spent_at: Option<Instant>,
    /// Whether the server has echoed an id beyond a double: then an id-less
    /// error is not its parser refusing a big id.
    pub(super) big_ids_held: bool,
    /// Lines that are no message alone, held in case they join into one.
    pub(super) reader: Reassembler,
}

pub(super) fn remember(list: &mut VecDeque<String>, key: String) {
    list.push_back(key);
    while list.len() > LATE_KEPT {
        list.pop_front();
    }
}

impl Pipe {
    pub(super) fn take(&mut self, key: &str) -> Option<Pending> {
        let p = self.pending.remove(key)?;
        // Answers mostly come in the order sent: the front first.
        if let Some(i) = self.order.iter().position(|k| k == key) {
            self.order.remove(i);
        }
        Some(p)
    }

    pub(super) fn waiting(&self) -> usize {
        self.pending.values().filter(|p| !p.silent_ok).count()
    }

    /// The places the requests out hold, counted once per refill of the
    /// window (see [`Occupancy`]).
    pub(super) fn occupancy(&self) -> Occupancy {
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
    /// is out, the probe's timeout); for a straggler its due time
    /// ([`Pipe::straggler_due`]): after the budget was spent, a grace more
    /// if sooner, or, for one due within `--timeout-ms`, `end` (the
    /// command's bound) if sooner. A window of `width` full of requests
    /// nothing has overtaken is stalled: its oldest is due a grace after it
    /// was sent (the liveness probe then asks; its answer overtakes them),
    /// not a whole timeout, for a server that drops requests would
    /// otherwise idle that long whenever they fill a narrow window.
    pub(super) fn first_deadline(
        &self,
        timeout: Duration,
        slow: Duration,
        end: Option<Instant>,
        width: usize,
    ) -> Option<(String, Instant)> {
        let mut first: Option<(&String, Instant)> = None;
        let grace = self.latency.grace(timeout);
        let probe_due = self.alive.as_ref().map(|(_, _, due)| *due);
        let stalled = self.occupancy().live >= width;
        for k in &self.order {
            if let Some(p) = self.pending.get(k) {
                let passed = self.answered_sent.is_some_and(|s| s > p.sent);
                let wait = match (p.silent_ok, passed) {
                    (true, _) => timeout.min(SILENCE_OK),
                    (false, true) => grace,
                    (false, false) if stalled => grace,
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
        if let Some((k, d)) = self.first_straggler_due(timeout, slow, end, grace) {
            if first.is_none_or(|(_, f)| d < f) {
                first = Some((k, d));
            }
        }
        first.map(|(k, d)| (k.clone(), d))
    }

    /// The dropped request whose wait ends first, and when. Read on every
    /// turn that has answers ready too: a fast server answers all the time,
    /// and a dropped request's verdict must not wait for a quiet moment.
    pub(super) fn first_straggler_due(
        &self,
        timeout: Duration,
        slow: Duration,
        end: Option<Instant>,
        grace: Duration,
    ) -> Option<(&String, Instant)> {
        if self.stragglers.is_empty() {
            return None;
        }
        let slow_methods = self.slow_methods();
        let mut first: Option<(&String, Instant)> = None;
        for (k, p) in &self.stragglers {
            let due = self.straggler_due(p, timeout, slow, &slow_methods);
            let mut d = p.sent + due;
            match (self.spent_at, due < slow.max(timeout)) {
                // After the budget: one grace more, not a whole timeout (a
                // campaign's rate counts its tail).
                (Some(at), false) => d = d.min(at + grace),
                // A request due within --timeout-ms is waited for to its
                // end, so its verdict is known whatever the campaign's
                // length, but not past the command's own bound (--seconds,
                // --deadline), which leaves it without a verdict.
                (Some(_), true) => d = end.map_or(d, |end| d.min(end)),
                (None, _) => {}
            }
            if first.is_none_or(|(_, f)| d < f) {
                first = Some((k, d));
            }
        }
        first
    }

    /// How long a dropped request is waited for: `--slow-ms`, the wait for
    /// work that may take long, unless it breaks its own params (params an
    /// array, a name missing…) in a lane where such a request was answered
    /// within `--timeout-ms` and none late, while no work of its method is
    /// known to be slow (`slow_methods`, from [`Pipe::slow_methods`]) and,
    /// for a tools/call a lenient server could still run, the tool's valid
    /// calls were answered within `--timeout-ms`: such a request names no
    /// slow work, so its answer is due within `--timeout-ms` (a server that
    /// drops it is found however short the campaign). Zero once the same
    /// broken params were found never answered in its lane.
    pub(super) fn straggler_due(
        &self,
        p: &Pending,
        timeout: Duration,
        slow: Duration,
        slow_methods: &HashSet<String>,
    ) -> Duration {
        let lane = lane_of(&p.input);
        let prompt = self.prompt_lanes.contains(&lane)
            && !slow_methods.contains(&p.input.method)
            && !self.slow_lanes.contains(&lane);
        let Some(kind) = broken_params(&p.input).filter(|_| prompt) else {
            return slow.max(timeout);
        };
        // A tools/call whose params still name a tool (its `_meta` or
        // `arguments` broken, not the name, nor params an array) may be run
        // by a lenient server: only a tool whose body is prompt is due early.
        let named = (p.input.method == "tools/call")
            .then(|| p.input.params.get("name").and_then(Value::as_str))
            .flatten();
        if named.is_some_and(|t| !self.prompt_bodies.contains(t)) {
            return slow.max(timeout);
        }
        if self.dropped_kinds.contains(&(lane, kind)) {
            Duration::ZERO
        } else {
            timeout
        }
    }

    /// The methods a lane of which was answered late (after `--timeout-ms`):
    /// a lenient server may run such work for a request whose `_meta` alone
    /// is broken, so no broken request of such a method is due before
    /// `--slow-ms`.
    pub(super) fn slow_methods(&self) -> HashSet<String> {
        self.slow_lanes
            .iter()
            .filter_map(|lane| lane.split(' ').next())
            .map(str::to_string)
            .collect()
    }

    /// Whether a slow lane holds as many dropped requests as it may.
    pub(super) fn lane_full(&self, lane: &str) -> bool {
        self.slow_lanes.contains(lane) && self.lanes.get(lane).is_some_and(|n| *n >= LANE_LIMIT)
    }

    /// The request in flight (in the window, dropped from it, or judged
    /// never answered for now) whose id `got` is a known transformation of
    /// ([`IdFault::ties`]): the ids of each style sit in bands no such
    /// transformation maps into another's
    /// ([`mcperr_cases::fuzz::IdStyle`]), so at most one can be, and the
    /// answer is that request's, with a wrong id. Scanned only for an id
    /// nobody sent.
    pub(super) fn tied_to(&self, got: &Value) -> Option<String> {
        use mcperr_wire::id_fault::IdFault;
        let provisional = self.provisional.iter().map(|(k, p, _)| (k, p));
        let mut tied = self
            .pending
            .iter()
            .chain(&self.stragglers)
            .chain(provisional)
            .filter(|(_, p)| !p.silent_ok && IdFault::ties(&p.msg["id"], got))
            .map(|(k, _)| k.clone());
        let first = tied.next();
        // Two candidates: no telling whose it is.
        first.filter(|_| tied.next().is_none())
    }

    /// The oldest request of `kind` already out of the window (a straggler,
    /// or one judged never answered for now), and whether another is too:
    /// whom an id-less error answers before any request of `kind` still in
    /// the window, since it was sent before them ([`super::answers::claim_idless`]).
    pub(super) fn oldest_given_up(
        &self,
        kind: &dyn Fn(&Pending) -> bool,
    ) -> Option<(String, bool)> {
        let provisional = self.provisional.iter().map(|(k, p, _)| (k, p));
        let mut given_up = self
            .stragglers
            .iter()
            .chain(provisional)
            .filter(|(_, p)| kind(p));
        // One pass, no sort: this runs for every id-less error.
        let mut oldest = given_up.next()?;
        let mut more = false;
        for other in given_up {
            more = true;
            if other.1.sent < oldest.1.sent {
                oldest = other;
            }
        }
        Some((oldest.0.clone(), more))
    }

    /// Takes a straggler out, keeping its lane's count.
    pub(super) fn unstraggle(&mut self, key: &str) -> Option<Pending> {
        let p = self.stragglers.remove(key)?;
        if let Some(n) = self.lanes.get_mut(&lane_of(&p.input)) {
            *n = n.saturating_sub(1);
        }
        remember(&mut self.late, key.to_string());
        Some(p)
    }

    /// Takes back the provisional J4 of request `key` now that its answer
    /// came: the lane's later requests broken the same way wait again.
    pub(super) fn take_provisional(&mut self, key: &str) -> Option<Pending> {
        let at = self.provisional.iter().position(|(k, _, _)| k == key)?;
        let (_, p, _) = self.provisional.remove(at);
        if let Some(kind) = broken_params(&p.input) {
            self.dropped_kinds.remove(&(lane_of(&p.input), kind));
        }
        Some(p)
    }

    /// How many distinct findings the provisional J4s would add (one per
    /// kind of broken params), for `--max-findings`: the campaign stops as
    /// it would had they been recorded at once.
    pub(super) fn provisional_findings(&self) -> u64 {
        let kinds: HashSet<Option<String>> = self
            .provisional
            .iter()
            .map(|(_, p, _)| broken_params(&p.input))
            .collect();
        kinds.len() as u64
    }

    /// Every id whose answer may still come (before a lockstep phase).
    pub(super) fn stale_ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = self
            .late
            .iter()
            .chain(&self.surrogates)
            .chain(&self.left_waiting)
            .cloned()
            .collect();
        ids.extend(self.stragglers.keys().cloned());
        ids.extend(self.provisional.iter().map(|(k, _, _)| k.clone()));
        ids.extend(self.alive.iter().map(|(k, _, _)| k.clone()));
        ids.extend(self.counting.iter().map(|(k, _, _)| k.clone()));
        ids
    }
}
