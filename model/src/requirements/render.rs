//! The registry rendered: docs/requirements/<era>.md, and `mcperr
//! requirements` as text or JSON.

use mcperr_protocol::Era;

use super::{for_era, totals, Category, Coverage, Requirement, Totals};

/// The Markdown table cell for `s`: pipes escaped, one line.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// What covers `r`, in words: the checks, or the reason.
pub fn coverage_words(r: &Requirement) -> String {
    match &r.coverage {
        Coverage::Checked(aspects) => {
            let ids: Vec<String> = aspects.iter().map(|a| a.qualified()).collect();
            format!("checked by {}", ids.join(", "))
        }
        Coverage::NotChecked { reason, .. } => reason.clone(),
    }
}

/// The sections of `reqs` in the order they first appear, each with its requirements.
fn by_section(reqs: &[Requirement]) -> Vec<(&str, Vec<&Requirement>)> {
    let mut out: Vec<(&str, Vec<&Requirement>)> = Vec::new();
    for r in reqs {
        let page = r.section.as_str();
        match out.iter_mut().find(|(s, _)| *s == page) {
            Some((_, list)) => list.push(r),
            None => out.push((page, vec![r])),
        }
    }
    out
}

/// The totals as Markdown tables (docs and `mcperr requirements --markdown`).
fn totals_markdown(t: &Totals) -> String {
    let mut s = format!(
        "| | requirements |\n|---|---|\n| total | {} |\n| checked | {} |\n",
        t.total, t.checked
    );
    for c in Category::ALL {
        if let Some(n) = t.not_checked.get(c.words()) {
            s.push_str(&format!("| not checked: {} | {n} |\n", c.words()));
        }
    }
    s.push_str("\n| keyword | total | checked |\n|---|---|---|\n");
    for (k, (n, checked)) in &t.by_keyword {
        s.push_str(&format!("| {k} | {n} | {checked} |\n"));
    }
    s
}

/// docs/requirements/<era>.md: the registry of `era` as a page.
pub fn page(era: Era) -> String {
    let reqs = for_era(era);
    let t = totals(reqs);
    let mut s = format!(
        "# Requirements of {era}\n\n<!-- Generated from fixtures/requirements/{era}.toml by the docs test \
         (MCPERR_BLESS=1 cargo test -p mcperr --test it docs); edit the registry, not this page. -->\n\n\
         Every sentence of the {era} spec with an RFC 2119 keyword that constrains what a server does when \
         something goes wrong, and what checks it: a rule or aspect of the rule table \
         ([docs/rules/](../rules/README.md)), or why nothing does. `mcperr requirements --era {era}` prints \
         the same.\n\n## Totals\n\n{}\n",
        totals_markdown(&t)
    );
    for (section, list) in by_section(reqs) {
        s.push_str(&format!(
            "## [{section}](https://modelcontextprotocol.io/specification/{era}/{section})\n\n\
             | id | keyword | coverage | sentence |\n|---|---|---|---|\n"
        ));
        for r in list {
            s.push_str(&format!(
                "| `{}` | {} | {} | {} |\n",
                r.id,
                r.keyword,
                cell(&coverage_words(r)),
                cell(&r.sentence)
            ));
        }
        s.push('\n');
    }
    s
}

/// `mcperr requirements` as text: totals, then each section's requirements.
pub fn text(era: Era) -> String {
    let reqs = for_era(era);
    let t = totals(reqs);
    let mut s = format!(
        "{era}: {} requirements, {} checked, {} not checked\n",
        t.total,
        t.checked,
        t.total - t.checked
    );
    for c in Category::ALL {
        if let Some(n) = t.not_checked.get(c.words()) {
            s.push_str(&format!("  not checked, {}: {n}\n", c.words()));
        }
    }
    for (section, list) in by_section(reqs) {
        s.push_str(&format!("\n{section}\n"));
        for r in list {
            let mark = if matches!(r.coverage, Coverage::Checked(_)) {
                "checked"
            } else {
                "-      "
            };
            s.push_str(&format!(
                "  {mark} {:<44} {:<11} {}\n",
                r.id,
                r.keyword,
                coverage_words(r)
            ));
        }
    }
    s
}

/// `mcperr requirements --json`: the era, its totals and every requirement.
pub fn json(era: Era) -> serde_json::Value {
    let reqs = for_era(era);
    let list: Vec<serde_json::Value> = reqs
        .iter()
        .map(|r| {
            let mut v = serde_json::json!({
                "id": r.id, "keyword": r.keyword, "sentence": r.sentence,
                "section": r.section, "gate": r.gate, "party": r.party, "note": r.note,
            });
            match &r.coverage {
                Coverage::Checked(a) => {
                    v["checked_by"] = a.iter().map(|a| a.qualified()).collect();
                }
                Coverage::NotChecked { category, reason } => {
                    v["not_checked"] = serde_json::json!({"category": category, "reason": reason});
                }
            }
            v
        })
        .collect();
    serde_json::json!({"era": era.version(), "totals": totals(reqs), "requirements": list})
}
