//! A case instantiated for one run, before any I/O: placeholders (the canary)
//! substituted, the era's `_meta` envelope built, the HTTP shape chosen, and
//! the effective expectation of the profile resolved. The executor only sends
//! what a [`CasePlan`] says and collects what comes back.

use mcperr_protocol::{Era, Id};
use serde_json::{json, Value};

use crate::case::{Case, Check, SendStep};
use crate::pattern;
use crate::profile::{Expectation, Profile};

mod message;
pub use message::{
    client_info, envelope, http_headers, params_for, raw_line_ids, with_envelope, IdChoice,
    Message, Outgoing,
};

/// A step before the judged request.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Bytes sent as one line (stdio) or one POST body (HTTP), unanswered.
    Raw(String),
    /// A notification or a request whose answer is awaited but not judged.
    Send(Outgoing),
    /// A request sent and left in flight (stdio): see
    /// [`crate::case::SendStep::Request`]'s `in_flight`.
    InFlight(Outgoing),
}

/// The values each `[[send]]` request captures from its answer, by step.
fn captures(case: &Case) -> Vec<(usize, Vec<(String, String)>)> {
    case.send
        .iter()
        .enumerate()
        .filter_map(|(i, s)| match s {
            SendStep::Request { capture, .. } if !capture.is_empty() => Some((
                i,
                capture
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
            )),
            _ => None,
        })
        .collect()
}

/// An `[http]` case's request as sent: its HTTP method, the headers it
/// sets or removes, the session it uses and the raw body it sends.
fn http_shape(
    spec: &crate::case::HttpSpec,
    case: &Case,
    sub_str: &dyn Fn(&str) -> String,
) -> HttpShape {
    HttpShape {
        method: spec.method.clone().unwrap_or_else(|| "POST".into()),
        overrides: spec
            .headers
            .iter()
            .map(|(k, v)| (sub_str(k), (v != "$absent").then(|| sub_str(v))))
            .collect(),
        session: match spec.session.as_deref() {
            Some("none") => SessionMode::Without,
            Some("bogus") => SessionMode::Bogus,
            Some("deleted") => SessionMode::Deleted,
            _ => SessionMode::Current,
        },
        raw_body: case.request.raw.as_deref().map(sub_str),
    }
}

impl CasePlan {
    /// The progress tokens of the task-augmented requests among the case's
    /// steps (a `task` param and a `_meta.progressToken`): the task's
    /// progress goes on under them after the CreateTaskResult (U6).
    pub fn task_tokens(&self) -> Vec<Value> {
        self.steps
            .iter()
            .filter_map(|s| match s {
                Step::Send(o) | Step::InFlight(o) => {
                    let p = o.params.as_ref()?;
                    p.get("task")?;
                    p.pointer("/_meta/progressToken").cloned()
                }
                Step::Raw(_) => None,
            })
            .collect()
    }

    /// The `subscriptions/listen` requests the case leaves in flight, as
    /// sent (a case gives them their ids, so that they can be named).
    pub fn listens(&self) -> Vec<Value> {
        self.steps
            .iter()
            .filter_map(|s| match s {
                Step::InFlight(o) if o.method == "subscriptions/listen" => match &o.id {
                    IdChoice::Given(id) => Some(o.message(Some(id))),
                    _ => None,
                },
                _ => None,
            })
            .collect()
    }
}

/// How the judged session is used by an HTTP case (2025-11-25).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionMode {
    /// The connection's own session id, if it has one.
    Current,
    /// No `Mcp-Session-Id` header.
    Without,
    /// A made-up session id.
    Bogus,
    /// The id of a session just ended with DELETE.
    Deleted,
}

/// The made-up session id of [`SessionMode::Bogus`].
pub const BOGUS_SESSION: &str = "mcperr-bogus-session-0000";

/// How an `[http]` case shapes its request.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpShape {
    /// HTTP method.
    pub method: String,
    /// Header overrides (`None` removes the header), applied after the era's headers.
    pub overrides: Vec<(String, Option<String>)>,
    /// Session handling.
    pub session: SessionMode,
    /// A body sent verbatim instead of the built message.
    pub raw_body: Option<String>,
}

