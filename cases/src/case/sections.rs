//! The sections of a case file besides its header: the `[[send]]` steps,
//! the `[http]` shaping of HTTP-only cases, the judged `[request]`, the
//! `[[also_pass]]` and `[[warn]]` alternatives, and `[profile.NAME]`
//! overrides.

use std::collections::BTreeMap;

use mcperr_protocol::Era;
use serde::Deserialize;
use serde_json::Value;

/// A message sent before the judged request.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged, deny_unknown_fields)]
pub enum SendStep {
    /// Bytes sent as one line, verbatim (malformed input for J6).
    Raw {
        /// The line.
        raw: String,
    },
    /// A notification (no response expected).
    Notification {
        /// The method.
        notification: String,
        /// Its params.
        #[serde(default)]
        params: Option<Value>,
    },
    /// A request whose answer is awaited but not judged.
    Request {
        /// The method.
        method: String,
        /// Its params.
        #[serde(default)]
        params: Option<Value>,
        /// The request id to use (string or number), so that a later step
        /// can name it (a cancellation of a finished request); default: a
        /// fresh number.
        #[serde(default)]
        id: Option<Value>,
        /// Sent and left in flight (stdio): not awaited, so that the next
        /// step (a cancellation) reaches the server while it works. The
        /// executor waits for its first progress notification before going
        /// on, and after the steps watches for any message about it
        /// (U7). Over HTTP it is an ordinary awaited request.
        #[serde(default)]
        in_flight: bool,
        /// Values taken from its answer for the later steps and the judged
        /// request: `{ task = "result.task.taskId" }` names the value at that
        /// dotted path `{{task}}` (a string that is only the placeholder
        /// becomes the value itself, whatever its type). An answer without
        /// it fails the case, or skips it with `PATH?`; `FUNCTION(PATH)`
        /// makes a value from it ([`crate::capture`]).
        #[serde(default)]
        capture: BTreeMap<String, String>,
    },
}

/// How an HTTP-only case shapes its request and what status it expects.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpSpec {
    /// HTTP method (default POST; GET and DELETE are sent without a body).
    #[serde(default)]
    pub method: Option<String>,
    /// Header overrides; the value `$absent` removes the header.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Legacy session handling: `none` (no id), `bogus` (a made-up id),
    /// `deleted` (the id of a session just ended with DELETE).
    #[serde(default)]
    pub session: Option<String>,
    /// Send the request as a notification (no id).
    #[serde(default)]
    pub notification: bool,
    /// Accepted statuses (empty: any).
    #[serde(default)]
    pub status: Vec<u16>,
    /// The answer must have no body.
    #[serde(default)]
    pub empty_body: bool,
    /// Any HTTP error status (4xx, 5xx) is accepted too, with any body: the
    /// transports sections' "If the server cannot accept the input, it
    /// **MUST** return an HTTP error status code".
    #[serde(default)]
    pub error_status: bool,
    /// A 2xx answer must be an SSE stream (`Content-Type:
    /// text/event-stream`): a GET on the endpoint opens one or is refused.
    #[serde(default)]
    pub sse_when_ok: bool,
}

/// The judged request.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequestSpec {
    /// A body sent verbatim instead of the built message (HTTP cases).
    #[serde(default)]
    pub raw: Option<String>,
    /// The request id to use (string or number); default: a fresh number.
    #[serde(default)]
    pub id: Option<Value>,
    /// The method.
    pub method: String,
    /// Its params (the modern envelope is added unless the case says `envelope = false`).
    #[serde(default)]
    pub params: Option<Value>,
    /// The params as JSON text, for what TOML cannot hold (`null`; cases
    /// saved by `mcperr fuzz`). Parsed into `params` when the file loads.
    #[serde(default, skip_serializing)]
    pub params_json: Option<String>,
}

/// An alternative outcome: a shape and why it is accepted or warned about.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Alternative {
    /// The shape (same pattern language as `expect`).
    #[serde(rename = "match")]
    pub pattern: Value,
    /// Why this shape is accepted (`also_pass`) or a warning (`warn`).
    #[serde(default)]
    pub reason: String,
    /// Eras it applies in (default: both).
    #[serde(default)]
    pub eras: Vec<String>,
    /// The aspect of the case's rule that decides this shape (a `warn` is
    /// then graded by that aspect's level, and quotes its sentence; an
    /// `also_pass` cites it, e.g. a MAY). Without one a `warn` is a warning
    /// under every profile.
    #[serde(default)]
    pub aspect: Option<String>,
}

impl Alternative {
    /// Whether this alternative holds in `era`.
    pub fn in_era(&self, era: Era) -> bool {
        self.eras.is_empty() || self.eras.iter().any(|e| e.parse::<Era>() == Ok(era))
    }
}

/// Changes a profile makes to a case's expectation.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Override {
    /// Case ids (globs) this override applies to; profile files only.
    #[serde(default)]
    pub cases: Vec<String>,
    /// Rule ids this override applies to; profile files only.
    #[serde(default)]
    pub rules: Vec<String>,
    /// Deep-merged into `expect`.
    #[serde(default)]
    pub expect: Option<Value>,
    /// Extra passing shapes.
    #[serde(default)]
    pub also_pass: Vec<Alternative>,
    /// Extra warning shapes.
    #[serde(default)]
    pub warn: Vec<Alternative>,
    /// Extra checks.
    #[serde(default)]
    pub checks: Vec<String>,
}
