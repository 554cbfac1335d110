//! What a server's request for input may ask of a client, whichever way it
//! travels: inside a 2026-07-28 `InputRequiredResult` (M1) or as a
//! 2025-11-25 request of the server's own (E1). Both eras word the same
//! duties: an elicitation only in a mode the client declared, sampling with
//! tools only if it declared `sampling.tools`, with an `includeContext`
//! other than `none` only if it declared `sampling.context`.

use serde_json::{Map, Value};

use crate::Violation;
use mcperr_model::rules::AspectId;

/// One request for input: what the report calls it, and the request.
pub(super) struct Ask<'a> {
    /// `inputRequests["confirm"]` or `the server's request "ask-1"`.
    pub label: String,
    /// The request object (`method`, `params`).
    pub request: &'a Value,
}

impl Ask<'_> {
    fn method(&self) -> Option<&str> {
        self.request.get("method").and_then(Value::as_str)
    }
}

/// The aspects a finding is graded by, per era.
pub(super) struct Aspects {
    /// An elicitation in a mode the client did not declare.
    pub modes: AspectId,
    /// Sampling with tools, `sampling.tools` undeclared.
    pub tools: AspectId,
    /// Sampling with context, `sampling.context` undeclared.
    pub context: AspectId,
}

/// The modes an `elicitation` capability declares. An empty object declares
/// form mode only (client/elicitation#capabilities: "an empty capabilities
/// object is equivalent to declaring support for `form` mode only").
pub(super) fn supports_mode(elicitation: &Map<String, Value>, mode: &str) -> bool {
    elicitation.contains_key(mode) || (elicitation.is_empty() && mode == "form")
}

/// What the client's `elicitation` capability declares, for a report.
pub(super) fn declared_modes(elicitation: &Map<String, Value>) -> String {
    if elicitation.is_empty() {
        "form mode only (an empty elicitation capability)".to_string()
    } else {
        let listed: Vec<&str> = elicitation.keys().map(String::as_str).collect();
        format!("the modes {}", listed.join(", "))
    }
}

/// The first elicitation in a mode `elicitation` does not declare; a
/// request without `mode` is form mode.
pub(super) fn undeclared_mode(
    asks: &[Ask],
    elicitation: &Map<String, Value>,
    aspect: AspectId,
) -> Option<Violation> {
    let (ask, mode) = asks.iter().find_map(|a| {
        if a.method() != Some("elicitation/create") {
            return None;
        }
        let mode = a
            .request
            .pointer("/params/mode")
            .and_then(Value::as_str)
            .unwrap_or("form");
        (!supports_mode(elicitation, mode)).then_some((a, mode))
    })?;
    Some(Violation::new(
        aspect,
        format!(
            "{} asks for a {mode}-mode elicitation; the client declared {}: {}",
            ask.label,
            declared_modes(elicitation),
            ask.request
        ),
    ))
}

/// Sampling requests that use what the client's `sampling` capability did
/// not declare: `tools` or `toolChoice` without `sampling.tools`
/// (client/sampling#tools-in-sampling), an `includeContext` other than
/// `none` without `sampling.context` (client/sampling#capabilities).
pub(super) fn undeclared_sampling(
    asks: &[Ask],
    sampling: &Value,
    aspects: &Aspects,
) -> Vec<Violation> {
    let has = |k: &str| sampling.get(k).is_some();
    let mut out = Vec::new();
    for ask in asks {
        if ask.method() != Some("sampling/createMessage") {
            continue;
        }
        let params = ask.request.get("params");
        let tools = params.and_then(|p| p.get("tools").or_else(|| p.get("toolChoice")));
        if let (Some(tools), false) = (tools, has("tools")) {
            out.push(Violation::new(
                aspects.tools,
                format!("{} is a sampling request with tools {tools}; the client's sampling capability does not declare tools: {}", ask.label, ask.request),
            ));
        }
        let context = params.and_then(|p| p.get("includeContext"));
        if let (Some(c), false) = (context, has("context")) {
            if c != "none" {
                out.push(Violation::new(
                    aspects.context,
                    format!("{} is a sampling request with includeContext {c}; the client's sampling capability does not declare context: {}", ask.label, ask.request),
                ));
            }
        }
    }
    out
}
