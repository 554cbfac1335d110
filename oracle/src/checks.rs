//! The functions of the named checks a case can ask for beyond its shape:
//! the canary and stack markers nowhere (J7), the tool body never ran
//! (T4), what the server logged (the `python-sdk` profile's log lines), and
//! the others. [`super::named`] lists each check once, with what it reads
//! and the aspect it breaks, and calls these.

use serde_json::Value;

use crate::invariants::{leak_marker, searchable};
use mcperr_model::rules::AspectId;
use mcperr_wire::exchange::Exchange;

/// Evidence gathered around the exchange, for the named checks.
#[derive(Debug, Default, Clone)]
pub struct Evidence {
    /// What the server wrote to stderr during the case, when known.
    pub stderr: Option<String>,
    /// `limited_calls` counts before and after, when measured.
    pub counts: Option<(Option<Value>, Option<Value>)>,
    /// The server stopped answering after the case, and how (J4).
    pub stopped: Option<String>,
    /// The judged request got no answer, but the probe after it did: the
    /// server went on answering (J4, a deviation).
    pub answered_after: bool,
    /// The judged request was answered only after its timeout (the time it
    /// took, the timeout it outlived), while the server answered others.
    pub slow: Option<(std::time::Duration, std::time::Duration)>,
    /// The judged request's id is beyond a double and it got silence or an
    /// id-null error: whether the same request with a small id was answered
    /// (the proof the RFC 8259 section 6 policy needs, [`mcperr_wire::edges::big_id`]).
    pub small_id_answered: Option<bool>,
    /// The `Mcp-Session-Id` of the run's own session, when the case opened
    /// a connection of its own (`handshake = false`) over HTTP: a freshly
    /// minted id must differ from it (H2 `session-id-random`).
    pub other_session: Option<String>,
    /// Messages about a request cancelled while in flight that came after
    /// the server showed it read the cancellation (its response, its
    /// progress), the first progress notification excepted (U7; see the
    /// harness's `watch_cancelled`).
    pub after_cancel: Vec<Value>,
    /// Over stdio with `exit-on-eof`: how the server ended after its stdin
    /// closed, `Some(None)` when it was still running after the wait.
    pub eof_exit: Option<Option<String>>,
    /// A protected server's metadata, as the executor looked for it (A1).
    pub metadata: Option<super::auth::MetadataProbe>,
    /// How a subscription the case left in flight ended (U9).
    pub ended: Option<super::subscriptions::Ended>,
    /// `task-listed`: the task looked for, the ids of every task the listing
    /// showed (its pages followed), and why the walk stopped early, if it did.
    pub listing: Option<(Value, Vec<Value>, Option<String>)>,
    /// `get-stream-quiet`: what the POST sent while the GET stream was
    /// open got back (its messages), or why it got nothing.
    pub side_post: Option<Result<Vec<Value>, String>>,
    /// `resumed-own-stream`: what the GET resumed from, and the stream it
    /// did not resume.
    pub resumption: Option<Resumption>,
}

/// A GET that resumed the case's first SSE stream, and the second stream,
/// whose messages it must not replay (`resumed-own-stream`).
#[derive(Debug, Clone)]
pub struct Resumption {
    /// The `Last-Event-ID` the GET sent: an event id of the first stream.
    pub last_event_id: String,
    /// The id of the request the second stream answered.
    pub other_id: Value,
    /// The messages the second stream carried.
    pub other: Vec<Value>,
}

/// How long a server may take to exit after its stdin closes (`exit-on-eof`:
/// "promptly": the Bookshops on the SDKs exit within a second when idle,
/// and a loaded CI machine must not turn that into a warning).
pub const EOF_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Text markers of a traceback or failure chain in a server log.
const TRACEBACK_MARKERS: &[&str] = &[
    "Traceback (most recent call last)",
    "Failure chain",
    "  File \"",
    "panicked at",
    "stack backtrace",
    "\n    at ",
];

fn has_traceback(log: &str) -> bool {
    TRACEBACK_MARKERS.iter().any(|m| log.contains(m))
}

