//! A fuzz worker's state: its generator, judge, seeded choices, counters and
//! what it holds back for lockstep checks after the campaign. Judging and
//! recording live here; everything that sends requests (probes, confirming,
//! shrinking) is in [`super::probe`], which the pipeline and the campaign call,
//! so the modules form a chain: worker, probe, pipeline, campaign.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use mcperr_cases::fuzz::{Class, FuzzInput, Generator, Seeded};
use mcperr_oracle::findings::Judge;
use mcperr_protocol::Era;
use mcperr_wire::exchange::{Exchange, Stray};

use super::{FuzzSettings, Store};

/// Check `limited_calls` after this many invalid `limited` calls.
pub(crate) const COUNT_WINDOW: usize = 64;
/// Calls of windows whose count rose kept for the search, at most.
pub(crate) const MAX_SUSPECTS: usize = 4 * COUNT_WINDOW;

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
    pub(crate) next_n: u64,
    /// Invalid `limited` calls since the last count.
    pub(crate) window: Vec<FuzzInput>,
    /// Successful valid `limited` calls since the last count.
    pub(crate) valid_ok: u64,
    pub(crate) last_count: Option<u64>,
    /// Calls of windows whose count rose, searched after the campaign.
    pub(crate) suspects: Vec<FuzzInput>,
    /// Requests with an id beyond a double that went unanswered or got an
    /// id-null error (and whether others were answered meanwhile): judged
    /// after a re-send with a small id shows whether the id alone was the
    /// problem ([`mcperr_wire::edges::big_id`]).
    pub(crate) big_ids: std::sync::Mutex<BigIds>,
    /// Requests issued by this worker (for `--requests`).
    pub(crate) issued: u64,
    pub(crate) quota: Option<u64>,
    pub(crate) deadline: Option<Instant>,
    /// When the era's share of `--seconds` ends: the campaign stops sending
    /// in time for its last drop grace to end here, and confirming and
    /// shrinking stop here.
    pub(crate) shrink_until: Option<Instant>,
    pub(crate) shrink_requests: &'a AtomicU64,
    /// When the budget was spent over a line connection, and the server's
    /// CPU time then: the busy share is the sending stretch's, not that of
    /// the wait for the verdicts of requests still unanswered after it.
    pub(crate) spent_mark: Option<(Instant, Option<std::time::Duration>)>,
}

impl Worker<'_> {
    /// The next request number (ids are drawn from it in every style).
    pub(crate) fn next_n(&mut self) -> u64 {
        self.next_n += 1;
        self.next_n
    }

    /// Whether shrinking must stop: Ctrl-C or `--deadline`, or the era's
    /// share of `--seconds` spent. Confirming suspects and the proofs of
    /// big ids are not cut by the share (only by a stop): without them a
    /// finding would be blamed on the wrong cause.
    pub(crate) fn out_of_time(&self) -> bool {
        self.settings.stats.stop.load(Ordering::Relaxed)
            || self.shrink_until.is_some_and(|d| Instant::now() >= d)
    }

    pub(crate) fn take(&mut self) -> bool {
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

    /// As [`Worker::judge_and_record`], for an answer matched to `input`;
    /// `guessed`: an error without an id claimed for it while other
    /// requests of its kind were in flight. Its findings count, but its
    /// example gives way to a sure one ([`super::store::Found::guessed`]).
    /// An id beyond a double is held for the re-send's proof as any.
    pub(crate) fn judge_and_record_claimed(&self, input: &FuzzInput, ex: &Exchange, guessed: bool) {
        if !guessed || input.id_style == mcperr_cases::fuzz::IdStyle::Above53 {
            return self.judge_and_record(input, ex, None);
        }
        let findings = self.judge.judge_with(input, ex, None, None, None, false);
        self.store
            .record_example(&self.settings.stats, findings, input, self.counted, true);
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
        use mcperr_wire::edges::BigIdAnswer;
        // Silence is held only from a server that went on answering others
        // (a server that hangs is not excused); an id-null error always is.
        let held = input.id_style == mcperr_cases::fuzz::IdStyle::Above53
            && match mcperr_wire::edges::big_id_answer(ex) {
                Some(BigIdAnswer::Silent) => alive,
                Some(BigIdAnswer::NullIdError) => true,
                _ => false,
            };
        if held {
            if let Ok(mut big) = self.big_ids.lock() {
                if big.hold(input, ex, alive) {
                    return;
                }
            }
        }
        self.record_judged(input, ex, ran, alive, None);
    }

    /// Judges `ex` and records its findings; `small_id_answered`: what a
    /// re-send of a big-id request with a small id showed.
    pub(crate) fn record_judged(
        &self,
        input: &FuzzInput,
        ex: &Exchange,
        ran: Option<bool>,
        alive: bool,
        small_id_answered: Option<bool>,
    ) {
        let output = matches!(input.class, Class::ValidCall)
            .then(|| self.gen.output_validator(&input.target))
            .flatten();
        let findings = self
            .judge
            .judge_with(input, ex, ran, output, small_id_answered, alive);
        self.store
            .record(&self.settings.stats, findings, input, self.counted);
    }

    /// Records that `input`'s lane answered only after `took`, beyond
    /// `timeout` (J4 `slow`, graded; listed in the report either way).
    pub(crate) fn record_slow(
        &self,
        input: &FuzzInput,
        ex: &Exchange,
        took: std::time::Duration,
        timeout: std::time::Duration,
    ) {
        self.store.note_slow(self.era, slow_lane(input), took);
        let findings = self.judge.slow(input, ex, took, timeout);
        self.store
            .record(&self.settings.stats, findings, input, self.counted);
    }

    pub(crate) fn record_strays(&self, strays: Vec<Stray>) {
        let findings = self.judge.strays(strays);
        let input = FuzzInput::stray_output();
        self.store
            .record(&self.settings.stats, findings, &input, self.counted);
    }

    pub(crate) fn is_counted_call(&self, input: &FuzzInput) -> bool {
        self.counted && mcperr_cases::bookshop::is_counted_call(&input.method, &input.target)
    }

    /// Records the held big-id requests without the proof a re-send gives
    /// (the server is gone): nothing is excused, nothing is lost.
    pub(crate) fn flush_big_ids(&self) {
        let held = std::mem::take(&mut *self.big_ids.lock().expect("not poisoned"));
        for group in held.groups {
            for (input, ex, alive) in group.all() {
                self.record_judged(input, ex, None, *alive, None);
            }
        }
    }

    /// Keeps the calls of a window whose count rose, for [`super::probe::confirm`]
    /// after the campaign (a search needs the pipe to itself).
    pub(crate) fn suspect(&mut self, window: &mut Vec<FuzzInput>) {
        if self.suspects.len() < MAX_SUSPECTS {
            self.suspects.append(window);
        }
        window.clear();
    }
}

