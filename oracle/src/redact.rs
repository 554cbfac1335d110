//! Secrets never reach a report. A server under test may echo what it was
//! given or what its process sees (a tool that returns its environment, an
//! error that quotes a header): every report mcperr writes, and what it
//! prints, has the values of environment variables whose names look secret
//! and the values of `--header`s replaced by a marker naming where they came
//! from. Pure: the CLI collects the values and passes every text through it.

/// Name fragments that mark an environment variable as secret.
const SECRET_NAMES: &[&str] = &[
    "TOKEN",
    "SECRET",
    "KEY",
    "PASSWORD",
    "PASSWD",
    "CREDENTIAL",
    "AUTH",
    "COOKIE",
    "SESSION",
    "PRIVATE",
];

/// Values shorter than this are left alone: too common to be a secret and
/// too likely to appear by chance.
const MIN_LEN: usize = 8;

/// Whether `value` could be a secret at all: long enough, and not a plain
/// lowercase word (`enabled`, `localhost`), whose replacement would garble
/// reports without hiding anything.
fn could_be_secret(value: &str) -> bool {
    value.len() >= MIN_LEN && !value.chars().all(|c| c.is_ascii_lowercase())
}

/// Whether an environment variable named `name` holds a secret.
pub fn looks_secret(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    upper.starts_with("AWS_") || SECRET_NAMES.iter().any(|s| upper.contains(s))
}

/// The values to redact, each with the marker that replaces it.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    secrets: Vec<(String, String)>,
}

impl Redactor {
    /// Every secret-looking variable of `env`.
    pub fn from_env(env: impl IntoIterator<Item = (String, String)>) -> Redactor {
        let mut r = Redactor::default();
        for (name, value) in env {
            if looks_secret(&name) {
                r.add(&value, &format!("[redacted: ${name}]"));
            }
        }
        r
    }

    /// Adds a secret-looking variable given to a server (`--env NAME=VALUE`).
    pub fn add_env(&mut self, name: &str, value: &str) {
        self.add(value, &format!("[redacted: ${name}]"));
    }

    /// Adds the value of a `--header NAME: VALUE` (and each long word of it,
    /// so `Bearer TOKEN` hides the token alone too).
    pub fn add_header(&mut self, name: &str, value: &str) {
        let marker = format!("[redacted: --header {name}]");
        self.add(value, &marker);
        for word in value.split_whitespace() {
            self.add(word, &marker);
        }
    }

    fn add(&mut self, value: &str, marker: &str) {
        let value = value.trim();
        if !could_be_secret(value) || self.secrets.iter().any(|(v, _)| v == value) {
            return;
        }
        self.secrets.push((value.to_string(), marker.to_string()));
        // Longest first, so a value that contains another is replaced whole.
        self.secrets
            .sort_by_key(|(v, _)| std::cmp::Reverse(v.len()));
    }

    /// `text` with every secret replaced, as written and as a JSON string
    /// escapes it, and every secret-shaped text (a key, a token, a password
    /// in a URL: [`crate::secrets`]) replaced by its shape's name.
    pub fn redact(&self, text: &str) -> String {
        let mut out = crate::secrets::redact_secrets(text);
        for (value, marker) in &self.secrets {
            if out.contains(value.as_str()) {
                out = out.replace(value.as_str(), marker);
            }
            let escaped = serde_json::to_string(value).unwrap_or_default();
            let escaped = escaped.trim_matches('"');
            if escaped != value && out.contains(escaped) {
                out = out.replace(escaped, marker);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_env_values_and_header_values_never_reach_a_report() {
        let mut r = Redactor::from_env([
            ("GITHUB_TOKEN".into(), "ghp_abcdefghijklmnop".into()),
            (
                "AWS_SECRET_ACCESS_KEY".into(),
                "wJalr\"XUtnFEMI/K7MDENG".into(),
            ),
            ("HOME".into(), "/root/home-dir".into()),
            ("API_KEY".into(), "abc".into()),
            ("AUTH_MODE".into(), "disabled".into()),
        ]);
        r.add_header("Authorization", "Bearer s3cr3t-bearer-token");
        let report = serde_json::json!({
            "env": "GITHUB_TOKEN=ghp_abcdefghijklmnop AWS=wJalr\"XUtnFEMI/K7MDENG home=/root/home-dir",
            "echo": "got header s3cr3t-bearer-token",
        })
        .to_string();
        let out = r.redact(&report);
        assert!(!out.contains("ghp_abcdefghijklmnop"), "{out}");
        assert!(!out.contains("XUtnFEMI"), "{out}");
        assert!(!out.contains("s3cr3t-bearer-token"), "{out}");
        assert!(out.contains("[redacted: $GITHUB_TOKEN]"), "{out}");
        assert!(out.contains("[redacted: --header Authorization]"), "{out}");
        assert!(
            out.contains("/root/home-dir"),
            "not secret-looking: kept: {out}"
        );
        assert_eq!(
            r.redact("disabled abc"),
            "disabled abc",
            "plain words and short values stay"
        );
        assert!(
            serde_json::from_str::<serde_json::Value>(&out).is_ok(),
            "still JSON: {out}"
        );
    }
}
