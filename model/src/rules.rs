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

pub use crate::level::Level;

/// One further aspect of a rule with its own sentence.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Aspect {
    /// Its id within the rule (`validate-inputs`): checks name it as [`AspectId`].
    pub id: String,
    /// What the aspect covers.
    pub what: String,
    /// Its level.
    pub level: Level,
    /// The spec's sentence.
    #[serde(default)]
    pub sentence: String,
    /// The section of the sentence, where it is not the era's.
    #[serde(default)]
    pub section: Option<String>,
    /// Where the sentence was read, or what it does not say.
    #[serde(default)]
    pub note: String,
    /// The era whose sentence this is, where the era's own page is not
    /// stored and the nearest era's sentence stands in (quoted as such).
    #[serde(default)]
    pub from_era: Option<String>,
    /// The text the sentence is quoted from, where it is not the MCP
    /// spec's own (`JSON-RPC 2.0 §5`): the section then binds it.
    #[serde(default)]
    pub quoted_from: Option<String>,
    /// A known ambiguity: a deviation is at most a warning, under every profile.
    #[serde(default)]
    pub at_most: Option<GradeOverride>,
    /// The sentence binds only over this transport (`http`).
    #[serde(default)]
    pub only_over: Option<String>,
    /// The requirement is another era's alone (`2026-07-28`): this era's
    /// spec says nothing of it, and no profile gives it a verdict here.
    #[serde(default)]
    pub only_in: Option<String>,
    /// Whether the aspect belongs to the source documents' error model,
    /// where it differs from its rule's `error_model`.
    #[serde(default)]
    pub error_model: Option<bool>,
    /// The ids of the era's requirements (fixtures/requirements/<era>.toml)
    /// this aspect's check judges: the registry's `checked_by` is made
    /// from these links, so a new check is linked in the table alone.
    #[serde(default)]
    pub requirements: Vec<String>,
}

/// A sentence of the era's spec that no check of mcperr judges, kept with
/// its level so the requirement is not lost (and can be checked later).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Unchecked {
    /// What it covers.
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
    /// Sentences of this era that no check judges.
    #[serde(default)]
    pub unchecked: Vec<Unchecked>,
    /// The sentence binds only over this transport (`http`); elsewhere the
    /// text says neither MUST nor SHOULD.
    #[serde(default)]
    pub only_over: Option<String>,
    /// The era whose sentence this is, where this era's page is not stored.
    #[serde(default)]
    pub from_era: Option<String>,
    /// The text the sentence is quoted from, where it is not the MCP
    /// spec's own (`JSON-RPC 2.0 §5`): the section then binds it.
    #[serde(default)]
    pub quoted_from: Option<String>,
    /// The ids of the era's requirements the central sentence's check
    /// judges (as [`Aspect::requirements`]).
    #[serde(default)]
    pub requirements: Vec<String>,
}

/// A verdict a rule table entry sets by hand (a known ambiguity).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GradeOverride {
    /// A warning.
    Warn,
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
    /// A row of the source documents' error model (tools, resources,
    /// prompts, the crash row): `model` and `python-sdk` fail its deviations.
    #[serde(default)]
    pub error_model: bool,
    /// Per era (`2025-11-25`, `2026-07-28`).
    pub era: BTreeMap<String, EraText>,
}

impl Rule {
    /// What `era`'s spec says about this rule.
    pub fn text(&self, era: Era) -> Option<&EraText> {
        self.era.get(era.version())
    }
}

