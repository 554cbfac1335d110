//! Named deviations from the error model, injected one at a time.
//!
//! The reference server is the executable specification; a fault makes it
//! break exactly one rule so that the harness's own tests can prove every rule
//! is able to fail. Each fault names the rule it breaks.

use std::fmt;
use std::str::FromStr;

use mcperr_model::rules::RuleId;

mod edges;

macro_rules! faults {
    ($( $variant:ident => $name:literal, $rule:ident, $what:literal $(, only $edge:ident)?; )*) => {
        /// One injected deviation. See [`Fault::ALL`] for the catalogue.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Fault { $( #[doc = $what] $variant, )* }

        impl Fault {
            /// Every fault, in catalogue order.
            pub const ALL: &'static [Fault] = &[$(Fault::$variant),*];

            /// The name used on the command line (`--fault NAME`).
            pub fn name(self) -> &'static str {
                match self { $(Fault::$variant => $name,)* }
            }

            /// The rule this fault breaks (an id of the rule table,
            /// fixtures/rules.toml, checked by the compiler).
            pub fn rule(self) -> RuleId {
                match self { $(Fault::$variant => RuleId::$rule,)* }
            }

            /// What the server does wrong under this fault.
            pub fn description(self) -> &'static str {
                match self { $(Fault::$variant => $what,)* }
            }

            /// Where a fault declared with `only stdio`, `only http` or
            /// `only fuzz` shows ([`edges`] reads it with its own lists).
            fn declared_only(self) -> Option<Edge> {
                match self { $(Fault::$variant => None $(.or(Some(Edge::$edge)))?,)* }
            }
        }
    };
}

/// Declares faults beside the behaviour they switch on: `Variant =>
/// "name", Rule, "what the server does wrong";`, with `, only stdio`,
/// `only http` or `only fuzz` before the `;` for a fault that shows only
/// there. It expands to nothing: the build script (build.rs) gathers every
/// block into the one [`Fault`] enum, this file's catalogue first.
macro_rules! declare_faults {
    ($($declared:tt)*) => {};
}
pub(crate) use declare_faults;

/// Where a fault shows when not everywhere (`only …` in its declaration).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(non_camel_case_types)]
enum Edge {
    /// Only over stdio.
    stdio,
    /// Only over Streamable HTTP.
    http,
    /// Only to fuzzing.
    fuzz,
}

include!(concat!(env!("OUT_DIR"), "/faults.rs"));

