//! Profiles: named sets of overrides on cases, loaded from data files.
//!
//! `spec` and `python-sdk` are built in (fixtures/profiles); `--profile FILE`
//! loads a user's own. A case's effective expectation is its own `[expect]`
//! plus its `[profile.NAME]` section plus every matching `[[override]]` of the
//! profile file, in that order.

use globset::Glob;
use mcperr_protocol::Era;
use serde::Deserialize;
use serde_json::Value;

use crate::case::{Alternative, Case, Check, Override, BUILTIN_PROFILES};
use crate::pattern;

/// A profile file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// Its name; also the key of `[profile.NAME]` sections in case files.
    pub name: String,
    /// What it stands for.
    #[serde(default)]
    pub description: String,
    /// Overrides by case-id glob or rule id.
    #[serde(default, rename = "override")]
    pub overrides: Vec<Override>,
}

/// A profile that could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    /// Neither a built-in name nor a readable file.
    #[error("unknown profile '{0}': use spec, python-sdk or the path of a profile TOML file")]
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
    /// The passing shape.
    pub pattern: Value,
    /// Other passing shapes.
    pub also_pass: Vec<Alternative>,
    /// Warning shapes.
    pub warn: Vec<Alternative>,
    /// Named checks.
    pub checks: Vec<Check>,
}

impl Profile {
    /// Parses a profile file's text.
    pub fn parse(path: &str, text: &str) -> Result<Profile, ProfileError> {
        let invalid = |message: String| ProfileError::Invalid {
            path: path.to_string(),
            message,
        };
        let p: Profile =
            toml::from_str(text).map_err(|e| invalid(e.to_string().trim().replace('\n', " ")))?;
        for o in &p.overrides {
            for g in &o.cases {
                Glob::new(g).map_err(|e| invalid(format!("bad case glob '{g}': {e}")))?;
            }
            for c in &o.checks {
                c.parse::<Check>().map_err(invalid)?;
            }
        }
        Ok(p)
    }

    /// A built-in profile by name, or a profile file by path.
    pub fn load(name_or_path: &str) -> Result<Profile, ProfileError> {
        if let Some((path, text)) = BUILTIN_PROFILES
            .iter()
            .find(|(p, _)| *p == format!("profiles/{name_or_path}.toml"))
        {
            return Profile::parse(path, text);
        }
        match std::fs::read_to_string(name_or_path) {
            Ok(text) => Profile::parse(name_or_path, &text),
            Err(_) => Err(ProfileError::Unknown(name_or_path.to_string())),
        }
    }

    fn applies(o: &Override, case: &Case) -> bool {
        let by_rule = o.rules.contains(&case.rule);
        let by_id = o
            .cases
            .iter()
            .any(|g| Glob::new(g).is_ok_and(|g| g.compile_matcher().is_match(&case.id)));
        by_rule || by_id
    }

    /// The effective expectation of `case` under this profile.
    pub fn expectation(&self, case: &Case, era: Era) -> Expectation {
        let mut e = Expectation {
            pattern: case.expect.clone(),
            also_pass: case.also_pass.clone(),
            warn: case.warn.clone(),
            checks: case.checks.iter().filter_map(|c| c.parse().ok()).collect(),
        };
        let own = case.profile.get(&self.name).into_iter();
        let from_file = self.overrides.iter().filter(|o| Self::applies(o, case));
        for o in own.chain(from_file) {
            if let Some(extra) = &o.expect {
                pattern::merge(&mut e.pattern, extra);
            }
            e.also_pass.extend(o.also_pass.iter().cloned());
            e.warn.extend(o.warn.iter().cloned());
            e.checks
                .extend(o.checks.iter().filter_map(|c| c.parse::<Check>().ok()));
        }
        e.also_pass.retain(|a| a.in_era(era));
        e.warn.retain(|a| a.in_era(era));
        e.checks.sort();
        e.checks.dedup();
        e
    }
}
