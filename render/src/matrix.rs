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

use mcperr_core::report::{CaseResult, RunReport, Summary, TargetInfo};
use mcperr_model::rules::RuleId;
use mcperr_model::verdict::Verdict;

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
    /// How much of the era's requirements the run judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coverage: Option<mcperr_core::report::coverage::Coverage>,
    /// The protocol version in force, and how the server agreed it
    /// ([`RunReport::negotiated`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<(String, String)>,
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
    pub rule: RuleId,
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
    /// Servers given a baseline: their unexpected failures fail the matrix.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gated: Vec<String>,
}

/// Why a gated server fails the matrix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GateFailure {
    /// A failing or erroring cell its baseline does not list.
    Unexpected {
        /// The server.
        server: String,
        /// `transport era`.
        column: String,
        /// The case.
        case: String,
    },
    /// A baseline entry that fails in none of the server's columns.
    Stale {
        /// The server.
        server: String,
        /// The entry as written.
        entry: String,
    },
}

impl std::fmt::Display for GateFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GateFailure::Unexpected {
                server,
                column,
                case,
            } => write!(
                f,
                "{server} {column}: {case} fails and is not in its baseline"
            ),
            GateFailure::Stale { server, entry } => write!(
                f,
                "{server}: baseline entry {entry} fails in none of its columns (stale)"
            ),
        }
    }
}

/// Where a rule stands in the rule table.
fn rule_rank(rule: RuleId) -> usize {
    RuleId::ALL
        .iter()
        .position(|r| *r == rule)
        .unwrap_or(usize::MAX)
}

