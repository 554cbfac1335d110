//! The always-on checks: what every response must satisfy whatever was
//! asked, callable with no case (live fuzzing and `cargo fuzz` call this
//! directly). Stray output (J5, J1, J3), no answer (J4), framing and
//! type-exact ids (J1), the HTTP status that goes with an answer (H3), and
//! stack traces or a planted secret in an error (J7).

use mcperr_protocol::Era;
use serde_json::{json, Value};

use crate::exchange::{Ending, Exchange, NoResponse, Stray};
use crate::fuzz::inputs::CANARY_PREFIX;
use crate::oracle::Violation;
use crate::rules::AspectId;

/// What the invariants need to know besides the exchange.
#[derive(Debug, Clone, Default)]
pub struct Context<'a> {
    /// The era under test (for citations).
    pub era: Option<Era>,
    /// A secret planted in the request's crash input: it must not come back (J7).
    pub canary: Option<&'a str>,
    /// Malformed lines were sent before the request: id-null error answers to
    /// them are allowed (JSON-RPC 2.0 §5), and a death is J6's.
    pub sent_raw: bool,
    /// Notifications were sent before the request: an id-null answer is J3's.
    pub sent_notification: bool,
    /// The request was shaped to be rejected at the HTTP level (an `[http]`
    /// case): an id-null error with a 4xx status is its answer, and the case
    /// judges the status itself.
    pub http_rejection_expected: bool,
    /// Whether the server declared the `logging` capability, when known:
    /// a log message from one that did not breaks U8.
    pub logging_declared: Option<bool>,
    /// Whether the server declared `tasks.requests.tools.call`, when known:
    /// a `CreateTaskResult` from one that did not breaks K1.
    pub tool_tasks_declared: Option<bool>,
    /// The run's planted secret, which no log message may carry (U8
    /// `remove-sensitive`).
    pub planted: Option<&'a str>,
    /// The `subscriptions/listen` requests the case opened (U9); a server's
    /// `notifications/cancelled` naming one of them ends it, as it may.
    pub listens: &'a [Value],
    /// 2025-11-25: the client capabilities the connection's `initialize`
    /// declared, when known; the server's own requests and its -32042
    /// errors are judged against them (E1, L2 `respect-negotiation`).
    pub client_capabilities: Option<&'a Value>,
    /// The progress tokens of the case's task-augmented calls: their
    /// progress may come after their CreateTaskResult, until the task is
    /// terminal (U6 `task-token`, `task-stop-at-terminal`).
    pub task_tokens: &'a [Value],
}

