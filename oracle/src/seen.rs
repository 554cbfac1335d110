//! What every always-on check reads ([`Seen`]): the exchange, its context,
//! the answer, and its framing judged once. Its own module, below the
//! registry and the concern modules whose checks read it, so that neither
//! imports the other.

use serde_json::{json, Value};

use super::context::Context;
use mcperr_model::rules::AspectId;
use mcperr_wire::exchange::{Ending, Exchange};

/// What every invariant reads, each part found once: the exchange, its
/// context, the request, the answer to judge when there is one, and what
/// the framing check found in it.
pub struct Seen<'a> {
    /// The exchange judged.
    pub exchange: &'a Exchange,
    /// What the caller knows besides it.
    pub ctx: &'a Context<'a>,
    /// The request's own message.
    pub request: &'a Value,
    /// The answer (or the answer with a wrong id); `None` when none came.
    pub response: Option<&'a Value>,
    /// The answer when its framing holds: what the checks of its shape read.
    pub framed: Option<&'a Value>,
    /// The framed answer of a request not shaped to be rejected at the
    /// HTTP level (whose answer may come from another era's routing).
    pub framed_for_shape: Option<&'a Value>,
    /// What breaks the answer's JSON-RPC framing (J1).
    pub framing: Vec<(AspectId, String)>,
}

impl<'a> Seen<'a> {
    /// Reads `exchange` once for every invariant. An HTTP rejection's error
    /// may leave the id out or make it null, so its framing is judged
    /// against a null id.
    pub fn new(exchange: &'a Exchange, ctx: &'a Context<'a>) -> Self {
        let response = match &exchange.ending {
            Ending::Answered(v) | Ending::WrongId(v) => Some(v),
            _ => None,
        };
        let framing = match response {
            None => Vec::new(),
            Some(response) => {
                let rejected = ctx.http_rejection_expected
                    && exchange.http.as_ref().is_some_and(|a| a.status >= 400)
                    && response.get("id").is_none_or(Value::is_null);
                let request = if rejected {
                    &json!({"id": null})
                } else {
                    &exchange.request
                };
                crate::framing::framing(response, request)
            }
        };
        let framed = if framing.is_empty() { response } else { None };
        Seen {
            exchange,
            ctx,
            request: &exchange.request,
            response,
            framed,
            framed_for_shape: if ctx.http_rejection_expected {
                None
            } else {
                framed
            },
            framing,
        }
    }
}
