//! How much of its era a run judged on this server, counted against the
//! requirement registry ([`mcperr_model::requirements`]), so that a run that
//! judged little never reads as a clean pass.
//!
//! The denominator is the requirements mcperr checks (a rule or aspect of
//! the table judges them) that bind the server and apply to it: their gate
//! (a capability, a transport, authorization) is met by what it declared
//! and how the run reached it. One counts as judged when a case proving one
//! of its rules ran (a verdict other than skip); the others are not
//! reached, each with the skip reason of the first case of its rules (a
//! missing part, a capability, the selection). An aspect the oracle judges
//! on every answer ([`mcperr_oracle::invariants::ON_EVERY_ANSWER`]) is
//! judged by any case that ran.

use std::collections::BTreeMap;

use mcperr_model::requirements::{self, Coverage as Checked};
use mcperr_model::Verdict;
use mcperr_protocol::Era;
use serde::{Deserialize, Serialize};

use super::CaseResult;

/// What a run judged of its era's requirements.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Coverage {
    /// Requirements judged: a case of one of their rules ran.
    pub judged: usize,
    /// Requirements mcperr checks that bind this server and apply to it.
    pub applicable: usize,
    /// Requirements mcperr checks that do not apply (a capability it does
    /// not declare, the other transport, authorization not asked for).
    pub not_applicable: usize,
    /// The applicable ones not judged, each with why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unreached: Vec<Unreached>,
}

/// An applicable requirement no case judged in the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Unreached {
    /// Its id in the era's registry.
    pub requirement: String,
    /// Why: the skip reason of the first case of its rules, or that none ran.
    pub why: String,
}

/// What a run's server offered that gates requirements.
pub struct Gates<'a> {
    /// Whether it declared a capability (`tasks`, `logging`…).
    pub declared: &'a dyn Fn(&str) -> bool,
    /// `stdio` or `http`.
    pub transport: &'a str,
    /// The run judged authorization (`--auth-required`).
    pub auth: bool,
}

impl Gates<'_> {
    fn apply(&self, gate: &str) -> bool {
        match gate {
            "" => true,
            "http" | "stdio" => self.transport == gate,
            "auth" => self.auth && self.transport == "http",
            capability => (self.declared)(capability),
        }
    }
}

/// The coverage of a run in `era` whose cases are `cases`.
pub fn of_run(era: Era, gates: &Gates, cases: &[CaseResult]) -> Coverage {
    let mut out = Coverage::default();
    let ran_any = cases.iter().any(|c| c.verdict != Verdict::Skip);
    for r in requirements::for_era(era) {
        let Checked::Checked(aspects) = &r.coverage else {
            continue;
        };
        if r.party == "client" {
            continue;
        }
        if !gates.apply(&r.gate) {
            out.not_applicable += 1;
            continue;
        }
        out.applicable += 1;
        let rules: Vec<&str> = aspects.iter().map(|a| a.rule().as_str()).collect();
        let of_rules: Vec<&CaseResult> = cases
            .iter()
            .filter(|c| {
                let rule = c.case_rule.unwrap_or(c.rule);
                rules.contains(&rule.as_str())
            })
            .collect();
        let watched = ran_any
            && aspects
                .iter()
                .any(|a| mcperr_oracle::invariants::ON_EVERY_ANSWER.contains(a));
        if watched || of_rules.iter().any(|c| c.verdict != Verdict::Skip) {
            out.judged += 1;
            continue;
        }
        let why = of_rules.first().map_or_else(
            || "no case of its rules runs here (not in this era or over this transport, or not selected)".to_string(),
            |c| c.message.clone(),
        );
        out.unreached.push(Unreached {
            requirement: r.id.clone(),
            why,
        });
    }
    out
}

/// A skip reason's gist, for counting: the part it names, the capability
/// it lacks, or its first words.
pub fn gist(why: &str) -> String {
    if let Some(rest) = why
        .strip_prefix("no part ")
        .or_else(|| why.strip_prefix("part "))
    {
        let name = rest.split([' ', ':']).next().unwrap_or(rest);
        return format!("part {name}");
    }
    let head = why.split([':', '(', ';']).next().unwrap_or(why).trim();
    head.chars().take(80).collect()
}

impl Coverage {
    /// The share judged, in percent (100 when nothing applies).
    pub fn percent(&self) -> u32 {
        if self.applicable == 0 {
            return 100;
        }
        (self.judged * 100 / self.applicable) as u32
    }

    /// One line: judged of applicable, and the commonest reasons for the rest.
    pub fn line(&self) -> String {
        let mut text = format!("coverage {}", self.headline());
        let rest = self.not_reached();
        if !rest.is_empty() {
            text.push_str(&format!("; not reached: {rest}"));
        }
        text
    }

    /// `97 %: judged 113 of the 116 requirements that apply` (of those
    /// mcperr checks, to this server).
    pub fn headline(&self) -> String {
        format!(
            "{} %: judged {} of the {} requirements that apply",
            self.percent(),
            self.judged,
            self.applicable
        )
    }

    /// Why the rest was not reached, the most frequent reason first (at
    /// most four): `3 × no case of its rules runs here`; empty when
    /// nothing was left.
    pub fn not_reached(&self) -> String {
        let mut counts: BTreeMap<String, usize> = BTreeMap::new();
        for u in &self.unreached {
            *counts.entry(gist(&u.why)).or_default() += 1;
        }
        let mut counts: Vec<(String, usize)> = counts.into_iter().collect();
        counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let shown: Vec<String> = counts
            .iter()
            .take(4)
            .map(|(why, n)| format!("{n} × {why}"))
            .collect();
        let more = if counts.len() > 4 { ", …" } else { "" };
        format!("{}{more}", shown.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_skip_reason_is_counted_by_its_part_or_its_first_words() {
        assert_eq!(gist("no part crash (a tool …): no listing"), "part crash");
        assert_eq!(gist("part task: not called: bake would"), "part task");
        assert_eq!(
            gist("the server lacks a declared tasks capability"),
            "the server lacks a declared tasks capability"
        );
    }

    #[test]
    fn a_run_of_no_case_judges_nothing_it_could_reach() {
        let gates = Gates {
            declared: &|_| false,
            transport: "stdio",
            auth: false,
        };
        let c = of_run(Era::Modern, &gates, &[]);
        assert!(c.applicable > 0 && c.not_applicable > 0);
        assert_eq!((c.judged, c.unreached.len()), (0, c.applicable));
        assert_eq!(c.percent(), 0);
    }
}