/// Every always-on violation of `exchange`, in the order they decide a verdict.
pub fn invariants(exchange: &Exchange, ctx: &Context) -> Vec<Violation> {
    let mut out = strays(exchange, ctx);
    out.extend(super::subscriptions::strays(
        &exchange.strays,
        ctx.listens,
        ctx.era,
    ));
    out.extend(progress(exchange));
    if let (Some(Era::Legacy), Some(declared)) = (ctx.era, ctx.client_capabilities) {
        let answer = match &exchange.ending {
            Ending::Answered(v) | Ending::WrongId(v) => Some(v),
            _ => None,
        };
        out.extend(super::server_asks::judge(
            &exchange.strays,
            answer,
            &exchange.request,
            declared,
        ));
    }
    let response = match &exchange.ending {
        Ending::Answered(v) | Ending::WrongId(v) => v,
        Ending::NotApplicable(_) | Ending::SetupFailed(_) => return out,
        Ending::Empty { status, why } => {
            let (aspect, why) = match why {
                // 2025-11-25 has a sentence of its own for it (a SHOULD).
                NoResponse::SseEndedEarly => (
                    if ctx.era == Some(Era::Legacy) {
                        AspectId::H3SseIncludesResponse
                    } else {
                        AspectId::H3Main
                    },
                    format!("HTTP {status}: the SSE stream ended without the response"),
                ),
                // A POST the endpoint does not take: 2026-07-28 has one
                // endpoint for every request (and no sessions to expire).
                NoResponse::EmptyBody
                    if ctx.era == Some(Era::Modern)
                        && matches!(status, 404 | 405)
                        && !exchange.request.is_null()
                        && !ctx.http_rejection_expected =>
                {
                    (
                        AspectId::H1SingleEndpoint,
                        format!("HTTP {status} without a JSON-RPC response: the MCP endpoint does not take this POST"),
                    )
                }
                NoResponse::EmptyBody => (
                    AspectId::J1Main,
                    format!("HTTP {status} without a JSON-RPC response"),
                ),
                NoResponse::Unreadable { why, sse: true } => {
                    (AspectId::H3Main, format!("HTTP {status}: {why}"))
                }
                NoResponse::Unreadable { why, sse: false } => {
                    (AspectId::J1Main, format!("HTTP {status}: {why}"))
                }
            };
            out.push(Violation::unanswered(aspect, format!("no response: {why}")));
            return out;
        }
        Ending::TooLarge(n) => {
            out.push(Violation::unanswered(
                AspectId::J1Main,
                format!("the answer (over {n} bytes) outgrew --max-line and was discarded unread, so it cannot be judged: raise --max-line to judge it"),
            ));
            return out;
        }
        Ending::Timeout => {
            let ms = exchange.duration.as_millis();
            out.push(Violation::unanswered(
                AspectId::J4Main,
                format!("the server stopped answering: no response within {ms} ms"),
            ));
            return out;
        }
        Ending::Died(how) => {
            // The input that killed it is malformed input's rule (J6) when the
            // case sent some; otherwise the session did not survive (J4).
            let aspect = if ctx.sent_raw {
                AspectId::J6Main
            } else {
                AspectId::J4Main
            };
            out.push(Violation::unanswered(aspect, format!("no response: {how}")));
            return out;
        }
    };
    let rejected = ctx.http_rejection_expected
        && exchange.http.as_ref().is_some_and(|a| a.status >= 400)
        && response.get("id") == Some(&Value::Null);
    let null_id;
    let framed_against = if rejected {
        null_id = json!({"id": null});
        &null_id
    } else {
        &exchange.request
    };
    let framing_faults = framing(response, framed_against);
    let framed = framing_faults.is_empty();
    for (aspect, why) in framing_faults {
        out.push(Violation::new(aspect, why));
    }
    // The result's (or error's) shape, once the framing holds; not for a
    // request shaped to be rejected at the HTTP level, whose answer may come
    // from another era's routing (a MAY for a missing version header).
    if let (true, false, Some(era), Some(method)) = (
        framed,
        ctx.http_rejection_expected,
        ctx.era,
        exchange.request.get("method").and_then(Value::as_str),
    ) {
        // "An `initialize` request selects legacy semantics" (2026-07-28
        // basic/versioning): a dual-era server answers it as 2025-11-25.
        let era = if method == "initialize" {
            Era::Legacy
        } else {
            era
        };
        if crate::shapes::missing_result_type(era, response) {
            out.push(Violation::new(AspectId::J1ResultType, "the result has no resultType").late());
        }
        // A task-augmented call's CreateTaskResult is K1's to judge.
        let tasked = exchange
            .request
            .pointer("/params/task")
            .is_some_and(Value::is_object);
        let shaped = if tasked && method == "tools/call" {
            None
        } else {
            crate::shapes::check(era, method, response)
        };
        if let Some(why) = shaped {
            // schema.ts is "the source of truth for all protocol messages and
            // structures", stated without a keyword: `described` in the table.
            out.push(Violation::new(AspectId::J1ResultShape, why).late());
        }
    }
    if let Some(why) = super::messages::wordy_message(response, &exchange.request) {
        out.push(Violation::new(AspectId::J1MessageConcise, why).late());
    }
    if let Some(answer) = exchange.http.as_ref().filter(|a| a.open_after_response) {
        let why = format!(
            "the SSE stream went on after the response (HTTP {}): another event came, or it did not end within 250 ms",
            answer.status
        );
        out.push(Violation::new(AspectId::H3SseTerminates, why).late());
    }
    if let (Some(answer), false) = (&exchange.http, ctx.http_rejection_expected) {
        let code = crate::wire::at(response, &["error", "code"]).and_then(Value::as_i64);
        let modern = ctx.era != Some(Era::Legacy);
        if modern && code == Some(mcperr_protocol::codes::MISSING_CLIENT_CAPABILITY) {
            // The one error whose status the spec fixes (2026-07-28, L3);
            // 2025-11-25 has no -32021, so no status for it either.
            if answer.status != 400 {
                out.push(Violation::new(
                    AspectId::L3Http400,
                    format!("HTTP status {} with -32021; expected 400", answer.status),
                ));
            }
        } else if let Some(why) = http_status(answer.status, response) {
            out.push(Violation::new(AspectId::H3ErrorStatus, why));
        }
    }
    out.extend(super::mrtr::input_required_answer(
        response,
        &exchange.request,
    ));
    if ctx.era == Some(Era::Modern) {
        out.extend(super::extensions::unnegotiated(response, &exchange.request));
    }
    out.extend(super::codes::code_range(
        response,
        &exchange.request,
        ctx.era,
    ));
    if framed {
        out.extend(super::tasks::task_answers(exchange, ctx.era));
        out.extend(super::tasks::undeclared_tasks(
            exchange,
            ctx.tool_tasks_declared,
        ));
    }
    if let Some(v) = leak_or_secret(response, &exchange.request, ctx.canary) {
        out.push(v.late());
    }
    out
}

/// J7: a leak on the error side ([`leak_in`]), else secret-shaped text
/// ([`super::secrets`]) that the request did not carry, on either side: the
/// error (a JSON-RPC error or an `isError` result) or a successful result.
/// The part judged is serialized once for both searches.
fn leak_or_secret(response: &Value, request: &Value, canary: Option<&str>) -> Option<Violation> {
    let (part, error_side) = judged_part(response)?;
    let text = serde_json::to_string(part).unwrap_or_default();
    if error_side {
        if let Some(why) = leak_in(part, &text, request, canary) {
            return Some(Violation::new(AspectId::J7Main, why));
        }
    }
    // Echoes are taken out only when a shape shows at all (most answers carry none).
    super::secrets::secret_shape(&text)?;
    let shape = super::secrets::secret_shape(&without_echoes(part, request))?;
    // A tool's isError result is the tool's output (sanitized, MUST); a
    // JSON-RPC error is not (no sentence: J7's main aspect).
    let tool_error = error_side
        && response.get("result").is_some()
        && request.get("method").and_then(Value::as_str) == Some("tools/call");
    let (aspect, side) = match (error_side, tool_error) {
        (_, true) => (AspectId::J7SecretInToolError, "the tool's isError result"),
        (true, false) => (AspectId::J7Main, "the error"),
        (false, _) => (AspectId::J7SecretInResult, "the result"),
    };
    let why = format!("{side} carries secret-shaped text the request did not: {shape}");
    Some(Violation::new(aspect, why))
}