fn show(v: Option<&Value>) -> String {
    v.map_or_else(|| "nothing".to_string(), Value::to_string)
}

fn tail(log: &str) -> String {
    let lines: Vec<&str> = log.lines().collect();
    lines[lines.len().saturating_sub(12)..].join("\n")
}

/// 2025-11-25 basic/transports#resumability-and-redelivery: a GET with
/// `Last-Event-ID` may replay the disconnected stream's messages after that
/// event, but "the server **MUST NOT** replay messages that would have been
/// delivered on a different stream": nothing the other stream carried (its
/// response above all) comes on the resumed one.
pub(crate) fn resumed_stream(exchange: &Exchange, ev: &Evidence) -> Vec<(AspectId, String)> {
    let (Some(answer), Some(r)) = (&exchange.http, &ev.resumption) else {
        return vec![];
    };
    fn id_of(m: &Value) -> Option<&Value> {
        m.get("method").is_none().then(|| m.get("id")).flatten()
    }
    answer
        .messages
        .iter()
        .filter(|m| r.other.contains(m) || id_of(m) == Some(&r.other_id))
        .map(|m| {
            (
                AspectId::H1NoReplayOtherStream,
                format!(
                    "the stream resumed with Last-Event-ID {:?} replayed a message of another stream (the one answering request {}): {m}",
                    r.last_event_id, r.other_id
                ),
            )
        })
        .collect()
}

/// What the SSE stream a GET opened breaks, while a POST of the same
/// session was answered: H1 `get-stream-no-response` for a JSON-RPC response
/// on it ("The server MUST NOT send a JSON-RPC response on the stream unless
/// resuming a stream associated with a previous client request"), H1
/// `no-broadcast` for a message that came on both ("it MUST NOT broadcast
/// the same message across multiple streams"). A GET that opened no stream
/// (405) has nothing to judge.
pub fn get_stream(exchange: &Exchange, ev: &Evidence) -> Vec<(AspectId, String)> {
    let Some(answer) = exchange.http.as_ref().filter(|a| a.sse) else {
        return vec![];
    };
    let side = match &ev.side_post {
        Some(Ok(messages)) => messages.as_slice(),
        _ => &[],
    };
    let mut out = Vec::new();
    let is_response = |m: &Value| {
        m.get("method").is_none() && (m.get("result").is_some() || m.get("error").is_some())
    };
    if let Some(response) = answer.messages.iter().find(|m| is_response(m)) {
        let why = match &ev.side_post {
            Some(Ok(messages)) if messages.contains(response) => {
                " (the answer to the POST sent meanwhile)".to_string()
            }
            Some(Err(why)) => format!(" (the POST sent meanwhile got no answer: {why})"),
            _ => String::new(),
        };
        out.push((
            AspectId::H1GetStreamNoResponse,
            format!("the SSE stream of a GET carried a JSON-RPC response{why}: {response}"),
        ));
    }
    if let Some(both) = answer
        .messages
        .iter()
        .find(|m| !is_response(m) && side.contains(m))
    {
        out.push((
            AspectId::H1NoBroadcast,
            format!("the same message came on the GET's SSE stream and in the answer to a POST sent meanwhile: {both}"),
        ));
    }
    out
}

/// P2 `inputs-inert`: each string argument of a `prompts/get` shown
/// verbatim in the rendered messages' text, and no resource among them.
pub(crate) fn arguments_inert(response: &Value, request: &Value) -> Option<String> {
    let messages = response.pointer("/result/messages")?.as_array()?;
    let mut text = String::new();
    for m in messages {
        let content = m.get("content").unwrap_or(&Value::Null);
        let kind = content.get("type").and_then(Value::as_str).unwrap_or("");
        if kind.starts_with("resource") {
            return Some(format!(
                "the rendered prompt embeds a {kind} for what the arguments carried: {content}"
            ));
        }
        if let Some(t) = content.get("text").and_then(Value::as_str) {
            text.push_str(t);
        }
    }
    let args = request.pointer("/params/arguments")?.as_object()?;
    args.iter().find_map(|(name, v)| {
        let v = v.as_str()?;
        (!text.contains(v)).then(|| {
            format!("argument {name} {v:?} is not in the rendered text verbatim: something in it was evaluated or altered ({text:?})")
        })
    })
}

