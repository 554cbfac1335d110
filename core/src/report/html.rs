//! A self-contained HTML report: a summary, a table of cases, and the
//! request and response of every failure, for reading in a browser or as a
//! CI artifact.

use std::fmt::Write;

use crate::report::RunReport;
use crate::verdict::Verdict;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Renders the report as one HTML page.
pub fn render(report: &RunReport) -> String {
    render_all(std::slice::from_ref(report))
}

/// Renders the reports of one invocation (each era and transport) as one page.
pub fn render_all(reports: &[RunReport]) -> String {
    let target = reports.first().map_or("", |r| r.target.shown());
    let mut h = String::new();
    let _ = write!(
        h,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>mcperr: {}</title>\n<style>\
         body{{font:14px system-ui,sans-serif;margin:2em}}table{{border-collapse:collapse}}\
         td,th{{padding:2px 8px;text-align:left;border-bottom:1px solid #ddd}}\
         .pass{{color:#070}}.fail,.error{{color:#b00;font-weight:bold}}.warn{{color:#a60}}.skip{{color:#888}}\
         pre{{background:#f6f6f6;padding:6px;white-space:pre-wrap;word-break:break-all}}</style></head><body>\n",
        esc(target)
    );
    for report in reports {
        // Anchors stay the case ids for one run; several runs get a prefix.
        let prefix = if reports.len() > 1 {
            format!("{}-{}-", report.era, report.transport)
        } else {
            String::new()
        };
        section(&mut h, report, &prefix);
    }
    h.push_str("</body></html>\n");
    h
}

fn section(h: &mut String, report: &RunReport, prefix: &str) {
    let s = report.summary();
    let target = report.target.shown();
    let _ = writeln!(
        h,
        "<h1>mcperr run</h1><p><code>{}</code> · era {} · {} · profile {}</p>",
        esc(target),
        esc(&report.era),
        esc(&report.transport),
        esc(&report.profile)
    );
    let _ = writeln!(
        h,
        "<p>{} passed, {} failed, {} warned, {} skipped, {} errors</p>",
        s.pass, s.fail, s.warn, s.skip, s.error
    );
    h.push_str(
        "<table><tr><th>verdict</th><th>rule</th><th>case</th><th>ms</th><th>note</th></tr>\n",
    );
    for c in &report.cases {
        let v = c.verdict.as_str();
        let anchor = if matches!(c.verdict, Verdict::Fail | Verdict::Error) {
            format!("<a href=\"#{prefix}{}\">{}</a>", esc(&c.id), esc(&c.id))
        } else {
            esc(&c.id)
        };
        let note = if c.baselined {
            format!("baselined · {}", c.message)
        } else {
            c.message.clone()
        };
        let _ = writeln!(
            h,
            "<tr><td class=\"{v}\">{v}</td><td>{}</td><td>{anchor}</td><td>{}</td><td>{}</td></tr>",
            esc(&c.rule),
            c.duration_ms,
            esc(note.lines().next().unwrap_or(""))
        );
    }
    h.push_str("</table>\n");
    for c in report
        .cases
        .iter()
        .filter(|c| matches!(c.verdict, Verdict::Fail | Verdict::Error))
    {
        let _ = writeln!(
            h,
            "<h2 id=\"{3}{0}\">{0} [{1}]</h2><p>{2}</p>",
            esc(&c.id),
            esc(&c.rule),
            esc(&c.title),
            esc(prefix)
        );
        let _ = writeln!(h, "<pre>{}</pre>", esc(&c.message));
        let req = c
            .request
            .as_ref()
            .map_or("(none)".to_string(), |r| r.to_string());
        let resp = c
            .response
            .as_ref()
            .map_or("(none)".to_string(), |r| r.to_string());
        let _ = writeln!(
            h,
            "<p>request</p><pre>{}</pre><p>response</p><pre>{}</pre><p>spec: {}</p>",
            esc(&req),
            esc(&resp),
            esc(&c.spec)
        );
    }
}