/// The part of a response J7 reads, and whether it is the error side (a
/// JSON-RPC `error`, or an `isError` result) rather than a success.
fn judged_part(response: &Value) -> Option<(&Value, bool)> {
    match (response.get("error"), response.get("result")) {
        (Some(e), _) => Some((e, true)),
        (None, Some(r)) => Some((r, r.get("isError") == Some(&Value::Bool(true)))),
        _ => None,
    }
}

/// The violations that stray output during the exchange makes (J5, J1, J3).
pub fn strays(exchange: &Exchange, ctx: &Context) -> Vec<Violation> {
    let mut out = Vec::new();
    for stray in &exchange.strays {
        let (aspect, message) = match stray {
            Stray::NotJson(line) => (
                AspectId::J5Main,
                format!("stdout carried a line that is not a JSON-RPC message: {line:?}"),
            ),
            // Perhaps a valid message, perhaps not: unread, it cannot be
            // judged (an error), never a J5 failure.
            Stray::TooLong(n) => {
                out.push(Violation::unanswered(
                    AspectId::J5Main,
                    format!("stdout carried a line of over {n} bytes, longer than --max-line: it was discarded unread, so it cannot be judged (raise --max-line)"),
                ));
                continue;
            }
            Stray::NotUtf8(start) => (
                AspectId::J1Utf8,
                format!("the server wrote a message whose bytes are not UTF-8 (read with U+FFFD for each bad sequence): {start:?}"),
            ),
            Stray::Split(lines, start) => (
                AspectId::J5NoEmbeddedNewlines,
                format!("the server wrote one message over {lines} stdout lines, which was read only by joining them: {start:?}"),
            ),
            Stray::NotificationWithId(v) => (
                AspectId::J1NotificationNoId,
                format!("the server sent a notification that carries an id: {v}"),
            ),
            Stray::ServerRequest(v) => {
                out.extend(server_request_id(v));
                // 2025-11-25: a request for a capability the client declared
                // is what the declaration invites; E1 judges what it asks.
                let invited = ctx.era == Some(Era::Legacy)
                    && ctx
                        .client_capabilities
                        .is_some_and(|d| super::server_asks::invited(v, d));
                if invited {
                    continue;
                }
                if exchange.http.is_some() {
                    (
                        AspectId::H3SseNoRequests,
                        format!("the server sent a request of its own in its answer: {v}"),
                    )
                } else {
                    (
                        AspectId::J5NoRequests,
                        format!("the server wrote a request of its own to stdout: {v}"),
                    )
                }
            }
            Stray::ReusedRequestId(v) => (
                AspectId::J1ServerRequestIdUnique,
                format!("the server sent a request with an id it had already used in the session: {v}"),
            ),
            Stray::Log(v) | Stray::LogLate(v) => {
                let during = matches!(stray, Stray::Log(_));
                out.extend(log_message(v, during, &exchange.request, ctx));
                continue;
            }
            // The request's own progress, judged by `progress` below.
            Stray::Progress(v) if own_progress(v, &exchange.request) => continue,
            Stray::Progress(v) | Stray::ProgressLate(v)
                if !ctx.task_tokens.is_empty() && !own_progress(v, &exchange.request) =>
            {
                let token = crate::exchange::progress_token(v);
                if !token.is_some_and(|t| ctx.task_tokens.contains(t)) {
                    out.push(Violation::new(
                        AspectId::U6TaskToken,
                        format!("a progress notification under a token no request carried, while the case's task asked for its progress under {}: {v}", Value::Array(ctx.task_tokens.to_vec())),
                    ));
                } else if matches!(stray, Stray::Progress(_)) {
                    if let Some(status) = terminal_task_status(exchange) {
                        out.push(Violation::new(
                            AspectId::U6TaskStopAtTerminal,
                            format!("a progress notification for the task came with the answer that shows it {status}: {v}"),
                        ));
                    }
                }
                continue;
            }
            Stray::Progress(v) => {
                if exchange.http.is_some() {
                    out.push(Violation::new(
                        AspectId::H3SseRelated,
                        format!("the response's SSE stream carried another request's progress: {v}"),
                    ));
                }
                (
                    AspectId::U6ActiveTokens,
                    format!("a progress notification for a token the request in flight did not carry: {v}"),
                )
            }
            Stray::Subscription(v) if exchange.http.is_some() => (
                AspectId::H3SseRelated,
                format!("the response's SSE stream carried a subscription's notification: {v}"),
            ),
            Stray::ProgressLate(v) if own_progress(v, &exchange.request) => (
                AspectId::U6StopAfterCompletion,
                format!("a progress notification for the request's token came after its response: {v}"),
            ),
            Stray::ProgressLate(v) => (
                AspectId::U6ActiveTokens,
                format!("a progress notification for a token of no request in progress: {v}"),
            ),
            Stray::TaskStatus(v) => {
                out.extend(super::tasks::status_notification(v));
                continue;
            }
            Stray::ServerCancel(v)
                if ctx
                    .listens
                    .iter()
                    .any(|l| l.get("id").is_some() && v.pointer("/params/requestId") == l.get("id")) =>
            {
                continue;
            }
            Stray::Subscription(_) => continue,
            Stray::ServerCancel(v) => (
                AspectId::U7ServerSendsNoCancel,
                format!("the server sent a cancellation that ends no subscription mcperr opened: {v}"),
            ),
            Stray::RepeatedNames(v, names) => (
                AspectId::M1InputRequestKeysUnique,
                format!("the server's inputRequests names {} more than once (its text does; a reader keeps one request of each name and loses the others): {v}", names.join(", ")),
            ),
            Stray::More(n) => (
                AspectId::J5Main,
                format!("the server wrote {n} more stray outputs than are kept"),
            ),
            Stray::NullIdResponse(v) if ctx.sent_notification => {
                (AspectId::J3Main, format!("a notification was answered: {v}"))
            }
            // JSON-RPC allows answering unparseable input with an id-null error.
            Stray::NullIdResponse(v) if ctx.sent_raw && v.get("error").is_some() => continue,
            Stray::NullIdResponse(v) => (
                // An error may lack the id only when it could not be read; a
                // result never may.
                if v.get("error").is_some() {
                    AspectId::J1ErrorId
                } else {
                    AspectId::J1Main
                },
                format!("a response without the request's id: {v}"),
            ),
            Stray::Duplicate(v) => (
                AspectId::J1Main,
                format!("a request was answered more than once: {v}"),
            ),
            Stray::NotificationAnswered(v) => (
                AspectId::J3Http202,
                format!("a notification was answered (expected 202 with no body): {v}"),
            ),
            Stray::Unsolicited(v) => (
                AspectId::J1IdType,
                format!("a response whose id answers no request mcperr sent: {v}"),
            ),
            Stray::Misanswered(v) => (
                AspectId::J1IdType,
                format!("a request before this one (a step, a probe or discovery) was answered with another id: {v}"),
            ),
        };
        out.push(Violation::new(aspect, message));
    }
    out
}

