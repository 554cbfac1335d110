//! What a campaign found, by signature: each finding with the input that
//! shows it, shared by the campaign's workers, and the lanes that were slow
//! or left undecided.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::Mutex;
use std::time::Duration;

use mcperr_cases::fuzz::FuzzInput;
use mcperr_oracle::findings::Finding;
use mcperr_protocol::Era;
use serde::{Deserialize, Serialize};

use super::Stats;

impl mcperr_oracle::findings::group::Member for Found {
    fn finding(&self) -> &Finding {
        &self.finding
    }
    fn finding_mut(&mut self) -> &mut Finding {
        &mut self.finding
    }
}

/// A finding with the input that shows it (for shrinking and saving).
#[derive(Debug, Clone)]
pub struct Found {
    /// The finding (after shrinking, the minimal one).
    pub finding: Finding,
    /// The input that shows it.
    pub input: FuzzInput,
    /// Whether `limited` and `limited_calls` were there (a saved T4 case counts).
    pub counted: bool,
    /// Shrunk already.
    pub(super) shrunk: bool,
    /// Sent alone, its request got an answer showing other findings: the
    /// campaign matched an answer to the wrong request (answers with wrong
    /// ids, say). Dropped, and counted.
    pub(super) misattributed: bool,
    /// Its example is an error without an id, claimed for this request
    /// while other requests of its kind were in flight: a guess. An example
    /// of the same finding claimed for sure replaces it, since shrinking
    /// sends the example alone, and a wrong guess would leave a true
    /// finding unconfirmed.
    pub(super) guessed: bool,
}

/// What starts the line of a finding that only an id style brings about.
const ID_NOTE: &str = "\nonly its id brought this answer about: ";

/// Distinct findings by signature, shared by a campaign's workers (folded
/// into groups when the campaign ends).
#[derive(Default)]
pub(crate) struct Store {
    found: Mutex<BTreeMap<String, Found>>,
    /// Slow lanes by era and lane, with the first slow answer's time.
    slow: Mutex<BTreeMap<(String, String), u64>>,
    /// Undecided lanes by era and lane: requests, and the longest wait.
    undecided: Mutex<BTreeMap<(String, String), (u64, u64)>>,
}

/// A method and target with requests still unanswered when the campaign
/// ended, none of them waited out `--slow-ms` and none of its requests
/// answered late: it may be slow (answered after the campaign) or hung,
/// and mcperr does not guess, so J4 gives no verdict. A longer campaign or
/// a shorter `--slow-ms` decides it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UndecidedLane {
    /// The era it was seen in.
    pub era: String,
    /// The method and target (`tools/call fetch_page`).
    pub lane: String,
    /// How many of its requests were left so.
    pub requests: u64,
    /// The longest any of them had waited, in milliseconds.
    pub waited_ms: u64,
}

/// A method and target whose answers came only after `--timeout-ms` (within
/// `--slow-ms`): slow, not hung. J4 `slow` judges it (no verdict under
/// `spec`, a warning at most), so it is listed here under every profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SlowLane {
    /// The era it was seen in.
    pub era: String,
    /// The method and target (`tools/call fetch_page`), or for requests
    /// that break the method's own params the method alone
    /// (`tools/call (broken params)`).
    pub lane: String,
    /// How long its first slow answer took, in milliseconds.
    pub took_ms: u64,
}

impl Store {
    /// Records findings of `input`; counts hits of known ones.
    pub(crate) fn record(
        &self,
        stats: &Stats,
        findings: Vec<Finding>,
        input: &FuzzInput,
        counted: bool,
    ) {
        self.record_example(stats, findings, input, counted, false);
    }

    /// As [`Store::record`]; `guessed`: the answer was matched to `input`
    /// by a guess (see [`Found::guessed`]).
    pub(crate) fn record_example(
        &self,
        stats: &Stats,
        findings: Vec<Finding>,
        input: &FuzzInput,
        counted: bool,
        guessed: bool,
    ) {
        if findings.is_empty() {
            return;
        }
        let mut found = self.found.lock().unwrap_or_else(|e| e.into_inner());
        for mut f in findings {
            match found.get_mut(&f.signature) {
                Some(known) if known.guessed && !guessed && !known.shrunk => {
                    // A sure example replaces a guessed one; the counts stay.
                    f.absorb(&known.finding);
                    known.finding = f;
                    known.input = input.clone();
                    known.counted = counted;
                    known.guessed = false;
                }
                Some(known) => known.finding.absorb(&f),
                None => {
                    stats.findings.fetch_add(1, Ordering::Relaxed);
                    found.insert(
                        f.signature.clone(),
                        Found {
                            finding: f,
                            input: input.clone(),
                            counted,
                            shrunk: false,
                            misattributed: false,
                            guessed,
                        },
                    );
                }
            }
        }
    }

    /// The findings not shrunk yet (taken out; put back with [`Store::put`]).
    pub(crate) fn unshrunk(&self) -> Vec<Found> {
        let found = self.found.lock().unwrap_or_else(|e| e.into_inner());
        found.values().filter(|f| !f.shrunk).cloned().collect()
    }