/// One case, ready to send.
#[derive(Debug, Clone)]
pub struct CasePlan {
    /// The case as loaded.
    pub case: Case,
    /// The era it runs in.
    pub era: Era,
    /// The effective expectation under the run's profile, placeholders substituted.
    pub expectation: Expectation,
    /// Steps before the judged request.
    pub steps: Vec<Step>,
    /// The judged request.
    pub request: Outgoing,
    /// Its HTTP shape, for `[http]` cases over HTTP.
    pub http: Option<HttpShape>,
    /// The run's canary.
    pub canary: String,
    /// The citation for reports (see [`citation`]).
    pub citation: String,
    /// The run's profile, which grades deviations.
    pub profile: Profile,
    /// The run speaks Streamable HTTP (some sentences bind only there).
    pub over_http: bool,
    /// Whether the server declared `logging`, when discovery told (U8).
    pub logging_declared: Option<bool>,
    /// Whether the server declared `tasks.requests.tools.call`, when known.
    pub tool_tasks_declared: Option<bool>,
    /// How long the valid call of the part the case needs took when the
    /// parts probe made it (the slowest, if it needs several): how long a
    /// request the case leaves in flight is watched. `None`: not probed.
    pub parts_took: Option<std::time::Duration>,
    /// What each step's answer gives the later ones, by step index: (name,
    /// dotted path), from the case's `capture`.
    pub captures: Vec<(usize, Vec<(String, String)>)>,
}

/// The citation of `case` in `era` for reports: the table's sentence for
/// the aspect the case proves (a case file never supplies its own quote).
pub fn citation(case: &Case, era: Era) -> String {
    case.aspect_id().text(era).cite()
}

impl CasePlan {
    /// Instantiates `case` for a run in `era` under `profile`, with the
    /// run's canary and the placeholder values discovery chose (`tool`).
    pub fn new(
        case: &Case,
        profile: &Profile,
        era: Era,
        canary: &str,
        extra: &[(String, Value)],
        over_http: bool,
    ) -> Self {
        let vars = [("canary", canary)];
        let vars = vars.as_slice();
        // The run's values first (a part's arguments may carry the canary),
        // then the canary, then each `$merge` folded in.
        let sub = |v: &Value| {
            pattern::resolve_merges(pattern::substitute(
                &pattern::substitute_values(v, extra),
                vars,
            ))
        };
        let sub_str = |s: &str| {
            sub(&Value::String(s.to_string()))
                .as_str()
                .unwrap_or_default()
                .to_string()
        };
        let mut expectation = profile.expectation(case, era);
        expectation.pattern = sub(&expectation.pattern);
        for alt in expectation
            .also_pass
            .iter_mut()
            .chain(expectation.warn.iter_mut())
        {
            alt.pattern = sub(&alt.pattern);
        }
        for (_, shape) in &mut expectation.aspects {
            *shape = sub(shape);
        }
        let envelope = case.envelope;
        let outgoing = |id: IdChoice, method: &str, params: &Option<Value>| Outgoing {
            id,
            method: method.to_string(),
            params: params_for(era, params.as_ref().map(sub), envelope),
        };
        let steps = case
            .send
            .iter()
            .map(|s| match s {
                SendStep::Raw { raw } => Step::Raw(sub_str(raw)),
                SendStep::Notification {
                    notification,
                    params,
                } => Step::Send(outgoing(IdChoice::Notification, notification, params)),
                SendStep::Request {
                    method,
                    params,
                    id,
                    in_flight,
                    ..
                } => {
                    let id = id.as_ref().and_then(Id::from_value);
                    let o = outgoing(id.map_or(IdChoice::Fresh, IdChoice::Given), method, params);
                    if *in_flight && !over_http {
                        Step::InFlight(o)
                    } else {
                        Step::Send(o)
                    }
                }
            })
            .collect();
        let http_case = case.http.as_ref().filter(|_| over_http);
        let id = match (&case.request.id, http_case.is_some_and(|h| h.notification)) {
            (_, true) => IdChoice::Notification,
            (Some(v), false) => Id::from_value(v).map_or(IdChoice::Fresh, IdChoice::Given),
            (None, false) => IdChoice::Fresh,
        };
        let request = outgoing(id, &case.request.method, &case.request.params);
        let http = http_case.map(|spec| http_shape(spec, case, &sub_str));
        CasePlan {
            case: case.clone(),
            era,
            expectation,
            steps,
            request,
            http,
            canary: canary.to_string(),
            citation: citation(case, era),
            profile: profile.clone(),
            over_http,
            logging_declared: None,
            tool_tasks_declared: None,
            parts_took: None,
            captures: captures(case),
        }
    }