/// J1: the id of a request the server sent is a string or an integer, and
/// not null (basic/index#requests; 2025-11-25, where servers send requests).
fn server_request_id(v: &Value) -> Vec<Violation> {
    let id = v.get("id").unwrap_or(&Value::Null);
    let integer = id.as_i64().is_some() || id.as_u64().is_some();
    if id.is_string() || integer {
        return vec![];
    }
    let mut out = vec![Violation::new(
        AspectId::J1ServerRequestIdType,
        format!("the server sent a request whose id {id} is neither a string nor an integer: {v}"),
    )];
    if id.is_null() {
        out.push(Violation::new(
            AspectId::J1ServerRequestIdNotNull,
            format!("the server sent a request with a null id: {v}"),
        ));
    }
    out
}

/// What a log message the server sent breaks: secret-shaped text (J7),
/// no `logging` capability, (2026-07-28) a request awaited (`during`) that
/// asked for no level, the run's planted secret (U8).
fn log_message(v: &Value, during: bool, request: &Value, ctx: &Context) -> Vec<Violation> {
    let mut out = Vec::new();
    let text = v.to_string();
    if let Some(shape) = super::secrets::secret_shape(&text) {
        out.push(Violation::new(
            AspectId::J7SecretInLog,
            format!(
                "the server sent a log message carrying {shape}: {}",
                super::secrets::redact_secrets(&text)
            ),
        ));
    }
    if ctx.logging_declared == Some(false) {
        out.push(Violation::new(
            AspectId::U8Main,
            format!("the server sent a log message without declaring the logging capability: {v}"),
        ));
    }
    let asked = request
        .pointer("/params/_meta")
        .and_then(|m| m.get(mcperr_protocol::era::META_LOG_LEVEL))
        .is_some();
    if during && ctx.era == Some(Era::Modern) && request.is_object() && !asked {
        out.push(Violation::new(
            AspectId::U8OnlyWhenRequested,
            format!("a log message came for a request whose _meta asked for no log level: {v}"),
        ));
    }
    if let Some(secret) = ctx.planted.filter(|s| !s.is_empty() && text.contains(*s)) {
        out.push(Violation::new(
            AspectId::U8RemoveSensitive,
            format!("a log message carries the secret the request planted ({secret}): {v}"),
        ));
    }
    out
}

/// The terminal status a `tasks/get` answer shows its task in, if it does
/// (a `tasks/cancel` is left out: progress written while it was on its way
/// may precede the cancellation).
fn terminal_task_status(exchange: &Exchange) -> Option<&str> {
    if exchange.request.get("method").and_then(Value::as_str) != Some("tasks/get") {
        return None;
    }
    let status = exchange.response()?.pointer("/result/status")?.as_str()?;
    ["completed", "failed", "cancelled"]
        .contains(&status)
        .then_some(status)
}

