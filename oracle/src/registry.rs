//! The registry of the always-on checks: each is one [`Invariant`] that
//! names itself, the aspects it judges, and the function it runs; listed
//! once, in [`INVARIANTS`], in the order their violations decide a verdict.
//! [`super::invariants::invariants`] runs the list; the test that every
//! aspect of the table is used reads their `judges`.
//!
//! Why a list: a case, a fuzz input and a proxied message are all judged by
//! these same checks, and a new one is an entry here (or a function added to
//! a concern module an entry already runs), not a call threaded through
//! [`super::invariants`]. A debug build asserts that an invariant reports
//! only the aspects it declares, so the declarations stay true.

use mcperr_protocol::Era;
use serde_json::{json, Value};

use super::context::Context;
use crate::Violation;
use mcperr_model::rules::AspectId;
use mcperr_wire::exchange::{Ending, Exchange};

/// What every invariant reads: the exchange, its context, the answer to
/// judge when there is one, and what the framing check found in it.
pub struct Seen<'a> {
    /// The exchange judged.
    pub exchange: &'a Exchange,
    /// What the caller knows besides it.
    pub ctx: &'a Context<'a>,
    /// The answer (or the answer with a wrong id); `None` when none came.
    pub response: Option<&'a Value>,
    /// What breaks the answer's JSON-RPC framing (J1), found once.
    framing: Vec<(AspectId, String)>,
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
        let framing = response.map_or_else(Vec::new, |response| {
            let rejected = ctx.http_rejection_expected
                && exchange.http.as_ref().is_some_and(|a| a.status >= 400)
                && response.get("id").is_none_or(Value::is_null);
            if rejected {
                crate::framing::framing(response, &json!({"id": null}))
            } else {
                crate::framing::framing(response, &exchange.request)
            }
        });
        Seen {
            exchange,
            ctx,
            response,
            framing,
        }
    }

    /// The answer when its framing holds: what the checks of its shape read.
    fn framed(&self) -> Option<&'a Value> {
        self.response.filter(|_| self.framing.is_empty())
    }

    /// The framed answer of a request not shaped to be rejected at the
    /// HTTP level (whose answer may come from another era's routing).
    fn framed_for_shape(&self) -> Option<&'a Value> {
        self.framed().filter(|_| !self.ctx.http_rejection_expected)
    }

    /// The request's own message.
    fn request(&self) -> &'a Value {
        &self.exchange.request
    }
}

/// One always-on check.
pub struct Invariant {
    /// What it judges, for a reader (and the debug assertion's message).
    pub name: &'static str,
    /// The aspects its violations name, and no other.
    pub judges: &'static [AspectId],
    /// The check itself.
    pub run: fn(&Seen) -> Vec<Violation>,
}

