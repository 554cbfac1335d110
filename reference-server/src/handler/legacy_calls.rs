//! 2025-11-25's `tools/call`: a task param checked against the tool's
//! `taskSupport`, the call run as a task or at once, and the purchase a
//! client was never asked to confirm (under its fault).

use mcperr_protocol::{codes, ErrorObject};
use serde_json::{json, Value};

use crate::answer::Answer;
use crate::bookshop;
use crate::faults::Fault;
use crate::fixture::TaskSupport;
use crate::tasks::{self};

use super::Handler;

impl Handler {
    pub(super) fn call_tool_legacy(&self, params: Option<&Value>) -> Answer {
        let task = match tasks::requested(params) {
            Ok(task) => task.is_some(),
            Err(e) => return Answer::error(e),
        };
        // Under unconfirmed-purchase a valid confirm_purchase from a client
        // that was never asked buys the book (a stdio client that declared
        // elicitation is asked first: crate::asking).
        let unconfirmed = || {
            let p = params?.as_object()?;
            let buys = self.fault == Some(Fault::UnconfirmedPurchase)
                && p.get("name")?.as_str()? == bookshop::NEEDS_ELICITATION;
            let title = p.get("arguments")?.get("title")?.as_str()?;
            buys.then(|| {
                Answer::result(json!({"content": [{"type": "text",
                    "text": format!("Bought {title}.")}], "isError": false}))
            })
        };
        let call = || {
            self.legacy_tools
                .call_gated(&self.shop, self.fault, params, unconfirmed)
        };
        let name = params.and_then(|p| p.get("name")).and_then(Value::as_str);
        let well_formed = matches!(
            params.and_then(|p| p.get("arguments")),
            None | Some(Value::Null | Value::Object(_))
        );
        let Some((name, support)) = name
            .and_then(|n| Some((n, self.legacy_tools.task_support(n)?)))
            .filter(|_| well_formed)
        else {
            return call();
        };
        let refuse = |why: String| {
            Answer::error(ErrorObject::new(
                codes::METHOD_NOT_FOUND,
                format!("Method not found: {why}"),
            ))
        };
        match (task, support) {
            (true, TaskSupport::Forbidden) if self.fault != Some(Fault::TaskForbiddenAccepted) => {
                refuse(format!("tool {name} cannot be called as a task"))
            }
            (false, TaskSupport::Required) if self.fault != Some(Fault::TaskRequiredAccepted) => {
                refuse(format!("tool {name} may only be called as a task"))
            }
            (true, _) => {
                let token = params
                    .and_then(|p| p.pointer("/_meta/progressToken"))
                    .cloned();
                self.tasks.create(call(), self.fault, token)
            }
            (false, _) => call(),
        }
    }
}