impl Matrix {
    /// The matrix of `runs`, each named by its server.
    pub fn from_runs(title: &str, profile: &str, runs: Vec<(String, RunReport)>) -> Matrix {
        let mut rows: Vec<Row> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for (_, run) in &runs {
            for c in &run.cases {
                // The case's own rule, not the one that decided a cell (a J1
                // framing fault, say): rows stay put when verdicts change.
                // (Reports from before `case_rule` existed fall back to `rule`.)
                let own = c.case_rule.unwrap_or(c.rule);
                if seen.insert(c.id.clone()) {
                    rows.push(Row {
                        case: c.id.clone(),
                        rule: own,
                        area: c.area.clone(),
                        title: c.title.clone(),
                    });
                }
            }
        }
        rows.sort_by(|a, b| {
            rule_rank(a.rule)
                .cmp(&rule_rank(b.rule))
                .then_with(|| a.case.cmp(&b.case))
        });
        let columns: Vec<Column> = runs
            .iter()
            .map(|(server, run)| Column {
                server: server.clone(),
                transport: run.transport.clone(),
                era: run.era.clone(),
                coverage: run.coverage.clone(),
                version: run.protocol_version.clone().map(|v| (v, run.negotiated())),
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
            gated: vec![],
        }
    }

    /// What fails the gate: for each gated server, every failing or
    /// erroring cell its baseline does not list, and every baseline entry
    /// that is stale in all of its columns (an entry may fail in one era or
    /// transport only; it is stale when it fails in none).
    pub fn gate(&self) -> Vec<GateFailure> {
        let mut out = Vec::new();
        for server in &self.gated {
            let columns: Vec<&Column> = self
                .columns
                .iter()
                .filter(|c| &c.server == server)
                .collect();
            for cell in self.cells.iter().filter(|c| &c.server == server) {
                let unexpected = cell.result.as_ref().is_some_and(|r| {
                    matches!(r.verdict, Verdict::Fail | Verdict::Error) && !r.baselined
                });
                if unexpected {
                    out.push(GateFailure::Unexpected {
                        server: server.clone(),
                        column: format!("{} {}", cell.transport, cell.era),
                        case: cell.case.clone(),
                    });
                }
            }
            let stale = mcperr_core::report::stale::stale_in_all(
                columns.iter().map(|c| c.stale_baseline.as_slice()),
            );
            out.extend(stale.into_iter().map(|entry| GateFailure::Stale {
                server: server.clone(),
                entry,
            }));
        }
        out
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
        "body": r.body,
        "expected": r.expected,
        "spec": r.spec,
        "ms": r.duration_ms,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(id: &str, rule: &str, verdict: Verdict, response: Value) -> CaseResult {
        let rule: RuleId = rule.parse().unwrap();
        CaseResult {
            id: id.into(),
            rule,
            case_rule: Some(if rule == RuleId::J1 { RuleId::T1 } else { rule }),
            verdict,
            aspect: None,
            message: format!("{verdict:?} because"),
            request: Some(serde_json::json!({"method": "tools/call"})),
            response: Some(response),
            http_status: None,
            body: None,
            duration_ms: 1,
            area: id.split('/').next().unwrap().into(),
            title: format!("title of {id}"),
            spec: "2026-07-28 server/tools".into(),
            baselined: false,
            expected: None,
        }
    }

    fn run(transport: &str, cases: Vec<CaseResult>) -> RunReport {
        let target = TargetInfo {
            kind: "stdio".into(),
            command: Some("server".into()),
            url: None,
        };
        RunReport::new(target, "2026-07-28".into(), transport, "model", cases)
    }

    #[test]
    fn rows_follow_the_rule_table_and_every_row_has_a_cell_in_every_column() {
        let a = run(
            "stdio",
            vec![
                result("prompts/x", "P1", Verdict::Pass, Value::Null),
                // Decided by another rule here; the passing column names the case's own.
                result("tools/y", "J1", Verdict::Fail, Value::Null),
            ],
        );
        let b = run(
            "http",
            vec![
                result("tools/y", "T1", Verdict::Pass, Value::Null),
                result("http/z", "H1", Verdict::Warn, Value::Null),
            ],
        );
        let m = Matrix::from_runs("t", "model", vec![("a".into(), a), ("b".into(), b)]);
        let order: Vec<(&str, &str)> = m
            .rows
            .iter()
            .map(|r| (r.rule.as_str(), r.case.as_str()))
            .collect();
        assert_eq!(
            order,
            [("T1", "tools/y"), ("P1", "prompts/x"), ("H1", "http/z")]
        );
        assert_eq!(m.cells.len(), 3 * 2);
        assert_eq!(m.cell(0, 0).verdict, Some(Verdict::Fail));
        assert_eq!(m.cell(0, 1).verdict, Some(Verdict::Pass));
        assert_eq!(
            m.cell(1, 1).verdict,
            None,
            "prompts/x did not run over http"
        );
        assert_eq!(m.cell(2, 0).verdict, None);
        assert_eq!(m.cell(2, 1).server, "b");
        assert_eq!(m.summary().fail, 1);
    }

    #[test]
    fn the_page_shows_what_a_hostile_server_sent_as_text_never_as_markup() {
        let evil = "</script><script>alert(1)</script><img src=x onerror=alert(2)>\"'&";
        let r = run(
            "stdio",
            vec![result(
                "tools/y",
                "T1",
                Verdict::Fail,
                serde_json::json!({"error": {"message": evil}}),
            )],
        );
        let mut m = Matrix::from_runs("t", "model", vec![(evil.into(), r)]);
        m.not_judged.push(evil.into());
        let page = crate::html::render_matrix(&m);
        assert!(!page.contains("<img"), "{page}");
        assert!(!page.contains("<script>alert"), "{page}");
        assert_eq!(page.matches("</script>").count(), 2, "only the page's own");
        // The embedded cell data still reads back exactly.
        let data = page
            .split("id=\"mcperr-data\">")
            .nth(1)
            .and_then(|s| s.split("</script>").next())
            .unwrap();
        let data: Value = serde_json::from_str(data).unwrap();
        assert_eq!(data["cells"][0]["response"]["error"]["message"], evil);
    }

    #[test]
    fn the_gate_counts_an_entry_stale_only_where_it_fails_in_no_column() {
        let mut stdio = run(
            "stdio",
            vec![result("tools/y", "T1", Verdict::Fail, Value::Null)],
        );
        stdio.cases[0].baselined = true;
        let mut http = run(
            "http",
            vec![
                result("tools/y", "T1", Verdict::Pass, Value::Null),
                result("http/z", "H1", Verdict::Fail, Value::Null),
            ],
        );
        // `tools/y` passes over HTTP (stale there) but fails over stdio: not stale.
        http.stale_baseline = vec!["tools/y".into(), "tools/gone (names no case)".into()];
        stdio.stale_baseline = vec!["tools/gone (names no case)".into()];
        let mut m = Matrix::from_runs("t", "model", vec![("s".into(), stdio), ("s".into(), http)]);
        assert!(m.gate().is_empty(), "nothing is gated without a baseline");
        m.gated = vec!["s".into()];
        let found: Vec<String> = m.gate().iter().map(ToString::to_string).collect();
        assert_eq!(
            found,
            [
                "s http 2026-07-28: http/z fails and is not in its baseline",
                "s: baseline entry tools/gone fails in none of its columns (stale)",
            ]
        );
    }
}