/// Big-id requests held for a re-send with a small id, grouped by what the
/// re-send would show (method, root cause, kind of answer, server alive): one
/// re-send decides a whole group, so no cap turns later ones into unproven
/// failures. A group keeps a few exchanges and counts the rest.
#[derive(Default)]
pub(crate) struct BigIds {
    pub(crate) groups: Vec<BigIdGroup>,
}

/// One group of held big-id requests.
pub(crate) struct BigIdGroup {
    key: String,
    /// The exchanges kept (the first is re-sent).
    pub(crate) kept: Vec<(FuzzInput, Exchange, bool)>,
    /// Further hits of the group beyond those kept: recorded as the last kept one.
    pub(crate) more: u64,
}

impl BigIdGroup {
    /// Every hit of the group, the ones beyond those kept as the last kept.
    pub(crate) fn all(&self) -> impl Iterator<Item = &(FuzzInput, Exchange, bool)> {
        let last = self.kept.last();
        self.kept
            .iter()
            .chain(std::iter::repeat_n(last, self.more as usize).flatten())
    }
}

/// Groups kept at most; exchanges kept per group.
const MAX_GROUPS: usize = 1024;
const KEPT_PER_GROUP: usize = 16;

impl BigIds {
    /// Holds `ex`; false when there is no room (then it is judged at once).
    pub(crate) fn hold(&mut self, input: &FuzzInput, ex: &Exchange, alive: bool) -> bool {
        let answer = mcperr_wire::edges::big_id_answer(ex);
        // By root cause too: an array `params` that no id gets answered is
        // not excused (nor blamed) with an object one's re-send; nor is a
        // request with a lone surrogate (unreadable whatever its id) one
        // without, or the other way round.
        let cause = mcperr_oracle::findings::identity::cause(input);
        let lone = input.has_lone_surrogate();
        let key = format!("{} {cause} {answer:?} {alive} {lone}", input.method);
        if let Some(g) = self.groups.iter_mut().find(|g| g.key == key) {
            if g.kept.len() < KEPT_PER_GROUP {
                g.kept.push((input.clone(), ex.clone(), alive));
            } else {
                g.more += 1;
            }
            return true;
        }
        if self.groups.len() >= MAX_GROUPS {
            return false;
        }
        self.groups.push(BigIdGroup {
            key,
            kept: vec![(input.clone(), ex.clone(), alive)],
            more: 0,
        });
        true
    }
}

/// Why a worker's loop stopped.
pub(crate) enum Stop {
    /// The budget is spent.
    Done,
    /// The server died or stopped answering with these requests in flight.
    Lost(Vec<FuzzInput>),
}

/// A slow lane as the report names it: method and target (`tools/call
/// fetch_page`), or, for requests that break the method's own params (one
/// lane a method, whose target is the method), `tools/call (broken params)`.
fn slow_lane(input: &FuzzInput) -> String {
    if matches!(input.class, Class::Envelope(_)) {
        format!("{} (broken params)", input.method)
    } else {
        format!("{} {}", input.method, input.target)
    }
}
