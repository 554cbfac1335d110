//! The reference server as a protected resource (`--auth-token`): bearer
//! tokens given on its command line, a 401 with a Bearer challenge that
//! names the protected-resource metadata (RFC 9728, RFC 6750 section 3), a
//! 403 for a token with too few scopes, and the metadata document itself
//! (basic/authorization). Tokens are opaque: whoever holds the string holds
//! the scopes; no authorization server is run, the metadata names one under
//! the reserved `.invalid` domain.
//!
//! Pure decisions: the HTTP edge asks [`AuthConfig::refusal`] before it
//! reads a request and serves [`AuthConfig::metadata`] at the well-known URIs.

use serde_json::{json, Value};

use crate::faults::Fault;
use crate::http_reply::{header, HttpReply};

/// The scope a token needs for anything.
pub const READ_SCOPE: &str = "mcp:read";
/// The scope `tools/call` needs too.
pub const TOOLS_SCOPE: &str = "mcp:tools";
/// The well-known path of the metadata (RFC 9728 section 3), before the
/// endpoint's own path.
pub const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// The tokens a protected reference server accepts.
#[derive(Debug, Clone)]
pub struct AuthConfig {
    /// A token with every scope.
    pub token: String,
    /// A token with [`READ_SCOPE`] only: `tools/call` with it is a 403.
    pub limited_token: Option<String>,
}

/// What a request's `Authorization` header holds.
enum Presented<'a> {
    Nothing,
    Bearer(&'a str),
}

fn presented(headers: &[(String, String)]) -> Presented<'_> {
    match header(headers, "authorization") {
        Some(v) if v.len() > 7 && v[..7].eq_ignore_ascii_case("bearer ") => {
            Presented::Bearer(v[7..].trim())
        }
        // Another scheme, or no token after "Bearer": no usable credentials.
        _ => Presented::Nothing,
    }
}

impl AuthConfig {
    /// The metadata URL a challenge names, for a server reached as `host`.
    fn metadata_url(host: &str) -> String {
        format!("http://{host}{WELL_KNOWN}/mcp")
    }

    /// A challenge (`WWW-Authenticate`) for `host`: the scheme, then the
    /// parameters `error` (if any), `scope` and `resource_metadata`.
    fn challenge(host: &str, error: Option<&str>, scope: &str, fault: Option<Fault>) -> String {
        let mut params = Vec::new();
        if let Some(e) = error {
            params.push(format!("error=\"{e}\""));
        }
        if fault != Some(Fault::AuthChallengeNoScope) {
            params.push(format!("scope=\"{scope}\""));
        }
        if fault != Some(Fault::AuthNoMetadata) {
            params.push(format!(
                "resource_metadata=\"{}\"",
                Self::metadata_url(host)
            ));
        }
        format!("Bearer {}", params.join(", "))
    }

    fn all_scopes(fault: Option<Fault>) -> String {
        let mut s = format!("{READ_SCOPE} {TOOLS_SCOPE}");
        if fault == Some(Fault::AuthOfflineAccess) {
            s.push_str(" offline_access");
        }
        s
    }

    /// The refusal of a request with these headers to JSON-RPC `method` (if
    /// the body named one), or `None` when its token may do that.
    /// `session_known`: it carries a live session id (which, under the
    /// `auth-session-authenticates` fault, is taken for credentials).
    pub fn refusal(
        &self,
        headers: &[(String, String)],
        method: Option<&str>,
        session_known: bool,
        fault: Option<Fault>,
    ) -> Option<HttpReply> {
        if fault == Some(Fault::AuthUnchecked) {
            return None;
        }
        let host = header(headers, "host").unwrap_or("localhost");
        let (error, description) = match presented(headers) {
            Presented::Bearer(t) if t == self.token => return None,
            Presented::Bearer(t) if Some(t) == self.limited_token.as_deref() => {
                if method != Some("tools/call") {
                    return None;
                }
                // A valid token without the tools scope: RFC 6750 section 3.1.
                let status = if fault == Some(Fault::AuthScope401) {
                    401
                } else {
                    403
                };
                let mut reply = HttpReply::json(
                    status,
                    &json!({"error": "insufficient_scope",
                        "error_description": format!("tools/call needs the {TOOLS_SCOPE} scope")}),
                );
                let scope = format!("{READ_SCOPE} {TOOLS_SCOPE}");
                let c = Self::challenge(host, Some("insufficient_scope"), &scope, fault);
                reply.headers.push(("WWW-Authenticate".into(), c));
                return Some(reply);
            }
            Presented::Bearer(_) if fault == Some(Fault::AuthForgedAccepted) => return None,
            Presented::Bearer(_) => (Some("invalid_token"), "The access token is not valid"),
            Presented::Nothing
                if session_known && fault == Some(Fault::AuthSessionAuthenticates) =>
            {
                return None
            }
            // No credentials: RFC 6750 section 3.1 asks for no error code.
            Presented::Nothing => (None, "Authentication required"),
        };
        let mut reply = HttpReply::json(
            401,
            &json!({"error": error.unwrap_or("invalid_token"), "error_description": description}),
        );
        if fault != Some(Fault::AuthNoChallenge) {
            let c = Self::challenge(host, error, &Self::all_scopes(fault), fault);
            reply.headers.push(("WWW-Authenticate".into(), c));
        }
        Some(reply)
    }

