//! 2026-07-28's `confirm_purchase`: multi round-trip requests
//! (basic/patterns/mrtr) from a client that declared elicitation.
//!
//! The first call answers an `InputRequiredResult`: one form elicitation
//! (`confirm`, a boolean) and a `requestState`. The retry carries the
//! client's `inputResponses` and the state back; the purchase completes when
//! the user accepted with `confirm: true`. Nothing is kept between the two:
//! the state is the whole memory, so it is integrity-protected and bound to
//! the request it was issued for ("the method name and a digest of its
//! salient parameters", with "a short expiry"): a keyed SipHash, 128 bits,
//! under the process's random keys. A state that fails verification, or
//! `inputResponses` that are not what was asked, is -32602; unknown keys in
//! `inputResponses` are ignored; a retry without the answer asks again. A
//! client that declares no elicitation gets -32021 instead (L3).
//! Imports `answer` and `faults`.

use mcperr_protocol::codes::Code;
use std::hash::{BuildHasher, RandomState};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use mcperr_protocol::era::META_CLIENT_CAPABILITIES;
use mcperr_protocol::{codes, ErrorObject};
use serde_json::{json, Map, Value};

use crate::answer::Answer;
use crate::faults::Fault;

/// The key of the one input request.
const KEY: &str = "confirm";

/// Under mrtr-repeated-key, a second input request's name in the result,
/// which [`as_written`] turns into [`KEY`] on the wire.
const KEY_AGAIN: &str = "confirm (again)";

/// An answer's text as an edge writes it: under mrtr-repeated-key, the
/// second input request takes the first one's name ([`KEY_AGAIN`] becomes
/// [`KEY`]), which a parsed `Value` cannot hold.
pub fn as_written(bytes: Vec<u8>, fault: Option<Fault>) -> Vec<u8> {
    if fault != Some(Fault::MrtrRepeatedKey) {
        return bytes;
    }
    let text = String::from_utf8_lossy(&bytes);
    text.replace(&format!("\"{KEY_AGAIN}\":"), &format!("\"{KEY}\":"))
        .into_bytes()
}

/// How long a state is good for, in seconds.
const TTL_SECS: u64 = 600;

/// The keys that protect `confirm_purchase`'s request states.
#[derive(Default)]
pub struct Confirmations {
    keys: RandomState,
    /// Under `capabilities-sticky`: a request has declared elicitation.
    elicitation_seen: AtomicBool,
}

/// Whether a 2026-07-28 request's `clientCapabilities` declare elicitation.
pub fn declares_elicitation(params: Option<&Value>) -> bool {
    params.and_then(Value::as_object).is_some_and(declares_in)
}

fn declares_in(params: &Map<String, Value>) -> bool {
    params
        .get("_meta")
        .and_then(|m| m.get(META_CLIENT_CAPABILITIES))
        .and_then(|c| c.get("elicitation"))
        .is_some()
}

impl Confirmations {
    /// Answers a 2026-07-28 `confirm_purchase` call whose arguments are
    /// valid: the confirmation from a client that declares elicitation,
    /// -32021 from one that does not (basic/index#meta).
    pub fn answer(&self, tool: &str, params: &Map<String, Value>, fault: Option<Fault>) -> Answer {
        let mut declared = declares_in(params);
        if fault == Some(Fault::CapabilitiesSticky) {
            // The context a stateless server must not keep
            // (basic/index#statelessness): any request before counts.
            declared |= self.elicitation_seen.fetch_or(declared, Ordering::SeqCst);
        }
        if declared {
            self.call(tool, params, fault)
        } else {
            missing_capability(params, fault)
        }
    }

