//! Secret-shaped text in an answer (J7): credentials a server must not let
//! reach the client, found without any canary. The shapes are those of
//! gitleaks' default rule set (its rule ids in brackets), each matched by
//! its fixed prefix and the length and alphabet of what follows, so that
//! ordinary prose does not match:
//!
//! | shape | example |
//! |---|---|
//! | a URL with a password in it, a connection string | `postgres://app:s3cret@db:5432/x` |
//! | a PEM private key [private-key] | `-----BEGIN RSA PRIVATE KEY-----` |
//! | a bearer token (20+ token characters) | `Bearer abc…` |
//! | an AWS access key id [aws-access-token] | `AKIA` + 16 capitals or digits |
//! | a GitHub token [github-pat, github-oauth, github-app-token, github-refresh-token, github-fine-grained-pat] | `ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`, `github_pat_` + 20+ |
//! | a GitLab token [gitlab-pat] | `glpat-` + 20+ |
//! | a Slack token [slack-bot-token, slack-user-token, …] | `xoxb-`, `xoxp-`, `xoxa-`, `xoxr-`, `xoxs-` + 10+ |
//! | a JSON Web Token [jwt] | `eyJ…` `.eyJ…` `.` (header and payload 17+ each) |
//! | an OpenAI- or Anthropic-style API key [openai-api-key, anthropic-api-key] | `sk-` + 32+ of letters, digits, `-`, `_`, mixed case and digits |
//! | a Google API key [gcp-api-key] | `AIza` + 35 |
//! | a Stripe key [stripe-access-token] | `sk_live_`, `rk_live_`, `sk_test_` + 20+ |
//! | an npm token [npm-access-token] | `npm_` + 36 |
//!
//! Text the request itself carried is not searched (a server may echo its
//! arguments), so only a secret the server added counts. [`secret_spans`]
//! gives where each secret is, so that reports show it redacted.

/// A shape: the prefixes it starts with, its name, and where a match that
/// starts at a prefix ends (`None`: not this shape).
struct Shape {
    starts: &'static [&'static str],
    name: &'static str,
    /// Given the text and the end of the prefix, the end of the secret.
    end: fn(&[u8], usize) -> Option<usize>,
}

fn token(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-._~+/=".contains(&b)
}
fn upper(b: u8) -> bool {
    b.is_ascii_uppercase() || b.is_ascii_digit()
}
fn word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}
fn dashed(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-'
}
fn url_safe(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-' || b == b'_'
}

/// The end of the run of bytes `ok` accepts from `at`.
fn run(text: &[u8], at: usize, ok: fn(u8) -> bool) -> usize {
    at + text[at..].iter().take_while(|b| ok(**b)).count()
}

/// At least `least` bytes that `ok` accepts.
fn at_least(text: &[u8], at: usize, least: usize, ok: fn(u8) -> bool) -> Option<usize> {
    let end = run(text, at, ok);
    (end - at >= least).then_some(end)
}

/// Exactly `n` bytes that `ok` accepts, and then no more of them.
fn exactly(text: &[u8], at: usize, n: usize, ok: fn(u8) -> bool) -> Option<usize> {
    let end = run(text, at, ok);
    (end - at == n).then_some(end)
}

/// A random-looking key: lower and upper case letters and a digit.
fn mixed(s: &[u8]) -> bool {
    s.iter().any(u8::is_ascii_lowercase)
        && s.iter().any(u8::is_ascii_uppercase)
        && s.iter().any(u8::is_ascii_digit)
}

const SHAPES: &[Shape] = &[
    Shape {
        starts: &["-----BEGIN "],
        name: "a PEM private key",
        end: |t, at| {
            let label = run(t, at, |b| b.is_ascii_uppercase() || b == b' ');
            (t[..label].ends_with(b"PRIVATE KEY") && t[label..].starts_with(b"-----"))
                .then_some(label + 5)
        },
    },
    Shape {
        starts: &["Bearer "],
        name: "a bearer token",
        end: |t, at| at_least(t, at, 20, token),
    },
    Shape {
        starts: &["AKIA", "ASIA", "ABIA", "ACCA"],
        name: "an AWS access key id",
        end: |t, at| exactly(t, at, 16, upper),
    },
    Shape {
        starts: &["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"],
        name: "a GitHub token",
        end: |t, at| at_least(t, at, 20, word),
    },
    Shape {
        starts: &["glpat-"],
        name: "a GitLab token",
        end: |t, at| at_least(t, at, 20, url_safe),
    },
    Shape {
        starts: &["xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-"],
        name: "a Slack token",
        end: |t, at| at_least(t, at, 10, dashed),
    },
    Shape {
        starts: &["eyJ"],
        name: "a JSON Web Token",
        end: |t, at| {
            let header = at_least(t, at, 14, url_safe)?;
            if !t[header..].starts_with(b".eyJ") {
                return None;
            }
            let payload = at_least(t, header + 4, 14, url_safe)?;
            t[payload..]
                .starts_with(b".")
                .then(|| run(t, payload + 1, url_safe))
        },
    },
    Shape {
        starts: &["sk-"],
        name: "an OpenAI- or Anthropic-style API key",
        end: |t, at| at_least(t, at, 32, url_safe).filter(|&e| mixed(&t[at..e])),
    },
    Shape {
        starts: &["AIza"],
        name: "a Google API key",
        end: |t, at| exactly(t, at, 35, url_safe),
    },
    Shape {
        starts: &["sk_live_", "rk_live_", "sk_test_"],
        name: "a Stripe key",
        end: |t, at| at_least(t, at, 20, |b| b.is_ascii_alphanumeric()),
    },
    Shape {
        starts: &["npm_"],
        name: "an npm token",
        end: |t, at| exactly(t, at, 36, |b| b.is_ascii_alphanumeric()),
    },
];

