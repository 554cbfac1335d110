//! What the always-on checks need to know besides the exchange: the era,
//! the run's secrets, what the case sent before its request, and what the
//! server and the client declared. Built by the caller (a case's judgement,
//! the fuzz judge, the proxy).

use mcperr_protocol::Era;
use serde_json::Value;

/// What the invariants need to know besides the exchange.
#[derive(Debug, Clone, Default)]
pub struct Context<'a> {
    /// The era under test (for citations).
    pub era: Option<Era>,
    /// A secret planted in the request's crash input: it must not come back (J7).
    pub canary: Option<&'a str>,
    /// Malformed lines were sent before the request: id-null error answers to
    /// them are allowed (JSON-RPC 2.0 §5), and a death is J6's.
    pub sent_raw: bool,
    /// Notifications were sent before the request: an id-null answer is J3's.
    pub sent_notification: bool,
    /// The request was shaped to be rejected at the HTTP level (an `[http]`
    /// case): an id-null error with a 4xx status is its answer, and the case
    /// judges the status itself.
    pub http_rejection_expected: bool,
    /// Whether the server declared the `logging` capability, when known:
    /// a log message from one that did not breaks U8.
    pub logging_declared: Option<bool>,
    /// Whether the server declared `tasks.requests.tools.call`, when known:
    /// a `CreateTaskResult` from one that did not breaks K1.
    pub tool_tasks_declared: Option<bool>,
    /// The run's planted secret, which no log message may carry (U8
    /// `remove-sensitive`).
    pub planted: Option<&'a str>,
    /// The `subscriptions/listen` requests the case opened (U9); a server's
    /// `notifications/cancelled` naming one of them ends it, as it may.
    pub listens: &'a [Value],
    /// 2025-11-25: the client capabilities the connection's `initialize`
    /// declared, when known; the server's own requests and its -32042
    /// errors are judged against them (E1, L2 `respect-negotiation`).
    pub client_capabilities: Option<&'a Value>,
    /// The progress tokens of the case's task-augmented calls: their
    /// progress may come after their CreateTaskResult, until the task is
    /// terminal (U6 `task-token`, `task-stop-at-terminal`).
    pub task_tokens: &'a [Value],
    /// The ids of requests inside the malformed lines sent before the
    /// request: an answer with one of them answers that line.
    pub raw_ids: &'a [Value],
}