    /// Answers a `confirm_purchase` call whose arguments are valid, from a
    /// client that declared elicitation.
    fn call(&self, tool: &str, params: &Map<String, Value>, fault: Option<Fault>) -> Answer {
        let title = params
            .get("arguments")
            .and_then(|a| a.get("title"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        let invalid = |why: String| {
            Answer::error(ErrorObject::new(
                codes::INVALID_PARAMS,
                format!("Invalid params: {why}"),
            ))
        };
        let responses = match params.get("inputResponses") {
            None | Some(Value::Null) => None,
            Some(Value::Object(r)) => Some(r),
            Some(_) if fault == Some(Fault::MrtrMalformedAccepted) => None,
            Some(other) => {
                return invalid(format!(
                    "inputResponses must be an object of input responses, not {other}"
                ))
            }
        };
        let state = match params.get("requestState") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.as_str()),
            Some(_) => return invalid("requestState must be the string this server issued".into()),
        };
        if let Some(state) = state {
            if !self.verify(state, tool, title, fault) {
                let why = "requestState failed verification: it was not issued for this request, was altered, or has expired";
                // The J1 faults: the same refusal under a code of a range
                // 2026-07-28 keeps from servers (basic/index#error-codes).
                let code = match fault {
                    Some(Fault::CodeLegacyRange) => Code(-32001),
                    Some(Fault::CodeMcpRange) => Code(-32050),
                    Some(Fault::Code32042) => codes::URL_ELICITATION_REQUIRED,
                    Some(Fault::CodeReservedRange) => Code(-32500),
                    _ => return invalid(why.into()),
                };
                return Answer::error(ErrorObject::new(code, why));
            }
        }
        if fault == Some(Fault::MrtrUnknownInputRefused) {
            if let Some(extra) = responses.and_then(|r| r.keys().find(|k| *k != KEY)) {
                return invalid(format!("inputResponses has no request named {extra:?}"));
            }
        }
        let answer = responses.and_then(|r| r.get(KEY));
        let declined = answer
            .and_then(|a| a.get("action"))
            .is_some_and(|a| a == "decline" || a == "cancel");
        if fault == Some(Fault::MrtrDeclineInternal) && declined {
            return Answer::error(ErrorObject::new(codes::INTERNAL_ERROR, "Internal error"));
        }
        let (Some(_), Some(answer)) = (state, answer) else {
            if fault == Some(Fault::MrtrMissingInputError) && responses.is_some() {
                return invalid(format!("inputResponses lacks {KEY:?}"));
            }
            // A first call, or a retry without the answer: ask (again).
            return self.ask(tool, title, params, fault);
        };
        let action = answer.get("action").and_then(Value::as_str);
        let confirmed = answer.pointer("/content/confirm");
        match (action, confirmed) {
            (Some("accept"), Some(Value::Bool(true))) => text(format!("Bought {title}.")),
            (Some("accept"), Some(Value::Bool(false)) | None) | (Some("decline" | "cancel"), _) => {
                text(format!(
                    "The purchase of {title} was not confirmed; nothing was bought."
                ))
            }
            _ if fault == Some(Fault::MrtrMalformedAccepted) => text(format!(
                "The purchase of {title} was not confirmed; nothing was bought."
            )),
            _ => invalid(format!(
                "inputResponses.{KEY} must be an elicitation result: action \"accept\", \"decline\" or \"cancel\", and with accept a boolean content.confirm; got {answer}"
            )),
        }
    }

    /// The `InputRequiredResult` that asks the user to confirm.
    fn ask(
        &self,
        tool: &str,
        title: &str,
        request: &Map<String, Value>,
        fault: Option<Fault>,
    ) -> Answer {
        if fault == Some(Fault::MrtrEmptyInputRequired) {
            return Answer::result(json!({"resultType": "input_required"}));
        }
        let method = if fault == Some(Fault::MrtrBadInputKind) {
            "tools/list"
        } else {
            "elicitation/create"
        };
        let mut params = json!({
            "mode": "form",
            "message": format!("Buy {title}?"),
            "requestedSchema": {"type": "object",
                "properties": {KEY: {"type": "boolean", "title": "Buy it"}},
                "required": [KEY]}});
        if fault == Some(Fault::MrtrUrlUndeclared) {
            params = json!({"mode": "url", "message": format!("Buy {title}?"),
                "url": "https://bookshop.example/checkout", "elicitationId": "checkout-1"});
        }
        let mut asks = json!({KEY: {"method": method, "params": params}});
        if fault == Some(Fault::MrtrRepeatedKey) {
            // Written as KEY too (as_written): a second request of that name.
            asks[KEY_AGAIN] = json!({"method": "elicitation/create", "params": {
                "mode": "form", "message": "Gift-wrap it?",
                "requestedSchema": {"type": "object",
                    "properties": {"wrap": {"type": "boolean"}}, "required": ["wrap"]}}});
        }
        if let Some(draft) = sampling_fault(request, fault) {
            asks["blurb"] = draft;
        }
        let issued = now();
        Answer::result(json!({
            "resultType": "input_required",
            "inputRequests": asks,
            "requestState": format!("{issued}.{}", self.mac(tool, title, issued, fault)),
        }))
    }

    /// The MAC of a state issued at `issued` for a call of `tool` with `title`.
    fn mac(&self, tool: &str, title: &str, issued: u64, fault: Option<Fault>) -> String {
        // Under mrtr-state-unbound the title is left out: a state issued
        // for one book confirms any other.
        let title = if fault == Some(Fault::MrtrStateUnbound) {
            ""
        } else {
            title
        };
        let lane = |n: u8| self.keys.hash_one(("tools/call", tool, title, issued, n));
        format!("{:016x}{:016x}", lane(1), lane(2))
    }

