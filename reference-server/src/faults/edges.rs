//! Where each fault shows: only to fuzzing, only over stdio, only over
//! Streamable HTTP, only on a protected server. The harness's fault sweep
//! runs each fault where it shows, and requires its rule to fail there.

use super::{Edge, Fault};

impl Fault {
    /// Whether only fuzzing can find the fault: the scripted cases and the
    /// cases generated from schemas pass it (each needs an input they never
    /// send: a non-ASCII title, an id above 2^31, a limit of 56, a blank
    /// title, a title of 1,000 characters, a percent-escape in a template
    /// read, an id beyond 2^53).
    pub fn fuzz_only(self) -> bool {
        matches!(
            self,
            Fault::NonAsciiTitleLeaks
                | Fault::WrongIdAbove31
                | Fault::IdSignDropped
                | Fault::LimitMultipleOf7
                | Fault::BlankTitleLeaksDsn
                | Fault::LongTitleSilent
                | Fault::EscapedTitleLeaks
                | Fault::BigIdEmptyResult
        ) || self.declared_only() == Some(Edge::fuzz)
    }

    /// Whether the fault only shows over stdio.
    pub fn stdio_only(self) -> bool {
        matches!(
            self,
            Fault::NotificationAnswered
                | Fault::EofIgnored
                | Fault::SubscriptionUpdateFirst
                | Fault::SubscriptionIdMissing
                | Fault::SubscriptionUnrequested
                | Fault::SubscriptionLogs
                | Fault::TeardownSilent
                | Fault::TeardownUncancelled
                | Fault::LogLeaksDsn
                | Fault::CancelMisapplied
                | Fault::CancelIgnored
                | Fault::ServerCancels
                | Fault::ProgressAfterResponse
                | Fault::LogUndeclared
                | Fault::PrettyPrinted
                | Fault::ServerRequests
                | Fault::ServerRequestNullId
                | Fault::ServerRequestIdReused
                | Fault::NotificationWithId
                | Fault::ExitAfterCrash
                | Fault::ExitAfterError
                | Fault::LogOnStdout
                | Fault::GarbageKills
                // The reference asks its client over stdio only (E1 too).
                | Fault::TaskInputUnrelated
                | Fault::TaskInputOtherId
                | Fault::TaskInputStuck
                | Fault::TaskInputHidden
        ) || self.rule() == mcperr_model::rules::RuleId::E1
            || self.declared_only() == Some(Edge::stdio)
    }

    /// Whether the fault shows only on a server protected with
    /// `--auth-token` (judged with `mcperr run --auth-required`).
    pub fn auth_only(self) -> bool {
        self.name().starts_with("auth-")
    }

    /// Whether the fault only shows over Streamable HTTP.
    pub fn http_only(self) -> bool {
        matches!(
            self,
            Fault::TaskGetSse
                | Fault::ReplayOtherStream
                | Fault::PostSplit
                | Fault::StreamBroadcast
                | Fault::GetStreamResponse
                | Fault::HttpGetOk
                | Fault::HttpHeadersUnchecked
                | Fault::HttpVersionUnchecked
                | Fault::HttpAcceptUnchecked
                | Fault::EnvelopeUnchecked
                | Fault::HttpMalformed500
                | Fault::HttpMalformedPage
                | Fault::HttpNotificationBody
                | Fault::HttpSessionUnchecked
                | Fault::HttpResponseAnswered
                | Fault::AuthUnchecked
                | Fault::AuthForgedAccepted
                | Fault::AuthNoChallenge
                | Fault::AuthNoMetadata
                | Fault::AuthMetadataNoServers
                | Fault::AuthChallengeNoScope
                | Fault::AuthRefusalWithData
                | Fault::AuthSessionAuthenticates
                | Fault::AuthScope401
                | Fault::AuthOfflineAccess
                | Fault::LastEventIdRefused
                | Fault::MissingCapability200
                | Fault::SessionIdCounter
                | Fault::SessionIdSpaces
                | Fault::HttpOriginUnchecked
                | Fault::HttpRefusalMadeUpId
                | Fault::HttpSseTruncated
                | Fault::SseAfterResponse
                | Fault::SseForeignProgress
                | Fault::ParamMismatchAccepted
                | Fault::ParamMissingAccepted
                | Fault::ParamNullExpected
                | Fault::ParamInvalidCharsAccepted
                | Fault::ParamLatin1Accepted
                | Fault::ParamNotDecoded
                | Fault::ParamHeaderCaseSensitive
                | Fault::ParamNumericAsString
        ) || self.declared_only() == Some(Edge::http)
    }
}
