//! How fast each method of a server answers, learnt during a run. A request
//! that outlives `--timeout-ms` while the server still answers others is
//! not yet a fault: the first such request of each method is waited for up
//! to `--slow-ms`. Answered by then, the method is *slow* (its later
//! requests get `--slow-ms`); not answered, it is *hung*, and its remaining
//! cases are errors at once, each naming the first, instead of one timeout
//! per case. A server that answers nothing at all is *dead* (the executor's
//! liveness probe), which is none of this.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Default of `--slow-ms`: how long the first timed-out request of a
/// method is waited for before the method is called hung.
pub const DEFAULT_SLOW: Duration = Duration::from_secs(30);

/// What is known of each method's pace on one server process.
#[derive(Debug, Clone)]
pub struct Pace {
    /// How long a slow method's requests are waited for (`--slow-ms`).
    pub slow_timeout: Duration,
    /// Slow methods with the time their first slow request took.
    slow: BTreeMap<String, Duration>,
    /// Hung methods with the case whose request never came back.
    hung: BTreeMap<String, String>,
    /// Methods found hung on other processes of the same server (another
    /// era's run): not waited for again, so a server whose `tools/call`
    /// never answers pays `--slow-ms` once, not once per era.
    hung_elsewhere: Arc<Mutex<BTreeSet<String>>>,
}

/// Methods found hung, shared by every process of one server.
pub type HungMethods = Arc<Mutex<BTreeSet<String>>>;

impl Pace {
    /// Nothing known yet; slow requests are waited for up to `slow_timeout`.
    pub fn new(slow_timeout: Duration) -> Pace {
        Pace {
            slow_timeout,
            slow: BTreeMap::new(),
            hung: BTreeMap::new(),
            hung_elsewhere: HungMethods::default(),
        }
    }

    /// The same, sharing what is found hung with other processes.
    pub fn shared(mut self, hung: HungMethods) -> Pace {
        self.hung_elsewhere = hung;
        self
    }

    /// Whether a timed-out request of `method` is worth waiting `--slow-ms`
    /// for: not when the method already had that wait, here or elsewhere.
    pub fn worth_waiting(&self, method: &str, normal: Duration) -> bool {
        let elsewhere = self.hung_elsewhere.lock().is_ok_and(|h| h.contains(method));
        !self.slow.contains_key(method) && !elsewhere && self.slow_timeout > normal
    }

    /// The timeout of a request of `method`: `normal`, or `--slow-ms` once
    /// the method is known to be slow.
    pub fn timeout_for(&self, method: &str, normal: Duration) -> Duration {
        if self.slow.contains_key(method) {
            self.slow_timeout.max(normal)
        } else {
            normal
        }
    }

    /// The case whose request of `method` never came back, if it is hung.
    pub fn hung(&self, method: &str) -> Option<&str> {
        self.hung.get(method).map(String::as_str)
    }

    /// `method` answered, but only after `elapsed`.
    pub fn mark_slow(&mut self, method: &str, elapsed: Duration) {
        self.slow.entry(method.to_string()).or_insert(elapsed);
    }

    /// `method`'s request in `case` got no answer within `--slow-ms`.
    pub fn mark_hung(&mut self, method: &str, case: &str) {
        if let Ok(mut h) = self.hung_elsewhere.lock() {
            h.insert(method.to_string());
        }
        self.hung
            .entry(method.to_string())
            .or_insert_with(|| case.to_string());
    }
}

impl Default for Pace {
    fn default() -> Self {
        Pace::new(DEFAULT_SLOW)
    }
}
