//! Profiles: how strictly a run judges, loaded from data files.
//!
//! Three are built in (fixtures/profiles), layered: `spec` (the era's
//! specification: a deviation takes the rule's level in the rule table,
//! MUST → fail, SHOULD → warn, neither → no verdict; message texts are not
//! compared), `model` (the error model of the source documents: every
//! deviation fails, texts the fixture contract fixes are compared), and
//! `python-sdk` (`extends = "model"`, plus the MCP Python SDK's documented
//! texts and log lines). `--profile FILE` loads a user's own, which may
//! extend a built-in one. `--strict` turns every warn into a failure.
//!
//! A case's effective expectation is its own `[expect]`, then for each
//! profile from the base up its `[profile.NAME]` and `[profile."NAME@ERA"]`
//! sections and the profile file's matching `[[override]]`s, in that order.

use globset::Glob;
use mcperr_protocol::Era;
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::case::{Alternative, Case, Check, Override, BUILTIN_PROFILES};
use crate::pattern;
/// How deviations are graded: the grading path's own type, named in a profile.
pub use mcperr_model::grading::Grading;
use mcperr_model::rules;

/// Whether message texts are compared.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Texts {
    /// As the case writes them.
    #[default]
    Exact,
    /// Not at all: `error.message` and content `text` only need their type
    /// (SDKs prefix messages, e.g. `MCP error -32602: `); codes and `data` count.
    Ignored,
}

/// A profile file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// Its name; also the key of `[profile.NAME]` sections in case files.
    pub name: String,
    /// What it stands for.
    #[serde(default)]
    pub description: String,
    /// A built-in profile whose sections and overrides apply first.
    #[serde(default)]
    pub extends: Option<String>,
    /// How deviations are graded (default: the base profile's, else `model`).
    #[serde(default, rename = "grading")]
    grading_set: Option<Grading>,
    /// Whether message texts are compared (default: the base profile's, else exact).
    #[serde(default, rename = "texts")]
    texts_set: Option<Texts>,
    /// How deviations are graded.
    #[serde(skip)]
    pub grading: Grading,
    /// Whether message texts are compared.
    #[serde(skip)]
    pub texts: Texts,
    /// Overrides by case-id glob or rule id.
    #[serde(default, rename = "override")]
    pub overrides: Vec<Override>,
    /// `--strict`: every warn is a failure.
    #[serde(skip)]
    pub strict: bool,
    /// The names of this profile and those it extends, base first.
    #[serde(skip)]
    pub lineage: Vec<String>,
}

/// A profile that could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    /// Neither a built-in name nor a readable file.
    #[error(
        "unknown profile '{0}': use spec, model, python-sdk or the path of a profile TOML file"
    )]
    Unknown(String),
    /// The file did not parse.
    #[error("profile file {path}: {message}")]
    Invalid {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
}

/// What a case must produce under one profile.
#[derive(Debug, Clone, PartialEq)]
pub struct Expectation {
    /// The passing shape (the case's own aspect).
    pub pattern: Value,
    /// Shapes each graded by another aspect of the case's rule.
    pub aspects: Vec<(mcperr_model::rules::AspectId, Value)>,
    /// Other passing shapes.
    pub also_pass: Vec<Alternative>,
    /// Warning shapes.
    pub warn: Vec<Alternative>,
    /// Named checks.
    pub checks: Vec<Check>,
}

/// Whether a string at `path` (the keys from the response root) is a
/// message text: `error.message`, or the `text` of a content block.
fn is_text(path: &[String]) -> bool {
    match path {
        [.., parent, key] if parent == "error" && key == "message" => true,
        [.., content, _, key] if content == "content" && key == "text" => true,
        // A prompt message's content is one block, not a list.
        [.., content, key] if content == "content" && key == "text" => true,
        _ => false,
    }
}

/// Whether a pattern string compares text (a literal or a text matcher), as
/// opposed to a type or presence matcher.
fn compares_text(s: &str) -> bool {
    !s.starts_with('$')
        || s.starts_with("$$")
        || ["$contains:", "$prefix:", "$word:"]
            .iter()
            .any(|m| s.starts_with(m))
}

