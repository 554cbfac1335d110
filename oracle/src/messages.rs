//! What an error message says about itself, judged without reading its
//! language: J1 `message-concise` ("The message SHOULD be limited to a
//! concise single sentence.", schema.ts `Error.message`).

use mcperr_model::rules::AspectId;
use serde_json::Value;

use crate::seen::Seen;
use crate::Violation;

/// J1: an `error.message` that is not "a concise single sentence" (schema
/// `Error.message`): one that runs over several lines (a traceback, a
/// pretty-printed validation report). Not judged when the request carried a
/// line break itself (raw or percent-encoded, in any key or value), since
/// the message may quote it. Length is not judged: the spec sets none.
pub(crate) fn wordy_message(response: &Value, request: &Value) -> Option<String> {
    let message = mcperr_wire::edges::at(response, &["error", "message"])?.as_str()?;
    if !message.contains(['\n', '\r']) || sent_line_break(request.get("params")?) {
        return None;
    }
    let lines = message.lines().count().max(2);
    let first = message.lines().next().unwrap_or_default();
    Some(format!(
        "error.message runs over {lines} lines, not one sentence; its first: {first:?}"
    ))
}

/// Whether any key or string value under `v` holds a line break, as sent or
/// percent-encoded (a URI template parameter comes back decoded).
fn sent_line_break(v: &Value) -> bool {
    let breaks = |s: &str| {
        s.contains(['\n', '\r']) || {
            let lower = s.to_ascii_lowercase();
            lower.contains("%0a") || lower.contains("%0d")
        }
    };
    match v {
        Value::String(s) => breaks(s),
        Value::Array(a) => a.iter().any(sent_line_break),
        Value::Object(o) => o.iter().any(|(k, v)| breaks(k) || sent_line_break(v)),
        _ => false,
    }
}

/// The registry's entry point ([`crate::registry::INVARIANTS`]): the error message's length.
pub(crate) fn concise_message(s: &Seen) -> Vec<Violation> {
    s.response
        .and_then(|r| wordy_message(r, s.request))
        .map(|why| Violation::new(AspectId::J1MessageConcise, why).late())
        .into_iter()
        .collect()
}

#[cfg(test)]
mod tests {
    use crate::invariants::{invariants, Context};
    use mcperr_model::rules::AspectId;
    use mcperr_wire::exchange::{Ending, Exchange};
    use serde_json::json;

    #[test]
    fn an_error_message_over_several_lines_is_not_concise_unless_the_request_sent_a_line_break() {
        let request = |arg: &str| {
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                   "params": {"name": "get_author", "arguments": {"title": arg}}})
        };
        let concise = |message: &str, arg: &str| {
            let ex = Exchange::bare(
                request(arg),
                Ending::Answered(
                    json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": message}}),
                ),
            );
            !invariants(&ex, &Context::default())
                .iter()
                .any(|v| v.aspect == AspectId::J1MessageConcise)
        };
        assert!(concise("Unknown tool: get_author", "x"));
        assert!(concise(&"x".repeat(2000), "y"), "length is not judged");
        assert!(!concise("Invalid params\n  title: Field required", "x"));
        // What the request sent may come back quoted, line breaks and all,
        // or decoded from a URI.
        assert!(concise("No book titled 'a\nb'", "a\nb"));
        assert!(concise("No book titled 'a\nb'", "books://a%0Ab"));
    }
}
