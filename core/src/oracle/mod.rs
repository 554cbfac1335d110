//! The oracle: one exchange and its context in, one [`Judgement`] out.
//!
//! Judging goes from the transport up: no answer → `error`; stray output on
//! stdout → J5; a wrong or null id → J1/J3; framing → J1; then the case's own
//! shape (`expect`, `also_pass`, `warn`) and its named checks. The first
//! failure decides the rule the case is reported under.

pub mod pattern;

use serde::Serialize;
use serde_json::{json, Value};

use crate::case::{Case, Check};
use crate::client::{Ending, Exchange, Stray};
use crate::profile::Expectation;

/// A case's verdict (DESIGN.md §1 "Verdicts and profiles").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// The rule holds.
    Pass,
    /// A SHOULD is broken, or a known ambiguity.
    Warn,
    /// A MUST or the profile's exact rule is broken.
    Fail,
    /// The server lacks what the case needs; never counted as a pass.
    Skip,
    /// No answer could be judged.
    Error,
}

impl Verdict {
    /// The lowercase name used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Warn => "warn",
            Verdict::Fail => "fail",
            Verdict::Skip => "skip",
            Verdict::Error => "error",
        }
    }
}

/// A verdict with the rule that decided it and a message saying why.
#[derive(Debug, Clone, PartialEq)]
pub struct Judgement {
    /// The verdict.
    pub verdict: Verdict,
    /// The deciding rule (the case's own, or J1/J3/J4/J5 for transport-level failures).
    pub rule: String,
    /// Why: expected, got, and the spec section for failures.
    pub message: String,
}

impl Judgement {
    /// A judgement under the case's own rule.
    pub fn new(verdict: Verdict, case: &Case, message: impl Into<String>) -> Self {
        Judgement {
            verdict,
            rule: case.rule.clone(),
            message: message.into(),
        }
    }

    fn fail(rule: &str, message: String) -> Self {
        Judgement {
            verdict: Verdict::Fail,
            rule: rule.to_string(),
            message,
        }
    }
}

/// Evidence gathered around the exchange, for the named checks.
#[derive(Debug, Default, Clone)]
pub struct Evidence {
    /// The run's canary.
    pub canary: String,
    /// The case sent notifications before the judged request.
    pub sent_notification: bool,
    /// What the server wrote to stderr during the case, when known.
    pub stderr: Option<String>,
    /// `limited_calls` counts before and after, when measured.
    pub counts: Option<(Option<Value>, Option<Value>)>,
}

/// Text markers of a traceback or failure chain in a server log.
const TRACEBACK_MARKERS: &[&str] = &[
    "Traceback (most recent call last)",
    "Failure chain",
    "  File \"",
    "panicked at",
    "stack backtrace",
    "\n    at ",
];

