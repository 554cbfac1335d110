//! The registry of the always-on checks: each is one [`Invariant`] that
//! names itself, the aspects it judges, and the function it runs; listed
//! once, in [`INVARIANTS`], in the order their violations decide a verdict.
//! The function lives in its concern's module, beside the checks it calls
//! (what of the exchange it reads is part of the check), so judging an
//! answer walks from one concern to the next without coming back here.
//! [`super::invariants::invariants`] runs the list; the test that every
//! aspect of the table is used reads their `judges`.
//!
//! Why a list: a case, a fuzz input and a proxied message are all judged by
//! these same checks, and a new one is an entry here (or a function added to
//! a concern module an entry already runs), not a call threaded through
//! [`super::invariants`]. A debug build asserts that an invariant reports
//! only the aspects it declares, so the declarations stay true.

pub use crate::seen::Seen;
use crate::Violation;
use mcperr_model::rules::AspectId;

/// The framing entry: what [`Seen::new`] found once in the answer's framing.
fn framing_found(s: &Seen) -> Vec<Violation> {
    s.framing
        .iter()
        .map(|(aspect, why)| Violation::new(*aspect, why.clone()))
        .collect()
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
        run: super::strays::stray_output,
    },
    Invariant {
        name: "subscription messages",
        judges: &[
            AspectId::U8RequestScoped,
            AspectId::U9Main,
            AspectId::U9OnlyRequested,
            AspectId::U9SubscriptionId,
        ],
        run: super::subscriptions::subscription_messages,
    },
    Invariant {
        name: "rising progress",
        judges: &[AspectId::U6Main],
        run: super::strays::rising_progress,
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
        run: super::server_asks::servers_own_requests,
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
        run: super::answer_checks::no_answer,
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
        run: framing_found,
    },
    Invariant {
        name: "result shape",
        judges: &[AspectId::J1ResultType, AspectId::J1ResultShape],
        run: super::answer_checks::answer_shape,
    },
    Invariant {
        name: "concise message",
        judges: &[AspectId::J1MessageConcise],
        run: super::messages::concise_message,
    },
    Invariant {
        name: "HTTP status",
        judges: &[
            AspectId::H3SseTerminates,
            AspectId::L3Http400,
            AspectId::H3ErrorStatus,
        ],
        run: super::answer_checks::answer_status,
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
        run: super::mrtr::input_requests,
    },
    Invariant {
        name: "unnegotiated extensions",
        judges: &[AspectId::L1ExtensionFallback],
        run: super::extensions::unnegotiated_extensions,
    },
    Invariant {
        name: "error code ranges",
        judges: &[
            AspectId::J1LegacyRangeCode,
            AspectId::J1McpRangeDefinedOnly,
            AspectId::J1No32042,
            AspectId::J1ReservedCode,
        ],
        run: super::codes::error_code_ranges,
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
        run: super::tasks::task_invariants,
    },
    Invariant {
        name: "leaks",
        judges: &[
            AspectId::J7Main,
            AspectId::J7SecretInResult,
            AspectId::J7SecretInToolError,
        ],
        run: super::leaks::leaks,
    },
    Invariant {
        name: "error model rows",
        judges: &[AspectId::T1NoStructuredContent, AspectId::R1DataUri],
        run: super::rows::error_model_rows,
    },
];
