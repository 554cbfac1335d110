//! One connection's view: raw bytes in, at most one response out.
//!
//! A stdio connection locks its era on its first request, as the MCP Python
//! SDK does: `initialize` first means 2025-11-25, anything else 2026-07-28.
//! Response ids are built here, so the id faults live here too.

use mcperr_protocol::jsonrpc::{self, Message, ParseError, Request};
use mcperr_protocol::ErrorObject;
use mcperr_protocol::{Era, Id};
use serde_json::{json, Value};

use crate::asking::{Asking, Resumed, Started};
use crate::faults::Fault;
use crate::handler::Handler;
use crate::log::LogRecord;
use crate::subscriptions::Subscriptions;

/// What an edge must do after one incoming message.
#[derive(Debug, Default)]
pub struct Outcome {
    /// The response to send, if any.
    pub response: Option<Value>,
    /// Log records to write.
    pub logs: Vec<LogRecord>,
    /// The process should exit after sending the response (fault injection).
    pub exit_after: bool,
    /// The method of the request answered, if the message was one.
    pub method: Option<String>,
    /// Steps of work before `response` may go out (a slow tool); the edge
    /// paces them with [`crate::work::Work`].
    pub steps: u32,
    /// The request's `_meta.progressToken`, when it asked for progress.
    pub progress_token: Option<Value>,
    /// The `requestId` a `notifications/cancelled` named.
    pub cancels: Option<Value>,
    /// Notifications for the client, sent before the response.
    pub notifications: Vec<Value>,
}

/// A connection whose era is fixed by its first request.
#[derive(Debug, Clone)]
pub struct Session {
    era: Option<Era>,
    /// Under `cancel-misapplied`: a cancellation of no running request
    /// arrived, and the next request takes it for its own.
    stray_cancel: bool,
    /// 2025-11-25: the level logging/setLevel set, from which on log
    /// messages go to the client too.
    log_level: Option<String>,
    /// A stdio connection's subscriptions (2026-07-28); `None` for one HTTP
    /// request, which has no stream to keep open.
    subscriptions: Option<Subscriptions>,
    /// A stdio connection's requests to its client (2025-11-25's
    /// `confirm_purchase`); `None` for one HTTP request.
    asking: Option<Box<Asking>>,
}

impl Default for Session {
    /// A stdio connection: no era yet, subscriptions possible.
    fn default() -> Self {
        Session {
            era: None,
            stray_cancel: false,
            log_level: None,
            subscriptions: Some(Subscriptions::default()),
            asking: Some(Box::default()),
        }
    }
}

impl Session {
    /// A connection that has not seen a request yet.
    pub fn new() -> Self {
        Session::default()
    }

    /// One HTTP request's connection, pinned to an era (the era comes from
    /// the headers); it keeps no subscriptions.
    pub fn pinned(era: Era) -> Self {
        Session {
            era: Some(era),
            subscriptions: None,
            asking: None,
            ..Session::default()
        }
    }

    /// A cancellation the edge matched to running work (a slow call) is not
    /// a stray one: under `cancel-misapplied` the next request keeps its answer.
    pub fn cancel_matched(&mut self) {
        self.stray_cancel = false;
    }

    /// The era, once the first request fixed it.
    pub fn era(&self) -> Option<Era> {
        self.era
    }

    /// Handles one message's bytes. Input that is not one JSON-RPC message is
    /// dropped with a log line (stdio has no way to answer it reliably).
    pub fn handle_bytes(&mut self, handler: &Handler, bytes: &[u8]) -> Outcome {
        match Message::parse(bytes) {
            Ok(message) => self.handle(handler, message),
            Err(e) => Outcome {
                logs: vec![LogRecord::warn(format!(
                    "dropping input that is not one JSON-RPC message: {e}"
                ))],
                exit_after: matches!(e, ParseError::NotJson(_))
                    && handler.fault() == Some(Fault::GarbageKills),
                ..Outcome::default()
            },
        }
    }

    /// Handles one parsed message.
    pub fn handle(&mut self, handler: &Handler, message: Message) -> Outcome {
        match message {
            Message::Notification { method, params } => {
                self.notification(handler, &method, params.as_ref())
            }
            Message::Response { id, outcome } => self.response(handler, id.as_ref(), &outcome),
            Message::Request(req) => self.request(handler, &req),
        }
    }

    /// A notification of the client's: a cancellation ends its
    /// subscription; nothing is answered (unless a fault answers it).
    fn notification(&mut self, handler: &Handler, method: &str, params: Option<&Value>) -> Outcome {
        let fault = handler.fault();
        let cancels = (method == "notifications/cancelled")
            .then(|| params?.get("requestId").cloned())
            .flatten();
        if let (Some(subs), Some(id)) = (&mut self.subscriptions, &cancels) {
            subs.cancel(id);
        }
        // Under cancel-misapplied, a cancellation of no running
        // request is taken by the next request (the edge knows
        // which are running; this one treats them all as finished).
        self.stray_cancel |=
            method == "notifications/cancelled" && fault == Some(Fault::CancelMisapplied);
        Outcome {
            response: (fault == Some(Fault::NotificationAnswered))
                .then(|| json!({"jsonrpc": "2.0", "id": null, "result": {}})),
            logs: if method.starts_with("notifications/") {
                vec![]
            } else {
                vec![LogRecord::info(format!(
                    "ignoring unknown notification {method}"
                ))]
            },
            cancels,
            ..Outcome::default()
        }
    }