    /// The protected-resource metadata document (RFC 9728 section 2) served
    /// at the well-known URIs (404 under `auth-no-metadata`).
    pub fn metadata(&self, headers: &[(String, String)], fault: Option<Fault>) -> HttpReply {
        if fault == Some(Fault::AuthNoMetadata) {
            return HttpReply::text(404, "Not Found");
        }
        let host = header(headers, "host").unwrap_or("localhost");
        let mut doc = json!({
            "resource": format!("http://{host}/mcp"),
            "authorization_servers": ["https://auth.mcperr.invalid"],
            "scopes_supported": Self::all_scopes(fault).split(' ').collect::<Vec<_>>(),
            "bearer_methods_supported": ["header"],
            "resource_name": "mcperr reference server",
        });
        if fault == Some(Fault::AuthMetadataNoServers) {
            if let Value::Object(o) = &mut doc {
                o.remove("authorization_servers");
            }
        }
        HttpReply::json(200, &doc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> AuthConfig {
        AuthConfig {
            token: "good".into(),
            limited_token: Some("small".into()),
        }
    }

    fn with(auth: Option<&str>) -> Vec<(String, String)> {
        let mut h = vec![("host".to_string(), "127.0.0.1:9".to_string())];
        if let Some(a) = auth {
            h.push(("Authorization".into(), a.into()));
        }
        h
    }

    fn challenge(r: &HttpReply) -> &str {
        header(&r.headers, "www-authenticate").unwrap_or_default()
    }

    #[test]
    fn no_token_or_a_forged_one_is_a_401_naming_the_metadata() {
        let c = config();
        let none = c
            .refusal(&with(None), Some("tools/list"), false, None)
            .unwrap();
        assert_eq!(none.status, 401);
        assert!(challenge(&none).starts_with("Bearer scope=\"mcp:read mcp:tools\""));
        assert!(challenge(&none).contains(
            "resource_metadata=\"http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp\""
        ));
        let forged = c
            .refusal(&with(Some("Bearer nope")), Some("tools/list"), false, None)
            .unwrap();
        assert_eq!(forged.status, 401);
        assert!(challenge(&forged).contains("error=\"invalid_token\""));
        assert!(c
            .refusal(&with(Some("bearer good")), Some("tools/call"), false, None)
            .is_none());
    }

    #[test]
    fn a_limited_token_lists_but_may_not_call_tools() {
        let c = config();
        let small = with(Some("Bearer small"));
        assert!(c.refusal(&small, Some("tools/list"), false, None).is_none());
        let call = c.refusal(&small, Some("tools/call"), false, None).unwrap();
        assert_eq!(call.status, 403);
        assert!(challenge(&call).starts_with("Bearer error=\"insufficient_scope\""));
    }

    #[test]
    fn the_metadata_names_the_resource_and_an_authorization_server() {
        let r = config().metadata(&with(None), None);
        let doc: Value = serde_json::from_slice(&r.body).unwrap();
        assert_eq!(doc["resource"], "http://127.0.0.1:9/mcp");
        assert_eq!(
            doc["authorization_servers"][0],
            "https://auth.mcperr.invalid"
        );
    }
}
