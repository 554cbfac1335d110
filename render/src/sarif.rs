//! The run as SARIF 2.1.0, for code-scanning dashboards: one SARIF run per
//! era and transport, the rule table as the tool's rules (title, the spec's
//! sentence per era, a link to the spec section), one result per failure,
//! error and warning, located logically (server, era, transport, case).
//! Passes and skips are not results.

use serde_json::{json, Value};

use mcperr_core::report::{CaseResult, RunReport};
use mcperr_model::rules::{Level, RuleId};
use mcperr_model::verdict::Verdict;

/// SARIF's level for a rule's central sentence in `era`.
fn default_level(rule: RuleId, era: Option<mcperr_protocol::Era>) -> &'static str {
    let Some(era) = era else {
        return "warning";
    };
    match rule.main().text(era).level {
        Level::Must | Level::MustNot => "error",
        Level::Should | Level::ShouldNot | Level::Described => "warning",
        _ => "note",
    }
}

fn rule_descriptor(rule: RuleId, era: Option<mcperr_protocol::Era>) -> Value {
    let r = rule.rule();
    let mut d = json!({
        "id": rule.as_str(),
        "name": rule.as_str(),
        "shortDescription": {"text": r.title},
        "defaultConfiguration": {"level": default_level(rule, era)},
        "help": {
            "text": format!("mcperr explain {rule}; docs/rules/{rule}.md"),
            "markdown": format!("`mcperr explain {rule}` · [docs/rules/{rule}.md](docs/rules/{rule}.md)"),
        },
        "properties": {"area": r.area},
    });
    if let Some(era) = era {
        let t = rule.main().text(era);
        if !t.sentence.is_empty() {
            d["fullDescription"] = json!({"text": t.cite()});
        }
        let section = t.section.trim();
        if !section.is_empty() && !section.contains(' ') {
            d["helpUri"] = json!(format!(
                "https://modelcontextprotocol.io/specification/{}/{section}",
                t.from_era.unwrap_or(era.version())
            ));
        }
    }
    d
}

fn result(report: &RunReport, c: &CaseResult, file: Option<&str>) -> Option<Value> {
    let level = match c.verdict {
        Verdict::Fail | Verdict::Error => "error",
        Verdict::Warn => "warning",
        Verdict::Pass | Verdict::Skip => return None,
    };
    let rule = c.rule;
    let index = RuleId::ALL.iter().position(|r| *r == rule)?;
    let mut properties = json!({
        "era": report.era,
        "transport": report.transport,
        "profile": report.profile,
        "verdict": c.verdict.as_str(),
        "reproduce": crate::markdown::reproduce(report, c),
    });
    if let Some(r) = &c.request {
        properties["request"] = r.clone();
    }
    if let Some(r) = &c.response {
        properties["response"] = r.clone();
    }
    if let Some(s) = c.http_status {
        properties["httpStatus"] = json!(s);
    }
    let mut location = json!({"logicalLocations": [{
        "name": c.id,
        "fullyQualifiedName": format!(
            "{} / {} / {} / {}",
            report.target.shown(), report.era, report.transport, c.id
        ),
        "kind": "test",
    }]});
    if let Some(uri) = file {
        // Code scanning accepts only results in a file of the repository.
        location["physicalLocation"] = json!({
            "artifactLocation": {"uri": uri},
            "region": {"startLine": 1},
        });
    }
    Some(json!({
        "ruleId": rule.as_str(),
        "ruleIndex": index,
        "level": level,
        "message": {"text": format!("{}: {}", c.title, c.message.trim())},
        "locations": [location],
        "baselineState": if c.baselined { "unchanged" } else { "new" },
        "properties": properties,
    }))
}

/// A SARIF run's properties: the target, the profile, and how much of the
/// era's requirements the run judged (so a run that judged little is seen
/// as such in code scanning too).
fn run_properties(report: &RunReport, not_judged: &[String]) -> Value {
    let mut p = json!({"target": report.target.shown(), "profile": report.profile});
    if let Some(v) = &report.protocol_version {
        p["protocolVersion"] = json!(v);
        p["negotiated"] = json!(report.negotiated());
    }
    if !not_judged.is_empty() {
        p["notJudged"] = json!(not_judged);
    }
    if let Some(c) = &report.coverage {
        p["coverage"] = json!({
            "judged": c.judged,
            "applicable": c.applicable,
            "percent": c.percent(),
            "notReached": c.unreached.len(),
        });
    }
    p
}

/// Renders the runs of one invocation as one SARIF log. A result is
/// located logically (server, era, transport, case); with `file` (a path
/// relative to the repository root, `--sarif-location`) also in that file,
/// at its first line, since GitHub code scanning refuses a log whose
/// results name no file. `not_judged`: the eras the invocation could not
/// judge, and why (each run's properties carry them).
pub fn render_all(reports: &[RunReport], file: Option<&str>, not_judged: &[String]) -> String {
    let runs: Vec<Value> = reports
        .iter()
        .map(|report| {
            let era: Option<mcperr_protocol::Era> = report.era.parse().ok();
            json!({
                "tool": {"driver": {
                    "name": "mcperr",
                    "version": env!("CARGO_PKG_VERSION"),
                    "semanticVersion": env!("CARGO_PKG_VERSION"),
                    "informationUri": "https://modelcontextprotocol.io/specification",
                    "rules": RuleId::ALL.iter().map(|r| rule_descriptor(*r, era)).collect::<Vec<_>>(),
                }},
                "automationDetails": {"id": format!("mcperr/{}/{}/", report.era, report.transport)},
                "properties": run_properties(report, not_judged),
                "results": report.cases.iter().filter_map(|c| result(report, c, file)).collect::<Vec<_>>(),
            })
        })
        .collect();
    let log = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": runs,
    });
    serde_json::to_string_pretty(&log).expect("SARIF serializes") + "\n"
}