    /// The client's answer to a request of the server's (an elicitation):
    /// it resumes the call or task that asked.
    fn response(
        &mut self,
        handler: &Handler,
        id: Option<&Id>,
        outcome: &Result<Value, ErrorObject>,
    ) -> Outcome {
        let resumed = match (&mut self.asking, id) {
            (Some(asking), Some(id)) => asking.resume(id, outcome),
            _ => None,
        };
        match resumed {
            Some(Resumed::Answer(response)) => Outcome {
                response: Some(response),
                ..Outcome::default()
            },
            Some(Resumed::Task(task, result)) => {
                handler.resolve_task(&task, result);
                Outcome::default()
            }
            Some(Resumed::Nothing) => Outcome::default(),
            None => Outcome {
                logs: vec![LogRecord::warn(
                    "dropping a response to no request this server sent",
                )],
                ..Outcome::default()
            },
        }
    }

    /// A request: the era is fixed by the first one; a 2026-07-28
    /// `subscriptions/listen` and a 2025-11-25 call that asks the client
    /// first are the connection's own, every other request the handler's.
    fn request(&mut self, handler: &Handler, req: &Request) -> Outcome {
        let fault = handler.fault();
        // Under initialize-refused-unnamed the server is modern only.
        let legacy = req.method == "initialize" && fault != Some(Fault::InitializeRefusedUnnamed);
        let era = *self
            .era
            .get_or_insert(if legacy { Era::Legacy } else { Era::Modern });
        if let (Era::Modern, Some(subs), "subscriptions/listen") =
            (era, &mut self.subscriptions, req.method.as_str())
        {
            return match subs.listen(&req.id.to_value(), req.params.as_ref(), fault) {
                Ok(notifications) => Outcome {
                    method: Some(req.method.clone()),
                    notifications,
                    ..Outcome::default()
                },
                Err(e) => Outcome {
                    method: Some(req.method.clone()),
                    response: Some(jsonrpc::failure(&req.id, &e)),
                    ..Outcome::default()
                },
            };
        }
        if era == Era::Legacy {
            if let Some(outcome) = self.ask_first(handler, req) {
                return outcome;
            }
        }
        let mut answer = if std::mem::take(&mut self.stray_cancel) {
            crate::answer::Answer::error(mcperr_protocol::ErrorObject::new(
                mcperr_protocol::codes::Code::REQUEST_CANCELLED,
                "Request cancelled",
            ))
        } else {
            handler.request(era, req)
        };
        if req.method == "initialize" && fault == Some(Fault::RequestsBeforeInitialized) {
            answer.notifications.push(jsonrpc::request(
                &Id::Str("reference-roots-1".into()),
                "roots/list",
                None,
            ));
        }
        if let (Era::Modern, Some(subs)) = (era, &mut self.subscriptions) {
            streams(subs, req, &mut answer, fault);
        }
        if era == Era::Legacy {
            self.log_to(handler, req, &mut answer);
        }
        answered(req, answer, fault)
    }

    /// 2025-11-25: a `tools/call` that asks the client first (an
    /// elicitation) is answered by the connection, as a task's creation
    /// when task-augmented; `None` when the handler answers the request.
    fn ask_first(&mut self, handler: &Handler, req: &Request) -> Option<Outcome> {
        let fault = handler.fault();
        let asking = self.asking.as_mut()?;
        if req.method == "initialize" {
            asking.initialized(req.params.as_ref());
        }
        // A malformed task param is the handler's to refuse (-32602).
        let task_param = req.params.as_ref().and_then(|p| p.get("task"));
        let malformed_task = task_param.is_some_and(|t| !t.is_object());
        let started = (req.method == "tools/call" && !self.stray_cancel && !malformed_task)
            .then(|| asking.start(&req.id, req.params.as_ref(), fault))
            .flatten();
        let tasked = task_param.is_some();
        let method = Some(req.method.clone());
        match started? {
            Started::Asked(mut asks) if tasked => {
                let token = req
                    .params
                    .as_ref()
                    .and_then(|p| p.pointer("/_meta/progressToken"))
                    .cloned();
                let (created, task) = handler.create_waiting_task(token);
                if task.is_null() {
                    // No task (the store is full): its refusal,
                    // and nothing asked for it.
                    asks.clear();
                }
                if let Some(elicit) = asks.last_mut() {
                    asking.bind_task(&elicit["id"], task.clone());
                    let named = match fault {
                        Some(Fault::TaskInputOtherId) => json!("task-0"),
                        _ => task,
                    };
                    if fault != Some(Fault::TaskInputUnrelated) {
                        elicit["params"]["_meta"] = json!({
                            crate::tasks::RELATED_TASK: {"taskId": named}});
                    }
                }
                Some(Outcome {
                    method,
                    notifications: asks,
                    response: created.reply.map(|reply| match reply {
                        Ok(result) => jsonrpc::success(&req.id, result),
                        Err(error) => jsonrpc::failure(&req.id, &error),
                    }),
                    ..Outcome::default()
                })
            }
            Started::Asked(asks) => Some(Outcome {
                method,
                notifications: asks,
                ..Outcome::default()
            }),
            Started::Answered(response) => Some(Outcome {
                method,
                response: Some(response),
                ..Outcome::default()
            }),
        }
    }

