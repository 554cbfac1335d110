//! The always-on checks of what the server wrote besides the answer, while
//! the request was awaited or after: lines that are no message (J5),
//! framing of stray messages and notifications with ids (J1), answers to
//! notifications (J3), requests of the server's own (J5, H3, E1's invited
//! ones skipped), log messages (U8, J7), progress (U6) and cancellations
//! (U7), task status notifications (K1).

use mcperr_protocol::Era;
use serde_json::Value;

use super::context::Context;
use crate::seen::Seen;
use crate::Violation;
use mcperr_model::rules::AspectId;
use mcperr_wire::exchange::{Exchange, Stray};

/// The violations that stray output during the exchange makes (J5, J1, J3).
///
/// Long by design: one match arm per kind of [`Stray`], kept in one place so
/// that a new kind cannot be left unjudged (the match is exhaustive).
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
                let token = mcperr_wire::exchange::progress_token(v);
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
            // The answer to a request inside a malformed line the case sent
            // (its id echoed as sent): what the case itself asked for.
            Stray::Duplicate(v) | Stray::Unsolicited(v) | Stray::Misanswered(v)
                if v.get("id").is_some_and(|id| ctx.raw_ids.contains(id)) =>
            {
                continue
            }
            Stray::Duplicate(v) => (
                AspectId::J1Main,
                format!("a request was answered more than once: {v}"),
            ),
            Stray::NotificationAnswered(v) => match notification_answer(v) {
                Some(aspect) => (aspect, notification_message(aspect, v)),
                None => continue,
            },
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

/// J3 over HTTP: what a notification POSTed on its own was answered with
/// (`{"httpStatus", "body"}`), graded by the transport's two sentences. A
/// server accepts it (`202 Accepted` with no body) or cannot accept it
/// ("it **MUST** return an HTTP error status code … The HTTP response body
/// **MAY** comprise a JSON-RPC _error response_ that has no `id`"), so an
/// error status whose body is empty, not JSON, or an error without an id
/// (or a null one, JSON-RPC's way of saying none) is no violation.
fn notification_answer(v: &Value) -> Option<AspectId> {
    let status = v.get("httpStatus").and_then(Value::as_u64).unwrap_or(0);
    let body = v.get("body").unwrap_or(&Value::Null);
    if (400..600).contains(&status) {
        let idless_error = body.get("error").is_some()
            && body.get("id").is_none_or(Value::is_null)
            && body.get("result").is_none();
        return match body {
            Value::String(_) | Value::Null => None,
            _ if idless_error => None,
            // A result, or an error naming an id: the notification was
            // answered as a request.
            _ => Some(AspectId::J3Main),
        };
    }
    if (200..300).contains(&status) {
        // Accepted: 202 with no body (a 202 alone never reaches here).
        return Some(AspectId::J3Http202);
    }
    Some(AspectId::J3CannotAcceptErrorStatus)
}

/// The message of [`notification_answer`]'s violation.
fn notification_message(aspect: AspectId, v: &Value) -> String {
    match aspect {
        AspectId::J3Main => format!("a notification was answered as a request: {v}"),
        AspectId::J3Http202 => {
            format!("a notification was answered (expected 202 with no body): {v}")
        }
        _ => format!(
            "a notification was neither accepted (202) nor refused with an HTTP error status: {v}"
        ),
    }
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
    let token = mcperr_wire::exchange::progress_token(request);
    token.is_some() && mcperr_wire::exchange::progress_token(v) == token
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

/// The registry's entry point ([`crate::registry::INVARIANTS`]): what the server wrote besides the answer.
pub(crate) fn stray_output(s: &Seen) -> Vec<Violation> {
    strays(s.exchange, s.ctx)
}

/// The registry's entry point ([`crate::registry::INVARIANTS`]): the progress notifications, rising.
pub(crate) fn rising_progress(s: &Seen) -> Vec<Violation> {
    progress(s.exchange).into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcperr_wire::exchange::Ending;
    use serde_json::json;

    #[test]
    fn progress_must_grow_as_numbers_and_name_the_request_s_token() {
        let req = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
            "params": {"name": "slow", "_meta": {"progressToken": "t"}}});
        let note = |token: Value, p: Value| {
            Stray::Progress(json!({"jsonrpc": "2.0", "method": "notifications/progress",
                "params": {"progressToken": token, "progress": p}}))
        };
        let mut ex = Exchange::bare(
            req,
            Ending::Answered(json!({"jsonrpc": "2.0", "id": 9, "result": {"content": []}})),
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

    /// Over HTTP a notification is accepted (202, no body) or refused with
    /// an HTTP error status, whose body may be an error without an id; it
    /// is never answered as a request.
    #[test]
    fn a_notification_refused_with_an_error_status_is_no_violation() {
        let graded = |status: u16, body: Value| {
            notification_answer(&json!({"httpStatus": status, "body": body}))
        };
        let idless = json!({"jsonrpc": "2.0", "error": {"code": -32601, "message": "no"}});
        let null_id =
            json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32601, "message": "no"}});
        assert_eq!(graded(404, null_id), None);
        assert_eq!(graded(400, idless), None);
        assert_eq!(graded(400, json!("")), None);
        assert_eq!(graded(500, json!("Internal Server Error")), None);
        let named = json!({"jsonrpc": "2.0", "id": 7, "error": {"code": -32601, "message": "no"}});
        assert_eq!(graded(400, named), Some(AspectId::J3Main));
        let result = json!({"jsonrpc": "2.0", "id": null, "result": {}});
        assert_eq!(graded(400, result.clone()), Some(AspectId::J3Main));
        assert_eq!(graded(200, result), Some(AspectId::J3Http202));
        assert_eq!(graded(202, json!("ok")), Some(AspectId::J3Http202));
        assert_eq!(
            graded(302, json!("")),
            Some(AspectId::J3CannotAcceptErrorStatus)
        );
    }
}
