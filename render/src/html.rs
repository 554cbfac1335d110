//! The HTML report: one self-contained page (no external assets, no
//! network) showing a [`Matrix`]: cases as rows grouped by rule, one column
//! per server × transport × era, each cell coloured by its verdict and
//! opening the request, the response, the expected shape and the spec
//! section; a summary row per column; filters by rule, verdict and case id.
//! `mcperr matrix` renders many servers with it, `mcperr run --html` one.
//!
//! The grid is rendered here, so it reads without scripts; `matrix.js` adds
//! the filters and the detail panel from the cell data embedded as JSON.

use std::fmt::Write;

use crate::matrix::{cell_detail, Matrix};
use mcperr_core::report::{RunReport, RunSet};
use mcperr_model::verdict::Verdict;

const CSS: &str = include_str!("matrix.css");
const JS: &str = include_str!("matrix.js");

/// Every verdict class a cell can carry, in the filter's order.
const VERDICTS: [&str; 6] = ["fail", "error", "warn", "pass", "skip", "n/a"];

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// JSON that is safe inside a `<script>` element: no `<`, `>` or `&` can end
/// it early (they only occur inside JSON strings, where `\u003c` means the same).
fn script_json(v: &serde_json::Value) -> String {
    serde_json::to_string(v)
        .expect("values serialize")
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

/// The class and the text of a cell's verdict.
fn verdict_mark(v: Option<Verdict>) -> (&'static str, &'static str) {
    match v {
        Some(Verdict::Pass) => ("v-pass", "✓"),
        Some(Verdict::Fail) => ("v-fail", "✗"),
        Some(Verdict::Warn) => ("v-warn", "!"),
        Some(Verdict::Skip) => ("v-skip", "–"),
        Some(Verdict::Error) => ("v-error", "E"),
        None => ("v-none", "·"),
    }
}

/// The filter's name of a verdict (`n/a` where the case did not run).
fn verdict_name(v: Option<Verdict>) -> &'static str {
    v.map_or("n/a", Verdict::as_str)
}

/// Renders the report of one run as the page.
pub fn render(report: &RunReport) -> String {
    render_all(&RunSet::new(vec![report.clone()]))
}

/// Renders the runs of one `mcperr run` (each era and transport of one
/// server) as the page: a matrix with one server, with the eras not judged.
pub fn render_all(set: &RunSet) -> String {
    let reports = &set.runs;
    let name = match reports.first() {
        Some(r) if r.target.kind == "embedded" => "reference (embedded)".to_string(),
        Some(r) => r.target.shown().to_string(),
        None => "no run".to_string(),
    };
    let profile = reports.first().map_or("", |r| r.profile.as_str());
    let runs = reports.iter().map(|r| (name.clone(), r.clone())).collect();
    let mut m = Matrix::from_runs(&format!("mcperr run: {name}"), profile, runs);
    m.not_judged = set.not_judged.clone();
    render_matrix(&m)
}

/// Renders a matrix as one self-contained page.
pub fn render_matrix(m: &Matrix) -> String {
    let mut h = String::with_capacity(64 * 1024);
    let _ = write!(
        h,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width\">\
         <title>{}</title>\n<style>{CSS}</style></head>\n<body>\n<header><h1>{}</h1>\n",
        esc(&m.title),
        esc(&m.title)
    );
    let s = m.summary();
    let _ = writeln!(
        h,
        "<p class=\"meta\">profile <b>{}</b> · {} cases × {} columns · {} passed, {} failed, \
         {} warned, {} skipped, {} errors · mcperr {}</p>",
        esc(&m.profile),
        m.rows.len(),
        m.columns.len(),
        s.pass,
        s.fail,
        s.warn,
        s.skip,
        s.error,
        env!("CARGO_PKG_VERSION")
    );
    if !m.not_judged.is_empty() {
        let _ = write!(
            h,
            "<details class=\"not-judged\"><summary>{} not judged (an era a server does not speak, \
             or could not be set up in)</summary><ul>",
            m.not_judged.len()
        );
        for n in &m.not_judged {
            let _ = write!(h, "<li>{}</li>", esc(n));
        }
        h.push_str("</ul></details>\n");
    }
    filters(&mut h, m);
    h.push_str("</header>\n<main>\n<table id=\"matrix\">\n");
    head(&mut h, m);
    body(&mut h, m);
    h.push_str("</table>\n</main>\n<aside id=\"detail\" hidden><button id=\"close\" title=\"close (Esc)\">×</button><div id=\"detail-body\"></div></aside>\n");
    let details: Vec<serde_json::Value> = (0..m.rows.len())
        .flat_map(|r| (0..m.columns.len()).map(move |c| (r, c)))
        .map(|(r, c)| cell_detail(m.cell(r, c), &m.columns[c]))
        .collect();
    let columns: Vec<serde_json::Value> = m
        .columns
        .iter()
        .map(|c| serde_json::json!({"server": c.server, "transport": c.transport, "era": c.era}))
        .collect();
    let data = serde_json::json!({"columns": columns, "cells": details});
    let _ = write!(
        h,
        "<script type=\"application/json\" id=\"mcperr-data\">{}</script>\n<script>{JS}</script>\n</body></html>\n",
        script_json(&data)
    );
    h
}

