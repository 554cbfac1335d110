//! What a server offers (tools, resources, templates, prompts), as its list
//! methods returned it, and whether a case's needs are met. The executor
//! fills it in; deciding what applies needs no I/O.

use mcperr_protocol::Era;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::case::{Case, Need, Skip};

/// What the server offers, from its list methods.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Discovery {
    /// `tools/list` entries.
    pub tools: Vec<Value>,
    /// `resources/list` entries.
    pub resources: Vec<Value>,
    /// `resources/templates/list` entries.
    pub templates: Vec<Value>,
    /// `prompts/list` entries.
    pub prompts: Vec<Value>,
    /// `serverInfo` from the handshake.
    pub server_info: Value,
    /// `capabilities` from the handshake.
    #[serde(default)]
    pub capabilities: Value,
    /// Real values per argument name, harvested for valid calls
    /// ([`crate::generate::harvest`]).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub harvest: Harvest,
    /// The versions the server listed (2026-07-28 `server/discover`'s
    /// `supportedVersions`), for `revision:only`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub versions: Vec<String>,
    /// Who plays each part ([`crate::parts`]), once the run has decided.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub parts: crate::parts::Cast,
}

/// Values harvested per argument name, best first
/// ([`crate::generate::harvest`] finds them).
pub type Harvest = std::collections::BTreeMap<String, Vec<Value>>;

impl Discovery {
    /// Whether the server advertised `capability` (`tools`, `resources`, `prompts`).
    /// A dotted name reads a member of one (`tasks.list`).
    pub fn advertises(&self, capability: &str) -> bool {
        capability
            .split('.')
            .try_fold(&self.capabilities, |c, key| c.get(key))
            .is_some_and(|c| !c.is_null())
    }

    fn has(&self, need: &Need) -> bool {
        let named = |list: &[Value], key: &str, want: &str| {
            list.iter()
                .any(|v| v.get(key).and_then(Value::as_str) == Some(want))
        };
        match need {
            Need::Tool(n) => named(&self.tools, "name", n),
            Need::Template(t) => named(&self.templates, "uriTemplate", t),
            Need::Prompt(p) => named(&self.prompts, "name", p),
            Need::AnyTool => !self.tools.is_empty(),
            Need::Part(p) => self.parts.get(p).is_some_and(|p| p.plays_here()),
            Need::Capability(c) => self.advertises(c),
            Need::Undeclared(c) => !self.advertises(c),
            Need::OnlyRevision => self.versions.iter().all(|v| *v == self.versions[0]),
            // The run's flags decide (crate::select): not the server's to show.
            Need::Auth(_) => true,
        }
    }

    /// `Ok` if the server has what `case` needs in `era`, else the skip reason.
    pub fn applies(&self, case: &Case, era: Era) -> Result<(), Skip> {
        if !case.eras().unwrap_or_default().contains(&era) {
            return Err(Skip(format!("not a {era} case")));
        }
        if let Some(cap) = case.capability() {
            if !self.advertises(cap) {
                return Err(Skip(format!(
                    "the server does not advertise the {cap} capability, so -32601 is the right answer to {cap}/* requests"
                )));
            }
        }
        let unmet: Vec<Need> = case
            .needs()
            .unwrap_or_default()
            .into_iter()
            .filter(|n| !self.has(n))
            .collect();
        if unmet.contains(&Need::OnlyRevision) {
            return Err(Skip(format!(
                "the server supports {} (server/discover's supportedVersions), and the sentence this case checks binds only a server that supports this revision alone (mcperr explain {})",
                self.versions.join(", "),
                case.rule
            )));
        }
        let (declared, missing): (Vec<Need>, Vec<Need>) = unmet
            .into_iter()
            .partition(|n| matches!(n, Need::Undeclared(_)));
        let list = |needs: &[Need], show: fn(&Need) -> String| {
            needs.iter().map(show).collect::<Vec<_>>().join(", ")
        };
        // A missing capability first (no player would help); then a missing
        // part, saying what plays it and the flag that names one.
        let (parts, missing): (Vec<Need>, Vec<Need>) = missing
            .into_iter()
            .partition(|n| matches!(n, Need::Part(_)));
        let part = parts.iter().find_map(|n| match n {
            Need::Part(p) => crate::parts::PartDef::named(p),
            _ => None,
        });
        if let (Some(part), true) = (part, missing.is_empty()) {
            if let Some(p) = self.parts.get(part.name) {
                return Err(Skip(format!("part {}: {}", part.name, p.found)));
            }
            return Err(Skip(crate::parts::missing(part)));
        }
        if !missing.is_empty() {
            return Err(Skip(format!(
                "the server lacks {}",
                list(&missing, |n| match n {
                    Need::Capability(c) => format!("a declared {c} capability"),
                    n => n.to_string(),
                })
            )));
        }
        if !declared.is_empty() {
            let cap = |n: &Need| match n {
                Need::Undeclared(c) => c.clone(),
                n => n.to_string(),
            };
            return Err(Skip(format!(
                "the server declares {}: this case judges a server that does not",
                list(&declared, cap)
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 2026-07-28 sentences on an older client's traffic bind "a server
    /// that supports only this revision": one whose `server/discover` also
    /// lists 2025-11-25 is not asked for them, one that lists nothing else
    /// (or nothing) is.
    #[test]
    fn an_only_this_revision_case_skips_on_a_server_of_two_revisions() {
        let text = "id = \"x/y\"\nrule = \"H1\"\neras = [\"2026-07-28\"]\nneeds = [\"revision:only\"]\n[request]\nmethod = \"tools/list\"\n";
        let case = Case::parse("x/y.toml", text).unwrap();
        let listing = |versions: &[&str]| Discovery {
            versions: versions.iter().map(|v| v.to_string()).collect(),
            ..Discovery::default()
        };
        assert!(listing(&["2026-07-28"]).applies(&case, Era::Modern).is_ok());
        assert!(listing(&[]).applies(&case, Era::Modern).is_ok());
        let two = listing(&["2026-07-28", "2025-11-25"]).applies(&case, Era::Modern);
        let Err(Skip(why)) = two else {
            panic!("judged on a server of two revisions")
        };
        assert!(why.contains("2026-07-28, 2025-11-25"), "{why}");
    }
}