/// Whether progress notification `v` names the token `request` carried.
fn own_progress(v: &Value, request: &Value) -> bool {
    let token = crate::exchange::progress_token(request);
    token.is_some() && crate::exchange::progress_token(v) == token
}

/// U6: the request's own progress notifications, seen while it was
/// awaited, each with a larger `progress` than the one before (compared as
/// numbers: the values may be floating point).
pub fn progress(exchange: &Exchange) -> Option<Violation> {
    let values: Vec<&Value> = exchange
        .strays
        .iter()
        .filter_map(|s| match s {
            Stray::Progress(v) if own_progress(v, &exchange.request) => {
                v.pointer("/params/progress")
            }
            _ => None,
        })
        .collect();
    let mut last: Option<f64> = None;
    for v in values {
        let Some(now) = v.as_f64() else {
            return Some(Violation::new(
                AspectId::U6Main,
                format!("a progress notification's progress is not a number: {v}"),
            ));
        };
        if let Some(before) = last.filter(|b| now <= *b) {
            return Some(Violation::new(
                AspectId::U6Main,
                format!("progress went from {before} to {now}: each notification must be larger than the last"),
            ));
        }
        last = Some(now);
    }
    None
}

fn show(v: Option<&Value>) -> String {
    v.map_or_else(|| "nothing".to_string(), Value::to_string)
}

/// J1: what is wrong with a response's framing, every point of it, each
/// with the aspect it breaks.
pub fn framing(response: &Value, request: &Value) -> Vec<(AspectId, String)> {
    let Some(obj) = response.as_object() else {
        return vec![(
            AspectId::J1FollowsJsonrpc,
            "the response is not a JSON object".into(),
        )];
    };
    let mut out = Vec::new();
    if obj.get("jsonrpc") != Some(&Value::String("2.0".into())) {
        out.push((
            AspectId::J1JsonrpcVersion,
            format!(
                "\"jsonrpc\" must be \"2.0\", got {}",
                show(obj.get("jsonrpc"))
            ),
        ));
    }
    let want = request.get("id").cloned().unwrap_or(Value::Null);
    if obj.get("id") != Some(&want) {
        let aspect = if obj.contains_key("error") {
            AspectId::J1ErrorId
        } else {
            AspectId::J1IdType
        };
        out.push((
            aspect,
            format!(
                "the id must be the request's {want} (same type), got {}",
                show(obj.get("id"))
            ),
        ));
    }
    match (obj.get("result"), obj.get("error")) {
        (Some(_), None) => {}
        (None, Some(e)) => {
            if !e.get("code").is_some_and(|c| c.is_i64() || c.is_u64()) {
                out.push((
                    AspectId::J1IntegerCode,
                    format!("error.code must be an integer, got {}", show(e.get("code"))),
                ));
            }
            if !e.get("message").is_some_and(Value::is_string) {
                out.push((
                    AspectId::J1ErrorFields,
                    format!(
                        "error.message must be a string, got {}",
                        show(e.get("message"))
                    ),
                ));
            }
        }
        (Some(_), Some(_)) => out.push((
            AspectId::J1NotBoth,
            "a response must not carry both result and error".into(),
        )),
        (None, None) => out.push((
            AspectId::J1HasResult,
            "a response must carry result or error".into(),
        )),
    }
    out
}

/// H3: the status that goes with a JSON-RPC answer over HTTP. −32602 may be
/// 400 or 200 (SDKs differ, the spec is silent); −32601 may be 404 or 200;
/// −32603 and results are 200.
pub fn http_status(status: u16, response: &Value) -> Option<String> {
    let allowed: &[u16] = match crate::wire::at(response, &["error", "code"])
        .and_then(Value::as_i64)
    {
        None => &[200],
        Some(-32602) => &[200, 400],
        Some(-32601) => &[200, 404],
        Some(-32603) => &[200],
        // Any other code (a tool's own, −32002…): a JSON-RPC answer, not a
        // server failure: 200 or a 4xx, never 5xx.
        Some(_) => {
            return (!(status == 200 || (400..500).contains(&status))).then(|| {
                format!("HTTP status {status} with a JSON-RPC error answer; expected 200 or 4xx")
            })
        }
    };
    (!allowed.contains(&status))
        .then(|| format!("HTTP status {status} with this answer; expected one of {allowed:?}"))
}

/// What every stack marker of [`leak_marker`] contains.
static MARKERS: std::sync::LazyLock<aho_corasick::AhoCorasick> = std::sync::LazyLock::new(|| {
    aho_corasick::AhoCorasick::new([
        "Traceback (most recent call last)",
        "panicked at",
        "stack backtrace",
        "File \"",
        "File \\\"",
        ".js:",
        ".mjs:",
        ".cjs:",
        ".ts:",
        ".py:",
        ".rs:",
    ])
    .expect("fixed patterns")
});

