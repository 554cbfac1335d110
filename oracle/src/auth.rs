//! A1: how a protected server refuses a request (401/403 with a Bearer
//! challenge, no data) and where it says its protected-resource metadata is
//! (the challenge's `resource_metadata`, else the well-known URIs of RFC
//! 9728). Judged only on runs with `--auth-required`; the executor fetches
//! the metadata and hands it over as a [`MetadataProbe`].

use serde_json::Value;

use crate::Violation;
use mcperr_cases::case::Check;
use mcperr_model::rules::AspectId;
use mcperr_wire::exchange::Exchange;

/// What the executor found looking for a protected server's metadata.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MetadataProbe {
    /// Each URL tried, in order, with its HTTP status (`None`: no answer).
    pub tried: Vec<(String, Option<u16>)>,
    /// The first that answered 200 with a JSON object: its URL and document.
    pub found: Option<(String, Value)>,
    /// The URL the challenge's `resource_metadata` named, if any.
    pub named: Option<String>,
}

/// The scheme and parameters of a `WWW-Authenticate` challenge
/// (`Bearer k="v", k2=token`, RFC 9110 section 11.6.1); names lower-cased.
pub fn challenge(header: &str) -> (String, Vec<(String, String)>) {
    let header = header.trim();
    let (scheme, rest) = header.split_once(' ').unwrap_or((header, ""));
    let mut params = Vec::new();
    let mut rest = rest.trim_start();
    while let Some((name, after)) = rest.split_once('=') {
        let name = name
            .trim()
            .trim_start_matches(',')
            .trim()
            .to_ascii_lowercase();
        let after = after.trim_start();
        let (value, tail) = if let Some(quoted) = after.strip_prefix('"') {
            let mut value = String::new();
            let mut chars = quoted.char_indices();
            let mut end = quoted.len();
            while let Some((i, c)) = chars.next() {
                match c {
                    '\\' => {
                        if let Some((_, n)) = chars.next() {
                            value.push(n);
                        }
                    }
                    '"' => {
                        end = i + 1;
                        break;
                    }
                    c => value.push(c),
                }
            }
            (value, &quoted[end.min(quoted.len())..])
        } else {
            let end = after.find(',').unwrap_or(after.len());
            (after[..end].trim().to_string(), &after[end..])
        };
        params.push((name, value));
        rest = tail.trim_start().trim_start_matches(',').trim_start();
    }
    (scheme.to_string(), params)
}

fn param<'a>(params: &'a [(String, String)], name: &str) -> Option<&'a str> {
    params
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// The metadata URLs to try for `endpoint`, in order: the challenge's
/// `resource_metadata`, then RFC 9728 section 3.1's well-known URI with the
/// endpoint's path, then the one at the root (basic/authorization: "MCP
/// clients MUST ... fall back to constructing and requesting the well-known
/// URIs in the order listed above").
pub fn metadata_urls(endpoint: &str, named: Option<&str>) -> Vec<String> {
    let mut out: Vec<String> = named.map(str::to_string).into_iter().collect();
    let (scheme, rest) = endpoint.split_once("://").unwrap_or(("http", endpoint));
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    let path = path
        .split(['?', '#'])
        .next()
        .unwrap_or("")
        .trim_end_matches('/');
    let base = format!("{scheme}://{authority}/.well-known/oauth-protected-resource");
    if !path.is_empty() {
        out.push(format!("{base}{path}"));
    }
    out.push(base);
    out.dedup();
    out
}

/// The refusal's challenge header, parsed, if it has one.
fn refusal_challenge(exchange: &Exchange) -> Option<(String, Vec<(String, String)>)> {
    let answer = exchange.http.as_ref()?;
    answer.header("www-authenticate").map(challenge)
}