/// The `Mcp-Session-Id` the answer minted, if it was an HTTP answer with one.
fn minted_session(exchange: &Exchange) -> Option<&str> {
    exchange.http.as_ref()?.header("mcp-session-id")
}

/// T8: a result that is not `isError` carries `structuredContent` that
/// fits `schema` ("Servers MUST provide structured results that conform to
/// this schema").
pub(crate) fn structured_output(response: &Value, schema: Option<&Value>) -> Option<String> {
    let result = response.get("result")?;
    if result.get("isError") == Some(&Value::Bool(true)) {
        return None;
    }
    // A 2026-07-28 result that asks for input first is not the tool's output.
    if result
        .get("resultType")
        .is_some_and(|t| t != &Value::String("complete".into()))
    {
        return None;
    }
    let schema = schema?;
    let Some(structured) = result.get("structuredContent") else {
        return Some(
            "the tool declares an outputSchema but the result has no structuredContent".into(),
        );
    };
    let v = jsonschema::validator_for(schema).ok()?;
    let errors: Vec<String> = v
        .iter_errors(structured)
        .take(3)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    (!errors.is_empty()).then(|| {
        format!(
            "structuredContent does not fit the tool's outputSchema: {}",
            errors.join("; ")
        )
    })
}

/// `exit-on-eof`: the server still ran after its stdin closed.
pub(crate) fn still_running(ev: &Evidence) -> Option<String> {
    matches!(&ev.eof_exit, Some(None)).then(|| {
        format!(
            "the server was still running {} s after its stdin closed",
            EOF_WAIT.as_secs()
        )
    })
}

/// `not-url-required`: the answer is the -32042 URL elicitation error.
pub(crate) fn url_required(response: &Value) -> Option<String> {
    let error = response.get("error")?;
    (error.get("code").and_then(mcperr_protocol::codes::Code::of)
        == Some(mcperr_protocol::codes::URL_ELICITATION_REQUIRED))
    .then(|| format!("the answer is -32042, though the client declared the form mode the request needs: {error}"))
}

/// `no-retired-code`: the answer is the retired -32002.
pub(crate) fn retired_code(response: &Value) -> Option<String> {
    (mcperr_wire::edges::error_code(response)
        == Some(mcperr_protocol::codes::RESOURCE_NOT_FOUND_RETIRED))
    .then(|| "a missing resource answered the retired -32002".into())
}

/// `no-empty-contents`: a read came back with empty `contents`.
pub(crate) fn empty_contents(response: &Value) -> Option<String> {
    response
        .pointer("/result/contents")
        .and_then(Value::as_array)
        .is_some_and(Vec::is_empty)
        .then(|| "a read of a resource that does not exist came back with empty contents".into())
}

/// `log-no-traceback`: an expected failure logged no traceback.
pub(crate) fn log_no_traceback(ev: &Evidence) -> Option<String> {
    let log = ev.stderr.as_deref()?;
    has_traceback(log).then(|| format!("an expected failure logged a traceback:\n{}", tail(log)))
}

/// `task-listed`: the task tasks/get sees is on a page of tasks/list.
pub(crate) fn task_listed(ev: &Evidence) -> Option<String> {
    let (task, ids, stopped) = ev.listing.as_ref()?;
    (!ids.contains(task)).then(|| {
        let why = stopped
            .as_ref()
            .map(|s| format!(" ({s})"))
            .unwrap_or_default();
        format!(
            "task {task}, which tasks/get sees, is on no page of tasks/list: {} tasks listed{why}",
            ids.len()
        )
    })
}