/// A stack-trace or exception marker in `text`, if any (J7): Python's
/// `Traceback` and `File "…", line N`, Rust's `panicked at`, and JavaScript's
/// `at fn (file.js:12:3)` frames.
pub fn leak_marker(text: &str) -> Option<String> {
    // One pass for every marker's start: most answers hold none.
    if !MARKERS.is_match(text) {
        return None;
    }
    // Responses are searched serialized, where quotes inside strings are escaped.
    let unescaped;
    let text = if text.contains("\\\"") {
        unescaped = text.replace("\\\"", "\"");
        unescaped.as_str()
    } else {
        text
    };
    for m in [
        "Traceback (most recent call last)",
        "panicked at",
        "stack backtrace",
    ] {
        if text.contains(m) {
            return Some(m.to_string());
        }
    }
    if let Some(i) = text.find("File \"") {
        if text[i..].find("\", line ").is_some_and(|j| j < 300) {
            return Some("File \"…\", line N".to_string());
        }
    }
    for ext in [".js:", ".mjs:", ".cjs:", ".ts:", ".py:", ".rs:"] {
        let mut from = 0;
        while let Some(i) = text[from..].find(ext) {
            let at = from + i + ext.len();
            let digits = text[at..].bytes().take_while(u8::is_ascii_digit).count();
            if digits > 0 && text[at + digits..].starts_with(':') {
                return Some(format!("a source location ({ext}LINE:COL)"));
            }
            from = at;
        }
    }
    None
}

fn strings<'a>(v: &'a Value, out: &mut Vec<&'a str>) {
    match v {
        Value::String(s) => out.push(s),
        Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        Value::Object(o) => o.values().for_each(|x| strings(x, out)),
        _ => {}
    }
}

/// `value` serialized, with echoes of the request's own `uri` removed (R4
/// legitimately names the URI, which may carry the planted secret).
pub fn searchable(value: &Value, request: &Value) -> String {
    let mut text = serde_json::to_string(value).unwrap_or_default();
    if let Some(uri) = crate::wire::at(request, &["params", "uri"]).and_then(Value::as_str) {
        if !uri.is_empty() {
            let encoded = Value::String(uri.to_string()).to_string();
            text = text.replace(encoded.trim_matches('"'), "");
        }
    }
    text
}

/// `value` serialized, with echoes of every string the request sent removed
/// (a tool error may quote its arguments; a forwarded error its data).
fn without_echoes(value: &Value, request: &Value) -> String {
    let mut text = serde_json::to_string(value).unwrap_or_default();
    let mut sent = Vec::new();
    if let Some(params) = request.get("params") {
        strings(params, &mut sent);
    }
    sent.sort_by_key(|s| std::cmp::Reverse(s.len()));
    let canaries: Vec<(&str, usize)> = sent
        .iter()
        .filter_map(|s| Some((planted_canary(s)?, s.len())))
        .collect();
    for s in sent.iter().filter(|s| s.len() >= 4) {
        let encoded = Value::String(s.to_string()).to_string();
        text = text.replace(encoded.trim_matches('"'), "");
    }
    for (c, len) in canaries {
        text = without_quoted(&text, c, len);
    }
    text
}

/// The fuzz canary planted at the front of `s` ([`CANARY_PREFIX`] and 16
/// hex digits), if any.
fn planted_canary(s: &str) -> Option<&str> {
    let rest = s.strip_prefix(CANARY_PREFIX)?;
    let hex = rest.get(..16)?;
    hex.bytes()
        .all(|b| b.is_ascii_hexdigit())
        .then(|| &s[..CANARY_PREFIX.len() + 16])
}

/// `text` without the argument that carried `canary` wherever it comes
/// back quoted: from the quote before the canary (planted at the
/// argument's front) to the same quote after it, never further than the
/// argument (`len` bytes as sent) could stretch when re-escaped. The server
/// re-rendered it (Python's `repr`, say, escapes differently than JSON): an
/// echo, not a leak. An echo without its quotes, or whose closing quote is
/// out of reach, loses only the canary: what follows is still searched.
fn without_quoted(text: &str, canary: &str, len: usize) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    while let Some(i) = text[from..].find(canary).map(|i| from + i) {
        let after = i + canary.len();
        let mut end = after;
        if let Some(&q) = bytes
            .get(i.wrapping_sub(1))
            .filter(|q| **q == b'\'' || **q == b'"')
        {
            let reach = (after + 2 * len + 16).min(text.len());
            if let Some(j) = bytes[after..reach].iter().position(|b| *b == q) {
                end = after + j;
                if bytes[end - 1] == b'\\' {
                    end -= 1; // the quote was escaped in the JSON text: \" or \'
                }
            }
        }
        out.push_str(&text[from..i]);
        from = end.max(after);
    }
    out.push_str(&text[from..]);
    out
}

