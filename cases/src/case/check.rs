//! The named checks a case can ask for beyond its shape match (`checks =
//! [...]` in a case file), by the name the file gives.

use std::str::FromStr;

use super::FieldError;

/// Declares the named checks once: each variant with the name a case file
/// gives it and its doc comment, which is also the case format's
/// documentation of the check (fixtures/cases/README.md, generated). The enum's order is the order a case's checks are sorted and
/// run in (`checks` in a profile is sorted), so a new check goes last.
macro_rules! named_checks {
    ($( $(#[doc = $doc:literal])* $variant:ident = $name:literal, )+) => {
        /// A named check beyond the shape match.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Check {
            $( $(#[doc = $doc])* $variant, )+
        }

        impl Check {
            /// Every named check, in the enum's order.
            pub const ALL: &'static [Check] = &[$(Check::$variant),+];

            /// The name a case file gives it (`checks = ["no-canary"]`).
            pub fn name(self) -> &'static str {
                match self {
                    $(Check::$variant => $name,)+
                }
            }

            /// What it checks: its doc comment, one line per source line,
            /// for the case format's generated list of checks.
            pub fn doc(self) -> &'static str {
                match self {
                    $(Check::$variant => concat!($($doc, "\n"),*),)+
                }
            }
        }
    };
}

named_checks! {
    /// The run's canary and the markers of a stack trace appear nowhere in
    /// the response (echoes of the request's own `uri` discounted).
    NoCanary = "no-canary",
    /// `limited_calls` reports the same count before and after the request.
    BodyNeverRan = "body-never-ran",
    /// stderr during the case has no traceback or failure chain.
    LogNoTraceback = "log-no-traceback",
    /// stderr during the case has the crash headline followed by a traceback.
    LogCrashTraceback = "log-crash-traceback",
    /// A result that is not `isError` carries `structuredContent` that fits
    /// the tool's `outputSchema` (T8; generated valid calls).
    StructuredOutput = "structured-output",
    /// A `resources/read` result does not carry an empty `contents` (R1, R2
    /// `no-empty-contents`).
    NoEmptyContents = "no-empty-contents",
    /// The answer is not the retired −32002 (R1 `retired-32002`: a MUST NOT
    /// in 2026-07-28, nothing in 2025-11-25, from the table).
    NoRetiredCode = "no-retired-code",
    /// Over HTTP, an `Mcp-Session-Id` minted with the answer has only visible
    /// ASCII, 0x21 to 0x7E (H2 `session-id-ascii`).
    SessionIdAscii = "session-id-ascii",
    /// Over HTTP, an `Mcp-Session-Id` minted with the answer is not the id
    /// of the run's own session, nor the next number after it (H2
    /// `session-id-random`).
    SessionIdRandom = "session-id-random",
    /// A 401 or 403 carries a `WWW-Authenticate` challenge with the Bearer
    /// scheme (A1 `bearer-challenge`; RFC 6750 section 3).
    BearerChallenge = "bearer-challenge",
    /// The challenge carries a `scope` parameter (A1 `challenge-scope`, or
    /// `insufficient-scope-lists-scopes` with `error="insufficient_scope"`).
    ChallengeScope = "challenge-scope",
    /// The refusal carries no JSON-RPC result (A1 `no-data`).
    NoResult = "no-result",
    /// The protected-resource metadata is found from the answer's challenge
    /// or at a well-known URI, and fits RFC 9728 and the spec (A1
    /// `discovery-mechanism`, `metadata-document`, `authorization-servers`,
    /// `no-offline-access`); the executor fetches it.
    ResourceMetadata = "resource-metadata",
    /// Over stdio, after the case the executor closes the server's stdin
    /// and waits: the process must exit within 5 s (J5 `exit-on-eof`). The connection
    /// is spent, so the case opens one of its own (`handshake = false`).
    ExitOnEof = "exit-on-eof",
    /// An error answer names the era's protocol version, in its message or
    /// its data (L1 `initialize-names-versions`: a modern-only server's
    /// refusal of `initialize` is a legacy client's only diagnostic).
    NamesVersions = "names-versions",
    /// No request of the server's but `ping` among what it wrote during the
    /// case: a case that sends `initialize` and no `initialized` (L1
    /// `no-requests-before-initialized`).
    NoRequestsBeforeInitialized = "no-requests-before-initialized",
    /// The task the case captured as `task` is in the `tasks/list` answer
    /// or one of the pages its `nextCursor` leads to (K1 `listed`); the
    /// executor follows the cursors.
    TaskListed = "task-listed",
    /// A tool result with `structuredContent` also carries that JSON,
    /// serialized, in a text block (T8 `also-text`).
    AlsoText = "also-text",
    /// A successful tool result (isError absent or false) does not report a
    /// failure in its text or structured content (T9): an error returned as
    /// a success is no success.
    ErrorAsSuccess = "error-as-success",
    /// The answer to an invalid call does not show an object argument as a
    /// language's string conversion prints it (`[object Object]`, Go's
    /// `map[…]`): the body ran on the value (T4 `validate-inputs`).
    BodyRanOnValue = "body-ran-on-value",
    /// The answer is not a -32042 `URLElicitationRequiredError`: the client
    /// declared the form mode the request needs (E1
    /// `url-required-only-when-needed`).
    NotUrlRequired = "not-url-required",
    /// A rendered prompt shows each string argument of the request verbatim
    /// in its text and embeds no resource; an error answer refused them
    /// (P2 `inputs-inert`). Not a text comparison the `spec` profile loosens.
    ArgumentsInert = "arguments-inert",
    /// Over HTTP, the SSE stream a GET opens carries no JSON-RPC response
    /// while a request is answered on a POST of the same session (H1
    /// `get-stream-no-response`), and no message the POST's answer carries
    /// too (H1 `no-broadcast`); the executor sends that POST (a `ping`).
    GetStreamQuiet = "get-stream-quiet",
    /// Over HTTP (2025-11-25), the case's two request steps came as SSE
    /// streams; the judged GET resumes the first with `Last-Event-ID` (its
    /// event id) and carries nothing the second stream carried (H1
    /// `no-replay-other-stream`); the executor sets the header.
    ResumedOwnStream = "resumed-own-stream",
}

impl FromStr for Check {
    type Err = FieldError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Check::ALL
            .iter()
            .copied()
            .find(|c| c.name() == s)
            .ok_or_else(|| {
                let known: Vec<&str> = Check::ALL.iter().map(|c| c.name()).collect();
                FieldError(format!("unknown check '{s}' (known: {})", known.join(", ")))
            })
    }
}
