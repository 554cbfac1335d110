//! Judging traffic mcperr did not write: `mcperr proxy` sits between a real
//! host and a server, forwards every byte unchanged, and hands each line it
//! forwarded to an [`Observer`], which judges every server answer with the
//! fuzzing judge ([`mcperr_oracle::findings::judge`]): the invariants (ids and framing,
//! the era's result shapes, stack markers and secret-shaped text), plus what
//! the request's kind implies where the traffic shows it (arguments that
//! break the tool's listed `inputSchema` come back as a tool error, an
//! unlisted prompt is −32602, an unknown method −32601), and liveness (a
//! request left unanswered while later ones were answered). No I/O here: the
//! caller feeds lines and the time they passed.

use std::collections::{BTreeMap, HashMap};
use std::time::Instant;

use mcperr_protocol::Era;
use serde_json::Value;

use crate::report::{RunReport, TargetInfo};
use mcperr_cases::fuzz::inputs::{Class, FuzzInput, IdStyle};
use mcperr_cases::profile::Profile;
use mcperr_oracle::findings::judge::{Finding, Judge};
use mcperr_wire::exchange::{Ending, Exchange, HttpAnswer, Stray};

/// Methods a client may send in either era; any other is unknown (J2).
const KNOWN_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "server/discover",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
    "tasks/get",
    "tasks/list",
    "tasks/result",
    "tasks/cancel",
];

/// A request the host sent, waiting for its answer.
pub(crate) struct Sent {
    msg: Value,
    at: Instant,
    seq: u64,
}

/// What a tool's listing says: its input and output validators.
struct ToolSchemas {
    input: Option<jsonschema::Validator>,
    output: Option<jsonschema::Validator>,
}

/// Counts of what the observer saw.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Seen {
    /// Requests from the host.
    pub requests: u64,
    /// Answers judged.
    pub judged: u64,
    /// Requests unanswered when the host left.
    pub unanswered: u64,
    /// Requests the server refused at the HTTP level (a status ≥ 400
    /// without their answer): HTTP's business, forwarded, not judged.
    pub rejected: u64,
}

/// The one channel of a stdio session.
pub const STDIO: u64 = 0;

/// Watches one host–server conversation and judges each answer.
pub struct Observer {
    /// Grades in the era judged in; its era follows [`Observer::era`].
    judge: Judge,
    /// The era asked for on the command line; otherwise read from the traffic.
    pinned: Option<Era>,
    era: Option<Era>,
    /// Keyed by the channel the request came on and its id: over stdio one
    /// channel ([`STDIO`]), over HTTP one per POST (each answered on its own
    /// response), so that two sessions reusing an id never meet.
    pending: HashMap<(u64, String), Sent>,
    next_seq: u64,
    /// The newest `seq` answered, when it was answered.
    answered_seq: Option<u64>,
    tools: HashMap<String, ToolSchemas>,
    prompts: HashMap<String, Vec<String>>,
    /// Whether the server declared `logging`, once its handshake or
    /// discovery said (a log message from one that did not breaks U8).
    logging_declared: Option<bool>,
    /// What was wrong with an HTTP response's body, per channel, until the
    /// channel ends.
    problems: HashMap<u64, String>,
    /// One finding per group, with its smallest example's request.
    found: BTreeMap<String, (Finding, FuzzInput)>,
    seen: Seen,
}

impl Observer {
    /// An observer grading with `profile`, judging in `era` when given
    /// (else in the era the handshake or the first request's envelope names).
    pub fn new(profile: Profile, era: Option<Era>) -> Observer {
        Observer {
            judge: Judge {
                era: era.unwrap_or(Era::Legacy),
                profile,
                over_http: false,
            },
            pinned: era,
            era,
            pending: HashMap::new(),
            next_seq: 0,
            answered_seq: None,
            tools: HashMap::new(),
            prompts: HashMap::new(),
            logging_declared: None,
            problems: HashMap::new(),
            found: BTreeMap::new(),
            seen: Seen::default(),
        }
    }

