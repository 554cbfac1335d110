//! How fast each method of a server answers, learnt during a run. A request
//! that outlives `--timeout-ms` while the server still answers others is
//! not yet a fault: the first such request of each lane is waited for up
//! to `--slow-ms`. Answered by then, the method is *slow* (its later
//! requests get `--slow-ms`); not answered, its *lane* is *hung*, and the
//! remaining cases of that lane are errors at once, each naming the first,
//! instead of one timeout per case. A lane ([`lane`]) is the method with
//! what about one request alone may leave it unanswered: its id's kind
//! (beyond 2^53, beyond 2^31, negative, a string), the shape of its params
//! (an array, none) and the tool, prompt or URI scheme it names; so a saved
//! case that no id beyond a double gets answered, or an array `params`,
//! does not make every later `tools/call` "not sent". A server that answers
//! nothing at all is *dead* (the executor's liveness probe), which is none
//! of this.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcperr_cases::plan::{IdChoice, Outgoing};
use serde_json::Value;

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
    /// Hung lanes with the case whose request never came back.
    hung: BTreeMap<String, String>,
    /// Lanes found hung on other processes of the same server (another
    /// era's run): not waited for again, so a server whose `tools/call`
    /// never answers pays `--slow-ms` once, not once per era.
    hung_elsewhere: Arc<Mutex<BTreeSet<String>>>,
}

/// The lane of a request: its method, and what about this one request may
/// leave it unanswered when others of its method are answered (see the
/// module's doc). `id`: `None` for a fresh counter id.
pub fn lane(method: &str, id: Option<&Value>, params: Option<&Value>) -> String {
    let mut out = method.to_string();
    let id_kind = match id {
        None => None,
        Some(Value::Number(n)) => {
            let wide = n
                .as_i64()
                .map(i128::from)
                .or_else(|| n.as_u64().map(i128::from));
            match wide {
                None => Some("a fractional id"),
                Some(w) if w.unsigned_abs() >= 1 << 53 => Some("an id beyond 2^53"),
                Some(w) if w > i128::from(i32::MAX) || w < i128::from(i32::MIN) => {
                    Some("an id beyond 2^31")
                }
                Some(w) if w < 0 => Some("a negative id"),
                Some(_) => None,
            }
        }
        Some(Value::String(_)) => Some("a string id"),
        Some(Value::Null) => Some("a null id"),
        Some(_) => Some("an id of another type"),
    };
    if let Some(kind) = id_kind {
        out.push_str(" with ");
        out.push_str(kind);
    }
    match params {
        None => out.push_str(", no params"),
        Some(Value::Object(o)) => {
            let named = match method {
                "tools/call" | "prompts/get" => o.get("name").map(Value::to_string),
                "resources/read" | "resources/subscribe" => o.get("uri").map(|u| {
                    let u = u.as_str().unwrap_or("?");
                    u.split_once("://")
                        .map_or(u, |(scheme, _)| scheme)
                        .to_string()
                }),
                _ => None,
            };
            match named {
                Some(n) => {
                    out.push(' ');
                    out.push_str(&n);
                }
                None if matches!(method, "tools/call" | "prompts/get") => out.push_str(", no name"),
                None if matches!(method, "resources/read" | "resources/subscribe") => {
                    out.push_str(", no uri")
                }
                None => {}
            }
            // The parts of the params' own schema a saved case may break.
            for key in ["arguments", "_meta"] {
                if let Some(v) = o.get(key).filter(|v| !v.is_object()) {
                    out.push_str(&format!(", {key} {}", kind_of(v)));
                }
            }
        }
        Some(Value::Array(_)) => out.push_str(", params an array"),
        Some(other) => out.push_str(&format!(", params {}", kind_of(other))),
    }
    out
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The lane of a message about to be sent.
pub fn lane_of_outgoing(o: &Outgoing) -> String {
    let id = match &o.id {
        IdChoice::Given(id) => Some(serde_json::to_value(id).unwrap_or(Value::Null)),
        IdChoice::Fresh | IdChoice::Notification => None,
    };
    lane(&o.method, id.as_ref(), o.params.as_ref())
}

/// The lane of a message as sent (a fresh counter id is no kind of its own).
pub fn lane_of_message(msg: &Value) -> String {
    let method = msg.get("method").and_then(Value::as_str).unwrap_or("?");
    lane(method, msg.get("id"), msg.get("params"))
}

/// Lanes found hung, shared by every process of one server.
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

    /// Whether a timed-out request of `method` in `lane` is worth waiting
    /// `--slow-ms` for: not when the method already had that wait, nor when
    /// its lane was found hung elsewhere.
    pub fn worth_waiting(&self, method: &str, lane: &str, normal: Duration) -> bool {
        let elsewhere = self.hung_elsewhere.lock().is_ok_and(|h| h.contains(lane));
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

    /// How a case's `requests` are paced: the first of their lanes found
    /// hung, with the case whose request hung it, or else the timeout every
    /// one of them gets, the slowest of their methods' ([`Pace::timeout_for`]).
    pub fn for_case(
        &self,
        requests: &[&Outgoing],
        normal: Duration,
    ) -> Result<Duration, (String, String)> {
        for o in requests {
            let lane = lane_of_outgoing(o);
            if let Some(first) = self.hung(&lane) {
                return Err((lane, first.to_string()));
            }
        }
        let slowest = requests
            .iter()
            .map(|o| self.timeout_for(&o.method, normal))
            .max();
        Ok(slowest.unwrap_or(normal))
    }

    /// The case whose request in `lane` never came back, if it is hung.
    pub fn hung(&self, lane: &str) -> Option<&str> {
        self.hung.get(lane).map(String::as_str)
    }

    /// `method` answered, but only after `elapsed`.
    pub fn mark_slow(&mut self, method: &str, elapsed: Duration) {
        self.slow.entry(method.to_string()).or_insert(elapsed);
    }

    /// The request in `lane` of `case` got no answer within `--slow-ms`.
    pub fn mark_hung(&mut self, lane: &str, case: &str) {
        if let Ok(mut h) = self.hung_elsewhere.lock() {
            h.insert(lane.to_string());
        }
        self.hung
            .entry(lane.to_string())
            .or_insert_with(|| case.to_string());
    }
}

impl Default for Pace {
    fn default() -> Self {
        Pace::new(DEFAULT_SLOW)
    }
}