/// Every shape's start, found in one pass (most answers hold none), and for
/// each pattern the shape it starts; `://` (a URL) last.
static STARTS: std::sync::LazyLock<(aho_corasick::AhoCorasick, Vec<Option<usize>>)> =
    std::sync::LazyLock::new(|| {
        let mut patterns = Vec::new();
        let mut shape_of = Vec::new();
        for (i, s) in SHAPES.iter().enumerate() {
            for p in s.starts {
                patterns.push(*p);
                shape_of.push(Some(i));
            }
        }
        patterns.push("://");
        shape_of.push(None);
        let ac = aho_corasick::AhoCorasick::new(patterns).expect("fixed patterns");
        (ac, shape_of)
    });

/// Whether a prefix at `i` starts a word: text is searched serialized, so
/// an escape (`\n`, `\t`) before it starts a word too. A `-` or `_` before
/// it does not: that is the middle of a base64url run, such as an opaque
/// token the server issued (a sealed `requestState` of 260 random
/// characters holds `-sk-` followed by 32 more about once in 40,000 tokens,
/// which made J7 warn at random on a server that leaked nothing).
fn starts_word(t: &[u8], i: usize) -> bool {
    i == 0
        || (i >= 2 && t[i - 2] == b'\\')
        || !(t[i - 1].is_ascii_alphanumeric() || t[i - 1] == b'-' || t[i - 1] == b'_')
}

/// Every secret in `text`: its byte span and the name of its shape, in
/// order, without overlaps.
pub fn secret_spans(text: &str) -> Vec<(usize, usize, &'static str)> {
    let (ac, shape_of) = &*STARTS;
    let t = text.as_bytes();
    let mut out: Vec<(usize, usize, &'static str)> = Vec::new();
    for m in ac.find_overlapping_iter(text) {
        let found = match shape_of[m.pattern().as_usize()] {
            Some(s) if starts_word(t, m.start()) => {
                (SHAPES[s].end)(t, m.end()).map(|e| (m.start(), e, SHAPES[s].name))
            }
            Some(_) => None,
            None => url_password(t, m.start())
                .map(|(s, e)| (s, e, "a URL with a password in it (a connection string)")),
        };
        if let Some(f) = found {
            if out.last().is_none_or(|l| l.1 <= f.0) {
                out.push(f);
            }
        }
    }
    out
}

/// The first secret shape found in `text`, named for a report.
pub fn secret_shape(text: &str) -> Option<&'static str> {
    secret_spans(text).first().map(|s| s.2)
}