    /// The era judged in (the legacy one until the traffic names one).
    pub fn era(&self) -> Era {
        self.era.unwrap_or(Era::Legacy)
    }

    /// What was seen so far.
    pub fn seen(&self) -> Seen {
        self.seen
    }

    /// Sets the era the traffic names (unless one is pinned).
    fn set_era(&mut self, era: Option<Era>) {
        if self.pinned.is_none() && era.is_some() {
            self.era = era;
            self.judge.era = self.era();
        }
    }

    /// A line the host wrote to the server. Lines that are not JSON are the
    /// host's business, not the server's: they are only forwarded.
    pub fn from_host(&mut self, line: &[u8], now: Instant) {
        self.from_host_on(STDIO, line, now)
    }

    /// A message (a line, or an HTTP request's body) the host sent on `channel`.
    pub fn from_host_on(&mut self, channel: u64, line: &[u8], now: Instant) {
        let Ok(v) = mcperr_wire::text::decode(line) else {
            return;
        };
        let msgs = match v {
            Value::Array(batch) => batch,
            one => vec![one],
        };
        for msg in msgs {
            self.host_message(channel, msg, now);
        }
    }

    fn host_message(&mut self, channel: u64, msg: Value, now: Instant) {
        let (Some(method), Some(id)) = (msg.get("method").and_then(Value::as_str), msg.get("id"))
        else {
            return; // a notification, or the host's answer to a server request
        };
        if self.era.is_none() {
            let version = if method == "initialize" {
                msg.pointer("/params/protocolVersion")
            } else {
                msg.pointer("/params/_meta/io.modelcontextprotocol~1protocolVersion")
            };
            self.set_era(version.and_then(Value::as_str).map(era_of_version));
        }
        self.seen.requests += 1;
        let seq = self.next_seq;
        self.next_seq += 1;
        self.pending
            .insert((channel, id.to_string()), Sent { msg, at: now, seq });
    }

    /// A line the server wrote to the host.
    pub fn from_server(&mut self, line: &[u8], now: Instant) {
        let Ok(v) = mcperr_wire::text::decode(line) else {
            let text = String::from_utf8_lossy(line).into_owned();
            self.record_stray(Stray::NotJson(text));
            return;
        };
        if let Some(repeated) = Stray::repeated_names(line, &v) {
            self.record_stray(repeated);
        }
        self.server_value(STDIO, v, None, now);
    }

    /// One JSON value (a message or a batch) the server sent on `channel`,
    /// with the HTTP answer it came in, over HTTP.
    pub(crate) fn server_value(
        &mut self,
        channel: u64,
        v: Value,
        http: Option<&HttpAnswer>,
        now: Instant,
    ) {
        let msgs = match v {
            Value::Array(batch) => batch,
            one => vec![one],
        };
        for msg in msgs {
            self.server_message(channel, msg, http, now);
        }
    }

    fn server_message(
        &mut self,
        channel: u64,
        msg: Value,
        http: Option<&HttpAnswer>,
        now: Instant,
    ) {
        if !msg.is_object() {
            self.record_stray(Stray::NotJson(msg.to_string()));
            return;
        }
        if msg.get("method").is_some() {
            // The server's own request or notification to the host: only a
            // log message is judged (a credential in it, J7 `secret-in-log`;
            // sent without the logging capability declared, U8).
            if let Some(log @ Stray::Log(_)) = Stray::of_server_message(&msg) {
                self.record_stray(log);
            }
            return;
        }
        let key = msg.get("id").map(|id| (channel, id.to_string()));
        let Some(sent) = key.as_ref().and_then(|k| self.pending.remove(k)) else {
            if http.is_some_and(|a| a.status >= 400) {
                // The body of an HTTP-level rejection, which "MAY comprise
                // a JSON-RPC error response that has no id" (Streamable
                // HTTP, sending messages to the server): the channel's end
                // counts its request as rejected.
                return;
            }
            let stray = match msg.get("id") {
                None | Some(Value::Null) => Stray::NullIdResponse(msg),
                Some(_) => Stray::Unsolicited(msg),
            };
            self.record_stray(stray);
            return;
        };
        self.answered_seq = self.answered_seq.max(Some(sent.seq));
        self.learn(&sent.msg, &msg);
        let exchange = Exchange {
            request: sent.msg.clone(),
            ending: Ending::Answered(msg),
            strays: vec![],
            duration: now.saturating_duration_since(sent.at),
            http: http.cloned(),
        };
        self.judge_exchange(&sent.msg, &exchange, false);
    }

