//! The rule table: every rule id of the error model with its title, the
//! transports it can be seen over, and per protocol era the spec section and
//! the spec's own sentence with its level (MUST → fail, SHOULD → warn).
//!
//! The table is data (fixtures/rules.toml, built in); case loading, faults,
//! judgements, reports and the tests all read it from here, and user-facing
//! messages cite the section of the era under test.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use mcperr_protocol::Era;
use serde::Deserialize;

use crate::verdict::Verdict;

/// How strongly the spec text words a requirement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum Level {
    /// MUST.
    #[serde(rename = "MUST")]
    Must,
    /// MUST NOT.
    #[serde(rename = "MUST NOT")]
    MustNot,
    /// SHOULD.
    #[serde(rename = "SHOULD")]
    Should,
    /// SHOULD NOT.
    #[serde(rename = "SHOULD NOT")]
    ShouldNot,
    /// MAY.
    #[serde(rename = "MAY")]
    May,
    /// The text says neither.
    #[serde(rename = "none")]
    None,
}

impl Level {
    /// The verdict a deviation gets under the `spec` profile: MUST → fail,
    /// SHOULD → warn, anything weaker → no verdict (`None`).
    pub fn severity(self) -> Option<Verdict> {
        match self {
            Level::Must | Level::MustNot => Some(Verdict::Fail),
            Level::Should | Level::ShouldNot => Some(Verdict::Warn),
            Level::May | Level::None => None,
        }
    }
}

/// One further aspect of a rule with its own sentence.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Aspect {
    /// What the aspect covers.
    pub what: String,
    /// Its level.
    pub level: Level,
    /// The spec's sentence.
    #[serde(default)]
    pub sentence: String,
}

/// What one era's spec says about a rule.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EraText {
    /// Section under `https://modelcontextprotocol.io/specification/<era>/`, with its anchor.
    pub section: String,
    /// The level of the central sentence.
    pub level: Level,
    /// The spec's own sentence, verbatim.
    #[serde(default)]
    pub sentence: String,
    /// What the text does not say, or where it was read.
    #[serde(default)]
    pub note: String,
    /// Further aspects with their own sentences.
    #[serde(default)]
    pub aspects: Vec<Aspect>,
    /// The verdict under `spec` when the text is a known ambiguity rather
    /// than a keyword (`warn`); `note` says why. Default: from `level`.
    #[serde(default)]
    pub verdict: Option<GradeOverride>,
    /// The sentence binds only over this transport (`http`); elsewhere the
    /// text says neither MUST nor SHOULD.
    #[serde(default)]
    pub only_over: Option<String>,
}

/// A verdict a rule table entry sets by hand (a known ambiguity).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GradeOverride {
    /// A warning.
    Warn,
}

impl EraText {
    /// The verdict a deviation gets under the `spec` profile; `None` where
    /// the text neither requires nor recommends (no verdict).
    pub fn spec_verdict(&self) -> Option<Verdict> {
        match self.verdict {
            Some(GradeOverride::Warn) => Some(Verdict::Warn),
            None => self.level.severity(),
        }
    }
}

/// One rule of the error model.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// Stable id (`T1`); reports, baselines and case files name it.
    pub id: String,
    /// What the rule checks, in one line.
    pub title: String,
    /// `tools`, `resources`, `prompts`, `jsonrpc` or `http`.
    pub area: String,
    /// `stdio` and/or `http`: where the rule can be observed.
    pub transports: Vec<String>,
    /// Per era (`2025-11-25`, `2026-07-28`).
    pub era: BTreeMap<String, EraText>,
}

impl Rule {
    /// What `era`'s spec says about this rule.
    pub fn text(&self, era: Era) -> Option<&EraText> {
        self.era.get(era.version())
    }

    /// The citation for messages: `2026-07-28 server/tools#error-handling`.
    pub fn cite(&self, era: Era) -> String {
        match self.text(era) {
            Some(t) => format!("{} {}", era.version(), t.section),
            None => format!("{} (rule {})", era.version(), self.id),
        }
    }