/// `pattern` without comparisons of message texts: a text becomes `$string`
/// (its type still counts); an `$exact` error keeps its code and data exact.
fn without_texts(pattern: &Value, path: &mut Vec<String>) -> Value {
    match pattern {
        Value::String(s) if is_text(path) && compares_text(s) => Value::String("$string".into()),
        // A set of values compared as JSON is left whole.
        Value::Object(fields) if fields.len() == 1 && fields.contains_key("$unordered") => {
            pattern.clone()
        }
        Value::Object(fields) if fields.len() == 1 && fields.contains_key("$exact") => {
            match (&fields["$exact"], path.last().map(String::as_str)) {
                (Value::Object(exact), Some("error")) if exact.contains_key("message") => {
                    let mut out = Map::new();
                    for (k, v) in exact {
                        let v = if k == "message" {
                            Value::String("$string".into())
                        } else {
                            serde_json::json!({ "$exact": v })
                        };
                        out.insert(k.clone(), v);
                    }
                    out.entry("data").or_insert(Value::String("$absent".into()));
                    Value::Object(out)
                }
                _ => pattern.clone(),
            }
        }
        Value::Object(fields) => Value::Object(
            fields
                .iter()
                .map(|(k, v)| {
                    path.push(k.clone());
                    let out = without_texts(v, path);
                    path.pop();
                    (k.clone(), out)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    path.push(i.to_string());
                    let out = without_texts(v, path);
                    path.pop();
                    out
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

impl Profile {
    /// Parses a profile file's text.
    pub fn parse(path: &str, text: &str) -> Result<Profile, ProfileError> {
        let invalid = |message: String| ProfileError::Invalid {
            path: path.to_string(),
            message,
        };
        let mut p: Profile =
            toml::from_str(text).map_err(|e| invalid(e.to_string().trim().replace('\n', " ")))?;
        for o in &p.overrides {
            for g in &o.cases {
                Glob::new(g).map_err(|e| invalid(format!("bad case glob '{g}': {e}")))?;
            }
            for c in &o.checks {
                c.parse::<Check>().map_err(|e| invalid(e.0))?;
            }
            for r in &o.rules {
                if rules::get(r).is_none() {
                    return Err(invalid(format!("override names unknown rule {r:?}")));
                }
            }
        }
        p.lineage = vec![p.name.clone()];
        p.grading = p.grading_set.unwrap_or_default();
        p.texts = p.texts_set.unwrap_or_default();
        if let Some(base) = p.extends.clone() {
            let base = Self::builtin(&base)
                .ok_or_else(|| invalid(format!("extends {base:?}: not a built-in profile")))??;
            p.grading = p.grading_set.unwrap_or(base.grading);
            p.texts = p.texts_set.unwrap_or(base.texts);
            let mut overrides = base.overrides;
            overrides.append(&mut p.overrides);
            p.overrides = overrides;
            let mut lineage = base.lineage;
            lineage.append(&mut p.lineage);
            p.lineage = lineage;
        }
        Ok(p)
    }

    fn builtin(name: &str) -> Option<Result<Profile, ProfileError>> {
        BUILTIN_PROFILES
            .iter()
            .find(|(p, _)| *p == format!("profiles/{name}.toml"))
            .map(|(path, text)| Profile::parse(path, text))
    }

    /// A built-in profile by name, or a profile file by path.
    pub fn load(name_or_path: &str) -> Result<Profile, ProfileError> {
        if let Some(p) = Self::builtin(name_or_path) {
            return p;
        }
        match std::fs::read_to_string(name_or_path) {
            Ok(text) => Profile::parse(name_or_path, &text),
            Err(_) => Err(ProfileError::Unknown(name_or_path.to_string())),
        }
    }

    fn applies(o: &Override, case: &Case) -> bool {
        let by_rule = o.rules.iter().any(|r| case.rule == r.as_str());
        let by_id = o
            .cases
            .iter()
            .any(|g| Glob::new(g).is_ok_and(|g| g.compile_matcher().is_match(&case.id)));
        by_rule || by_id
    }

    /// The effective expectation of `case` under this profile in `era`.
    pub fn expectation(&self, case: &Case, era: Era) -> Expectation {
        let mut e = Expectation {
            pattern: case.expect.clone(),
            aspects: case
                .aspects
                .iter()
                .map(|(name, p)| (case.aspect_named(Some(name)), p.clone()))
                .collect(),
            also_pass: case.also_pass.clone(),
            warn: case.warn.clone(),
            checks: case.checks.iter().filter_map(|c| c.parse().ok()).collect(),
        };
        let own = self.lineage.iter().flat_map(|name| {
            [
                case.profile.get(name),
                case.profile.get(&format!("{name}@{era}")),
            ]
        });
        let from_file = self.overrides.iter().filter(|o| Self::applies(o, case));
        for o in own.flatten().chain(from_file) {
            if let Some(extra) = &o.expect {
                pattern::merge(&mut e.pattern, extra);
            }
            e.also_pass.extend(o.also_pass.iter().cloned());
            e.warn.extend(o.warn.iter().cloned());
            e.checks
                .extend(o.checks.iter().filter_map(|c| c.parse::<Check>().ok()));
        }
        if self.texts == Texts::Ignored {
            e.pattern = without_texts(&e.pattern, &mut Vec::new());
            for (_, p) in &mut e.aspects {
                *p = without_texts(p, &mut Vec::new());
            }
        }
        e.also_pass.retain(|a| a.in_era(era));
        e.warn.retain(|a| a.in_era(era));
        e.checks.sort();
        e.checks.dedup();
        e
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn texts_ignored_keeps_types_codes_and_data() {
        let p = json!({"result": {"content": [{"type": "text", "text": "Error executing tool crash"}], "isError": true},
                       "error": {"code": -32602, "message": "$contains:Unknown", "data": {"uri": "x"}}});
        let out = without_texts(&p, &mut Vec::new());
        assert_eq!(out["result"]["content"][0]["text"], "$string");
        assert_eq!(out["result"]["content"][0]["type"], "text");
        assert_eq!(out["error"]["message"], "$string");
        assert_eq!(out["error"]["code"], -32602);
        assert_eq!(out["error"]["data"]["uri"], "x");
        let exact = json!({"error": {"$exact": {"code": 1, "message": "m"}}});
        let out = without_texts(&exact, &mut Vec::new());
        assert_eq!(out["error"]["message"], "$string");
        assert_eq!(out["error"]["code"], json!({"$exact": 1}));
        assert_eq!(out["error"]["data"], "$absent");
        let prompt = json!({"result": {"messages": {"0": {"content": {"type": "text", "text": "Hello, Ada!"}}}}});
        let out = without_texts(&prompt, &mut Vec::new());
        assert_eq!(out["result"]["messages"]["0"]["content"]["text"], "$string");
        let dotted = json!({"result": {"content": {"0": {"text": "$word:limit"}}}});
        assert_eq!(
            without_texts(&dotted, &mut Vec::new())["result"]["content"]["0"]["text"],
            "$string"
        );
    }

    #[test]
    fn a_profile_extending_spec_grades_as_spec_unless_it_says_otherwise() {
        let p = Profile::parse("mine.toml", "name = \"mine\"\nextends = \"spec\"\n").unwrap();
        assert_eq!((p.grading, p.texts), (Grading::Spec, Texts::Ignored));
        let p = Profile::parse(
            "mine.toml",
            "name = \"mine\"\nextends = \"spec\"\ngrading = \"model\"\n",
        )
        .unwrap();
        assert_eq!(p.grading, Grading::Model);
    }

    #[test]
    fn python_sdk_extends_model() {
        let p = Profile::load("python-sdk").unwrap();
        assert_eq!(p.lineage, ["model", "python-sdk"]);
        assert_eq!(p.grading, Grading::Model);
        assert_eq!(Profile::load("spec").unwrap().grading, Grading::Spec);
    }
}