    /// Replaces a finding with its shrunk form (hits kept).
    pub(crate) fn put(&self, signature: &str, mut shrunk: Found) {
        let mut found = self.found.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(old) = found.get(signature) {
            // The shrunk example keeps what was counted, and its group (an
            // id style's group is known only from the re-send).
            shrunk.finding.hits = old.finding.hits;
            shrunk.finding.eras = old.finding.eras.clone();
            shrunk.finding.methods = old.finding.methods.clone();
            shrunk.finding.causes = old.finding.causes.clone();
            shrunk.finding.group = old.finding.group.clone();
            shrunk.finding.id = old.finding.id.clone();
            // The line that says only its id brought it about, kept.
            if let Some(i) = old.finding.message.find(ID_NOTE) {
                let note = &old.finding.message[i..];
                if !shrunk.finding.message.contains(note) {
                    shrunk.finding.message.push_str(note);
                }
            }
        }
        shrunk.shrunk = true;
        found.insert(signature.to_string(), shrunk);
    }

    /// Drops a finding its request alone did not show (its answer showed
    /// others, recorded as any): a campaign's misattribution.
    pub(crate) fn drop_misattributed(&self, stats: &Stats, signature: &str) {
        let mut found = self.found.lock().unwrap_or_else(|e| e.into_inner());
        if found.remove(signature).is_some() {
            stats.misattributed.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Notes a slow lane (the first time it is seen per era).
    pub(crate) fn note_slow(&self, era: Era, lane: String, took: Duration) {
        let mut slow = self.slow.lock().unwrap_or_else(|e| e.into_inner());
        slow.entry((era.to_string(), lane))
            .or_insert(took.as_millis() as u64);
    }

    /// Notes a request of `lane` left unanswered, undecided, after `waited`.
    pub(crate) fn note_undecided(&self, era: Era, lane: String, waited: Duration) {
        let mut undecided = self.undecided.lock().unwrap_or_else(|e| e.into_inner());
        let entry = undecided.entry((era.to_string(), lane)).or_insert((0, 0));
        entry.0 += 1;
        entry.1 = entry.1.max(waited.as_millis() as u64);
    }

    pub(super) fn undecided_lanes(&self) -> Vec<UndecidedLane> {
        let undecided = self.undecided.lock().unwrap_or_else(|e| e.into_inner());
        undecided
            .iter()
            .map(|((era, lane), (requests, waited_ms))| UndecidedLane {
                era: era.clone(),
                lane: lane.clone(),
                requests: *requests,
                waited_ms: *waited_ms,
            })
            .collect()
    }

    pub(super) fn slow_lanes(&self) -> Vec<SlowLane> {
        let slow = self.slow.lock().unwrap_or_else(|e| e.into_inner());
        slow.iter()
            .map(|((era, lane), ms)| SlowLane {
                era: era.clone(),
                lane: lane.clone(),
                took_ms: *ms,
            })
            .collect()
    }

    pub(super) fn all(&self) -> Vec<Found> {
        let found = self.found.lock().unwrap_or_else(|e| e.into_inner());
        found.values().cloned().collect()
    }

    /// Replaces a finding's group with an id style's: the same request with
    /// a counter id showed none of it ([`super::probe::attribute_ids`]).
    pub(crate) fn regroup(&self, signature: &str, group: String, id: String, why: &str) {
        let mut found = self.found.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(f) = found.get_mut(signature) {
            f.finding.group = group;
            f.finding.id = id;
            f.finding.message = format!("{}{ID_NOTE}{why}", f.finding.message);
        }
    }

    /// Marks a finding as needing no shrinking of its own (its group has
    /// a smaller example).
    pub(crate) fn skip_shrinking(&self, signature: &str) {
        let mut found = self.found.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(f) = found.get_mut(signature) {
            f.shrunk = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn finding(request_id: u64, hits: u64) -> Finding {
        serde_json::from_value(json!({
            "rule": "J1", "verdict": "fail", "message": "the id must be the request's",
            "request": {"jsonrpc": "2.0", "id": request_id, "method": "resources/read", "params": []},
            "response": {"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid request"}},
            "signature": "J1.error-id fail", "hits": hits,
        }))
        .unwrap()
    }

    fn input(target: &str) -> FuzzInput {
        FuzzInput {
            target: target.into(),
            ..FuzzInput::stray_output()
        }
    }

    #[test]
    fn an_id_less_answer_claimed_by_a_guess_gives_way_to_one_claimed_for_sure() {
        let (store, stats) = (Store::default(), Stats::default());
        let record = |id, target, guessed| {
            store.record_example(&stats, vec![finding(id, 1)], &input(target), true, guessed)
        };
        record(1, "guessed", true);
        record(2, "another guess", true);
        assert_eq!(
            store.all()[0].input.target,
            "guessed",
            "a guess keeps the first"
        );
        record(3, "sure", false);
        record(4, "guessed again", true);
        let [found] = &store.all()[..] else {
            panic!("one finding: {:?}", store.all())
        };
        assert_eq!(found.input.target, "sure");
        assert_eq!(found.finding.request["id"], 3);
        assert!(!found.guessed);
        assert_eq!(found.finding.hits, 4, "every hit still counted");
        assert_eq!(stats.findings.load(Ordering::Relaxed), 1);
    }
}
