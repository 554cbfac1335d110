//! The named checks a case can ask for beyond its shape match (`checks =
//! [...]` in a case file), by the name the file gives.

use std::str::FromStr;

use super::FieldError;

/// A named check beyond the shape match.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Check {
    /// The run's canary appears nowhere in the response (request URI echoes discounted).
    NoCanary,
    /// `limited_calls` reports the same count before and after the request.
    BodyNeverRan,
    /// stderr during the case has no traceback or failure chain.
    LogNoTraceback,
    /// stderr during the case has the crash headline followed by a traceback.
    LogCrashTraceback,
    /// A result that is not `isError` carries `structuredContent` that fits
    /// the tool's `outputSchema` (T8; generated valid calls).
    StructuredOutput,
    /// A `resources/read` result does not carry an empty `contents` (R1, R2
    /// `no-empty-contents`).
    NoEmptyContents,
    /// The answer is not the retired −32002 (R1 `retired-32002`: a MUST NOT
    /// in 2026-07-28, nothing in 2025-11-25, from the table).
    NoRetiredCode,
    /// Over HTTP, an `Mcp-Session-Id` minted with the answer has only visible
    /// ASCII, 0x21 to 0x7E (H2 `session-id-ascii`).
    SessionIdAscii,
    /// Over HTTP, an `Mcp-Session-Id` minted with the answer is not the id
    /// of the run's own session, nor the next number after it (H2
    /// `session-id-random`).
    SessionIdRandom,
    /// A 401 or 403 carries a `WWW-Authenticate` challenge with the Bearer
    /// scheme (A1 `bearer-challenge`; RFC 6750 section 3).
    BearerChallenge,
    /// The challenge carries a `scope` parameter (A1 `challenge-scope`, or
    /// `insufficient-scope-lists-scopes` with `error="insufficient_scope"`).
    ChallengeScope,
    /// The refusal carries no JSON-RPC result (A1 `no-data`).
    NoResult,
    /// The protected-resource metadata is found from the answer's challenge
    /// or at a well-known URI, and fits RFC 9728 and the spec (A1
    /// `discovery-mechanism`, `metadata-document`, `authorization-servers`,
    /// `no-offline-access`); the executor fetches it.
    ResourceMetadata,
    /// Over stdio, after the case the executor closes the server's stdin
    /// and waits: the process must exit (J5 `exit-on-eof`). The connection
    /// is spent, so the case opens one of its own (`handshake = false`).
    ExitOnEof,
    /// An error answer names the era's protocol version, in its message or
    /// its data (L1 `initialize-names-versions`: a modern-only server's
    /// refusal of `initialize` is a legacy client's only diagnostic).
    NamesVersions,
    /// No request of the server's but `ping` among what it wrote during the
    /// case: a case that sends `initialize` and no `initialized` (L1
    /// `no-requests-before-initialized`).
    NoRequestsBeforeInitialized,
    /// The task the case captured as `task` is in the `tasks/list` answer
    /// or one of the pages its `nextCursor` leads to (K1 `listed`); the
    /// executor follows the cursors.
    TaskListed,
    /// A tool result with `structuredContent` also carries that JSON,
    /// serialized, in a text block (T8 `also-text`).
    AlsoText,
    /// A successful tool result (isError absent or false) does not report a
    /// failure in its text or structured content (T9): an error returned as
    /// a success is no success.
    ErrorAsSuccess,
    /// The answer to an invalid call does not show an object argument as a
    /// language's string conversion prints it (`[object Object]`, Go's
    /// `map[…]`): the body ran on the value (T4 `validate-inputs`).
    BodyRanOnValue,
    /// The answer is not a -32042 `URLElicitationRequiredError`: the client
    /// declared the form mode the request needs (E1
    /// `url-required-only-when-needed`).
    NotUrlRequired,
    /// A rendered prompt shows each string argument of the request verbatim
    /// in its text and embeds no resource; an error answer refused them
    /// (P2 `inputs-inert`). Not a text comparison the `spec` profile loosens.
    ArgumentsInert,
    /// Over HTTP, the SSE stream a GET opens carries no JSON-RPC response
    /// while a request is answered on a POST of the same session (H1
    /// `get-stream-no-response`), and no message the POST's answer carries
    /// too (H1 `no-broadcast`); the executor sends that POST (a `ping`).
    GetStreamQuiet,
    /// Over HTTP (2025-11-25), the case's two request steps came as SSE
    /// streams; the judged GET resumes the first with `Last-Event-ID` (its
    /// event id) and carries nothing the second stream carried (H1
    /// `no-replay-other-stream`); the executor sets the header.
    ResumedOwnStream,
}

impl Check {
    /// Whether the check reads the judged HTTP answer itself (a GET's
    /// stream), which has no JSON-RPC response to match a shape against.
    pub fn reads_http_answer(self) -> bool {
        matches!(self, Check::GetStreamQuiet | Check::ResumedOwnStream)
    }
}

impl FromStr for Check {
    type Err = FieldError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s {
            "no-canary" => Check::NoCanary,
            "body-never-ran" => Check::BodyNeverRan,
            "log-no-traceback" => Check::LogNoTraceback,
            "log-crash-traceback" => Check::LogCrashTraceback,
            "structured-output" => Check::StructuredOutput,
            "no-empty-contents" => Check::NoEmptyContents,
            "no-retired-code" => Check::NoRetiredCode,
            "session-id-ascii" => Check::SessionIdAscii,
            "session-id-random" => Check::SessionIdRandom,
            "bearer-challenge" => Check::BearerChallenge,
            "challenge-scope" => Check::ChallengeScope,
            "no-result" => Check::NoResult,
            "resource-metadata" => Check::ResourceMetadata,
            "exit-on-eof" => Check::ExitOnEof,
            "names-versions" => Check::NamesVersions,
            "also-text" => Check::AlsoText,
            "error-as-success" => Check::ErrorAsSuccess,
            "body-ran-on-value" => Check::BodyRanOnValue,
            "task-listed" => Check::TaskListed,
            "no-requests-before-initialized" => Check::NoRequestsBeforeInitialized,
            "not-url-required" => Check::NotUrlRequired,
            "arguments-inert" => Check::ArgumentsInert,
            "get-stream-quiet" => Check::GetStreamQuiet,
            "resumed-own-stream" => Check::ResumedOwnStream,
            other => {
                return Err(FieldError(format!(
                    "unknown check '{other}' (known: no-canary, body-never-ran, log-no-traceback, log-crash-traceback, structured-output, no-empty-contents, no-retired-code, session-id-ascii, session-id-random, bearer-challenge, challenge-scope, no-result, resource-metadata, exit-on-eof, names-versions, also-text, error-as-success, body-ran-on-value, no-requests-before-initialized, task-listed, not-url-required, arguments-inert, get-stream-quiet, resumed-own-stream)"
                )))
            }
        })
    }
}
