//! J7: what must never come back in an answer: a stack trace or exception
//! marker, the secret a crash input planted (the canary), and secret-shaped
//! text the request did not carry. Echoes of what the request sent are
//! taken out before searching: a server may quote its input.

use serde_json::Value;

use crate::seen::Seen;
use crate::Violation;
use mcperr_cases::fuzz::inputs::CANARY_PREFIX;
use mcperr_model::rules::AspectId;

/// J7: a leak on the error side ([`leak_in`]), else secret-shaped text
/// ([`super::secrets`]) that the request did not carry, on either side: the
/// error (a JSON-RPC error or an `isError` result) or a successful result.
/// The part judged is serialized once for both searches.
pub(super) fn leak_or_secret(
    response: &Value,
    request: &Value,
    canary: Option<&str>,
) -> Option<Violation> {
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
    if let Some(uri) = mcperr_wire::edges::at(request, &["params", "uri"]).and_then(Value::as_str) {
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
    // (the fuzzer judges every answer; most carry none), and only once.
    let stack = leak_marker(text).is_some();
    if !stack && runtime_message(text).is_none() {
        return None;
    }
    let echo_free = without_echoes(errorish, request);
    if let Some(m) = leak_marker(&echo_free).filter(|_| stack) {
        return Some(format!("the error carries a stack trace marker: {m}"));
    }
    runtime_message(&echo_free).map(|m| {
        format!("the error carries an exception's own text: \"{m}\" is what a language runtime says of a crash, not words a tool chose")
    })
}

/// What a language runtime itself says when code fails: the text of an
/// exception nobody raised on purpose. A crash's answer carrying one let
/// the exception's text through, with no stack trace to show it (the model:
/// "nothing of the exception's text"). Only phrases no tool would choose
/// for an error of its own are listed; "division by zero", which a
/// calculator may say on purpose, is not.
const RUNTIME_MESSAGES: &[&str] = &[
    // Python
    "object has no attribute '",
    "'NoneType' object",
    "unsupported operand type(s) for",
    "list index out of range",
    "string index out of range",
    "object is not subscriptable",
    "object is not callable",
    "invalid literal for int() with base",
    "required positional argument",
    "got an unexpected keyword argument",
    "[Errno ",
    // JavaScript (V8)
    "Cannot read properties of undefined",
    "Cannot read properties of null",
    "Cannot read property '",
    "Maximum call stack size exceeded",
    "ENOENT: no such file or directory",
    "connect ECONNREFUSED",
    // Rust
    "called `Option::unwrap()` on a `None` value",
    "called `Result::unwrap()` on an `Err` value",
    "index out of bounds: the len is",
    // Go, Java
    "invalid memory address or nil pointer dereference",
    "java.lang.NullPointerException",
];

static RUNTIME: std::sync::LazyLock<aho_corasick::AhoCorasick> = std::sync::LazyLock::new(|| {
    aho_corasick::AhoCorasick::new(RUNTIME_MESSAGES).expect("fixed patterns")
});

/// The first runtime message of [`RUNTIME_MESSAGES`] in `text`, if any (J7).
pub(crate) fn runtime_message(text: &str) -> Option<&'static str> {
    RUNTIME
        .find(text)
        .map(|m| RUNTIME_MESSAGES[m.pattern().as_usize()])
}

/// The registry's entry point ([`crate::registry::INVARIANTS`]): exception text and secrets in the answer.
pub(crate) fn leaks(s: &Seen) -> Vec<Violation> {
    s.response
        .and_then(|r| leak_or_secret(r, s.request, s.ctx.canary))
        .map(Violation::late)
        .into_iter()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn a_runtimes_own_words_are_exception_text_and_an_echo_of_them_is_not() {
        let call = |args: Value| serde_json::json!({"method": "tools/call", "params": {"name": "convert", "arguments": args}});
        let error = |text: &str| serde_json::json!({"isError": true, "content": [{"type": "text", "text": text}]});
        for (text, marker) in [
            (
                "Error executing tool convert: 'NoneType' object has no attribute 'factor'",
                "'NoneType' object",
            ),
            (
                "Cannot read properties of undefined (reading 'factor')",
                "Cannot read properties of undefined",
            ),
            (
                "[Errno 2] No such file or directory: '/srv/units.csv'",
                "[Errno ",
            ),
            (
                "called `Option::unwrap()` on a `None` value",
                "called `Option::unwrap()` on a `None` value",
            ),
        ] {
            let e = error(text);
            let json = serde_json::to_string(&e).unwrap();
            let why = leak_in(&e, &json, &call(serde_json::json!({})), None).expect(text);
            assert!(why.contains(marker), "{why}");
        }
        // Words a tool chooses for its own failure are no exception text.
        for text in [
            "No book titled 'Dune'",
            "division by zero",
            "Unknown unit: parsec",
        ] {
            let e = error(text);
            let json = serde_json::to_string(&e).unwrap();
            assert!(
                leak_in(&e, &json, &call(serde_json::json!({})), None).is_none(),
                "{text}"
            );
        }
        // The request's own words, quoted back: an echo.
        let args = serde_json::json!({"unit": "list index out of range"});
        let e = error("Unknown unit: list index out of range");
        let json = serde_json::to_string(&e).unwrap();
        assert!(leak_in(&e, &json, &call(args), None).is_none());
    }
}
