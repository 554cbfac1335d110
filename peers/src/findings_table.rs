//! The findings table of docs/findings/
//! README.md (SDK × rule), from runs rather than by hand. Each column is
//! judged under `spec` over stdio (over Streamable HTTP when it serves no
//! stdio) in every era its manifest lists; a rule is `fail` where a case of
//! it fails, `warn` where one warns, with the era in brackets when only one
//! era shows it, and `—` otherwise.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::{Column, Transport};
use serde_json::Value;

/// Prints the table (`mcperr-peers findings MCPERR`, run by
/// scripts/findings-table.sh); an error names what failed.
pub fn print_table(root: &Path, mcperr: &str) -> Result<(), String> {
    let columns = crate::columns(root).map_err(|e| e.to_string())?;
    let rules = rule_ids(root)?;
    let mut header = String::from("| rule |");
    let mut rule_line = String::from("|---|");
    let mut cells: Vec<BTreeMap<String, String>> = Vec::new();
    for c in &columns {
        let over = if c.serves(Transport::Stdio) {
            ""
        } else {
            " (HTTP)"
        };
        header.push_str(&format!(" [{}]({}.md){over} |", c.name, page(c)));
        rule_line.push_str("---|");
        cells.push(judge(c, mcperr, &rules)?);
    }
    println!("{header}\n{rule_line}");
    for rule in &rules {
        let row: Vec<&str> = cells
            .iter()
            .map(|m| m.get(rule).map_or("—", String::as_str))
            .collect();
        println!("| {rule} | {} |", row.join(" | "));
    }
    Ok(())
}

/// A column's findings page: its own, or its peer's first column's (a
/// second column of one SDK shares the page).
fn page(c: &Column) -> &str {
    &c.peer.manifest.column[0].name
}

fn rule_ids(root: &Path) -> Result<Vec<String>, String> {
    let text = std::fs::read_to_string(root.join("fixtures/rules.toml"))
        .map_err(|e| format!("fixtures/rules.toml: {e}"))?;
    let table: toml::Table = toml::from_str(&text).map_err(|e| e.to_string())?;
    Ok(table
        .get("rule")
        .and_then(|r| r.as_array())
        .into_iter()
        .flatten()
        .filter_map(|r| r.get("id").and_then(|i| i.as_str()).map(String::from))
        .collect())
}

/// Each rule's cell for one column.
fn judge(c: &Column, mcperr: &str, rules: &[String]) -> Result<BTreeMap<String, String>, String> {
    // rule -> era -> worst verdict ("fail" over "warn")
    let mut seen: BTreeMap<String, BTreeMap<String, &str>> = BTreeMap::new();
    for era in c.eras() {
        for case in run(c, mcperr, era)? {
            let verdict = match case["verdict"].as_str() {
                Some("fail") => "fail",
                Some("warn") => "warn",
                _ => continue,
            };
            let rule = case["rule"].as_str().unwrap_or("").to_string();
            let slot = seen
                .entry(rule)
                .or_default()
                .entry(era.clone())
                .or_insert(verdict);
            if verdict == "fail" {
                *slot = "fail";
            }
        }
    }
    let eras = c.eras().len();
    let mut out = BTreeMap::new();
    for rule in rules {
        let Some(by_era) = seen.get(rule) else {
            continue;
        };
        let mut parts: Vec<String> = Vec::new();
        for verdict in ["fail", "warn"] {
            let in_eras: Vec<&String> = by_era
                .iter()
                .filter(|(_, v)| **v == verdict)
                .map(|(e, _)| e)
                .collect();
            match in_eras.len() {
                0 => {}
                n if n == eras => parts.push(verdict.to_string()),
                _ => parts.push(format!("{verdict} ({})", in_eras[0])),
            }
        }
        out.insert(rule.clone(), parts.join(", "));
    }
    Ok(out)
}

/// How long one column's run may take before it is killed: its requests
/// each have 10 s, and a run is about a hundred of them at most.
const RUN_LIMIT: std::time::Duration = std::time::Duration::from_secs(600);

/// Waits for `child` at most `limit`; past it, kills and reaps it.
fn wait_bounded(
    child: &mut std::process::Child,
    limit: std::time::Duration,
) -> Result<std::process::ExitStatus, String> {
    let start = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            return Ok(status);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("mcperr run did not end within {limit:?}"));
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// The cases of one `mcperr run --profile spec` of the column in `era`.
fn run(c: &Column, mcperr: &str, era: &str) -> Result<Vec<Value>, String> {
    let json = std::env::temp_dir().join(format!("mcperr-findings-{}-{era}.json", c.name));
    let mut server = None;
    let target = if c.serves(Transport::Stdio) {
        ["--stdio".to_string(), c.command_line()]
    } else {
        let child = crate::HttpChild::start(&c.argv).map_err(|e| e.to_string())?;
        let url = child.url.clone();
        server = Some(child);
        ["--http".to_string(), url]
    };
    let mut run = Command::new(mcperr)
        .args([
            "run",
            &target[0],
            &target[1],
            "--era",
            era,
            "--profile",
            "spec",
        ])
        .args(["--timeout-ms", "10000", "-q", "--json"])
        .arg(&json)
        .stdout(Stdio::null())
        .spawn()
        .map_err(|e| format!("{mcperr}: {e}"))?;
    let status =
        wait_bounded(&mut run, RUN_LIMIT).map_err(|e| format!("{}: {e} in {era}", c.name))?;
    drop(server);
    if status.code().is_none_or(|c| c > 1) {
        return Err(format!("{}: mcperr run exited {status} in {era}", c.name));
    }
    let text = std::fs::read_to_string(&json).map_err(|e| format!("{}: {e}", json.display()))?;
    let _ = std::fs::remove_file(&json);
    let report: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    Ok(report["cases"].as_array().cloned().unwrap_or_default())
}
