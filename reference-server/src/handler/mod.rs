//! The pure handler: one request in an established era → one [`Answer`].
//!
//! Era checks (the modern `_meta` envelope, unsupported versions) and method
//! dispatch live here; the rules of each area live in [`crate::tools`],
//! [`crate::resources`] and [`crate::prompts`], the list pages in
//! [`crate::pages`]. This is the
//! one place that joins those rules to the Bookshop's definitions
//! ([`crate::bookshop`]); nothing below it imports it.

use mcperr_protocol::era::{META_CLIENT_CAPABILITIES, META_LOG_LEVEL, META_PROTOCOL_VERSION};
use mcperr_protocol::{codes, Era, ErrorObject, Request};
use serde_json::{json, Value};

use crate::answer::Answer;
use crate::bookshop;
use crate::completion;
use crate::faults::Fault;
use crate::fixture::{FixtureState, PromptDef, TemplateDef};
use crate::mrtr::{self, Confirmations};
use crate::pages::Pager;
use crate::prompts;
use crate::resources;
use crate::tasks::Tasks;
use crate::tools::ToolSet;

/// The server's name in `serverInfo`.
pub const SERVER_NAME: &str = "mcperr-reference";

mod legacy_calls;
mod logging;

/// The reference server's state and fixture, shared by every connection.
pub struct Handler {
    shop: FixtureState,
    /// 2025-11-25's tools (with tasks) and 2026-07-28's (without).
    legacy_tools: ToolSet,
    modern_tools: ToolSet,
    tasks: Tasks,
    confirmations: Confirmations,
    pager: Pager,
    templates: Vec<TemplateDef>,
    prompts: Vec<PromptDef>,
    fault: Option<Fault>,
}

impl Handler {
    /// A server with the Bookshop fixture and at most one injected fault.
    pub fn new(fault: Option<Fault>) -> Self {
        Handler {
            shop: FixtureState::default(),
            legacy_tools: ToolSet::new(bookshop::tools(), true, fault),
            modern_tools: ToolSet::new(bookshop::tools(), false, fault),
            tasks: Tasks::default(),
            confirmations: Confirmations::default(),
            pager: Pager::default(),
            templates: bookshop::templates(),
            prompts: bookshop::prompts(),
            fault,
        }
    }

    /// The injected fault, if any.
    pub fn fault(&self) -> Option<Fault> {
        self.fault
    }

    /// Whether a stdio server exits at the end of its input
    /// (basic/transports/stdio#shutdown); not under `eof-ignored`. The stdio
    /// edge and the harness's in-process transport both ask this.
    pub fn exits_at_eof(&self) -> bool {
        self.fault != Some(Fault::EofIgnored)
    }

    /// The Bookshop state (for tests that look behind the wire).
    pub fn bookshop(&self) -> &FixtureState {
        &self.shop
    }

