//! Secret-shaped text in an answer (J7): what a server must not let reach
//! the client when something goes wrong (the source documents' crash hides
//! every word; no published sentence of either era's spec asks it, so the
//! `spec` profile gives it no verdict: fixtures/rules.toml, J7). A small
//! pattern set, each shape specific enough that ordinary prose does not
//! match it:
//!
//! | shape | example |
//! |---|---|
//! | a URL with a password in it (a connection string) | `postgres://app:s3cret@db:5432/x` |
//! | a PEM private key | `-----BEGIN RSA PRIVATE KEY-----` |
//! | a bearer token (20+ token characters) | `Bearer eyJhbGciOi…` |
//! | an AWS access key id | `AKIA` + 16 capitals or digits |
//! | a GitHub token | `ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`, `github_pat_` + 20+ |
//! | a Slack token | `xoxb-`, `xoxp-`, `xoxa-`, `xoxr-`, `xoxs-` + 10+ |
//!
//! Text the request itself carried is not searched (a server may echo its
//! arguments), so only a secret the server added counts.

/// Every shape's start, found in one pass: most answers hold none, and a
/// search per shape cost a campaign a twentieth of its time. The order is
/// [`secret_shape`]'s: it reads the pattern numbers.
static STARTS: std::sync::LazyLock<aho_corasick::AhoCorasick> = std::sync::LazyLock::new(|| {
    aho_corasick::AhoCorasick::new([
        "://",
        "-----BEGIN ",
        "Bearer ",
        "AKIA",
        "ASIA",
        "ghp_",
        "gho_",
        "ghu_",
        "ghs_",
        "ghr_",
        "github_pat_",
        "xoxb-",
        "xoxp-",
        "xoxa-",
        "xoxr-",
        "xoxs-",
    ])
    .expect("fixed patterns")
});

/// The first secret shape found in `text`, named for a report.
pub fn secret_shape(text: &str) -> Option<&'static str> {
    // Which starts occur, in one pass; each shape is then looked at only
    // where its start was seen (a URL's `://` is in many answers).
    let mut seen = 0u32;
    for m in STARTS.find_overlapping_iter(text) {
        seen |= 1 << m.pattern().as_u32();
    }
    if seen == 0 {
        return None;
    }
    let any = |first: u32, last: u32| (first..=last).any(|p| seen & (1 << p) != 0);
    if any(0, 0) && credentials_in_url(text) {
        return Some("a URL with a password in it (a connection string)");
    }
    if any(1, 1) && text.contains("PRIVATE KEY-----") {
        return Some("a PEM private key");
    }
    let token = |b: u8| b.is_ascii_alphanumeric() || b"-._~+/=".contains(&b);
    if any(2, 2) && followed_by(text, "Bearer ", 20, token) {
        return Some("a bearer token");
    }
    let upper = |b: u8| b.is_ascii_uppercase() || b.is_ascii_digit();
    if any(3, 4) && ["AKIA", "ASIA"].iter().any(|p| exactly(text, p, 16, upper)) {
        return Some("an AWS access key id");
    }
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let github = ["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"];
    if any(5, 10) && github.iter().any(|p| followed_by(text, p, 20, word)) {
        return Some("a GitHub token");
    }
    let dashed = |b: u8| b.is_ascii_alphanumeric() || b == b'-';
    let slack = ["xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-"];
    if any(11, 15) && slack.iter().any(|p| followed_by(text, p, 10, dashed)) {
        return Some("a Slack token");
    }
    None
}

/// Whether `prefix` occurs, at a word start, followed by at least `least`
/// bytes that `ok` accepts.
fn followed_by(text: &str, prefix: &str, least: usize, ok: impl Fn(u8) -> bool) -> bool {
    occurrences(text, prefix).any(|end| {
        text.as_bytes()[end..]
            .iter()
            .take_while(|b| ok(**b))
            .count()
            >= least
    })
}

/// Whether `prefix` occurs, at a word start, followed by exactly `n` bytes
/// that `ok` accepts and then no more of them.
fn exactly(text: &str, prefix: &str, n: usize, ok: impl Fn(u8) -> bool) -> bool {
    occurrences(text, prefix).any(|end| {
        let run = text.as_bytes()[end..]
            .iter()
            .take_while(|b| ok(**b))
            .count();
        run == n
    })
}

/// The end offsets of each occurrence of `prefix` that starts a word.
fn occurrences<'a>(text: &'a str, prefix: &'a str) -> impl Iterator<Item = usize> + 'a {
    text.match_indices(prefix).filter_map(move |(i, _)| {
        let bytes = text.as_bytes();
        let before = bytes.get(i.wrapping_sub(1)).copied();
        // Text is searched serialized: `\n`, `\t` before it start a word too.
        let escaped = i >= 2 && bytes[i - 2] == b'\\';
        let starts_word = i == 0 || escaped || !before.is_some_and(|b| b.is_ascii_alphanumeric());
        starts_word.then_some(i + prefix.len())
    })
}

/// `scheme://user:password@host`, the password not empty and not a mask.
fn credentials_in_url(text: &str) -> bool {
    let bytes = text.as_bytes();
    text.match_indices("://").any(|(i, _)| {
        let scheme = bytes[..i]
            .iter()
            .rev()
            .take_while(|b| b.is_ascii_alphanumeric() || b"+.-".contains(b))
            .count();
        if scheme == 0 {
            return false;
        }
        let rest = &bytes[i + 3..];
        let userinfo_end = rest
            .iter()
            .position(|b| matches!(b, b'@' | b'/' | b' ' | b'"' | b'\\' | b'?' | b'#'))
            .filter(|&at| rest[at] == b'@');
        let Some(at) = userinfo_end else {
            return false;
        };
        let userinfo = &rest[..at];
        let Some(colon) = userinfo.iter().position(|b| *b == b':') else {
            return false;
        };
        let password = &userinfo[colon + 1..];
        let host = rest
            .get(at + 1)
            .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'[');
        host && colon > 0 && !password.is_empty() && !password.iter().all(|b| *b == b'*')
    })
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
            (
                "sent Authorization: Bearer abcdefghijklmnopqrstuvwxyz012345",
                "bearer",
            ),
            ("aws AKIAABCDEFGHIJKLMNOP in env", "AWS"),
            ("token ghp_abcdefghijklmnopqrstuvwxyz0123456789", "GitHub"),
            ("slack xoxb-1234567890-abcdef", "Slack"),
            (r"env:\nghp_abcdefghijklmnopqrstuvwxyz0123456789", "GitHub"),
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
        ] {
            assert_eq!(secret_shape(text), None, "{text}");
        }
    }
}