    fn verify(&self, state: &str, tool: &str, title: &str, fault: Option<Fault>) -> bool {
        if fault == Some(Fault::MrtrStateUnverified) {
            return true;
        }
        let Some((issued, mac)) = state.split_once('.') else {
            return false;
        };
        let Ok(issued) = issued.parse::<u64>() else {
            return false;
        };
        // Equal strings of a fixed length; the comparison's timing is not
        // what this reference demonstrates.
        mac == self.mac(tool, title, issued, fault) && now().saturating_sub(issued) <= TTL_SECS
    }
}

/// basic/index#meta: -32021 naming the capability the request needs.
fn missing_capability(params: &Map<String, Value>, fault: Option<Fault>) -> Answer {
    let title = params
        .get("arguments")
        .and_then(|a| a.get("title"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    let message = "Server requires the elicitation capability for this request";
    match fault {
        Some(Fault::MissingCapabilityInternal) => {
            Answer::error(ErrorObject::new(codes::INTERNAL_ERROR, message))
        }
        Some(Fault::InputRequiredUndeclared) => Answer::result(json!({
            "resultType": "input_required",
            "inputRequests": {KEY: {"method": "elicitation/create", "params": {
                "mode": "form",
                "message": format!("Buy {title}?"),
                "requestedSchema": {"type": "object",
                    "properties": {KEY: {"type": "boolean"}}, "required": [KEY]}}}},
            "requestState": "mcperr-reference-confirm"})),
        _ => Answer::error(ErrorObject::with_data(
            codes::MISSING_CLIENT_CAPABILITY,
            message,
            json!({"requiredCapabilities": {"elicitation": {}}}),
        )),
    }
}

fn text(t: String) -> Answer {
    Answer::result(json!({"content": [{"type": "text", "text": t}], "isError": false}))
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Under `mrtr-sampling-tools` or `mrtr-sampling-context`, from a client
/// that declared sampling but not that part of it: a sampling input request
/// for a blurb ([`undeclared_blurb`]).
fn sampling_fault(request: &Map<String, Value>, fault: Option<Fault>) -> Option<Value> {
    let sampling = request
        .get("_meta")?
        .get(META_CLIENT_CAPABILITIES)?
        .get("sampling")?;
    let params = undeclared_blurb(
        sampling,
        fault == Some(Fault::MrtrSamplingTools),
        fault == Some(Fault::MrtrSamplingContext),
    )?;
    Some(json!({"method": "sampling/createMessage", "params": params}))
}

/// The params of a sampling request for a blurb of the book that uses what
/// the client's `sampling` capability left out: a tool offered to the model
/// (`tools`, when `sampling.tools` is undeclared) or all servers' context
/// (`context`, when `sampling.context` is). `None` when neither applies.
/// Shared by the faults of both eras (2025-11-25's own request: `asking`).
pub(crate) fn undeclared_blurb(sampling: &Value, tools: bool, context: bool) -> Option<Value> {
    let mut params = json!({"messages": [{"role": "user",
        "content": {"type": "text", "text": "Write a one-line blurb."}}], "maxTokens": 60});
    if tools && sampling.get("tools").is_none() {
        params["tools"] = json!([{"name": "get_author",
            "inputSchema": {"type": "object", "properties": {"title": {"type": "string"}}}}]);
    } else if context && sampling.get("context").is_none() {
        params["includeContext"] = "allServers".into();
    } else {
        return None;
    }
    Some(params)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(c: &Confirmations, extra: Value) -> Value {
        let mut p = json!({"name": "confirm_purchase", "arguments": {"title": "Dune"}});
        p.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        let a = c.call("confirm_purchase", p.as_object().unwrap(), None);
        match a.reply.unwrap() {
            Ok(v) => v,
            Err(e) => json!({"error": e.code}),
        }
    }

    #[test]
    fn a_confirmed_retry_buys_and_an_altered_state_is_refused() {
        let c = Confirmations::default();
        let first = call(&c, json!({}));
        assert_eq!(first["resultType"], "input_required");
        let state = first["requestState"].as_str().unwrap().to_string();
        let yes = json!({KEY: {"action": "accept", "content": {KEY: true}}});
        let bought = call(&c, json!({"requestState": state, "inputResponses": yes}));
        assert_eq!(bought["content"][0]["text"], "Bought Dune.");
        let mut altered = state.clone();
        let last = altered.pop().unwrap();
        altered.push(if last == '0' { '1' } else { '0' });
        let refused = call(&c, json!({"requestState": altered, "inputResponses": yes}));
        assert_eq!(refused["error"], codes::INVALID_PARAMS);
        let asked = call(&c, json!({"requestState": state, "inputResponses": {}}));
        assert_eq!(asked["resultType"], "input_required");
    }
}