fn filters(h: &mut String, m: &Matrix) {
    h.push_str("<form id=\"filters\"><label>rule <select id=\"f-rule\"><option value=\"\">all rules</option>");
    let mut rules_seen = Vec::new();
    for r in &m.rows {
        if !rules_seen.contains(&r.rule) {
            rules_seen.push(r.rule);
            let title = &r.rule.rule().title;
            let _ = write!(
                h,
                "<option value=\"{0}\">{0} · {1}</option>",
                esc(r.rule.as_str()),
                esc(title)
            );
        }
    }
    h.push_str("</select></label> <span>verdict</span>");
    for v in VERDICTS {
        let _ = write!(
            h,
            "<label><input type=\"checkbox\" name=\"verdict\" value=\"{v}\" checked> {v}</label>"
        );
    }
    h.push_str(
        "<label>case <input id=\"f-text\" type=\"search\" placeholder=\"id contains…\"></label>\
         <span id=\"f-count\"></span></form>\n",
    );
}

fn head(h: &mut String, m: &Matrix) {
    h.push_str("<thead>\n<tr class=\"servers\"><th rowspan=\"2\">case</th>");
    let mut i = 0;
    while i < m.columns.len() {
        let server = &m.columns[i].server;
        let span = m.columns[i..]
            .iter()
            .take_while(|c| &c.server == server)
            .count();
        let _ = write!(
            h,
            "<th colspan=\"{span}\" class=\"server\" title=\"{}\">{}</th>",
            esc(m.columns[i].target.shown()),
            esc(server)
        );
        i += span;
    }
    h.push_str("</tr>\n<tr class=\"columns\">");
    for c in &m.columns {
        let _ = write!(
            h,
            "<th class=\"col\" title=\"{}\">{}<br>{}</th>",
            esc(c.target.shown()),
            esc(&c.transport),
            esc(&c.era)
        );
    }
    h.push_str("</tr>\n<tr class=\"summary\"><th>summary</th>");
    for c in &m.columns {
        let s = &c.summary;
        let _ = write!(
            h,
            "<td class=\"sum\" title=\"{} passed, {} failed, {} warned, {} skipped, {} errors\">\
             <span class=\"v-pass\">{}</span><span class=\"v-fail\">{}</span>\
             <span class=\"v-warn\">{}</span><span class=\"v-skip\">{}</span><span class=\"v-error\">{}</span></td>",
            s.pass, s.fail, s.warn, s.skip, s.error, s.pass, s.fail, s.warn, s.skip, s.error
        );
    }
    if m.columns.iter().any(|c| c.version.is_some()) {
        h.push_str("</tr>\n<tr class=\"summary\"><th>version</th>");
        for c in &m.columns {
            let (version, how) = c.version.clone().unwrap_or_default();
            let _ = write!(
                h,
                "<td class=\"sum\" title=\"{}\">{}</td>",
                esc(&how),
                esc(&version)
            );
        }
    }
    if m.columns.iter().any(|c| c.coverage.is_some()) {
        h.push_str("</tr>\n<tr class=\"summary\"><th>coverage</th>");
        for c in &m.columns {
            let (text, title) = c
                .coverage
                .as_ref()
                .map_or((String::new(), String::new()), |cov| {
                    (format!("{} %", cov.percent()), cov.line())
                });
            let _ = write!(
                h,
                "<td class=\"sum\" title=\"{}\">{}</td>",
                esc(&title),
                esc(&text)
            );
        }
    }
    h.push_str("</tr>\n</thead>\n");
}

fn body(h: &mut String, m: &Matrix) {
    h.push_str("<tbody>\n");
    let span = m.columns.len() + 1;
    let mut group = None;
    for (r, row) in m.rows.iter().enumerate() {
        if group != Some(row.rule) {
            group = Some(row.rule);
            let title = &row.rule.rule().title;
            let _ = writeln!(
                h,
                "<tr class=\"rule-head\" data-rule=\"{0}\"><th colspan=\"{span}\">{0} <span class=\"level\">{1}</span></th></tr>",
                esc(row.rule.as_str()),
                esc(title)
            );
        }
        let mut verdicts: Vec<&str> = (0..m.columns.len())
            .map(|c| verdict_name(m.cell(r, c).verdict))
            .collect();
        verdicts.sort_unstable();
        verdicts.dedup();
        let _ = write!(
            h,
            "<tr class=\"case\" data-rule=\"{}\" data-case=\"{}\" data-verdicts=\" {} \"><th class=\"case-id\" title=\"{}\">{}</th>",
            esc(row.rule.as_str()),
            esc(&row.case),
            verdicts.join(" "),
            esc(&row.title),
            esc(&row.case)
        );
        for c in 0..m.columns.len() {
            let cell = m.cell(r, c);
            let (class, mark) = verdict_mark(cell.verdict);
            let baselined = cell.result.as_ref().is_some_and(|x| x.baselined);
            let tip = cell.result.as_ref().map_or_else(
                || "did not run here".to_string(),
                |x| {
                    x.message
                        .lines()
                        .next()
                        .unwrap_or("")
                        .chars()
                        .take(300)
                        .collect()
                },
            );
            let _ = write!(
                h,
                "<td class=\"cell {class}{}\" data-r=\"{r}\" data-c=\"{c}\" tabindex=\"0\" title=\"{}: {}\">{mark}</td>",
                if baselined { " baselined" } else { "" },
                verdict_name(cell.verdict),
                esc(&tip)
            );
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</tbody>\n");
}