    fn capabilities(&self, era: Era) -> Value {
        let mut caps = json!({"tools": {"listChanged": false},
            "resources": {"subscribe": false, "listChanged": false},
            "prompts": {"listChanged": false}, "completions": {}, "logging": {}});
        if era == Era::Legacy && self.fault != Some(Fault::TasksUndeclared) {
            caps["tasks"] = json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}});
        }
        let undeclared = match self.fault {
            Some(Fault::UndeclaredTools) => Some("tools"),
            Some(Fault::UndeclaredResources) => Some("resources"),
            Some(Fault::UndeclaredPrompts) => Some("prompts"),
            Some(Fault::CompletionsUndeclared) => Some("completions"),
            Some(Fault::LogUndeclared) => Some("logging"),
            _ => None,
        };
        if let (Some(c), Some(caps)) = (undeclared, caps.as_object_mut()) {
            caps.remove(c);
        }
        caps
    }

    /// A list method's answer: the page of `items` its cursor names, under
    /// `key`, with the next page's cursor ([`crate::pages`]).
    fn listed(&self, method: &str, key: &str, items: Value, params: Option<&Value>) -> Answer {
        let items = match items {
            Value::Array(a) => a,
            other => vec![other],
        };
        let cursor = params.and_then(|p| p.get("cursor"));
        match self.pager.page(method, items, cursor, self.fault) {
            Ok((page, next)) => {
                let mut result = json!({ key: page });
                if let Some(next) = next {
                    result["nextCursor"] = next.into();
                }
                Answer::result(result)
            }
            Err(e) => Answer::error(e),
        }
    }

    fn server_info() -> Value {
        json!({"name": SERVER_NAME, "version": env!("CARGO_PKG_VERSION")})
    }

    /// Checks the modern `_meta` envelope of a request.
    fn check_envelope(params: Option<&Value>) -> Result<(), ErrorObject> {
        let meta = params.and_then(|p| p.get("_meta"));
        let version = meta.and_then(|m| m.get(META_PROTOCOL_VERSION));
        let Some(version) = version.and_then(Value::as_str) else {
            return Err(ErrorObject::new(
                codes::INVALID_PARAMS,
                format!(
                    "Invalid params: params._meta[\"{META_PROTOCOL_VERSION}\"] must be a string"
                ),
            ));
        };
        if !meta
            .and_then(|m| m.get(META_CLIENT_CAPABILITIES))
            .is_some_and(Value::is_object)
        {
            return Err(ErrorObject::new(
                codes::INVALID_PARAMS,
                format!("Invalid params: params._meta[\"{META_CLIENT_CAPABILITIES}\"] must be an object"),
            ));
        }
        if version != Era::Modern.version() {
            return Err(ErrorObject::with_data(
                codes::UNSUPPORTED_PROTOCOL_VERSION,
                format!("Unsupported protocol version: {version}"),
                json!({"supported": [Era::Modern.version()], "requested": version}),
            ));
        }
        Ok(())
    }

    fn tools(&self, era: Era) -> &ToolSet {
        match era {
            Era::Legacy => &self.legacy_tools,
            Era::Modern => &self.modern_tools,
        }
    }

    /// A 2025-11-25 `tools/call`: with a `task` param, run as a task where
    /// the tool allows it (a `CreateTaskResult`); -32601 for a task the
    /// tool forbids, or a plain call of a tool that requires one
    /// (basic/utilities/tasks#tool-level-negotiation). A call whose params
    /// are malformed, or that names no tool here, gets its own error.
    /// 2025-11-25: a task for a call that waits for input the server asks
    /// its client for: the `CreateTaskResult` and the task's id.
    pub fn create_waiting_task(&self, token: Option<Value>) -> (Answer, Value) {
        self.tasks.create_waiting(self.fault, token)
    }

    /// The input waiting task `id` asked for is in: its call's `result`.
    pub fn resolve_task(&self, id: &Value, result: Value) {
        self.tasks.resolve(id, result, self.fault);
    }

    /// Whether `method` is a request method this server answers in `era`.
    pub fn knows(era: Era, method: &str) -> bool {
        let common = matches!(
            method,
            "tools/list"
                | "tools/call"
                | "resources/list"
                | "resources/templates/list"
                | "resources/read"
                | "prompts/list"
                | "prompts/get"
                | "completion/complete"
        );
        common
            || match era {
                // 2026-07-28 has no `ping` (the Python SDK answers it -32601 there);
                // `server/discover` is the modern liveness probe.
                Era::Legacy => matches!(
                    method,
                    "initialize"
                        | "ping"
                        | "logging/setLevel"
                        | "tasks/get"
                        | "tasks/result"
                        | "tasks/cancel"
                        | "tasks/list"
                ),
                Era::Modern => method == "server/discover",
            }
    }

    /// Answers one request in `era`. Modern results carry `resultType: "complete"`.
    pub fn request(&self, era: Era, req: &Request) -> Answer {
        if era == Era::Legacy {
            self.tasks.tick();
        }
        let mut answer = self.dispatch(era, req);
        if era == Era::Modern {
            let asked = req
                .params
                .as_ref()
                .and_then(|p| p.get("_meta"))
                .and_then(|m| m.get(META_LOG_LEVEL))
                .and_then(Value::as_str)
                .or((self.fault == Some(Fault::LogUnasked)).then_some("debug"));
            let logs = self.log_messages(asked, req, &answer.logs);
            answer.notifications.splice(0..0, logs);
        }
        if era == Era::Modern {
            if let Some(Ok(Value::Object(result))) = &mut answer.reply {
                if self.fault != Some(Fault::NoResultType) {
                    result
                        .entry("resultType")
                        .or_insert_with(|| "complete".into());
                }
                // 2026-07-28's CacheableResult: discovery, the lists and reads
                // say how long they may be cached; this server's never change
                // between requests, but nothing is promised: 0 ms, private.
                let cacheable = matches!(
                    req.method.as_str(),
                    "server/discover"
                        | "tools/list"
                        | "resources/list"
                        | "resources/templates/list"
                        | "prompts/list"
                        | "resources/read"
                );
                if cacheable {
                    result.insert("ttlMs".into(), 0.into());
                    result.insert("cacheScope".into(), "private".into());
                }
            }
        }
        answer
    }

    /// Long by design: the method table of both eras, one arm per method,
    /// with the faults that bend a method written at its arm.
    fn dispatch(&self, era: Era, req: &Request) -> Answer {
        let params = req.params.as_ref();
        if self.fault == Some(Fault::BigIdEmptyResult) && beyond_double(&req.id) {
            // One wrong answer for every such id: the fan-out a campaign
            // must fold into one finding.
            return Answer::result(json!({}));
        }
        if !Self::knows(era, &req.method) {
            if self.fault == Some(Fault::UnknownMethodResult) {
                return Answer::result(json!({}));
            }
            let mut message = match self.fault {
                Some(Fault::Latin1Messages) => format!("Méthode inconnue: {}", req.method),
                _ => format!("Method not found: {}", req.method),
            };
            if self.fault == Some(Fault::VerboseErrorMessage) {
                message.push_str("\n  raised by Handler::dispatch (no route matched)");
            }
            let answer = Answer::error(ErrorObject::new(codes::METHOD_NOT_FOUND, message));
            if self.fault == Some(Fault::ExitAfterError) {
                return answer.then_exit();
            }
            return answer;
        }
        if era == Era::Modern && self.fault != Some(Fault::EnvelopeUnchecked) {
            if let Err(e) = Self::check_envelope(params) {
                return Answer::error(e);
            }
        }
        // 2026-07-28 asks for a log level per request, in _meta.
        let meta_level = params
            .and_then(|p| p.get("_meta"))
            .and_then(|m| m.get(META_LOG_LEVEL));
        if let Some(e) = meta_level.and_then(|l| self.unknown_log_level(l)) {
            return Answer::error(e);
        }
        let refused = match self.fault {
            Some(Fault::ToolsListRefused) => "tools/list",
            Some(Fault::ResourcesListRefused) => "resources/list",
            Some(Fault::PromptsListRefused) => "prompts/list",
            _ => "",
        };
        if req.method == refused {
            return Answer::error(ErrorObject::new(
                codes::INTERNAL_ERROR,
                format!("{refused} is unavailable"),
            ));
        }
        match req.method.as_str() {
            "initialize" => match params
                .and_then(|p| p.get("protocolVersion"))
                .and_then(Value::as_str)
            {
                Some(asked) => {
                    // The one version this server speaks with initialize,
                    // whatever was asked (basic/lifecycle#version-negotiation).
                    let version = match self.fault {
                        Some(Fault::InitializeOlderVersion) => "2025-06-18",
                        Some(Fault::InitializeEchoesVersion) => asked,
                        _ => Era::Legacy.version(),
                    };
                    let mut result = json!({
                        "protocolVersion": version,
                        "capabilities": self.capabilities(era),
                        "serverInfo": Self::server_info(),
                    });
                    if self.fault == Some(Fault::InitializeNoServerInfo) {
                        result.as_object_mut().map(|r| r.remove("serverInfo"));
                    }
                    Answer::result(result)
                }
                None => Answer::error(ErrorObject::new(
                    codes::INVALID_PARAMS,
                    "Invalid params: \"protocolVersion\" must be a string",
                )),
            },
            "server/discover" => {
                let mut result = json!({
                    "supportedVersions": [Era::Modern.version()],
                    "capabilities": self.capabilities(era),
                    "serverInfo": Self::server_info(),
                });
                if self.fault == Some(Fault::DiscoverIncomplete) {
                    result
                        .as_object_mut()
                        .map(|r| r.remove("supportedVersions"));
                }
                if self.fault == Some(Fault::InitializeOlderVersion) {
                    // It claims 2025-11-25 here, so its initialize answer
                    // of another version breaks the MUST (a server that
                    // supports only older versions may answer so).
                    result["supportedVersions"] =
                        json!([Era::Modern.version(), Era::Legacy.version()]);
                }
                Answer::result(result)
            }
            "ping" if self.fault == Some(Fault::PingNotEmpty) => {
                Answer::result(json!({"status": "ok"}))
            }
            "ping" => Answer::result(json!({})),
            // This server sends no log notifications, so any level is
            // already honoured; an unknown one is refused.
            "logging/setLevel" => match params.and_then(|p| p.get("level")) {
                Some(level) => self
                    .unknown_log_level(level)
                    .map_or_else(|| Answer::result(json!({})), Answer::error),
                None => Answer::error(ErrorObject::new(
                    codes::INVALID_PARAMS,
                    "Invalid params: \"level\" is required",
                )),
            },
            "tools/list"
                if self.fault == Some(Fault::MrtrListInputRequired)
                    && mrtr::declares_elicitation(params) =>
            {
                Answer::result(json!({"resultType": "input_required",
                    "requestState": "mcperr-reference-list"}))
            }
            "tools/list" => self.listed("tools/list", "tools", self.tools(era).list(), params),
            "tools/call" if era == Era::Legacy => self.call_tool_legacy(params),
            // Under extension-unnegotiated get_author runs as a task of the
            // Tasks extension, for a client that declared it or not.
            "tools/call"
                if self.fault == Some(Fault::ExtensionUnnegotiated)
                    && params.and_then(|p| p.get("name")) == Some(&json!("get_author")) =>
            {
                Answer::result(
                    json!({"resultType": "task", "task": {"taskId": "reference-unasked",
                    "status": "working", "createdAt": "2026-01-01T00:00:00Z",
                    "lastUpdatedAt": "2026-01-01T00:00:00Z", "ttl": 60000}}),
                )
            }
            // A valid call that needs a capability the client lacks: -32021;
            // with it, the multi-round-trip confirmation.
            "tools/call" => self
                .modern_tools
                .call_gated(&self.shop, self.fault, params, || {
                    let p = params.and_then(Value::as_object)?;
                    let name = p.get("name").and_then(Value::as_str)?;
                    (name == bookshop::NEEDS_ELICITATION)
                        .then(|| self.confirmations.answer(name, p, self.fault))
                }),
            "tasks/get" => self.tasks.get(params, self.fault),
            "tasks/result" => self.tasks.result(params, self.fault),
            "tasks/cancel" => self.tasks.cancel(params, self.fault),
            "tasks/list" => self.tasks.list(params, self.fault),
            "resources/list" => self.listed("resources/list", "resources", json!([]), params),
            "resources/templates/list" => self.listed(
                "resources/templates/list",
                "resourceTemplates",
                resources::list_templates(&self.templates),
                params,
            ),
            "resources/read" => resources::read(&self.templates, &self.shop, self.fault, params),
            "prompts/list" => self.listed(
                "prompts/list",
                "prompts",
                prompts::list(&self.prompts),
                params,
            ),
            "prompts/get" => prompts::get(&self.prompts, self.fault, params),
            "completion/complete" => completion::complete(
                &self.prompts,
                &self.templates,
                bookshop::suggest,
                self.fault,
                params,
            ),
            _ => unreachable!("`knows` admits only the methods above"),
        }
    }
}

/// Whether `id` is a number a double cannot hold exactly (beyond 2^53).
fn beyond_double(id: &mcperr_protocol::Id) -> bool {
    match id {
        mcperr_protocol::Id::Num(n) => n
            .as_u64()
            .map(|u| u > (1 << 53))
            .or_else(|| n.as_i64().map(|i| i.unsigned_abs() > (1 << 53)))
            .unwrap_or(false),
        mcperr_protocol::Id::Str(_) => false,
    }
}