    /// Reads what the handshake and listings tell: the era the server
    /// chose, each tool's schemas, each prompt's required arguments.
    fn learn(&mut self, request: &Value, answer: &Value) {
        let Some(result) = answer.get("result") else {
            return;
        };
        match request.get("method").and_then(Value::as_str) {
            Some("initialize") => {
                let version = result.get("protocolVersion").and_then(Value::as_str);
                self.set_era(version.map(era_of_version));
                self.learn_capabilities(result);
            }
            Some("server/discover") => self.learn_capabilities(result),
            Some("tools/list") => {
                for t in result
                    .get("tools")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let Some(name) = t.get("name").and_then(Value::as_str) else {
                        continue;
                    };
                    let schema = |k: &str| t.get(k).and_then(mcperr_cases::generate::validator);
                    self.tools.insert(
                        name.to_string(),
                        ToolSchemas {
                            input: schema("inputSchema"),
                            output: schema("outputSchema"),
                        },
                    );
                }
            }
            Some("prompts/list") => {
                for p in result
                    .get("prompts")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let Some(name) = p.get("name").and_then(Value::as_str) else {
                        continue;
                    };
                    let required = p
                        .get("arguments")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .filter(|a| a.get("required") == Some(&Value::Bool(true)))
                        .filter_map(|a| a.get("name").and_then(Value::as_str).map(String::from))
                        .collect();
                    self.prompts.insert(name.to_string(), required);
                }
            }
            _ => {}
        }
    }

    /// What the server's declared capabilities tell the judge.
    fn learn_capabilities(&mut self, result: &Value) {
        if let Some(caps) = result.get("capabilities").and_then(Value::as_object) {
            self.logging_declared = Some(caps.contains_key("logging"));
        }
    }

    /// The fuzz input an observed request stands for: its kind where the
    /// traffic shows it, else [`Class::Observed`] (the invariants alone).
    fn input_of(&self, request: &Value) -> FuzzInput {
        let method = request
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let params = request.get("params").cloned().unwrap_or(Value::Null);
        let name = params.get("name").and_then(Value::as_str);
        let (class, target) = match method.as_str() {
            "tools/call" => {
                let class = match name.and_then(|n| self.tools.get(n)) {
                    Some(ToolSchemas {
                        input: Some(schema),
                        ..
                    }) => {
                        let args = params.get("arguments").cloned().unwrap_or(Value::Null);
                        let args = if args.is_null() {
                            serde_json::json!({})
                        } else {
                            args
                        };
                        let broken = schema
                            .iter_errors(&args)
                            .next()
                            // The constraint, never the value: one root cause
                            // whatever value broke it.
                            .map(|e| format!("'{}' breaks {}", e.instance_path(), e.schema_path()));
                        match broken {
                            None => Class::ValidCall,
                            Some(what) => Class::InvalidCall(what),
                        }
                    }
                    _ => Class::Observed,
                };
                (class, name.unwrap_or_default().to_string())
            }
            "prompts/get" if !self.prompts.is_empty() => {
                let class = match name.map(|n| self.prompts.get(n)) {
                    Some(None) => Class::UnknownPrompt,
                    Some(Some(required)) => {
                        let given = params.get("arguments");
                        if required
                            .iter()
                            .any(|r| given.and_then(|g| g.get(r)).is_none())
                        {
                            Class::PromptMissingArgument
                        } else {
                            Class::PromptOther
                        }
                    }
                    None => Class::Observed,
                };
                (class, name.unwrap_or_default().to_string())
            }
            m if !KNOWN_METHODS.contains(&m) => (Class::UnknownMethod, method.clone()),
            _ => (Class::Observed, name.unwrap_or(&method).to_string()),
        };
        FuzzInput {
            method,
            params,
            envelope: false,
            id_style: IdStyle::Counter,
            class,
            target,
        }
    }

    pub(crate) fn judge_exchange(&mut self, request: &Value, exchange: &Exchange, alive: bool) {
        let input = self.input_of(request);
        let output = match (&input.class, self.tools.get(&input.target)) {
            (Class::ValidCall, Some(t)) => t.output.as_ref(),
            _ => None,
        };
        let found = self
            .judge
            .judge_with(&input, exchange, None, output, None, alive);
        self.seen.judged += 1;
        self.record(found, &input);
    }

    /// Something the server wrote that answers no request of the host's.
    fn record_stray(&mut self, stray: Stray) {
        let found = self
            .judge
            .strays_declared(vec![stray], self.logging_declared);
        self.record(found, &FuzzInput::stray_output());
    }

    /// Folds each finding into its group ([`mcperr_oracle::findings::group`]): one
    /// finding per deviation, its smallest example kept.
    fn record(&mut self, found: Vec<Finding>, input: &FuzzInput) {
        for f in found {
            let key = f.group.clone();
            let known = self.found.remove(&key);
            let members = known.into_iter().chain([(f, input.clone())]).collect();
            let folded = mcperr_oracle::findings::group::group(members);
            self.found
                .extend(folded.into_iter().map(|m| (key.clone(), m)));
        }
    }

    /// The host has gone: each request still unanswered although a request
    /// sent after it was answered was never answered (J4, over stdio); one the host
    /// left before any later answer came gets no verdict. Returns every
    /// finding, one per root cause, each with the request it was first
    /// seen on (as a fuzz input, for `--save`; [`FuzzInput::stray_output`]
    /// for stray output).
    pub fn finish(mut self, now: Instant) -> (Vec<(Finding, FuzzInput)>, Seen) {
        let mut left: Vec<(u64, Sent)> = self.pending.drain().map(|((c, _), s)| (c, s)).collect();
        left.sort_by_key(|(_, s)| s.seq);
        for (channel, sent) in left {
            self.seen.unanswered += 1;
            // Over HTTP a request whose response is still open when the
            // proxy stops is still being worked on: slow is not dead.
            if channel == STDIO && self.answered_seq.is_some_and(|a| a > sent.seq) {
                let exchange = Exchange {
                    request: sent.msg.clone(),
                    ending: Ending::Timeout,
                    strays: vec![],
                    duration: now.saturating_duration_since(sent.at),
                    http: None,
                };
                self.judge_exchange(&sent.msg, &exchange, true);
            }
        }
        let mut found: Vec<(Finding, FuzzInput)> = self.found.into_values().collect();
        found.sort_by(|(a, _), (b, _)| {
            // By rule id as text among equals, as ever (RuleId's own order is the table's).
            (b.verdict.weight(), a.rule.as_str(), &a.id).cmp(&(
                a.verdict.weight(),
                b.rule.as_str(),
                &b.id,
            ))
        });
        (found, self.seen)
    }

    /// The report of a proxied session: one result per finding, in the
    /// shape `mcperr run` reports take, so every report format applies.
    pub fn report(
        found: &[(Finding, FuzzInput)],
        era: Era,
        profile: &str,
        target: TargetInfo,
    ) -> RunReport {
        let findings: Vec<&Finding> = found.iter().map(|(f, _)| f).collect();
        RunReport::of_findings(&findings, era, profile, target, "proxy")
    }
}

/// The era a protocol version belongs to: 2026-07-28 and later are the
/// stateless era; every version before it speaks the `initialize` one.
pub fn era_of_version(version: &str) -> Era {
    if version >= Era::Modern.version() {
        Era::Modern
    } else {
        Era::Legacy
    }
}

mod over_http;
pub use over_http::ChannelEnd;

#[cfg(test)]
mod tests;