    /// The citation with the spec's sentence, when it has one.
    pub fn cite_with_sentence(&self, era: Era) -> String {
        match self.text(era) {
            Some(t) if !t.sentence.is_empty() => {
                format!("{}: \"{}\"", self.cite(era), t.sentence.trim())
            }
            _ => self.cite(era),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    rule: Vec<Rule>,
}

/// A rule table that does not load.
#[derive(Debug, thiserror::Error)]
#[error("rule table {source_name}: {message}")]
pub struct RulesError {
    /// Where it came from.
    pub source_name: String,
    /// What is wrong.
    pub message: String,
}

/// Parses and validates a rule table's text.
pub fn parse(source: &str, text: &str) -> Result<Vec<Rule>, RulesError> {
    let err = |message: String| RulesError {
        source_name: source.to_string(),
        message,
    };
    let table: Table = toml::from_str(text).map_err(|e| err(e.to_string().replace('\n', " ")))?;
    let mut seen = std::collections::BTreeSet::new();
    for r in &table.rule {
        if !seen.insert(r.id.clone()) {
            return Err(err(format!("rule {} appears twice", r.id)));
        }
        for era in Era::ALL {
            if r.text(era).is_none() {
                return Err(err(format!("rule {} has no text for {era}", r.id)));
            }
        }
        for t in &r.transports {
            if t != "stdio" && t != "http" {
                return Err(err(format!("rule {}: unknown transport {t:?}", r.id)));
            }
        }
    }
    Ok(table.rule)
}

include!(concat!(env!("OUT_DIR"), "/rules.rs"));

/// The built-in rule table. It is checked by this crate's tests, so a broken
/// table never ships; should it not parse anyway, the error is the panic.
pub fn all() -> &'static [Rule] {
    static RULES: OnceLock<Vec<Rule>> = OnceLock::new();
    RULES.get_or_init(|| {
        parse("fixtures/rules.toml", BUILTIN_RULES).unwrap_or_else(|e| panic!("{e}"))
    })
}

/// A rule by id.
pub fn get(id: &str) -> Option<&'static Rule> {
    all().iter().find(|r| r.id == id)
}

/// The verdict a deviation from rule `id` gets under `spec` in `era`
/// (`None`: the spec says neither MUST nor SHOULD: no verdict).
pub fn spec_verdict(id: &str, era: Era) -> Option<Verdict> {
    get(id)
        .and_then(|r| r.text(era))
        .map_or(Some(Verdict::Fail), EraText::spec_verdict)
}

/// The citation of rule `id` in `era` (the id alone for an unknown rule).
pub fn cite(id: &str, era: Era) -> String {
    get(id).map_or_else(|| format!("{era} (rule {id})"), |r| r.cite(era))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_table_loads_with_every_rule_of_the_model() {
        let ids: Vec<&str> = all().iter().map(|r| r.id.as_str()).collect();
        for id in [
            "T1", "T2", "T3", "T4", "T5", "T6", "T7", "T8", "T9", "R1", "R2", "R3", "R4", "R5",
            "R6", "P1", "P2", "P3", "J1", "J2", "J3", "J4", "J5", "J6", "J7", "H1", "H2", "H3",
        ] {
            assert!(ids.contains(&id), "no rule {id}");
        }
        assert!(cite("T3", Era::Modern).starts_with("2026-07-28 "));
    }

    #[test]
    fn a_broken_table_names_what_is_wrong() {
        let dup = "[[rule]]\nid='X'\ntitle=''\narea='tools'\ntransports=['stdio']\n[rule.era.'2025-11-25']\nsection='s'\nlevel='MUST'\n[rule.era.'2026-07-28']\nsection='s'\nlevel='SHOULD'\n";
        assert!(parse("t", dup).is_ok());
        let twice = format!("{dup}{dup}");
        assert!(parse("t", &twice).unwrap_err().message.contains("twice"));
        let no_modern = dup.split("[rule.era.'2026").next().unwrap();
        assert!(parse("t", no_modern)
            .unwrap_err()
            .message
            .contains("2026-07-28"));
    }
}