// The catalogue: the faults declared before faults could sit beside their
// behaviour, in the order `--list-faults` shows them. A new fault is
// declared with `declare_faults!` in the file that implements it.
declare_faults! {
    ToolErrorStructured => "tool-error-structured", T1,
        "a tool error (get_author with an unknown title) carries structuredContent";
    PathTraversal => "path-traversal", R2,
        "a file:// resource name is percent-decoded and joined to the shop's directory unchecked: file:///bookshop/..%2F..%2Fetc%2Fpasswd serves /etc/passwd";
    PromptTemplateInjection => "prompt-template-injection", P2,
        "greet evaluates what its name argument carries: a ${7*7} is rendered as 49, not shown literally";
    UnconfirmedPurchase => "unconfirmed-purchase", L2,
        "2025-11-25: confirm_purchase from a client that declared no elicitation buys the book without asking";
    AskUrlUndeclared => "ask-url-undeclared", E1,
        "2025-11-25: confirm_purchase asks a client that declared form-mode elicitation with a URL-mode elicitation/create";
    AskSamplingTools => "ask-sampling-tools", E1,
        "2025-11-25: confirm_purchase first asks a client that declared sampling without tools for a blurb with a sampling/createMessage offering a tool";
    AskSamplingContext => "ask-sampling-context", E1,
        "2025-11-25: confirm_purchase first asks a client that declared sampling without context for a blurb with includeContext allServers";
    UrlRequiredNeedless => "url-required-needless", E1,
        "2025-11-25: confirm_purchase answers -32042 to a client that declared URL mode, though it also declared the form mode the confirmation needs";
    UrlRequiredEmpty => "url-required-empty", E1,
        "2025-11-25: confirm_purchase's -32042 (to a client that declared URL mode only) lists no elicitations";
    UrlRequiredForm => "url-required-form", E1,
        "2025-11-25: confirm_purchase's -32042 lists a form-mode elicitation without an elicitationId";
    UrlRequiredRecoded => "url-required-recoded", E1,
        "2025-11-25: confirm_purchase, for a client that declared URL mode only, answers -32603 listing the URL elicitation it needs in data.elicitations, instead of -32042";
    TaskProgressNewToken => "task-progress-new-token", U6,
        "2025-11-25: a task's progress (sent as tasks/result works it off) goes under a token of the task's own, not the progressToken of the call that created it";
    TaskProgressAfterTerminal => "task-progress-after-terminal", U6,
        "2025-11-25: tasks/get of a task that asked for progress and has completed sends one more progress notification";
    TaskInputUnrelated => "task-input-unrelated", K1,
        "2025-11-25: the elicitation/create confirm_purchase sends for its task carries no io.modelcontextprotocol/related-task _meta";
    TaskInputOtherId => "task-input-other-id", K1,
        "2025-11-25: the elicitation/create confirm_purchase sends for its task names another task in its related-task _meta";
    TaskInputStuck => "task-input-stuck", K1,
        "2025-11-25: confirm_purchase's task stays input_required after the client answered its elicitation";
    TaskInputHidden => "task-input-hidden", K1,
        "2025-11-25: confirm_purchase's task shows working, not input_required, while its elicitation waits for the client's answer";
    TaskListIncomplete => "task-list-incomplete", K1,
        "2025-11-25: tasks/list leaves the newest task off every page, though tasks/get finds it";
    TaskListNoCursor => "task-list-no-cursor", K1,
        "2025-11-25: tasks/list answers its first page without a nextCursor, though more tasks remain";
    SchemaDraft7 => "schema-draft7", T4,
        "tool inputSchemas without $schema are read as draft 7, not 2020-12: shelve_book's prefixItems is ignored and its items: false refuses every slot";
    RefPermissive => "ref-permissive", T4,
        "an inputSchema whose external $ref cannot be resolved is taken as permissive: import_catalog runs on any arguments";
    StructuredWithoutText => "structured-without-text", T8,
        "a result with structuredContent (limited_calls) carries a plain text block instead of that JSON serialized";
    ToolErrorAsProtocol => "tool-error-as-protocol", T1,
        "a tool error is sent as a JSON-RPC -32602 error instead of an isError result";
    ProtocolErrorRecoded => "protocol-error-recoded", T2,
        "a protocol error raised by a tool is forwarded as -32603 instead of its own code";
    ProtocolErrorNoData => "protocol-error-no-data", T2,
        "a protocol error raised by a tool is forwarded without its data";
    ProtocolErrorAsResult => "protocol-error-as-result", T2,
        "a protocol error raised by a tool is turned into an isError result";
    CrashLeaksText => "crash-leaks-text", T3,
        "a crashing tool's result text includes the exception text";
    CrashNotError => "crash-not-error", T3,
        "a crashing tool's result lacks isError: true";
    NoInputValidation => "no-input-validation", T4,
        "arguments are not validated against inputSchema: the body runs on invalid input";
    UnknownToolResult => "unknown-tool-result", T5,
        "an unknown tool is answered as an isError result instead of -32602";
    MalformedParamsInternal => "malformed-params-internal", T6,
        "malformed tools/call params are answered -32603 instead of -32602";
    OutputUnchecked => "output-unchecked", T7,
        "tool output is not validated: bad_output's invalid structuredContent is sent";
    SuccessFlaggedError => "success-flagged-error", T8,
        "a successful tool call is flagged isError: true";
    ErrorReturnedAsSuccess => "error-returned-as-success", T9,
        "get_author returns its not-found message as a success (isError false)";
    NotFoundRetiredCode => "not-found-32002", R1,
        "resource not found is answered with the retired code -32002";
    NotFoundEmptyContents => "not-found-empty-contents", R1,
        "resource not found is answered as a result with empty contents";
    NotFoundNoUri => "not-found-no-uri", R1,
        "resource not found is answered without data.uri";
    UnknownResourceInternal => "unknown-resource-internal", R2,
        "a URI matching no resource is answered -32603 instead of -32602";
    ResourceErrorInvalidParams => "resource-error-32602", R3,
        "a resource failure that is not 'not found' is answered -32602 instead of -32603";
    ResourceCrashLeaks => "resource-crash-leaks", R4,
        "a crashing resource's error message includes the exception text";
    ResourceMcpErrorAltered => "resource-mcperror-altered", R5,
        "a protocol error raised in a resource handler gets data.uri added";
    UriUnvalidated => "uri-unvalidated", R6,
        "a resources/read uri without a scheme (no URI at all) is read as the first template's parameter: \"Dune\" as books://Dune";
    UriMissingInternal => "uri-missing-internal", R6,
        "resources/read without a string uri is answered -32603 instead of -32602";
    UnknownPromptInternal => "unknown-prompt-internal", P1,
        "an unknown prompt is answered -32603 instead of -32602";
    MissingArgumentRenders => "missing-argument-renders", P2,
        "a prompt with a missing required argument is rendered anyway";
    PromptArgumentsUnchecked => "prompt-arguments-unchecked", P2,
        "prompt arguments that are not strings are rendered as their JSON text instead of refused";
    PromptCrashLeaks => "prompt-crash-leaks", P3,
        "a crashing prompt's error message includes the exception text";
    NoResultType => "no-result-type", J1,
        "2026-07-28 results lack resultType, which servers of that version MUST include";
    PingNotEmpty => "ping-not-empty", U1,
        "ping is answered with a non-empty result ({\"status\": \"ok\"}) instead of an empty one";
    MissingCapabilityInternal => "missing-capability-internal", L3,
        "2026-07-28: confirm_purchase without the client's elicitation capability is -32603 instead of -32021";
    InputRequiredUndeclared => "input-required-undeclared", L3,
        "2026-07-28: confirm_purchase without the client's elicitation capability answers an input_required result asking for an elicitation";
    MissingCapability200 => "missing-capability-200", L3,
        "over HTTP: the -32021 of confirm_purchase comes with status 200 instead of 400";
    MrtrStateUnverified => "mrtr-state-unverified", M1,
        "2026-07-28: confirm_purchase takes any requestState on a retry: an altered one completes the purchase";
    MrtrStateUnbound => "mrtr-state-unbound", M1,
        "2026-07-28: confirm_purchase's requestState is not bound to the title: a state issued for one book buys another";
    MrtrMalformedAccepted => "mrtr-malformed-accepted", M1,
        "2026-07-28: malformed inputResponses on a confirm_purchase retry are not refused: a non-object is ignored, a non-elicitation answer is taken as a decline";
    MrtrUnknownInputRefused => "mrtr-unknown-input-refused", M1,
        "2026-07-28: a confirm_purchase retry whose inputResponses hold a key that was not asked for is -32602 instead of ignoring it";
    MrtrMissingInputError => "mrtr-missing-input-error", M1,
        "2026-07-28: a confirm_purchase retry without the confirmation asked for is -32602 instead of a new input_required result";
    MrtrEmptyInputRequired => "mrtr-empty-input-required", M1,
        "2026-07-28: confirm_purchase answers an input_required result with neither inputRequests nor requestState";
    ReplayOtherStream => "replay-other-stream", H1,
        "2025-11-25 over HTTP: a GET with Last-Event-ID resumes the SSE stream it names and replays every other stream of the session after it";
    ExtensionUnnegotiated => "extension-unnegotiated", L1,
        "2026-07-28: get_author answers a CreateTaskResult (resultType \"task\", the Tasks extension's) to a request that declared no io.modelcontextprotocol/tasks extension";
    MrtrRepeatedKey => "mrtr-repeated-key", M1,
        "2026-07-28: confirm_purchase's input_required result names two input requests \"confirm\" in its inputRequests text (a reader keeps the second, asking something else)";
    MrtrBadInputKind => "mrtr-bad-input-kind", M1,
        "2026-07-28: confirm_purchase's inputRequests ask for a tools/list, which is not an input request";
    MrtrUrlUndeclared => "mrtr-url-undeclared", M1,
        "2026-07-28: confirm_purchase asks for a url-mode elicitation from a client that declared form mode only";
    MrtrSamplingTools => "mrtr-sampling-tools", M1,
        "2026-07-28: confirm_purchase, from a client that declared sampling without tools, also asks for a sampling request that offers a tool";
    MrtrSamplingContext => "mrtr-sampling-context", M1,
        "2026-07-28: confirm_purchase, from a client that declared sampling without context, also asks for a sampling request with includeContext allServers";
    MrtrListInputRequired => "mrtr-list-input-required", M1,
        "2026-07-28: tools/list from a client that declared elicitation is answered with an input_required result";
    MrtrDeclineInternal => "mrtr-decline-internal", M1,
        "2026-07-28: a confirm_purchase retry whose elicitation was declined or cancelled is -32603";
    CapabilitiesSticky => "capabilities-sticky", L3,
        "2026-07-28: once a request on the server declared elicitation, confirm_purchase asks for it from every later request, whatever its clientCapabilities";
    CodeLegacyRange => "code-legacy-range", J1,
        "2026-07-28: a requestState that fails verification is refused with -32001, a code of the legacy sub-range";
    CodeMcpRange => "code-mcp-range", J1,
        "2026-07-28: a requestState that fails verification is refused with -32050, a code of the MCP sub-range the spec does not define";
    Code32042 => "code-32042", J1,
        "2026-07-28: a requestState that fails verification is refused with -32042, 2025-11-25's URL-elicitation code";
    CodeReservedRange => "code-reserved-range", J1,
        "2026-07-28: a requestState that fails verification is refused with -32500, an application code inside JSON-RPC's reserved range";
    SseForeignProgress => "sse-foreign-progress", H3,
        "over HTTP: a tools/call's SSE stream carries, before the response, progress for a token no request of the client's carried";
    SseAfterResponse => "sse-after-response", H3,
        "over HTTP: a tools/call is answered with an SSE stream that goes on after the response (an event of type ping)";
    ParamMismatchAccepted => "param-mismatch-accepted", H1,
        "over HTTP: branch_hours runs when its Mcp-Param-Branch header names another branch than its arguments";
    ParamMissingAccepted => "param-missing-accepted", H1,
        "over HTTP: branch_hours runs without the Mcp-Param-Branch header its branch argument needs";
    ParamNullExpected => "param-null-expected", H1,
        "over HTTP: branch_hours wants an Mcp-Param-Day header even when day is null or absent, and answers -32020 without it";
    ParamInvalidCharsAccepted => "param-invalid-chars-accepted", H1,
        "over HTTP: an Mcp-Param header holding raw non-ASCII bytes is taken as it is instead of refused";
    ParamLatin1Accepted => "param-latin1-accepted", H1,
        "over HTTP: an Mcp-Param header's bytes are read as Latin-1 and not checked, so raw UTF-8 café matches a body's cafÃ©";
    ParamNotDecoded => "param-not-decoded", H1,
        "over HTTP: an Mcp-Param header in its =?base64?...?= form is compared undecoded, so a non-ASCII branch is refused -32020";
    ParamHeaderCaseSensitive => "param-header-case-sensitive", H1,
        "over HTTP: Mcp-Param headers are looked up by their exact spelling (Mcp-Param-Branch), so one sent in lower case is missed and the call refused";
    ParamNumericAsString => "param-numeric-as-string", H1,
        "over HTTP: an integer's Mcp-Param header is compared as text, so Mcp-Param-Day: 3.0 for day 3 is refused -32020";
    SubscriptionUpdateFirst => "subscription-update-first", U9,
        "over stdio: a subscriptions/listen gets a notifications/resources/updated for its first URI before its acknowledgment";
    SubscriptionIdMissing => "subscription-id-missing", U9,
        "over stdio: restock's notifications/resources/updated carry no io.modelcontextprotocol/subscriptionId";
    SubscriptionUnrequested => "subscription-unrequested", U9,
        "over stdio: restock also sends every subscription a notifications/tools/list_changed it did not ask for";
    SubscriptionLogs => "subscription-logs", U8,
        "over stdio: restock also sends every subscription a notifications/message log line on its stream";
    TeardownSilent => "teardown-silent", U9,
        "over stdio: close_shop ends each subscription with a notifications/cancelled only, no listen result";
    TeardownUncancelled => "teardown-uncancelled", U9,
        "over stdio: close_shop ends each subscription with a listen result only, no notifications/cancelled";
    EofIgnored => "eof-ignored", J5,
        "over stdio: at the end of its input the server keeps running instead of exiting";
    CursorUnstable => "cursor-unstable", U2,
        "a list cursor's page drifts with every list request answered: the same cursor gives other items the next time";
    CursorIgnored => "cursor-ignored", U2,
        "a list request with a cursor the server never issued is answered with the first page instead of -32602";
    InitializeOlderVersion => "initialize-older-version", L1,
        "initialize is answered with protocolVersion 2025-06-18 whatever was asked, 2025-11-25 included, while server/discover lists 2025-11-25 among the versions it supports";
    InitializeEchoesVersion => "initialize-echoes-version", L1,
        "initialize is answered with the protocolVersion asked for, even one the server does not support";
    InitializeNoServerInfo => "initialize-no-server-info", L1,
        "initialize is answered without serverInfo";
    RequestsBeforeInitialized => "requests-before-initialized", L1,
        "2025-11-25: a roots/list request of the server's own goes out with the initialize result, before the client's initialized notification";
    InitializeRefusedUnnamed => "initialize-refused-unnamed", L1,
        "the server is modern only: initialize is refused with -32601 whose message names no protocol version it supports";
    DiscoverIncomplete => "discover-incomplete", L1,
        "server/discover is answered without supportedVersions";
    VerboseErrorMessage => "verbose-error-message", J1,
        "an unknown method's -32601 error message runs on to a second line naming the dispatcher";
    CancelMisapplied => "cancel-misapplied", U3,
        "over stdio: a cancellation of no running request (an unknown or finished id, or none) cancels the next request instead, which is answered -32800";
    ToolsListRefused => "tools-list-refused", L2,
        "tools/list is answered -32603 though the tools capability is declared";
    ResourcesListRefused => "resources-list-refused", L2,
        "resources/list is answered -32603 though the resources capability is declared";
    PromptsListRefused => "prompts-list-refused", L2,
        "prompts/list is answered -32603 though the prompts capability is declared";
    UndeclaredTools => "undeclared-tools", L2,
        "the tools capability is left out of initialize's and server/discover's result, while tools are still served";
    UndeclaredResources => "undeclared-resources", L2,
        "the resources capability is left out of initialize's and server/discover's result, while resources are still served";
    UndeclaredPrompts => "undeclared-prompts", L2,
        "the prompts capability is left out of initialize's and server/discover's result, while prompts are still served";
    CompletionsUndeclared => "completions-undeclared", L2,
        "the completions capability is left out of initialize's and server/discover's result, while completion/complete is still served";
    CompletionCrashLeaks => "completion-crash-leaks", U4,
        "the failing completion of crash_prompt's secret is -32603 whose message is the lookup's own text, the secret included";
    CompletionCrashInvalidParams => "completion-crash-32602", U4,
        "the failing completion of crash_prompt's secret is -32602 instead of -32603";
    CompletionUnchecked => "completion-unchecked", U4,
        "completion/complete is not validated: an unknown prompt, a missing argument or a malformed ref gets an empty completion instead of -32602";
    LogLevelUnchecked => "log-level-unchecked", U5,
        "a log level that is none of the eight (logging/setLevel's level; 2026-07-28: _meta's logLevel) is accepted instead of -32602";
    Latin1Messages => "latin1-messages", J1,
        "messages are written in Latin-1, not UTF-8: an unknown method's error says \"Méthode inconnue\" with é as the one byte E9";
    WrongId => "wrong-id", J1,
        "responses carry a different id than the request's";
    IdTypeChanged => "id-type-changed", J1,
        "numeric ids are answered as strings and string ids as numbers where they parse";
    SilentTool => "silent-tool", J4,
        "tools/call of get_author is never answered (over HTTP: a bare 202 without the response)";
    UnknownMethodResult => "unknown-method-result", J2,
        "an unknown method is answered with an empty result instead of -32601";
    NotificationAnswered => "notification-answered", J3,
        "over stdio: notifications are answered with a response";
    ExitAfterCrash => "exit-after-crash", J4,
        "over stdio: the process exits after a crashing tool call has been answered";
    ExitAfterError => "exit-after-error", J4,
        "over stdio: the process exits after answering an unknown method";
    PrettyPrinted => "pretty-printed", J5,
        "over stdio: an unknown method's error is written pretty-printed, one message over several lines";
    ServerRequests => "server-requests", J5,
        "over stdio: a ping request of the server's own, with an id of its own, is written before each tools/call answer (2025-11-25 allows it; 2026-07-28 does not)";
    ServerRequestNullId => "server-request-null-id", J1,
        "over stdio: a ping request of the server's own with id null is written before each tools/call answer";
    ServerRequestIdReused => "server-request-id-reused", J1,
        "over stdio: a ping request of the server's own, always with the same id, is written before each tools/call answer";
    NotificationWithId => "notification-with-id", J1,
        "over stdio: a notifications/message carrying an id is written before each tools/call answer";
    LogOnStdout => "log-on-stdout", J5,
        "over stdio: log lines are written to stdout instead of stderr";
    GarbageKills => "garbage-kills", J6,
        "over stdio: an unparseable input line makes the server exit";
    CrashLeaksInMeta => "crash-leaks-in-meta", J7,
        "a crashing tool's result carries the exception text in _meta";
    PostSplit => "post-split", H1,
        "over HTTP: a 2026-07-28 POST of a resources/ method is answered 404 without a body, as if resources had an endpoint of their own";
    StreamBroadcast => "stream-broadcast", H1,
        "over HTTP: a 2025-11-25 session's notice (a log message) goes out on every stream: on a GET's SSE stream and before the answer to every POST";
    GetStreamResponse => "get-stream-response", H1,
        "over HTTP: a 2025-11-25 GET with a session opens an SSE stream that carries a JSON-RPC response (to no request of that stream)";
    HttpGetOk => "http-get-200", H1,
        "over HTTP: GET (and a modern DELETE) is answered 200 with a JSON body, neither 405 nor an SSE stream";
    HttpHeadersUnchecked => "http-headers-unchecked", H1,
        "over HTTP: MCP-Protocol-Version, Mcp-Method and Mcp-Name are not checked against the body (no -32020)";
    HttpVersionUnchecked => "http-version-unchecked", H1,
        "over HTTP: an unsupported MCP-Protocol-Version is served instead of 400 with -32022";
    EnvelopeUnchecked => "envelope-unchecked", H1,
        "over HTTP: 2026-07-28 requests without the _meta envelope are served instead of 400 with -32602";
    HttpMalformed500 => "http-malformed-500", J6,
        "over HTTP: bad JSON or a batch is answered 500 with -32603 instead of 400 with -32700/-32600";
    HttpMalformedPage => "http-malformed-page", J6,
        "over HTTP: bad JSON or a batch is answered 400 with an HTML error page carrying the parser's stack trace, as a web framework's default handler does, instead of -32700/-32600";
    HttpAcceptUnchecked => "http-accept-unchecked", H1,
        "over HTTP: a request whose Accept lacks a required type is served instead of 406";
    HttpNotificationBody => "http-notification-body", J3,
        "over HTTP: a notification is answered 200 with a body instead of 202";
    HttpResponseAnswered => "http-response-answered", J3,
        "2025-11-25 over HTTP: a JSON-RPC response POSTed to the server (one it cannot accept) is answered 200 with a body instead of 202 or an error status";
    LastEventIdRefused => "last-event-id-refused", H1,
        "over HTTP: a 2026-07-28 request with a Last-Event-ID header is refused 400 (streams are not resumable) instead of answered as without it";
    AuthUnchecked => "auth-unchecked", A1,
        "with --auth-token over HTTP: requests without a token (or with a forged one) are served";
    AuthForgedAccepted => "auth-forged-accepted", A1,
        "with --auth-token over HTTP: any bearer token is accepted; only a request without one is refused";
    AuthNoChallenge => "auth-no-challenge", A1,
        "with --auth-token over HTTP: a 401 carries no WWW-Authenticate challenge";
    AuthNoMetadata => "auth-no-metadata", A1,
        "with --auth-token over HTTP: the challenge names no resource_metadata and the well-known URIs answer 404";
    AuthMetadataNoServers => "auth-metadata-no-servers", A1,
        "with --auth-token over HTTP: the protected-resource metadata lists no authorization_servers";
    AuthChallengeNoScope => "auth-challenge-no-scope", A1,
        "with --auth-token over HTTP: the 401 challenge carries no scope parameter";
    AuthRefusalWithData => "auth-refusal-with-data", A1,
        "with --auth-token over HTTP: a request without a valid token is processed, and its JSON-RPC answer sent with the 401";
    AuthSessionAuthenticates => "auth-session-authenticates", A1,
        "with --auth-token over HTTP: a 2025-11-25 request that carries a live Mcp-Session-Id is served without a token";
    AuthScope401 => "auth-scope-401", A1,
        "with --auth-token and --auth-limited-token over HTTP: a token with too few scopes gets 401 instead of 403";
    AuthOfflineAccess => "auth-offline-access", A1,
        "with --auth-token over HTTP: the challenge's scope and the metadata's scopes_supported include offline_access";
    HttpSessionUnchecked => "http-session-unchecked", H2,
        "over HTTP: legacy requests without a valid Mcp-Session-Id are served";
    HttpRefusalMadeUpId => "http-refusal-made-up-id", J1,
        "over HTTP: a refusal's JSON-RPC error body (a missing session, a GET or DELETE refused, bad JSON) carries the id \"server-error\" instead of null";
    HttpOriginUnchecked => "http-origin-unchecked", H1,
        "over HTTP: a foreign Origin is served instead of 403";
    SessionIdCounter => "session-id-counter", H2,
        "over HTTP: legacy session ids are a counter (1, 2, 3, ...)";
    SessionIdSpaces => "session-id-spaces", H2,
        "over HTTP: legacy session ids hold a space (\"session 4f1c...\"), outside visible ASCII";
    HttpSseTruncated => "http-sse-truncated", H3,
        "over HTTP: every tools/call answer is an SSE stream that ends before the response";
    NonAsciiTitleLeaks => "non-ascii-title-leaks", J7,
        "fuzz only: get_author with a non-ASCII title answers an isError result carrying the Rust panic text";
    WrongIdAbove31 => "wrong-id-above-2-31", J1,
        "fuzz only: a numeric id outside a 32-bit integer's range is answered wrapped to one, as a server that keeps ids in an i32 would";
    IdSignDropped => "id-sign-dropped", J1,
        "fuzz only: a numeric id of -100 or less is answered with its absolute value, as a server that parses ids into an unsigned integer would";
    LimitMultipleOf7 => "limit-multiple-of-7", T4,
        "fuzz only: `limited` runs its body for an out-of-range limit that is a multiple of 7 (56, 63, ...)";
    BlankTitleLeaksDsn => "blank-title-leaks-dsn", J7,
        "fuzz only: get_author with an empty or all-blank title answers an isError result quoting the catalog's connection string, password included";
    BigIdEmptyResult => "big-id-empty-result", J1,
        "fuzz only: every request whose id is a number beyond 2^53 is answered with an empty result, {}";
    LongTitleSilent => "long-title-silent", J4,
        "fuzz only: get_author with a title of 1,000 characters or more is never answered (over HTTP: a bare 202 without the response)";
    ToolErrorLeaksKey => "tool-error-leaks-key", J7,
        "a tool error's text (get_author with an unknown title) quotes the catalog's API key, an OpenAI-style sk- key no request carried";
    LogLeaksDsn => "log-leaks-dsn", J7,
        "over stdio: a notifications/message log message quoting the catalog's connection string, password included, is written before each tools/call answer";
    ProgressDecreasing => "progress-decreasing", U6,
        "slow's progress notifications count down (3, 2, 1) instead of up";
    ProgressAfterResponse => "progress-after-response", U6,
        "over stdio: one more progress notification for slow's token follows its response (over HTTP a client stops reading the stream at the response)";
    CancelIgnored => "cancel-ignored", U7,
        "over stdio: a cancelled slow call works on and is answered";
    ServerCancels => "server-cancels", U7,
        "over stdio: a notifications/cancelled of the server's own, naming the request, is written before each tools/call answer (2026-07-28 allows one only to end a subscriptions/listen stream)";
    LogUnasked => "log-unasked", U8,
        "2026-07-28: a request without io.modelcontextprotocol/logLevel in _meta gets the log messages of a request that asked for debug";
    LogUndeclared => "log-undeclared", U8,
        "over stdio: the logging capability is left out of initialize's and server/discover's result, while a log message is still written before each tools/call answer";
    LogMessageLeaks => "log-message-leaks", U8,
        "a log message to the client (2025-11-25: after logging/setLevel; 2026-07-28: at the request's level) carries the call's arguments, a crash's planted secret included";
    EscapedTitleLeaks => "escaped-title-leaks", J7,
        "fuzz only: reading books://{title} with a percent-escape in the title answers -32603 carrying the decoder's panic text";
    TasksUndeclared => "tasks-undeclared", K1,
        "2025-11-25: the tasks capability is left out of initialize's result, while tools still state execution.taskSupport and a call with a task param is still run as a task";
    TaskResultErrorRecoded => "task-result-error-recoded", K1,
        "2025-11-25: tasks/result of a task whose call failed with a JSON-RPC error answers -32603 instead of that error";
    TaskForbiddenAccepted => "task-forbidden-accepted", K1,
        "2025-11-25: a call with a task param to a tool that states no taskSupport is run as a task instead of -32601";
    TaskRequiredAccepted => "task-required-accepted", K1,
        "2025-11-25: reindex (taskSupport \"required\") called without a task param is run instead of -32601";
    TaskCreatedCompleted => "task-created-completed", K1,
        "2025-11-25: the CreateTaskResult of a new task says status completed while it is still working";
    TaskIdNumber => "task-id-number", K1,
        "2025-11-25: task ids are numbers, not strings";
    TaskIdReused => "task-id-reused", K1,
        "2025-11-25: every task gets the id task-1, the newest replacing the one before";
    TaskNoTimestamps => "task-no-timestamps", K1,
        "2025-11-25: tasks are reported without createdAt and lastUpdatedAt";
    TaskNoTtl => "task-no-ttl", K1,
        "2025-11-25: tasks are reported without ttl (the field is required, null for unlimited)";
    TaskResultEarly => "task-result-early", K1,
        "2025-11-25: tasks/result of a working task answers at once and leaves the task working";
    TaskResultAltered => "task-result-altered", K1,
        "2025-11-25: tasks/result answers a text of its own (\"task finished\") instead of the call's result";
    TaskResultNoRelatedTask => "task-result-no-related-task", K1,
        "2025-11-25: tasks/result answers without io.modelcontextprotocol/related-task in _meta";
    TaskMetaOverridesId => "task-meta-overrides-id", K1,
        "2025-11-25: tasks/get, tasks/result and tasks/cancel take the task from _meta's io.modelcontextprotocol/related-task instead of the taskId param";
    TaskOpsCarryRelatedTask => "task-ops-carry-related-task", K1,
        "2025-11-25: tasks/get, tasks/list and tasks/cancel results carry io.modelcontextprotocol/related-task in _meta";
    TaskStatusRelatedTask => "task-status-related-task", K1,
        "2025-11-25: the notifications/tasks/status sent on a cancellation carries io.modelcontextprotocol/related-task in _meta";
    TaskCursorIgnored => "task-cursor-ignored", K1,
        "2025-11-25: tasks/list with a cursor the server never issued answers the first page instead of -32602";
    TaskUnknownInternal => "task-unknown-internal", K1,
        "2025-11-25: tasks/get, tasks/result and tasks/cancel of an unknown task id are -32603 instead of -32602";
    TaskCancelTerminalAccepted => "task-cancel-terminal-accepted", K1,
        "2025-11-25: tasks/cancel of a completed task answers the task instead of -32602";
    TaskCancelReportsWorking => "task-cancel-reports-working", K1,
        "2025-11-25: tasks/cancel answers the task with status working, not yet cancelled";
    TaskCancelNotSticky => "task-cancel-not-sticky", K1,
        "2025-11-25: a cancelled task whose work ends anyway is then reported completed";
    TaskFailedNoMessage => "task-failed-no-message", K1,
        "2025-11-25: a failed task is reported without a statusMessage";
    TaskGetSse => "task-get-sse", K1,
        "over HTTP, 2025-11-25: tasks/get is answered as an SSE stream, though the client polls";
}

/// `bytes` (UTF-8) re-encoded as Latin-1, `?` for what it cannot hold (the
/// `latin1-messages` fault).
pub(crate) fn as_latin1(bytes: &[u8]) -> Vec<u8> {
    String::from_utf8_lossy(bytes)
        .chars()
        .map(|c| u8::try_from(u32::from(c)).unwrap_or(b'?'))
        .collect()
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A fault name that is not in the catalogue.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown fault '{0}' (see `mcperr reference --list-faults`)")]
pub struct UnknownFault(pub String);

impl FromStr for Fault {
    type Err = UnknownFault;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Fault::ALL
            .iter()
            .copied()
            .find(|f| f.name() == s)
            .ok_or_else(|| UnknownFault(s.to_string()))
    }
}

#[cfg(test)]
mod tests;