/// What one era's spec says about one aspect: its level, sentence and
/// section, read from the table (the central sentence for `main`). An aspect
/// the era's text does not list has level `none` there.
#[derive(Debug, Clone, Copy)]
pub struct AspectText<'a> {
    /// The era asked about.
    pub era: Era,
    /// What the aspect covers.
    pub what: &'a str,
    /// Its level in that era.
    pub level: Level,
    /// The sentence, verbatim (empty where the era has none).
    pub sentence: &'a str,
    /// Its section under `https://modelcontextprotocol.io/specification/<era>/`.
    pub section: &'a str,
    /// Where it was read, or what the text does not say.
    pub note: &'a str,
    /// The era whose sentence stands in, where this era's page is not stored.
    pub from_era: Option<&'a str>,
    /// The text the sentence is quoted from, where it is not the MCP spec's
    /// own (`JSON-RPC 2.0 §5`): the section then binds it.
    pub quoted_from: Option<&'a str>,
    /// A deviation is at most a warning, under every profile.
    pub at_most_warn: bool,
    /// The sentence binds only over this transport.
    pub only_over: Option<&'a str>,
    /// The requirement is this other era's alone: no verdict here.
    pub only_in: Option<&'a str>,
    /// Part of the source documents' error model: escalated by `model`.
    pub error_model: bool,
}

impl AspectText<'_> {
    /// The citation messages end with: era, section and the sentence, saying
    /// when the sentence has no keyword, is another era's, or is missing.
    pub fn cite(&self) -> String {
        let era = self.from_era.unwrap_or(self.era.version());
        let mut out = format!("{era} {}", self.section);
        if self.sentence.is_empty() {
            out.push_str(" (no sentence of this era's spec requires it)");
            return out;
        }
        if let Some(source) = self.quoted_from {
            out = format!("{source} (bound by {out})");
        }
        out.push_str(&format!(": \"{}\"", self.sentence.trim()));
        if self.level == Level::Described {
            out.push_str(" (the spec states this as fact, without an RFC 2119 keyword)");
        }
        if self.from_era.is_some() {
            out.push_str(&format!(
                " (the {} page is not stored: the nearest era's sentence)",
                self.era
            ));
        }
        out
    }
}

impl RuleId {
    /// The rule's entry in the table.
    pub fn rule(self) -> &'static Rule {
        &all()[RuleId::ALL.iter().position(|r| *r == self).unwrap_or(0)]
    }

    /// The rule's central sentence in `era`, cited.
    pub fn cite(self, era: Era) -> String {
        self.main().text(era).cite()
    }
}

/// As its id, padded to a width where one is given (`{:<4}`), as a string is.
impl std::fmt::Display for RuleId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

/// A rule or aspect id the table does not have; the message lists the known ones.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct UnknownId(pub String);

impl std::str::FromStr for RuleId {
    type Err = UnknownId;
    fn from_str(s: &str) -> Result<Self, UnknownId> {
        RuleId::ALL
            .iter()
            .copied()
            .find(|r| r.as_str() == s)
            .ok_or_else(|| {
                let known: Vec<&str> = RuleId::ALL.iter().map(|r| r.as_str()).collect();
                UnknownId(format!(
                    "unknown rule {s:?} (the rule table has {})",
                    known.join(", ")
                ))
            })
    }
}

impl serde::Serialize for RuleId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for RuleId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

impl PartialEq<&str> for RuleId {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl AspectId {
    /// The aspect `name` of `rule` (`main` for the central sentence).
    pub fn find(rule: RuleId, name: &str) -> Option<AspectId> {
        AspectId::ALL
            .iter()
            .copied()
            .find(|a| a.rule() == rule && a.name() == name)
    }

    /// `T4.validate-inputs` (`T4` for the central sentence).
    pub fn qualified(self) -> String {
        match self.name() {
            "main" => self.rule().to_string(),
            name => format!("{}.{name}", self.rule()),
        }
    }

    /// What `era`'s spec says about this aspect.
    pub fn text(self, era: Era) -> AspectText<'static> {
        let t = self.table_text(era);
        #[cfg(test)]
        if let Some((a, e, level)) = LEVEL_OVERRIDE.get() {
            if a == self && e == era {
                return AspectText { level, ..t };
            }
        }
        t
    }

