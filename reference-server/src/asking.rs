//! 2025-11-25's `confirm_purchase` over stdio: the server asks the client
//! with a request of its own (client/elicitation), and answers the call
//! once the client answered.
//!
//! To a client whose `initialize` declared form-mode elicitation (an empty
//! `elicitation` object, or one with `form`) the call sends an
//! `elicitation/create` (one boolean, `confirm`) and is parked; the
//! client's response completes it: "Bought Dune." when the user accepted
//! with `confirm: true`, else not bought. A client that declared URL mode
//! only gets -32042 (`URLElicitationRequiredError`) listing one URL
//! elicitation, the shop's checkout page: "When a request cannot be
//! processed until an elicitation is completed". A client that declared no
//! elicitation is not asked (the tool's body says so). Over HTTP a
//! session's requests carry no stream to ask on, and are not parked.
//! Imports `faults` and `mrtr` (the blurb request of its sampling faults).

use mcperr_protocol::jsonrpc;
use mcperr_protocol::{codes, ErrorObject, Id};
use serde_json::{json, Value};

use crate::faults::Fault;

/// The key of the one field the confirmation asks for.
const KEY: &str = "confirm";

/// What a `tools/call` that asks leads to.
#[derive(Debug)]
pub enum Started {
    /// Requests of the server's own to send now; the call waits for them.
    Asked(Vec<Value>),
    /// The call's answer, at once (a -32042).
    Answered(Value),
}

/// A call waiting for the client's answer to the server's request `ask`.
#[derive(Debug, Clone)]
struct Parked {
    ask: Value,
    /// The call's id and the title, or `None` for a request whose answer
    /// nothing waits for (the sampling request under a fault).
    call: Option<(Id, String)>,
    /// The task the call runs as, when it was task-augmented: the answer
    /// completes the task instead of answering the call.
    task: Option<Value>,
}

/// What the client's answer to a request of the server's leads to.
#[derive(Debug, PartialEq)]
pub enum Resumed {
    /// The waiting call's response, to send.
    Answer(Value),
    /// The waiting task's id and its call's result, for the task store.
    Task(Value, Value),
    /// Nothing waited for it.
    Nothing,
}

/// One stdio connection's requests to its client, and the calls waiting.
#[derive(Debug, Clone, Default)]
pub struct Asking {
    /// The capabilities the connection's `initialize` declared.
    declared: Option<Value>,
    sent: u64,
    parked: Vec<Parked>,
}

impl Asking {
    /// Notes what an `initialize` declared.
    pub fn initialized(&mut self, params: Option<&Value>) {
        self.declared = params.and_then(|p| p.get("capabilities")).cloned();
    }

    /// Starts a 2025-11-25 `tools/call` of `confirm_purchase` with a title
    /// from a client that declared elicitation; `None` for any other call,
    /// which the handler answers.
    pub fn start(
        &mut self,
        id: &Id,
        params: Option<&Value>,
        fault: Option<Fault>,
    ) -> Option<Started> {
        let params = params?;
        if params.get("name").and_then(Value::as_str) != Some(crate::bookshop::NEEDS_ELICITATION) {
            return None;
        }
        let args = params.get("arguments")?.as_object()?;
        let title = match args.get("title") {
            Some(Value::String(t)) if args.len() == 1 => t.clone(),
            _ => return None,
        };
        let declared = self.declared.clone()?;
        let modes = declared.get("elicitation")?.as_object()?;
        let form = modes.contains_key("form") || modes.is_empty();
        let url = modes.contains_key("url");
        if url && (!form || fault == Some(Fault::UrlRequiredNeedless)) {
            return Some(Started::Answered(jsonrpc::failure(
                id,
                &self.url_required(&title, fault),
            )));
        }
        if !form {
            return None;
        }
        let mut asks = Vec::new();
        if let Some(blurb) = declared
            .get("sampling")
            .and_then(|s| sampling_fault(s, fault))
        {
            asks.push(self.park("sampling/createMessage", blurb, None));
        }
        let mut elicit = json!({
            "mode": "form",
            "message": format!("Buy {title}?"),
            "requestedSchema": {"type": "object",
                "properties": {KEY: {"type": "boolean", "title": "Buy it"}},
                "required": [KEY]}});
        if fault == Some(Fault::AskUrlUndeclared) && !url {
            elicit = json!({"mode": "url", "message": format!("Buy {title}?"),
                "url": "https://bookshop.example/checkout", "elicitationId": "checkout-1"});
        }
        asks.push(self.park("elicitation/create", elicit, Some((id.clone(), title))));
        Some(Started::Asked(asks))
    }

    /// The client answered the server's request `id`: what that resumes,
    /// or `None` for an id this connection never sent.
    pub fn resume(&mut self, id: &Id, outcome: &Result<Value, ErrorObject>) -> Option<Resumed> {
        let at = self.parked.iter().position(|p| p.ask == id.to_value())?;
        let parked = self.parked.remove(at);
        let Some((call, title)) = parked.call else {
            return Some(Resumed::Nothing);
        };
        let result = match outcome {
            Ok(r)
                if r.get("action") == Some(&json!("accept"))
                    && r.pointer("/content/confirm") == Some(&json!(true)) =>
            {
                text(format!("Bought {title}."), false)
            }
            Ok(_) => text(
                format!("The purchase of {title} was not confirmed; nothing was bought."),
                false,
            ),
            Err(e) => text(
                format!(
                    "Could not ask the user to confirm the purchase of {title}: {}",
                    e.message
                ),
                true,
            ),
        };
        Some(match parked.task {
            Some(task) => Resumed::Task(task, result),
            None => Resumed::Answer(jsonrpc::success(&call, result)),
        })
    }

