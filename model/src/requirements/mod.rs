//! The requirement registry (fixtures/requirements/<era>.toml): every
//! sentence of an era's spec with an RFC 2119 keyword that constrains what a
//! server does when something goes wrong, each either checked by rules or
//! aspects of the rule table, or not checked with a reason. It exists so that
//! coverage is counted against the spec, not against what mcperr happens to
//! check: `mcperr requirements` and docs/requirements/<era>.md are rendered
//! from it, and loading it fails on an entry with neither a check nor a
//! reason, or with a check the table does not judge in that era.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use mcperr_protocol::Era;
use serde::{Deserialize, Serialize};

use crate::rules::{AspectId, Level, RuleId};

mod render;
pub use render::{coverage_words, json, page, text};

/// Why a requirement is not checked. The reason in the registry starts with
/// the category's words and a colon.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Category {
    /// The sentence binds the client (or a requestor role mcperr's runs never
    /// give the server).
    ClientSide,
    /// A log line, a configuration or a judgement no message shows.
    NotObservable,
    /// True or false only inside the server.
    ServerInternals,
    /// Shows only when two connections or sessions are compared.
    SecondSession,
    /// Needs credentials beyond the token `--auth-required` judges with (a
    /// token for another resource, a second user, a broader scope).
    AuthNotInScope,
    /// Grants the server a freedom (MAY, OPTIONAL): no answer breaks it, and
    /// the checks that touch it allow it.
    Permission,
    /// Server-side and visible on the wire: a check could be written.
    NotYetChecked,
}

impl Category {
    /// Every category, in the order reports list them.
    pub const ALL: [Category; 7] = [
        Category::NotYetChecked,
        Category::ClientSide,
        Category::AuthNotInScope,
        Category::Permission,
        Category::NotObservable,
        Category::ServerInternals,
        Category::SecondSession,
    ];

    /// The words a reason of this category starts with.
    pub fn words(self) -> &'static str {
        match self {
            Category::ClientSide => "client-side",
            Category::NotObservable => "not observable on the wire",
            Category::ServerInternals => "needs server internals",
            Category::SecondSession => "needs a second client or session",
            Category::AuthNotInScope => "needs credentials mcperr is not given",
            Category::Permission => "a permission",
            Category::NotYetChecked => "not yet checked",
        }
    }

    fn of(reason: &str) -> Option<Category> {
        Category::ALL.into_iter().find(|c| {
            reason
                .strip_prefix(c.words())
                .is_some_and(|rest| rest.is_empty() || rest.starts_with(':'))
        })
    }
}

/// How a requirement is covered: exactly one of a check or a reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Coverage {
    /// The rules or aspects whose verdict judges the sentence, in this era.
    Checked(Vec<AspectId>),
    /// Why nothing judges it.
    NotChecked {
        /// The kind of reason.
        category: Category,
        /// The reason as the registry gives it (category words first).
        reason: String,
    },
}

/// One requirement of one era.
#[derive(Debug, Clone, Serialize)]
pub struct Requirement {
    /// Stable within the era; the same id in both eras for the same duty.
    pub id: String,
    /// The RFC 2119 keyword that carries the duty, as written.
    pub keyword: String,
    /// The sentence, verbatim.
    pub sentence: String,
    /// Page and heading under `https://modelcontextprotocol.io/specification/<era>/`.
    pub section: String,
    /// The capability or transport that gates it (`""`: none).
    pub gate: String,
    /// Whom it binds: `server`, `client` or `both`.
    pub party: String,
    /// Checked, or why not.
    pub coverage: Coverage,
    /// Where it was read.
    pub note: String,
}