    /// 2025-11-25 logging: a successful `logging/setLevel` sets the
    /// connection's level, and the answer's log records at or above it go
    /// out before the response.
    fn log_to(&mut self, handler: &Handler, req: &Request, answer: &mut crate::answer::Answer) {
        let set = req.method == "logging/setLevel" && matches!(answer.reply, Some(Ok(_)));
        if set {
            self.log_level = req
                .params
                .as_ref()
                .and_then(|p| p.get("level"))
                .and_then(Value::as_str)
                .map(str::to_string);
        }
        let logs = handler.log_messages(self.log_level.as_deref(), req, &answer.logs);
        answer.notifications.splice(0..0, logs);
    }
}

/// The outcome of a request the handler answered: its response under the
/// id the fault may change, its notifications, and the paced steps of a
/// call that asked for progress.
fn answered(req: &Request, answer: crate::answer::Answer, fault: Option<Fault>) -> Outcome {
    let id = respond_id(&req.id, fault);
    let progress_token = req
        .params
        .as_ref()
        .and_then(|p| p.pointer("/_meta/progressToken"))
        .cloned();
    Outcome {
        method: Some(req.method.clone()),
        // Work is paced only for a call that asked for progress:
        // one that did not (a fuzzed valid call) is answered at once.
        steps: if progress_token.is_some() {
            answer.steps
        } else {
            0
        },
        progress_token,
        cancels: None,
        notifications: answer.notifications,
        response: answer.reply.map(|reply| match reply {
            Ok(result) => jsonrpc::success(&id, result),
            Err(error) => jsonrpc::failure(&id, &error),
        }),
        logs: answer.logs,
        exit_after: answer.exit_after,
    }
}

/// What a stdio connection's subscriptions add to `answer`: that the server
/// takes them (`resources.subscribe` in `server/discover`), and the
/// messages a successful `restock` or `close_shop` sends them, before the
/// call's own response.
fn streams(
    subs: &mut Subscriptions,
    req: &mcperr_protocol::jsonrpc::Request,
    answer: &mut crate::answer::Answer,
    fault: Option<Fault>,
) {
    let Some(Ok(result)) = &mut answer.reply else {
        return;
    };
    if req.method == "server/discover" {
        if let Some(r) = result.pointer_mut("/capabilities/resources") {
            r["subscribe"] = true.into();
        }
        return;
    }
    if req.method != "tools/call" || result.get("isError") == Some(&Value::Bool(true)) {
        return;
    }
    let params = req.params.as_ref();
    let tool = params.and_then(|p| p.get("name")).and_then(Value::as_str);
    let title = params
        .and_then(|p| p.pointer("/arguments/title"))
        .and_then(Value::as_str);
    let sent = match (tool, title) {
        (Some(crate::bookshop::RESTOCK), Some(title)) => {
            subs.restocked(&crate::bookshop::book_uri(title), fault)
        }
        (Some(crate::bookshop::CLOSE_SHOP), _) => subs.close_all(fault),
        _ => return,
    };
    answer.notifications.extend(sent);
}

/// The id a response carries: the request's own, unless an id fault is on.
fn respond_id(id: &Id, fault: Option<Fault>) -> Id {
    match (fault, id) {
        (Some(Fault::WrongId), Id::Num(n)) => {
            Id::Num((n.as_i64().unwrap_or(0).wrapping_add(1)).into())
        }
        (Some(Fault::WrongId), Id::Str(s)) => Id::Str(format!("{s}-x")),
        (Some(Fault::WrongIdAbove31), Id::Num(n))
            if n.as_i64().is_none_or(|v| i32::try_from(v).is_err()) =>
        {
            // As a server that keeps ids in an i32 would: the low 32 bits.
            let low = n.as_u64().or_else(|| n.as_i64().map(|v| v as u64));
            Id::Num((low.unwrap_or(0) as u32 as i32).into())
        }
        (Some(Fault::IdSignDropped), Id::Num(n)) if n.as_i64().is_some_and(|v| v <= -100) => {
            // As a server that reads ids into an unsigned integer would.
            Id::Num(n.as_i64().unwrap_or(0).unsigned_abs().into())
        }
        (Some(Fault::IdTypeChanged), Id::Num(n)) => Id::Str(n.to_string()),
        (Some(Fault::IdTypeChanged), Id::Str(s)) => match s.parse::<i64>() {
            Ok(n) => Id::Num(n.into()),
            Err(_) => Id::Num(0.into()),
        },
        _ => id.clone(),
    }
}
