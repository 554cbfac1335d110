//! The matrix: every case against every server, era and transport, as
//! Autobahn|Testsuite shows WebSocket implementations side by side. Built
//! from run reports (no I/O); `mcperr matrix` writes it as JSON and as the
//! HTML page, and `mcperr run --html` renders its one server the same way.
//!
//! Rows are case ids, grouped by rule in the rule table's order; columns are
//! one run each (server × transport × era). Every row has a cell in every
//! column: a case that did not run in a column (an HTTP-only case over stdio,
//! a server that could not be set up) is a cell without a verdict.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::report::{CaseResult, RunReport, Summary, TargetInfo};
use crate::rules;
use crate::verdict::Verdict;

/// One column: one run of one server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Column {
    /// The server's name (`--server NAME=…`).
    pub server: String,
    /// `stdio` or `http`.
    pub transport: String,
    /// The era judged.
    pub era: String,
    /// What was tested.
    pub target: TargetInfo,
    /// Counts per verdict of this column.
    pub summary: Summary,
    /// Baseline entries that no longer fail.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stale_baseline: Vec<String>,
}

impl Column {
    /// `stdio 2025-11-25`: the column's heading under its server's name.
    pub fn label(&self) -> String {
        format!("{} {}", self.transport, self.era)
    }
}

/// One row: a case id, under the rule it proves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Row {
    /// The case id.
    pub case: String,
    /// The case's rule (the deciding rule may differ per cell).
    pub rule: String,
    /// The case's area.
    pub area: String,
    /// What the case checks.
    pub title: String,
}

/// One cell: a case in a column, with everything needed to read its verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    /// The column's server.
    pub server: String,
    /// The column's transport.
    pub transport: String,
    /// The column's era.
    pub era: String,
    /// The row's case id.
    pub case: String,
    /// The verdict; `None` where the case did not run in this column.
    pub verdict: Option<Verdict>,
    /// The result, where the case ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<CaseResult>,
}

/// The whole grid.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Matrix {
    /// The page's title.
    pub title: String,
    /// The profile every column was judged under.
    pub profile: String,
    /// The columns, in the order the servers were given.
    pub columns: Vec<Column>,
    /// The rows, grouped by rule.
    pub rows: Vec<Row>,
    /// Row-major: `cells[r * columns.len() + c]`.
    pub cells: Vec<Cell>,
    /// Servers or eras that could not be judged, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_judged: Vec<String>,
}

/// Where a rule stands in the rule table (unknown rules last, by id).
fn rule_rank(rule: &str) -> (usize, String) {
    let pos = rules::all().iter().position(|r| r.id == rule);
    (pos.unwrap_or(usize::MAX), rule.to_string())
}

impl Matrix {
    /// The matrix of `runs`, each named by its server.
    pub fn from_runs(title: &str, profile: &str, runs: Vec<(String, RunReport)>) -> Matrix {
        let mut rows: Vec<Row> = Vec::new();
        let mut index = std::collections::HashMap::new();
        for (_, run) in &runs {
            for c in &run.cases {
                let undecided = matches!(c.verdict, Verdict::Pass | Verdict::Skip);
                match index.get(&c.id) {
                    None => {
                        index.insert(c.id.clone(), (rows.len(), undecided));
                        rows.push(Row {
                            case: c.id.clone(),
                            rule: c.rule.clone(),
                            area: c.area.clone(),
                            title: c.title.clone(),
                        });
                    }
                    // A failing cell names the rule that decided it, which may
                    // be another than the case's own (a J1 framing fault, say);
                    // a passing or skipped cell names the case's own rule.
                    Some(&(i, false)) if undecided => {
                        rows[i].rule = c.rule.clone();
                        index.insert(c.id.clone(), (i, true));
                    }
                    Some(_) => {}
                }
            }
        }
        rows.sort_by(|a, b| {
            rule_rank(&a.rule)
                .cmp(&rule_rank(&b.rule))
                .then_with(|| a.case.cmp(&b.case))
        });
        let columns: Vec<Column> = runs
            .iter()
            .map(|(server, run)| Column {
                server: server.clone(),
                transport: run.transport.clone(),
                era: run.era.clone(),
                target: run.target.clone(),
                summary: run.summary(),
                stale_baseline: run.stale_baseline.clone(),
            })
            .collect();
        let mut cells = Vec::with_capacity(rows.len() * columns.len());
        for row in &rows {
            for (column, (_, run)) in columns.iter().zip(&runs) {
                let result = run.cases.iter().find(|c| c.id == row.case).cloned();
                cells.push(Cell {
                    server: column.server.clone(),
                    transport: column.transport.clone(),
                    era: column.era.clone(),
                    case: row.case.clone(),
                    verdict: result.as_ref().map(|r| r.verdict),
                    result,
                });
            }
        }
        Matrix {
            title: title.to_string(),
            profile: profile.to_string(),
            columns,
            rows,
            cells,
            not_judged: vec![],
        }
    }

    /// The cell of row `r` in column `c`.
    pub fn cell(&self, r: usize, c: usize) -> &Cell {
        &self.cells[r * self.columns.len() + c]
    }

    /// The JSON report: every column, row and cell.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("matrices serialize") + "\n"
    }

    /// Counts over every cell that has a verdict.
    pub fn summary(&self) -> Summary {
        let results: Vec<CaseResult> = self.cells.iter().filter_map(|c| c.result.clone()).collect();
        Summary::of(&results)
    }
}

/// What the matrix page embeds per cell for its detail panel.
pub(crate) fn cell_detail(cell: &Cell, column: &Column) -> Value {
    let Some(r) = &cell.result else {
        return serde_json::json!({
            "case": cell.case,
            "column": format!("{} · {}", column.server, column.label()),
            "verdict": "n/a",
            "message": format!("{} did not run in this column (not applicable to {} or {}, or the server could not be judged)", cell.case, column.transport, column.era),
        });
    };
    serde_json::json!({
        "case": r.id,
        "title": r.title,
        "column": format!("{} · {}", column.server, column.label()),
        "target": column.target.shown(),
        "rule": r.rule,
        "verdict": r.verdict.as_str(),
        "baselined": r.baselined,
        "message": r.message,
        "request": r.request,
        "response": r.response,
        "http_status": r.http_status,
        "expected": r.expected,
        "spec": r.spec,
        "ms": r.duration_ms,
    })
}