/// Every always-on check, in the order its violations decide a verdict:
/// what the server wrote beside the answer first, then the missing answer,
/// then the answer's framing, shape, status, codes, leaks and rows.
pub const INVARIANTS: &[Invariant] = &[
    Invariant {
        name: "stray output",
        judges: &[
            AspectId::H3SseNoRequests,
            AspectId::H3SseRelated,
            AspectId::J1ErrorId,
            AspectId::J1IdType,
            AspectId::J1Main,
            AspectId::J1NotificationNoId,
            AspectId::J1ServerRequestIdNotNull,
            AspectId::J1ServerRequestIdType,
            AspectId::J1ServerRequestIdUnique,
            AspectId::J1Utf8,
            AspectId::J3CannotAcceptErrorStatus,
            AspectId::J3Http202,
            AspectId::J3Main,
            AspectId::J5Main,
            AspectId::J5NoEmbeddedNewlines,
            AspectId::J5NoRequests,
            AspectId::J7SecretInLog,
            AspectId::K1StatusNotificationNoRelatedTask,
            AspectId::M1InputRequestKeysUnique,
            AspectId::U6ActiveTokens,
            AspectId::U6Main,
            AspectId::U6StopAfterCompletion,
            AspectId::U6TaskStopAtTerminal,
            AspectId::U6TaskToken,
            AspectId::U7ServerSendsNoCancel,
            AspectId::U8Main,
            AspectId::U8OnlyWhenRequested,
            AspectId::U8RemoveSensitive,
        ],
        run: |s| super::strays::strays(s.exchange, s.ctx),
    },
    Invariant {
        name: "subscription messages",
        judges: &[
            AspectId::U8RequestScoped,
            AspectId::U9Main,
            AspectId::U9OnlyRequested,
            AspectId::U9SubscriptionId,
        ],
        run: |s| super::subscriptions::strays(&s.exchange.strays, s.ctx.listens, s.ctx.era),
    },
    Invariant {
        name: "rising progress",
        judges: &[AspectId::U6Main],
        run: |s| super::strays::progress(s.exchange).into_iter().collect(),
    },
    Invariant {
        name: "the server's own requests",
        judges: &[
            AspectId::E1Main,
            AspectId::E1SamplingContextDeclared,
            AspectId::E1SamplingToolsDeclared,
            AspectId::E1UrlRequiredLists,
            AspectId::E1UrlRequiredUrlMode,
            AspectId::K1InputRelatedTask,
            AspectId::K1InputSharesTaskId,
            AspectId::L2RespectNegotiation,
        ],
        run: |s| match (s.ctx.era, s.ctx.client_capabilities) {
            (Some(Era::Legacy), Some(declared)) => {
                super::server_asks::judge(&s.exchange.strays, s.response, s.request(), declared)
            }
            _ => Vec::new(),
        },
    },
    Invariant {
        name: "no answer",
        judges: &[
            AspectId::H1SingleEndpoint,
            AspectId::H3Main,
            AspectId::H3SseIncludesResponse,
            AspectId::J1Main,
            AspectId::J4Main,
            AspectId::J6Main,
        ],
        run: |s| {
            super::answer_checks::unanswered(&s.exchange.ending, s.exchange, s.ctx)
                .into_iter()
                .collect()
        },
    },
    Invariant {
        name: "framing",
        judges: &[
            AspectId::J1ErrorFields,
            AspectId::J1ErrorId,
            AspectId::J1FollowsJsonrpc,
            AspectId::J1HasResult,
            AspectId::J1IdType,
            AspectId::J1IntegerCode,
            AspectId::J1JsonrpcVersion,
            AspectId::J1NotBoth,
        ],
        run: |s| {
            s.framing
                .iter()
                .map(|(aspect, why)| Violation::new(*aspect, why.clone()))
                .collect()
        },
    },
    Invariant {
        name: "result shape",
        judges: &[AspectId::J1ResultType, AspectId::J1ResultShape],
        run: |s| match s.framed_for_shape() {
            Some(response) => super::answer_checks::result_shape(s.exchange, response, s.ctx.era),
            None => Vec::new(),
        },
    },
    Invariant {
        name: "concise message",
        judges: &[AspectId::J1MessageConcise],
        run: |s| {
            s.response
                .and_then(|r| super::messages::wordy_message(r, s.request()))
                .map(|why| Violation::new(AspectId::J1MessageConcise, why).late())
                .into_iter()
                .collect()
        },
    },
    Invariant {
        name: "HTTP status",
        judges: &[
            AspectId::H3SseTerminates,
            AspectId::L3Http400,
            AspectId::H3ErrorStatus,
        ],
        run: |s| match s.response {
            Some(response) => super::answer_checks::http_answer(s.exchange, response, s.ctx),
            None => Vec::new(),
        },
    },
    Invariant {
        name: "input requests",
        judges: &[
            AspectId::L3NoUndeclaredInputRequests,
            AspectId::M1ElicitationModesDeclared,
            AspectId::M1InputRequestTypes,
            AspectId::M1InputRequiredNonempty,
            AspectId::M1OnlySupportedRequests,
            AspectId::M1SamplingContextDeclared,
            AspectId::M1SamplingToolsDeclared,
        ],
        run: |s| match s.response {
            Some(response) => super::mrtr::input_required_answer(response, s.request()),
            None => Vec::new(),
        },
    },
    Invariant {
        name: "unnegotiated extensions",
        judges: &[AspectId::L1ExtensionFallback],
        run: |s| match (s.response, s.ctx.era) {
            (Some(response), Some(Era::Modern)) => {
                super::extensions::unnegotiated(response, s.request())
                    .into_iter()
                    .collect()
            }
            _ => Vec::new(),
        },
    },
    Invariant {
        name: "error code ranges",
        judges: &[
            AspectId::J1LegacyRangeCode,
            AspectId::J1McpRangeDefinedOnly,
            AspectId::J1No32042,
            AspectId::J1ReservedCode,
        ],
        run: |s| {
            s.response
                .and_then(|r| super::codes::code_range(r, s.request(), s.ctx.era))
                .into_iter()
                .collect()
        },
    },
    Invariant {
        name: "task answers",
        judges: &[
            AspectId::K1BeginWorking,
            AspectId::K1CancelTransition,
            AspectId::K1CreateTaskResult,
            AspectId::K1CreatedAt,
            AspectId::K1DeclareCapability,
            AspectId::K1IdString,
            AspectId::K1LastUpdatedAt,
            AspectId::K1NoRelatedTaskOnResults,
            AspectId::K1NoSseOnGet,
            AspectId::K1ResultRelatedTask,
            AspectId::K1TaskidAuthoritative,
            AspectId::K1TtlInGet,
        ],
        run: |s| match s.framed() {
            Some(_) => {
                let mut out = super::tasks::task_answers(s.exchange, s.ctx.era);
                out.extend(super::tasks::undeclared_tasks(
                    s.exchange,
                    s.ctx.tool_tasks_declared,
                ));
                out
            }
            None => Vec::new(),
        },
    },
    Invariant {
        name: "leaks",
        judges: &[
            AspectId::J7Main,
            AspectId::J7SecretInResult,
            AspectId::J7SecretInToolError,
        ],
        run: |s| {
            s.response
                .and_then(|r| super::leaks::leak_or_secret(r, s.request(), s.ctx.canary))
                .map(Violation::late)
                .into_iter()
                .collect()
        },
    },
    Invariant {
        name: "error model rows",
        judges: &[AspectId::T1NoStructuredContent, AspectId::R1DataUri],
        run: |s| match s.framed_for_shape() {
            Some(response) => super::rows::seen(response, s.request()),
            None => Vec::new(),
        },
    },
];