    /// The call waiting on request `ask` runs as task `task`.
    pub fn bind_task(&mut self, ask: &Value, task: Value) {
        if let Some(p) = self.parked.iter_mut().find(|p| &p.ask == ask) {
            p.task = Some(task);
        }
    }

    /// A request of the server's own, parked until the client answers.
    fn park(&mut self, method: &str, params: Value, call: Option<(Id, String)>) -> Value {
        self.sent += 1;
        let ask = Value::String(format!("bookshop-ask-{}", self.sent));
        self.parked.push(Parked {
            ask: ask.clone(),
            call,
            task: None,
        });
        json!({"jsonrpc": "2.0", "id": ask, "method": method, "params": params})
    }

    /// The -32042 that sends the user to the shop's checkout page.
    fn url_required(&mut self, title: &str, fault: Option<Fault>) -> ErrorObject {
        self.sent += 1;
        let elicitation_id = format!("checkout-{}", self.sent);
        let page = json!({"mode": "url", "elicitationId": elicitation_id,
            "url": format!("https://bookshop.example/checkout?elicitationId={elicitation_id}"),
            "message": format!("Confirm buying {title} on the shop's page.")});
        let elicitations = match fault {
            Some(Fault::UrlRequiredEmpty) => json!([]),
            Some(Fault::UrlRequiredForm) => json!([{"mode": "form",
                "message": format!("Buy {title}?"),
                "requestedSchema": {"type": "object", "properties": {KEY: {"type": "boolean"}}}}]),
            _ => json!([page]),
        };
        let code = if fault == Some(Fault::UrlRequiredRecoded) {
            codes::INTERNAL_ERROR
        } else {
            codes::URL_ELICITATION_REQUIRED
        };
        ErrorObject::with_data(
            code,
            "This request requires the purchase to be confirmed on the shop's page.",
            json!({"elicitations": elicitations}),
        )
    }
}

/// A tool result of one text block.
fn text(t: String, is_error: bool) -> Value {
    json!({"content": [{"type": "text", "text": t}], "isError": is_error})
}

/// Under `ask-sampling-tools` or `ask-sampling-context`, to a client that
/// declared `sampling` but not that part of it: 2026-07-28's blurb request
/// ([`crate::mrtr::undeclared_blurb`]), sent as a request of the server's own.
fn sampling_fault(sampling: &Value, fault: Option<Fault>) -> Option<Value> {
    crate::mrtr::undeclared_blurb(
        sampling,
        fault == Some(Fault::AskSamplingTools),
        fault == Some(Fault::AskSamplingContext),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asking(capabilities: Value) -> Asking {
        let mut a = Asking::default();
        a.initialized(Some(&json!({"capabilities": capabilities})));
        a
    }

    fn call() -> Value {
        json!({"name": "confirm_purchase", "arguments": {"title": "Dune"}})
    }

    #[test]
    fn a_form_client_is_asked_and_its_acceptance_completes_the_purchase() {
        let mut a = asking(json!({"elicitation": {}}));
        let Some(Started::Asked(asks)) = a.start(&Id::from(7), Some(&call()), None) else {
            panic!("not asked")
        };
        assert_eq!(asks.len(), 1);
        assert_eq!(asks[0]["method"], "elicitation/create");
        let ask = Id::from(asks[0]["id"].as_str().unwrap());
        let accepted = json!({"action": "accept", "content": {"confirm": true}});
        let Some(Resumed::Answer(done)) = a.resume(&ask, &Ok(accepted)) else {
            panic!("the call was not answered")
        };
        assert_eq!(done["id"], 7);
        assert_eq!(done["result"]["content"][0]["text"], "Bought Dune.");
        assert_eq!(a.resume(&ask, &Ok(json!({}))), None, "answered once");
    }

    #[test]
    fn a_url_only_client_gets_32042_and_a_client_without_elicitation_is_not_asked() {
        let mut a = asking(json!({"elicitation": {"url": {}}}));
        let Some(Started::Answered(r)) = a.start(&Id::from(1), Some(&call()), None) else {
            panic!("not answered")
        };
        assert_eq!(r["error"]["code"], -32042);
        assert_eq!(r["error"]["data"]["elicitations"][0]["mode"], "url");
        assert!(asking(json!({}))
            .start(&Id::from(1), Some(&call()), None)
            .is_none());
        let other = json!({"name": "get_author", "arguments": {"title": "Dune"}});
        let mut both = asking(json!({"elicitation": {"form": {}, "url": {}}}));
        assert!(both.start(&Id::from(1), Some(&other), None).is_none());
        assert!(matches!(
            both.start(&Id::from(1), Some(&call()), None),
            Some(Started::Asked(_))
        ));
    }
}