/// `no-requests-before-initialized`: a request of the server's own (other
/// than a ping) before the client's `initialized` notification.
pub(crate) fn request_before_initialized(exchange: &Exchange) -> Option<String> {
    exchange.strays.iter().find_map(|s| match s {
        mcperr_wire::exchange::Stray::ServerRequest(v)
            if v.get("method").and_then(Value::as_str) != Some("ping") =>
        {
            Some(format!(
            "the server sent a request of its own before the client's initialized notification: {v}"
        ))
        }
        _ => None,
    })
}

/// `names-versions`: an unsupported-version error names a version the
/// server supports.
pub(crate) fn names_no_version(response: &Value) -> Option<String> {
    let error = response.get("error")?;
    let version = mcperr_protocol::Era::Modern.version();
    let named = |v: Option<&Value>| v.is_some_and(|v| v.to_string().contains(version));
    (!named(error.get("message")) && !named(error.get("data"))).then(|| {
        format!("the error names no protocol version the server supports ({version} is one, as this run shows): {error}")
    })
}

/// `no-canary`: the crash's planted secret, or a stack marker, nowhere in
/// the response (echoes of the request's URI taken out).
pub(crate) fn canary_or_stack(
    exchange: &Exchange,
    response: &Value,
    canary: &str,
) -> Option<String> {
    let text = searchable(response, &exchange.request);
    if !canary.is_empty() && text.contains(canary) {
        return Some(format!(
            "the crash's secret text reached the response (canary {canary})"
        ));
    }
    leak_marker(&text).map(|m| format!("the response carries a stack trace marker: {m}"))
}

/// `session-id-ascii`: a minted `Mcp-Session-Id` holds visible ASCII only.
pub(crate) fn session_id_ascii(exchange: &Exchange) -> Option<String> {
    let id = minted_session(exchange)?;
    let bad = id.chars().find(|c| !('\u{21}'..='\u{7e}').contains(c))?;
    Some(format!(
        "the Mcp-Session-Id {id:?} holds {bad:?} (U+{:04X}), outside visible ASCII",
        bad as u32
    ))
}

/// `session-id-random`: two sessions' ids are neither equal nor a counter's.
pub(crate) fn session_id_random(exchange: &Exchange, ev: &Evidence) -> Option<String> {
    let id = minted_session(exchange)?;
    let other = ev.other_session.as_deref()?;
    let next = |a: &str, b: &str| {
        let (Ok(a), Ok(b)) = (a.parse::<u128>(), b.parse::<u128>()) else {
            return false;
        };
        a.abs_diff(b) < 1000
    };
    if id == other {
        Some(format!(
            "two sessions were both given the Mcp-Session-Id {id:?}"
        ))
    } else if next(id, other) {
        Some(format!(
            "two sessions were given the Mcp-Session-Ids {other:?} and {id:?}: a counter, not a random id"
        ))
    } else {
        None
    }
}

/// `body-never-ran`: the body-run count did not move across the case.
pub(crate) fn body_never_ran(ev: &Evidence) -> Option<String> {
    match &ev.counts {
        Some((Some(before), Some(after))) if before == after => None,
        Some((before, after)) => Some(format!(
            "the tool body ran on invalid arguments: {} went from {} to {}",
            mcperr_cases::bookshop::COUNT_TOOL,
            show(before.as_ref()),
            show(after.as_ref())
        )),
        None => Some(format!(
            "{} could not be read",
            mcperr_cases::bookshop::COUNT_TOOL
        )),
    }
}

/// `log-crash-traceback`: the crash's log line, with a traceback after it.
pub(crate) fn crash_logged(exchange: &Exchange, ev: &Evidence) -> Option<String> {
    let log = ev.stderr.as_deref()?;
    let name = exchange
        .request
        .pointer("/params/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    let headline = format!("Tool '{name}' raised an unexpected exception");
    match log.find(&headline) {
        Some(at) if has_traceback(&log[at..]) => None,
        Some(_) => Some(format!(
            "the crash log line has no traceback after it:\n{}",
            tail(log)
        )),
        None => Some(format!(
            "stderr lacks the line {headline:?}:\n{}",
            tail(log)
        )),
    }
}