    fn table_text(self, era: Era) -> AspectText<'static> {
        let rule = self.rule().rule();
        let t = rule
            .text(era)
            .expect("every rule has a text per era (checked on load)");
        let base = AspectText {
            era,
            what: &rule.title,
            level: t.level,
            sentence: &t.sentence,
            section: &t.section,
            note: &t.note,
            from_era: t.from_era.as_deref(),
            quoted_from: t.quoted_from.as_deref(),
            at_most_warn: false,
            only_over: t.only_over.as_deref(),
            only_in: None,
            error_model: rule.error_model,
        };
        if self.name() == "main" {
            return base;
        }
        match t.aspects.iter().find(|a| a.id == self.name()) {
            Some(a) => AspectText {
                what: &a.what,
                level: a.level,
                sentence: &a.sentence,
                section: a.section.as_deref().unwrap_or(&t.section),
                note: &a.note,
                from_era: a.from_era.as_deref(),
                quoted_from: a.quoted_from.as_deref(),
                at_most_warn: a.at_most == Some(GradeOverride::Warn),
                only_over: a.only_over.as_deref(),
                only_in: a.only_in.as_deref(),
                error_model: a.error_model.unwrap_or(rule.error_model),
                ..base
            },
            None => AspectText {
                what: "",
                level: Level::None,
                sentence: "",
                note: "this era's text does not list the aspect",
                from_era: None,
                quoted_from: None,
                only_over: None,
                ..base
            },
        }
    }
}

#[cfg(test)]
thread_local! {
    /// Tests only: one aspect's level in one era replaced, to prove that a
    /// verdict follows the table and nothing else.
    pub(crate) static LEVEL_OVERRIDE: std::cell::Cell<Option<(AspectId, Era, Level)>> =
        const { std::cell::Cell::new(None) };
}

impl std::fmt::Display for AspectId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.qualified())
    }
}

impl serde::Serialize for AspectId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.qualified())
    }
}

impl std::str::FromStr for AspectId {
    type Err = UnknownId;
    /// `T4.validate-inputs`, or `T4` for the central sentence.
    fn from_str(s: &str) -> Result<Self, UnknownId> {
        let (rule, name) = s.split_once('.').unwrap_or((s, "main"));
        let rule: RuleId = rule.parse()?;
        AspectId::find(rule, name).ok_or_else(|| {
            let known: Vec<&str> = AspectId::ALL
                .iter()
                .filter(|a| a.rule() == rule)
                .map(|a| a.name())
                .collect();
            UnknownId(format!(
                "rule {rule} has no aspect {name:?} (it has {})",
                known.join(", ")
            ))
        })
    }
}

impl<'de> Deserialize<'de> for AspectId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
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
        for (era, t) in &r.era {
            let mut ids = std::collections::BTreeSet::new();
            for a in &t.aspects {
                if a.id == "main" || !ids.insert(a.id.as_str()) {
                    return Err(err(format!(
                        "rule {} {era}: aspect id {:?} is reserved or appears twice",
                        r.id, a.id
                    )));
                }
                // Another era's requirement has no sentence in this one.
                let other = a.only_in.as_deref().is_some_and(|o| o != era);
                if a.only_in.is_some() && (!other || a.level != Level::None) {
                    return Err(err(format!("rule {} {era}: aspect {} is only_in another era: its level here must be none", r.id, a.id)));
                }
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
        assert!(RuleId::T3.cite(Era::Modern).starts_with("2026-07-28 "));
        let ids: Vec<&str> = RuleId::ALL.iter().map(|r| r.as_str()).collect();
        assert_eq!(ids, all().iter().map(|r| r.id.as_str()).collect::<Vec<_>>());
    }

    #[test]
    fn a_broken_table_names_what_is_wrong() {
        let dup = "[[rule]]\nid='X'\ntitle=''\narea='tools'\ntransports=['stdio']\n[rule.era.'2025-11-25']\nsection='s'\nlevel='MUST'\n[rule.era.'2026-07-28']\nsection='s'\nlevel='described'\n";
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