/// `text` with every secret replaced by a marker naming its shape: what a
/// report shows of an answer that carried one.
pub fn redact_secrets(text: &str) -> String {
    let spans = secret_spans(text);
    if spans.is_empty() {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    for (s, e, name) in spans {
        out.push_str(&text[from..s]);
        out.push_str(&format!("[redacted: {name}]"));
        from = e;
    }
    out.push_str(&text[from..]);
    out
}

/// What a snapshot writes in place of the run's canary: already redacted,
/// never a secret where it stands.
pub const CANARY_MARKER: &str = "[canary]";

/// For `scheme://user:password@host` with the `://` at `i`: the password's
/// span, the password not empty and not a mask: `***`, or a marker mcperr
/// itself writes in place of a value ([`CANARY_MARKER`], `[redacted: …]`),
/// text already redacted. Any other password in brackets is a password.
fn url_password(t: &[u8], i: usize) -> Option<(usize, usize)> {
    let scheme = t[..i]
        .iter()
        .rev()
        .take_while(|b| b.is_ascii_alphanumeric() || b"+.-".contains(b))
        .count();
    if scheme == 0 {
        return None;
    }
    let rest = &t[i + 3..];
    let at = rest
        .iter()
        .position(|b| matches!(b, b'@' | b'/' | b' ' | b'"' | b'\\' | b'?' | b'#'))
        .filter(|&at| rest[at] == b'@')?;
    let colon = rest[..at].iter().position(|b| *b == b':')?;
    let password = &rest[colon + 1..at];
    let host = rest
        .get(at + 1)
        .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'[');
    let marker = password == CANARY_MARKER.as_bytes()
        || (password.starts_with(b"[redacted") && password.ends_with(b"]"));
    let mask = password.iter().all(|b| *b == b'*') || marker;
    (host && colon > 0 && !password.is_empty() && !mask).then_some((i + 3 + colon + 1, i + 3 + at))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_documented_shape_is_found() {
        for (text, shape) in [
            (
                "could not connect to postgres://app:s3cret@db.internal:5432/shop",
                "connection string",
            ),
            ("key: -----BEGIN RSA PRIVATE KEY-----\nMIIE", "PEM"),
            ("-----BEGIN PRIVATE KEY-----", "PEM"),
            (
                "sent Authorization: Bearer abcdefghijklmnopqrstuvwxyz012345",
                "bearer",
            ),
            ("aws AKIAABCDEFGHIJKLMNOP in env", "AWS"),
            ("token ghp_abcdefghijklmnopqrstuvwxyz0123456789", "GitHub"),
            ("glpat-abcdefghij0123456789", "GitLab"),
            ("slack xoxb-1234567890-abcdef", "Slack"),
            (r"env:\nghp_abcdefghijklmnopqrstuvwxyz0123456789", "GitHub"),
            (
                "jwt eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
                "JSON Web Token",
            ),
            ("OPENAI_API_KEY=sk-proj-Ab3dEf5hIj7lMn9pQr1tUv3xYz5bCd7fGh9j", "OpenAI"),
            ("sk-ant-api03-Ab3dEf5hIj7lMn9pQr1tUv3xYz5bCd7fGh9jK", "Anthropic"),
            ("key=AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q", "Google"),
            ("stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc", "Stripe"),
            ("npm_abcdefghijklmnopqrstuvwxyz0123456789", "npm"),
        ] {
            let found = secret_shape(text).unwrap_or_else(|| panic!("missed {shape}: {text}"));
            assert!(
                found.to_lowercase().contains(&shape.to_lowercase()),
                "{found} for {shape}"
            );
        }
    }

    #[test]
    fn ordinary_text_is_not_a_secret() {
        for text in [
            "https://example.com/mcperr",
            "https://user@example.com/x",
            "postgres://app:****@db/shop",
            "No book titled 'Dune' in the catalog.",
            "Bearer token missing",
            "AKIA is a prefix",
            "the ghp_ prefix marks GitHub tokens",
            "ratio 1:2@3",
            "mailto:someone@example.com",
            "sk-this-is-a-long-hyphenated-phrase-not-a-key-at-all",
            "eyJ is how base64 JSON starts",
            "task-AIza short",
            // A password already redacted (a snapshot's canary marker).
            "connection string postgres://admin:[canary]@db.internal/shop refused",
            "postgres://admin:[redacted: a URL with a password in it]@db/shop",
            "Error executing tool get_author: No book titled 'mmmmmm' in the catalog.",
            // Inside an opaque base64url token (a sealed requestState, a
            // cursor): random text, not a key someone pasted.
            "v1.wmEqEnffz8aG-sk-r41rtCjhkFbhxjinBYRTpuWooEbVdCm5CtwBDa67",
            "v1.Ab3dEf5hIj7l_ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        ] {
            assert_eq!(secret_shape(text), None, "{text}");
        }
    }

    #[test]
    fn a_report_shows_each_secret_redacted_and_the_rest_as_it_was() {
        let text = r#"{"text":"db postgres://app:s3cret@db/shop and ghp_abcdefghijklmnopqrstuvwxyz0123456789 failed"}"#;
        let out = redact_secrets(text);
        assert!(!out.contains("s3cret") && !out.contains("ghp_abc"), "{out}");
        assert!(
            out.contains("postgres://app:[redacted: a URL with a password"),
            "{out}"
        );
        assert!(out.contains("[redacted: a GitHub token] failed"), "{out}");
        assert!(
            serde_json::from_str::<serde_json::Value>(&out).is_ok(),
            "{out}"
        );
        assert_eq!(redact_secrets("plain"), "plain");
        // Brackets do not make a password a marker.
        assert!(secret_shape("postgres://app:[s3cret]@db/shop").is_some());
    }
}