/// A stack-trace or exception marker in `text`, if any (J7): Python's
/// `Traceback` and `File "…", line N`, Rust's `panicked at`, and JavaScript's
/// `at fn (file.js:12:3)` frames.
pub fn leak_marker(text: &str) -> Option<String> {
    // Responses are searched serialized, where quotes inside strings are escaped.
    let text = &text.replace("\\\"", "\"");
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

fn has_traceback(log: &str) -> bool {
    TRACEBACK_MARKERS.iter().any(|m| log.contains(m))
}

/// J1: the framing every response must have.
pub fn check_framing(response: &Value, request: &Value) -> Result<(), String> {
    let Some(obj) = response.as_object() else {
        return Err("the response is not a JSON object".into());
    };
    if obj.get("jsonrpc") != Some(&Value::String("2.0".into())) {
        return Err(format!(
            "\"jsonrpc\" must be \"2.0\", got {}",
            show(obj.get("jsonrpc"))
        ));
    }
    let want = request.get("id").cloned().unwrap_or(Value::Null);
    if obj.get("id") != Some(&want) {
        return Err(format!(
            "the id must be the request's {want} (same type), got {}",
            show(obj.get("id"))
        ));
    }
    match (obj.get("result"), obj.get("error")) {
        (Some(_), None) => Ok(()),
        (None, Some(e)) => {
            if !e.get("code").is_some_and(|c| c.is_i64() || c.is_u64()) {
                return Err(format!(
                    "error.code must be an integer, got {}",
                    show(e.get("code"))
                ));
            }
            if !e.get("message").is_some_and(Value::is_string) {
                return Err(format!(
                    "error.message must be a string, got {}",
                    show(e.get("message"))
                ));
            }
            Ok(())
        }
        (Some(_), Some(_)) => Err("a response must not carry both result and error".into()),
        (None, None) => Err("a response must carry result or error".into()),
    }
}

/// H3: the status that goes with a JSON-RPC answer over HTTP. −32602 may be
/// 400 or 200 (SDKs differ, the spec is silent); −32601 may be 404 or 200;
/// −32603 and results are 200.
pub fn check_http_status(status: u16, response: &Value) -> Option<String> {
    let allowed: &[u16] = match response.pointer("/error/code").and_then(Value::as_i64) {
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

fn clip(s: &str) -> String {
    if s.len() > 300 {
        format!(
            "{}…",
            &s[..s.char_indices().nth(300).map_or(s.len(), |(i, _)| i)]
        )
    } else {
        s.to_string()
    }
}

fn show(v: Option<&Value>) -> String {
    v.map_or_else(|| "nothing".to_string(), Value::to_string)
}

/// The response text with echoes of the request's own `uri` removed.
fn searchable(response: &Value, request: &Value) -> String {
    let mut text = response.to_string();
    if let Some(uri) = request.pointer("/params/uri").and_then(Value::as_str) {
        if !uri.is_empty() {
            let encoded = Value::String(uri.to_string()).to_string();
            text = text.replace(encoded.trim_matches('"'), "");
        }
    }
    text
}

/// The verdict that stray output during the case forces, if any.
fn judge_strays(case: &Case, exchange: &Exchange, evidence: &Evidence) -> Option<Judgement> {
    let sent_raw = case
        .send
        .iter()
        .any(|s| matches!(s, crate::case::SendStep::Raw { .. }));
    for stray in &exchange.strays {
        let (rule, message) = match stray {
            Stray::NotJson(line) => (
                "J5",
                format!("stdout carried a line that is not a JSON-RPC message: {line:?}"),
            ),
            Stray::TooLong(n) => (
                "J5",
                format!("stdout carried a line of over {n} bytes, longer than the cap"),
            ),
            Stray::More(n) => (
                "J5",
                format!("the server wrote {n} more stray outputs than are kept"),
            ),
            Stray::NullIdResponse(v) if evidence.sent_notification => {
                ("J3", format!("a notification was answered: {v}"))
            }
            // JSON-RPC allows answering unparseable input with an id-null error.
            Stray::NullIdResponse(v) if sent_raw && v.get("error").is_some() => continue,
            Stray::NullIdResponse(v) => ("J1", format!("a response without the request's id: {v}")),
            Stray::Duplicate(v) => ("J1", format!("a request was answered more than once: {v}")),
            Stray::NotificationAnswered(v) => (
                "J3",
                format!("a notification was answered (expected 202 with no body): {v}"),
            ),
            Stray::Unsolicited(v) => (
                "J1",
                format!("a response whose id answers no request mcperr sent: {v}"),
            ),
        };
        return Some(Judgement::fail(rule, message));
    }
    None
}

/// Judges one exchange of `case` under the expectation `exp`.
pub fn judge(
    case: &Case,
    exp: &Expectation,
    exchange: &Exchange,
    evidence: &Evidence,
) -> Judgement {
    let spec = &case.spec;
    if let Ending::NotApplicable(why) = &exchange.ending {
        return Judgement::new(Verdict::Skip, case, why.clone());
    }
    // Garbage or extra answers seen during the case decide first, even when
    // no answer came: they are usually why.
    if let Some(j) = judge_strays(case, exchange, evidence) {
        return j;
    }
    if let (Some(want), Some(answer)) = (&case.http, &exchange.http) {
        if !want.status.is_empty() && !want.status.contains(&answer.status) {
            let message = format!(
                "HTTP status {}, expected {:?}; body: {}. Spec: {spec}",
                answer.status,
                want.status,
                clip(&answer.body)
            );
            return Judgement::new(Verdict::Fail, case, message);
        }
        let status_only =
            case.expect.as_object().is_some_and(|o| o.is_empty()) && case.checks.is_empty();
        if status_only && !want.status.is_empty() && !want.empty_body {
            return Judgement::new(Verdict::Pass, case, String::new());
        }
        if want.empty_body {
            return if answer.body.trim().is_empty() {
                Judgement::new(Verdict::Pass, case, String::new())
            } else {
                Judgement::new(
                    Verdict::Fail,
                    case,
                    format!("expected no body, got {}. Spec: {spec}", clip(&answer.body)),
                )
            };
        }
    }
    let response = match &exchange.ending {
        Ending::NotApplicable(why) => return Judgement::new(Verdict::Skip, case, why.clone()),
        Ending::Empty(why) => {
            let rule = if why.contains("SSE") { "H3" } else { "J1" };
            return Judgement {
                verdict: Verdict::Error,
                rule: rule.into(),
                message: format!("no response: {why}"),
            };
        }
        // No answer is an error verdict; the rule named is the one the silence
        // implicates: J1 (every request gets one response) for a live server,
        // J4 (the session survives) for one that died, unless the case itself
        // sent the input that killed it.
        Ending::Timeout => {
            let ms = exchange.duration.as_millis();
            return Judgement {
                verdict: Verdict::Error,
                rule: "J1".into(),
                message: format!("no response within {ms} ms"),
            };
        }
        Ending::Died(how) => {
            let raw = case
                .send
                .iter()
                .any(|s| matches!(s, crate::case::SendStep::Raw { .. }));
            let rule = if raw { case.rule.clone() } else { "J4".into() };
            return Judgement {
                verdict: Verdict::Error,
                rule,
                message: format!("no response: {how}"),
            };
        }
        Ending::Answered(v) | Ending::WrongId(v) => v,
    };
    // An HTTP-level rejection (an `[http]` case: bad headers, bad JSON) may
    // carry id null; everything else about its framing is still checked.
    let rejected = case.http.is_some()
        && exchange.http.as_ref().is_some_and(|a| a.status >= 400)
        && response.get("id") == Some(&Value::Null);
    let framed_against = if rejected {
        json!({"id": null})
    } else {
        exchange.request.clone()
    };
    if let Err(why) = check_framing(response, &framed_against) {
        return Judgement::fail("J1", format!("{why}. Spec: JSON-RPC 2.0 §5"));
    }
    if let (Some(answer), None) = (&exchange.http, &case.http) {
        if let Some(why) = check_http_status(answer.status, response) {
            return Judgement::fail("H3", format!("{why}. Spec: DESIGN.md §1 H3"));
        }
    }
    let mut outcome = match pattern::matches(&exp.pattern, Some(response)) {
        Ok(()) => Judgement::new(Verdict::Pass, case, String::new()),
        Err(mismatch) => {
            if let Some(alt) = exp
                .also_pass
                .iter()
                .find(|a| pattern::matches(&a.pattern, Some(response)).is_ok())
            {
                Judgement::new(Verdict::Pass, case, format!("accepted: {}", alt.reason))
            } else if let Some(alt) = exp
                .warn
                .iter()
                .find(|a| pattern::matches(&a.pattern, Some(response)).is_ok())
            {
                Judgement::new(Verdict::Warn, case, format!("{}. Spec: {spec}", alt.reason))
            } else {
                Judgement::new(Verdict::Fail, case, format!("{mismatch}. Spec: {spec}"))
            }
        }
    };
    if outcome.verdict == Verdict::Fail {
        return outcome;
    }
    for check in &exp.checks {
        if let Some(failure) = run_check(*check, exchange, response, evidence) {
            outcome = Judgement::new(Verdict::Fail, case, format!("{failure}. Spec: {spec}"));
            break;
        }
    }
    outcome
}

fn run_check(check: Check, exchange: &Exchange, response: &Value, ev: &Evidence) -> Option<String> {
    match check {
        Check::NoCanary => {
            let text = searchable(response, &exchange.request);
            if !ev.canary.is_empty() && text.contains(&ev.canary) {
                return Some(format!(
                    "the crash's secret text reached the response (canary {})",
                    ev.canary
                ));
            }
            leak_marker(&text).map(|m| format!("the response carries a stack trace marker: {m}"))
        }
        Check::BodyNeverRan => match &ev.counts {
            Some((Some(before), Some(after))) if before == after => None,
            Some((before, after)) => Some(format!(
                "the tool body ran on invalid arguments: limited_calls went from {} to {}",
                show(before.as_ref()),
                show(after.as_ref())
            )),
            None => Some("limited_calls could not be read".into()),
        },
        Check::LogNoTraceback => {
            let log = ev.stderr.as_deref()?;
            has_traceback(log)
                .then(|| format!("an expected failure logged a traceback:\n{}", tail(log)))
        }
        Check::LogCrashTraceback => {
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
    }
}

fn tail(log: &str) -> String {
    let lines: Vec<&str> = log.lines().collect();
    lines[lines.len().saturating_sub(12)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::leak_marker;

    #[test]
    fn stack_markers_of_three_languages() {
        assert!(leak_marker(r#"x File \"/srv/app.py\", line 12, in get"#).is_some());
        assert!(leak_marker("Traceback (most recent call last):").is_some());
        assert!(leak_marker("at getAuthor (/srv/dist/index.js:12:7)").is_some());
        assert!(leak_marker("thread 'main' panicked at src/main.rs:3:5").is_some());
        assert!(leak_marker("Error executing tool crash").is_none());
        assert!(leak_marker("ratio 3.js: 4").is_none());
    }
}