/// A registry file that cannot be used, with what to fix.
#[derive(Debug, thiserror::Error)]
pub enum RequirementsError {
    /// Not TOML of the expected shape.
    #[error("{source_name}: {message}")]
    Syntax {
        /// The file.
        source_name: String,
        /// What the TOML reader said.
        message: String,
    },
    /// An entry that breaks a rule of the registry.
    #[error("{source_name}: requirement {id:?}: {message}")]
    Entry {
        /// The file.
        source_name: String,
        /// The entry's id.
        id: String,
        /// What is wrong.
        message: String,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEntry {
    id: String,
    keyword: String,
    sentence: String,
    section: String,
    #[serde(default)]
    gate: String,
    party: String,
    /// Written by hand no more: the checks come from the rule table's
    /// `requirements` links; a file that still has it is told so.
    checked_by: Option<toml::Value>,
    not_checked: Option<String>,
    #[serde(default)]
    note: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    requirement: Vec<RawEntry>,
}

/// The RFC 2119 keywords, longest first so `MUST NOT` is not read as `MUST`.
const KEYWORDS: [&str; 10] = [
    "MUST NOT",
    "SHALL NOT",
    "SHOULD NOT",
    "NOT RECOMMENDED",
    "REQUIRED",
    "RECOMMENDED",
    "OPTIONAL",
    "MUST",
    "SHALL",
    "SHOULD",
];

/// Parses and checks one era's registry against the rule table, whose
/// `requirements` links say which checks judge each requirement.
pub fn parse(
    era: Era,
    source_name: &str,
    text: &str,
) -> Result<Vec<Requirement>, RequirementsError> {
    parse_linked(era, source_name, text, &|id| checks_of(era, id))
}

/// [`parse`], with `checks` saying which checks (`T4`, `T4.validate-inputs`)
/// judge a requirement id.
fn parse_linked(
    era: Era,
    source_name: &str,
    text: &str,
    checks: &dyn Fn(&str) -> Vec<String>,
) -> Result<Vec<Requirement>, RequirementsError> {
    let raw: RawFile = toml::from_str(text).map_err(|e| RequirementsError::Syntax {
        source_name: source_name.to_string(),
        message: e.to_string(),
    })?;
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::with_capacity(raw.requirement.len());
    for r in raw.requirement {
        let bad = |message: String| RequirementsError::Entry {
            source_name: source_name.to_string(),
            id: r.id.clone(),
            message,
        };
        if !seen.insert(r.id.clone()) {
            return Err(bad("the id appears twice".into()));
        }
        if !KEYWORDS.contains(&r.keyword.as_str()) && r.keyword != "MAY" {
            return Err(bad(format!("{:?} is not an RFC 2119 keyword", r.keyword)));
        }
        if !r.sentence.contains(&r.keyword) {
            return Err(bad(format!("the sentence does not hold {:?}", r.keyword)));
        }
        if !matches!(r.party.as_str(), "server" | "client" | "both") {
            return Err(bad(format!(
                "party {:?} is not server, client or both",
                r.party
            )));
        }
        if r.checked_by.is_some() {
            return Err(bad(
                "checked_by is made from the rule table: add this id to the `requirements` of the aspect that checks it in fixtures/rules.toml".into(),
            ));
        }
        let linked = checks(&r.id);
        let coverage =
            match (linked.as_slice(), r.not_checked.as_deref()) {
                ([_, ..], None) => Coverage::Checked(
                    linked
                        .iter()
                        .map(|q| checking_aspect(era, q).map_err(&bad))
                        .collect::<Result<_, _>>()?,
                ),
                ([], Some(reason)) => Coverage::NotChecked {
                    category: Category::of(reason).ok_or_else(|| {
                        let words: Vec<&str> = Category::ALL.iter().map(|c| c.words()).collect();
                        bad(format!(
                            "the reason must start with one of: {}",
                            words.join("; ")
                        ))
                    })?,
                    reason: reason.to_string(),
                },
                ([], None) => return Err(bad(
                    "neither a check of the rule table (its `requirements` links) nor not_checked"
                        .into(),
                )),
                ([_, ..], Some(_)) => {
                    return Err(bad(
                        "both a check of the rule table (its `requirements` links) and not_checked"
                            .into(),
                    ))
                }
            };
        let permission = matches!(r.keyword.as_str(), "MAY" | "OPTIONAL");
        if matches!(
            coverage,
            Coverage::NotChecked {
                category: Category::Permission,
                ..
            }
        ) && !permission
        {
            return Err(bad(format!(
                "only a MAY or OPTIONAL sentence is a permission, not a {} one",
                r.keyword
            )));
        }
        out.push(Requirement {
            id: r.id,
            keyword: r.keyword,
            sentence: r.sentence,
            section: r.section,
            gate: r.gate,
            party: r.party,
            coverage,
            note: r.note,
        });
    }
    Ok(out)
}

/// The checks of the table that judge requirement `id` of `era`, in the
/// table's order (each rule's central sentence, then its aspects): what the
/// requirement registry lists as its `checked_by`.
pub fn checks_of(era: Era, id: &str) -> Vec<String> {
    let mut out = Vec::new();
    for rule in crate::rules::all() {
        let Some(text) = rule.text(era) else {
            continue;
        };
        if text.requirements.iter().any(|r| r == id) {
            out.push(rule.id.clone());
        }
        for aspect in &text.aspects {
            if aspect.requirements.iter().any(|r| r == id) {
                out.push(format!("{}.{}", rule.id, aspect.id));
            }
        }
    }
    out
}

/// `T4` or `T4.validate-inputs`, as an aspect the table judges in `era`.
fn checking_aspect(era: Era, qualified: &str) -> Result<AspectId, String> {
    let (rule, name) = qualified.split_once('.').unwrap_or((qualified, "main"));
    let rule: RuleId = rule.parse().map_err(|e: crate::rules::UnknownId| e.0)?;
    let aspect = AspectId::find(rule, name)
        .ok_or_else(|| format!("{qualified}: rule {rule} has no aspect {name:?}"))?;
    if aspect.text(era).level == Level::None {
        return Err(format!(
            "{qualified} has level none in {era}: no verdict judges this sentence"
        ));
    }
    Ok(aspect)
}

/// The built-in registry of `era` (checked by this crate's tests, so a
/// broken registry never ships; should it not load anyway, the error is the
/// panic).
pub fn for_era(era: Era) -> &'static [Requirement] {
    static LEGACY: OnceLock<Vec<Requirement>> = OnceLock::new();
    static MODERN: OnceLock<Vec<Requirement>> = OnceLock::new();
    let cell = match era {
        Era::Legacy => &LEGACY,
        Era::Modern => &MODERN,
    };
    cell.get_or_init(|| {
        let name = format!("requirements/{}.toml", era.version());
        let text = crate::fixtures::BUILTIN_REQUIREMENTS
            .iter()
            .find(|(path, _)| *path == name)
            .map(|(_, text)| *text)
            .unwrap_or_else(|| panic!("fixtures/{name} is not built in"));
        parse(era, &format!("fixtures/{name}"), text).unwrap_or_else(|e| panic!("{e}"))
    })
}

/// Counts of one era's registry.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Totals {
    /// Every requirement.
    pub total: usize,
    /// Those a rule or aspect judges.
    pub checked: usize,
    /// Those not checked, by category.
    pub not_checked: BTreeMap<&'static str, usize>,
    /// Per keyword: (total, checked).
    pub by_keyword: BTreeMap<String, (usize, usize)>,
}

/// The counts of `reqs`.
pub fn totals(reqs: &[Requirement]) -> Totals {
    let mut t = Totals {
        total: reqs.len(),
        ..Totals::default()
    };
    for r in reqs {
        let checked = matches!(r.coverage, Coverage::Checked(_));
        let k = t.by_keyword.entry(r.keyword.clone()).or_default();
        k.0 += 1;
        if checked {
            k.1 += 1;
            t.checked += 1;
        }
        if let Coverage::NotChecked { category, .. } = r.coverage {
            *t.not_checked.entry(category.words()).or_default() += 1;
        }
    }
    t
}

/// Every rule and aspect some requirement of `era` is checked by.
pub fn checking(era: Era) -> std::collections::BTreeSet<AspectId> {
    for_era(era)
        .iter()
        .filter_map(|r| match &r.coverage {
            Coverage::Checked(a) => Some(a.iter().copied()),
            Coverage::NotChecked { .. } => None,
        })
        .flatten()
        .collect()
}

#[cfg(test)]
mod tests;