    /// This plan with the values captured from its steps' answers put in
    /// the later steps, the judged request and the expectation.
    pub fn with_values(&self, vars: &[(String, Value)]) -> CasePlan {
        let sub = |v: &Value| pattern::substitute_values(v, vars);
        let mut plan = self.clone();
        let outgoing = |o: &mut Outgoing| o.params = o.params.as_ref().map(sub);
        for s in &mut plan.steps {
            if let Step::Send(o) | Step::InFlight(o) = s {
                outgoing(o);
            }
        }
        outgoing(&mut plan.request);
        let e = &mut plan.expectation;
        e.pattern = sub(&e.pattern);
        for alt in e.also_pass.iter_mut().chain(e.warn.iter_mut()) {
            alt.pattern = sub(&alt.pattern);
        }
        for (_, shape) in &mut e.aspects {
            *shape = sub(shape);
        }
        plan
    }

    /// The grader of this plan's era, transport and profile.
    pub fn grader(&self) -> mcperr_model::grading::Grader {
        mcperr_model::grading::Grader {
            era: self.era,
            over_http: self.over_http,
            grading: self.profile.grading,
            strict: self.profile.strict,
        }
    }

    /// The shape the run holds a response to, for reports: the case's own
    /// expectation with the shapes of those aspects that get a verdict in
    /// this run (a `none` aspect under `spec` is left out: it is not judged).
    pub fn shown_expectation(&self) -> serde_json::Value {
        let grader = self.grader();
        let mut out = self.expectation.pattern.clone();
        for (aspect, shape) in &self.expectation.aspects {
            let probe = mcperr_model::grading::Violation::new(*aspect, String::new());
            if grader.grade(&probe, false).is_some() {
                pattern::merge(&mut out, shape);
            }
        }
        out
    }

    /// Whether the case's expectation runs named check `check`.
    pub fn checks(&self, check: Check) -> bool {
        self.expectation.checks.contains(&check)
    }

    /// The requests the case sends and waits for: its judged one, then its
    /// steps' (notifications, raw lines and requests left in flight left
    /// out): what paces the case, whose executor gives them all the slowest
    /// of their methods' timeouts.
    pub fn requests(&self) -> Vec<&Outgoing> {
        let steps = self.steps.iter().filter_map(|s| match s {
            Step::Send(o) if o.id != IdChoice::Notification => Some(o),
            _ => None,
        });
        std::iter::once(&self.request).chain(steps).collect()
    }

    /// Whether the case needs `limited_calls` counted around the request.
    pub fn wants_counts(&self) -> bool {
        self.expectation.checks.contains(&Check::BodyNeverRan)
    }

    /// Whether the case reads the server's stderr.
    pub fn wants_log(&self) -> bool {
        self.expectation
            .checks
            .iter()
            .any(|c| matches!(c, Check::LogNoTraceback | Check::LogCrashTraceback))
    }

    /// Whether malformed lines were sent before the judged request (their
    /// id-null error answers are allowed, JSON-RPC 2.0 §5).
    pub fn sent_raw(&self) -> bool {
        // A lone surrogate in the judged request (a saved fuzz finding) is
        // malformed input too: J6 judges a death after it, as in fuzzing.
        let lone = || {
            self.request
                .params
                .as_ref()
                .is_some_and(|p| p.to_string().contains(mcperr_wire::text::LONE_SURROGATE))
        };
        self.steps.iter().any(|s| matches!(s, Step::Raw(_))) || lone()
    }

    /// The ids of the requests inside the malformed lines sent before the
    /// judged request (an object with an id, or one in an array): an
    /// answer carrying one of them answers that line's request, as the
    /// server read it, and is neither a duplicate nor unsolicited.
    pub fn raw_ids(&self) -> Vec<Value> {
        self.steps
            .iter()
            .filter_map(|s| match s {
                Step::Raw(text) => Some(raw_line_ids(text)),
                _ => None,
            })
            .flatten()
            .collect()
    }

    /// The client capabilities a 2025-11-25 case's connection declared:
    /// those of its own `initialize` step, else `{}` (mcperr's handshake
    /// declares none; E1 judges the server's requests against them). `None`
    /// in 2026-07-28, where each request declares its own, and for a
    /// connection of its own whose initialize is the judged request.
    pub fn client_capabilities(&self) -> Option<Value> {
        if self.era != Era::Legacy {
            return None;
        }
        let own = self.steps.iter().find_map(|s| match s {
            Step::Send(o) if o.method == "initialize" => Some(
                o.params
                    .as_ref()
                    .and_then(|p| p.get("capabilities"))
                    .cloned()
                    .unwrap_or_else(|| json!({})),
            ),
            _ => None,
        });
        match own {
            Some(caps) => Some(caps),
            None if self.case.handshake => Some(json!({})),
            None => None,
        }
    }

    /// Whether notifications were sent before the judged request.
    pub fn sent_notification(&self) -> bool {
        self.steps
            .iter()
            .any(|s| matches!(s, Step::Send(o) if o.id == IdChoice::Notification))
    }
}