/// The violations of the auth `checks` a case asks for, on its refusal.
pub fn violations(
    checks: &[Check],
    exchange: &Exchange,
    probe: Option<&MetadataProbe>,
) -> Vec<Violation> {
    let mut out = Vec::new();
    let status = exchange.http.as_ref().map(|a| a.status);
    let parsed = refusal_challenge(exchange);
    let insufficient = parsed
        .as_ref()
        .and_then(|(_, p)| param(p, "error"))
        .is_some_and(|e| e == "insufficient_scope");
    for check in checks {
        match check {
            Check::BearerChallenge => match &parsed {
                // A 403 for too few scopes names its error (RFC 6750 section 3.1).
                Some((scheme, _)) if scheme.eq_ignore_ascii_case("bearer") => {
                    if status == Some(403) && !insufficient {
                        out.push(Violation::new(
                            AspectId::A1InsufficientScope403,
                            "the 403's challenge does not say error=\"insufficient_scope\""
                                .to_string(),
                        ));
                    }
                }
                Some((scheme, _)) => out.push(Violation::new(
                    AspectId::A1BearerChallenge,
                    format!(
                        "the {} challenge's scheme is {scheme:?}, not Bearer",
                        status.unwrap_or(0)
                    ),
                )),
                None => out.push(Violation::new(
                    AspectId::A1BearerChallenge,
                    format!(
                        "the {} carries no WWW-Authenticate challenge",
                        status.unwrap_or(0)
                    ),
                )),
            },
            Check::ChallengeScope => {
                let scope = parsed.as_ref().and_then(|(_, p)| param(p, "scope"));
                if scope.is_none_or(|s| s.trim().is_empty()) {
                    let aspect = if insufficient {
                        AspectId::A1InsufficientScopeListsScopes
                    } else {
                        AspectId::A1ChallengeScope
                    };
                    out.push(Violation::new(
                        aspect,
                        "the challenge names no scope".to_string(),
                    ));
                }
            }
            Check::NoResult => {
                if let Some(r) = exchange.response().filter(|r| r.get("result").is_some()) {
                    out.push(Violation::new(
                        AspectId::A1NoData,
                        format!("the refused request's answer carries a result: {r}"),
                    ));
                }
            }
            Check::ResourceMetadata => out.extend(metadata(probe, parsed.as_ref())),
            _ => {}
        }
    }
    out
}

/// The metadata's violations: not found by either mechanism, not an RFC
/// 9728 document, no authorization server, `offline_access` offered.
fn metadata(
    probe: Option<&MetadataProbe>,
    parsed: Option<&(String, Vec<(String, String)>)>,
) -> Vec<Violation> {
    let mut out = Vec::new();
    let Some(probe) = probe else {
        return out;
    };
    let tried = || {
        probe
            .tried
            .iter()
            .map(|(u, s)| format!("{u} ({})", s.map_or("no answer".into(), |s| s.to_string())))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let Some((url, doc)) = &probe.found else {
        out.push(Violation::new(
            AspectId::A1DiscoveryMechanism,
            format!(
                "no protected-resource metadata: the 401 challenge {} and no well-known URI served it (tried {})",
                if probe.named.is_some() { "names a resource_metadata URL that did not serve it" } else { "names no resource_metadata" },
                tried()
            ),
        ));
        return out;
    };
    if doc.get("resource").and_then(Value::as_str).is_none() {
        out.push(Violation::new(
            AspectId::A1MetadataDocument,
            format!("the metadata at {url} has no resource (RFC 9728 section 2: REQUIRED): {doc}"),
        ));
    }
    let servers = doc.get("authorization_servers").and_then(Value::as_array);
    if servers.is_none_or(|s| s.is_empty()) {
        out.push(Violation::new(
            AspectId::A1AuthorizationServers,
            format!("the metadata at {url} lists no authorization_servers: {doc}"),
        ));
    }
    let offered = doc
        .get("scopes_supported")
        .and_then(Value::as_array)
        .is_some_and(|s| s.iter().any(|v| v == "offline_access"));
    let challenged = parsed
        .and_then(|(_, p)| param(p, "scope"))
        .is_some_and(|s| s.split_whitespace().any(|x| x == "offline_access"));
    if offered || challenged {
        out.push(Violation::new(
            AspectId::A1NoOfflineAccess,
            format!(
                "offline_access is offered in the {}",
                if offered {
                    "metadata's scopes_supported"
                } else {
                    "challenge's scope"
                }
            ),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_challenge_reads_quoted_and_bare_parameters() {
        let (scheme, p) = challenge(
            r#"Bearer error="insufficient_scope", scope="a b", resource_metadata="http://h/x", realm=mcp"#,
        );
        assert_eq!(scheme, "Bearer");
        assert_eq!(param(&p, "scope"), Some("a b"));
        assert_eq!(param(&p, "resource_metadata"), Some("http://h/x"));
        assert_eq!(param(&p, "realm"), Some("mcp"));
        assert_eq!(challenge("Basic").0, "Basic");
    }

    #[test]
    fn metadata_urls_follow_the_challenge_then_rfc_9728() {
        assert_eq!(
            metadata_urls("http://h:1/public/mcp/", Some("http://h:1/m")),
            [
                "http://h:1/m",
                "http://h:1/.well-known/oauth-protected-resource/public/mcp",
                "http://h:1/.well-known/oauth-protected-resource"
            ]
        );
        assert_eq!(
            metadata_urls("http://h", None),
            ["http://h/.well-known/oauth-protected-resource"]
        );
    }
}