/// J7 on the error side `errorish` of a response (a JSON-RPC `error`, or an
/// `isError` result), whose JSON text is `text`: a stack marker, or the
/// planted `canary`. A success's content is the tool's own data and may
/// quote code, so it is not searched here.
fn leak_in(errorish: &Value, text: &str, request: &Value, canary: Option<&str>) -> Option<String> {
    if let Some(c) = canary.filter(|c| !c.is_empty()) {
        if text.contains(c) && searchable(errorish, request).contains(c) {
            return Some(format!(
                "the crash's secret text reached the response (canary {c})"
            ));
        }
    }
    // Echoes of the request are taken out only when a marker shows at all
    // (the fuzzer judges every answer; most carry none).
    leak_marker(text)?;
    leak_marker(&without_echoes(errorish, request))
        .map(|m| format!("the error carries a stack trace marker: {m}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn answered(request: Value, response: Value) -> Exchange {
        Exchange {
            request,
            ending: Ending::Answered(response),
            strays: vec![],
            duration: Duration::ZERO,
            http: None,
        }
    }

    #[test]
    fn a_re_escaped_echo_of_a_canary_argument_is_no_leak_and_text_beyond_it_is() {
        let canary = "mcperrcanary0123456789abcdef";
        let arg = |c: &str| format!("{c}x\nTraceback (most recent call last):");
        let call = |c: &str| {
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                   "params": {"name": "get_author", "arguments": {"title": arg(c)}}})
        };
        // Python's repr of the argument: the newline as a backslash and an n.
        let repr = |c: &str| format!("'{}'", arg(c).replace('\n', "\\n"));
        let answer = |extra: &str, c: &str| {
            json!({"jsonrpc": "2.0", "id": 1, "result": {"isError": true,
                   "content": [{"type": "text", "text": format!("No book titled {}{extra}", repr(c))}]}})
        };
        let j7 = |req: Value, resp: Value| {
            invariants(&answered(req, resp), &Context::default())
                .iter()
                .any(|v| v.rule() == crate::rules::RuleId::J7)
        };
        assert!(!j7(call(canary), answer("", canary)), "an echo");
        assert!(
            j7(
                call(canary),
                answer(": File \"/srv/app.py\", line 3", canary)
            ),
            "a traceback beyond the echo"
        );
        // Without the canary the re-escaped echo cannot be told from a leak.
        assert!(j7(call("plain"), answer("", "plain")));
        // An unquoted, changed echo loses only the canary: a stack after it
        // in the same string is still found.
        let lowered = json!({"jsonrpc": "2.0", "id": 1, "result": {"isError": true, "content": [{"type": "text",
            "text": format!("no book {}dune\n    at getBook (/srv/server.js:12:3)", canary)}]}});
        let dune = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "get_author", "arguments": {"title": format!("{canary}Dune")}}});
        assert!(j7(dune, lowered), "a stack after an unquoted echo");
    }

    #[test]
    fn stack_markers_of_three_languages() {
        assert!(leak_marker(r#"x File \"/srv/app.py\", line 12, in get"#).is_some());
        assert!(leak_marker("Traceback (most recent call last):").is_some());
        assert!(leak_marker("at getAuthor (/srv/dist/index.js:12:7)").is_some());
        assert!(leak_marker("thread 'main' panicked at src/main.rs:3:5").is_some());
        assert!(leak_marker("Error executing tool crash").is_none());
        assert!(leak_marker("ratio 3.js: 4").is_none());
    }

    #[test]
    fn a_clean_answer_violates_nothing() {
        let ex = answered(
            json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
            json!({"jsonrpc": "2.0", "id": 1, "result": {}}),
        );
        assert!(invariants(&ex, &Context::default()).is_empty());
    }

    #[test]
    fn every_framing_fault_is_reported_not_only_the_first() {
        let ex = answered(
            json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
            json!({"jsonrpc": "1.0", "id": "1", "error": {"code": "x"}}),
        );
        let v = invariants(&ex, &Context::default());
        assert_eq!(v.len(), 4, "{v:?}");
        assert!(v.iter().all(|v| v.rule() == crate::rules::RuleId::J1));
    }

    #[test]
    fn silence_is_j4_and_a_leak_in_an_error_is_j7() {
        let mut ex = answered(json!({"id": 1}), json!(null));
        ex.ending = Ending::Timeout;
        let v = invariants(&ex, &Context::default());
        assert_eq!(
            (v[0].aspect, v[0].kind),
            (AspectId::J4Main, crate::grading::Kind::Unanswered)
        );
        let ex = answered(
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call"}),
            json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32603, "message": "boom SECRET"}}),
        );
        let ctx = Context {
            canary: Some("SECRET"),
            ..Context::default()
        };
        assert_eq!(invariants(&ex, &ctx)[0].aspect, AspectId::J7Main);
        // An error may quote the request's own arguments: not a leak.
        let ex = answered(
            json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "t", "arguments": {"title": "at f (a.js:1:2)"}}}),
            json!({"jsonrpc": "2.0", "id": 4, "result": {"isError": true, "content": [{"type": "text", "text": "No book titled 'at f (a.js:1:2)'"}]}}),
        );
        assert!(invariants(&ex, &Context::default()).is_empty());
        // A success may quote code: not searched.
        let ex = answered(
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call"}),
            json!({"jsonrpc": "2.0", "id": 3, "result": {"content": [{"type": "text", "text": "at f (a.js:1:2)"}]}}),
        );
        assert!(invariants(&ex, &Context::default()).is_empty());
    }

    #[test]
    fn secret_shaped_text_the_request_did_not_carry_is_j7_on_either_side() {
        let dsn = "postgres://app:s3cret@db.internal:5432/shop";
        let req =
            json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "env"}});
        let aspects = |result: Value, request: Value| -> Vec<AspectId> {
            let ex = answered(
                request,
                json!({"jsonrpc": "2.0", "id": 4, "result": result}),
            );
            invariants(&ex, &Context::default())
                .into_iter()
                .map(|v| v.aspect)
                .collect()
        };
        let text = |t: &str| json!([{"type": "text", "text": t}]);
        assert_eq!(
            aspects(json!({"content": text(dsn)}), req.clone()),
            [AspectId::J7SecretInResult]
        );
        // A tool's isError result is its output (the tools MUST "Sanitize
        // tool outputs"); a JSON-RPC error is J7's own aspect.
        assert_eq!(
            aspects(json!({"content": text(dsn), "isError": true}), req.clone()),
            [AspectId::J7SecretInToolError]
        );
        let ex = answered(
            req.clone(),
            json!({"jsonrpc": "2.0", "id": 4, "error": {"code": -32603, "message": dsn}}),
        );
        let on_error: Vec<AspectId> = invariants(&ex, &Context::default())
            .into_iter()
            .map(|v| v.aspect)
            .collect();
        assert_eq!(on_error, [AspectId::J7Main]);
        // A log message with a credential, sent during the exchange.
        let log = json!({"jsonrpc": "2.0", "method": "notifications/message",
                         "params": {"level": "error", "data": format!("pool {dsn}")}});
        let stray = Stray::of_server_message(&log).expect("log messages are kept");
        let mut ex = answered(
            req,
            json!({"jsonrpc": "2.0", "id": 4, "result": {"content": []}}),
        );
        ex.strays.push(stray);
        let found = strays(&ex, &Context::default());
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].aspect, AspectId::J7SecretInLog);
        assert!(!found[0].message.contains("s3cret"), "{}", found[0].message);
        // A plain log message is no J7 matter (U8 judges who may send it).
        let plain = json!({"jsonrpc": "2.0", "method": "notifications/message",
                           "params": {"level": "info", "data": "started"}});
        ex.strays = vec![Stray::of_server_message(&plain).unwrap()];
        assert!(strays(&ex, &Context::default()).is_empty());
        // U8: without the capability, unasked in 2026-07-28, or carrying
        // the planted secret; a late message is judged for the capability only.
        let ctx = Context {
            era: Some(Era::Modern),
            logging_declared: Some(false),
            planted: Some("mcperrcanary1"),
            ..Context::default()
        };
        let planted = json!({"jsonrpc": "2.0", "method": "notifications/message",
                             "params": {"level": "error", "data": "args mcperrcanary1"}});
        ex.strays = vec![Stray::of_server_message(&planted).unwrap()];
        let during: Vec<AspectId> = strays(&ex, &ctx).iter().map(|v| v.aspect).collect();
        assert_eq!(
            during,
            [
                AspectId::U8Main,
                AspectId::U8OnlyWhenRequested,
                AspectId::U8RemoveSensitive
            ]
        );
        ex.strays = vec![Stray::of_server_message(&plain).unwrap().outside()];
        let late: Vec<AspectId> = strays(&ex, &ctx).iter().map(|v| v.aspect).collect();
        assert_eq!(late, [AspectId::U8Main]);
        // An echo of what the request sent is no leak.
        let echoing = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "env", "arguments": {"url": dsn}}});
        assert!(aspects(json!({"content": text(dsn), "isError": true}), echoing).is_empty());
    }

    #[test]
    fn progress_must_grow_as_numbers_and_name_the_request_s_token() {
        let req = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
            "params": {"name": "slow", "_meta": {"progressToken": "t"}}});
        let note = |token: Value, p: Value| {
            Stray::Progress(json!({"jsonrpc": "2.0", "method": "notifications/progress",
                "params": {"progressToken": token, "progress": p}}))
        };
        let mut ex = answered(
            req,
            json!({"jsonrpc": "2.0", "id": 9, "result": {"content": []}}),
        );
        // Floats and integers compared as numbers; none at all passes too.
        ex.strays = vec![note(json!("t"), json!(0.5)), note(json!("t"), json!(1))];
        assert!(progress(&ex).is_none());
        ex.strays.clear();
        assert!(progress(&ex).is_none());
        ex.strays = vec![note(json!("t"), json!(2)), note(json!("t"), json!(2))];
        assert_eq!(progress(&ex).map(|v| v.aspect), Some(AspectId::U6Main));
        // Another token, or the request's own after the response.
        ex.strays = vec![note(json!(1), json!(1))];
        let other: Vec<AspectId> = strays(&ex, &Context::default())
            .iter()
            .map(|v| v.aspect)
            .collect();
        assert_eq!(other, [AspectId::U6ActiveTokens]);
        ex.strays = vec![note(json!("t"), json!(3)).outside()];
        let late: Vec<AspectId> = strays(&ex, &Context::default())
            .iter()
            .map(|v| v.aspect)
            .collect();
        assert_eq!(late, [AspectId::U6StopAfterCompletion]);
    }
}
