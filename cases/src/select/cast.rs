//! Who plays each part in a run ([`crate::parts`]): the user's names, what
//! the probe and the listings found among the tools the run may call, and
//! the Bookshop contract's players, checked against what the server lists.

use serde_json::Value;

use super::{globs, LeftOut, SelectError, Selection};
use crate::case::{self, Case, Need};
use crate::discovery::Discovery;
use crate::parts::{self, finders, Cast, Found, Kind, PartDef};

impl Selection {
    /// Whether the run may give `tool` valid calls (its body runs): chosen
    /// (`--tools`, not destructive without consent), and read-only or
    /// allowed by a flag. A tool that may only run as a task may: the
    /// tasks/* cases call it as one.
    pub fn may_call(&self, tool: &Value) -> bool {
        let filter = globs(&self.tools, "--tools").ok().flatten();
        self.not_chosen(&filter, tool).is_none() && self.calls(&filter, tool).valid
    }

    /// The cases this selection could run, before any server is known.
    fn candidate_cases(&self) -> Vec<Case> {
        let filter = globs(&self.cases, "--cases").ok().flatten();
        let all = if self.files.is_empty() {
            case::builtin_cases().unwrap_or_default()
        } else {
            self.files.clone()
        };
        all.into_iter()
            .filter(|c| filter.as_ref().is_none_or(|g| g.is_match(&c.id)))
            .collect()
    }

    /// Whether a selected case needs a part only the probe's valid calls can
    /// reveal, the user named no player for it, and `--no-probe` is not given.
    pub fn wants_probe(&self) -> bool {
        !self.no_probe
            && self.candidate_cases().iter().any(|c| {
                c.needs().unwrap_or_default().iter().any(|n| match n {
                    Need::Part(p) => {
                        !self.parts.contains_key(p)
                            && PartDef::named(p).is_some_and(finders::probed)
                    }
                    _ => false,
                })
            })
    }

    /// The run's cast on the server `d` describes, given what the probe's
    /// calls showed. A tool or prompt the user named that the server does
    /// not list is an error (exit 2): every case needing it would fail for
    /// mcperr's mistake.
    pub fn cast(&self, d: &Discovery, probe: &finders::Probe) -> Result<Cast, SelectError> {
        for (name, player) in &self.parts {
            let kind = PartDef::named(name).map_or(Kind::Tool, |p| p.kind);
            let list = match kind {
                Kind::Tool => &d.tools,
                Kind::Prompt => &d.prompts,
                Kind::Resource => continue,
            };
            if !list
                .iter()
                .any(|t| t.get("name").and_then(Value::as_str) == Some(player.plays.as_str()))
            {
                return Err(SelectError::Part(parts::PartError(format!(
                    "part {name}: the server lists no {} named {:?} ({})",
                    kind.key(),
                    player.plays,
                    match &player.found {
                        Found::Named(how) => how.as_str(),
                        _ => "--part",
                    }
                ))));
            }
        }
        let may_call = |t: &Value| self.may_call(t);
        let probed = finders::from_probe(&probe.calls, &d.tools);
        let listed = finders::from_listing(d, &may_call, &probed, &probe.rendered);
        let contract = finders::from_contract(d);
        let mut cast = finders::cast(&self.parts, &probed, &listed, &contract);
        // A part only a tool the run may not call would play: say which,
        // and how to allow it.
        let filter = globs(&self.tools, "--tools").ok().flatten();
        let any = finders::from_listing(d, &|_| true, &probed, &probe.rendered);
        for (name, p) in any {
            let Some(tool) = d
                .tools
                .iter()
                .find(|t| t.get("name").and_then(Value::as_str) == Some(p.plays.as_str()))
            else {
                continue;
            };
            if cast.contains_key(&name) || self.may_call(tool) {
                continue;
            }
            let why = self
                .not_chosen(&filter, tool)
                .unwrap_or_else(|| self.calls(&filter, tool).reason);
            let mut withheld = p.clone();
            withheld.found = Found::Withheld(format!(
                "{} would play it, but the run gives it no valid calls ({why}); or name a player with {}",
                p.plays,
                PartDef::named(&name).map_or_else(String::new, |d| d.flag_hint())
            ));
            cast.insert(name, withheld);
        }
        Ok(cast)
    }
}

/// Why `case` cannot run because a part it needs is played by a tool the
/// run leaves out (`--tools`, a destructive one), if so. A player the user
/// named is never left out: naming it was the consent.
pub(super) fn part_left_out(case: &Case, d: &Discovery, not_chosen: &[LeftOut]) -> Option<String> {
    case.needs().unwrap_or_default().into_iter().find_map(|n| {
        let Need::Part(p) = n else {
            return None;
        };
        let player = d.parts.get(&p)?;
        if matches!(player.found, Found::Named(_)) {
            return None;
        }
        let l = not_chosen.iter().find(|l| l.name == player.plays)?;
        Some(format!(
            "part {p} is played by {}, which is left out: {}",
            l.name, l.reason
        ))
    })
}
