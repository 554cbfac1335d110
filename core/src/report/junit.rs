//! JUnit XML, as CI test reporters read it: a `<testsuite>` per area, a
//! `<testcase>` per case, `<failure>`/`<error>`/`<skipped>` children.
//! Warnings pass, with the reason in `<system-out>`.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::oracle::Verdict;
use crate::report::RunReport;
use crate::runner::CaseResult;

/// Escapes text for XML attributes and content; drops characters XML 1.0 forbids.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\t' | '\r' => out.push_str(&format!("&#{};", c as u32)),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

fn details(c: &CaseResult) -> String {
    let mut d = format!("{}\nrule: {}\nspec: {}", c.message, c.rule, c.spec);
    if let Some(r) = &c.request {
        let _ = write!(d, "\nrequest: {r}");
    }
    let _ = write!(
        d,
        "\nresponse: {}",
        c.response
            .as_ref()
            .map_or("(none)".to_string(), |r| r.to_string())
    );
    d
}

/// Renders the report as JUnit XML.
pub fn render(report: &RunReport) -> String {
    let mut areas: BTreeMap<&str, Vec<&CaseResult>> = BTreeMap::new();
    for c in &report.cases {
        areas.entry(c.area.as_str()).or_default().push(c);
    }
    let s = report.summary();
    let total_ms: u64 = report.cases.iter().map(|c| c.duration_ms).sum();
    let mut x = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        x,
        "<testsuites name=\"mcperr\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{:.3}\">",
        report.cases.len(),
        s.fail,
        s.error,
        s.skip,
        total_ms as f64 / 1000.0
    );
    for (area, cases) in areas {
        let count = |v: Verdict| cases.iter().filter(|c| c.verdict == v).count();
        let ms: u64 = cases.iter().map(|c| c.duration_ms).sum();
        let _ = writeln!(
            x,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{:.3}\">",
            escape(&format!("{area} ({} · {})", report.era, report.profile)),
            cases.len(),
            count(Verdict::Fail),
            count(Verdict::Error),
            count(Verdict::Skip),
            ms as f64 / 1000.0
        );
        for c in cases {
            let _ = write!(
                x,
                "    <testcase name=\"{}\" classname=\"{}\" time=\"{:.3}\">",
                escape(&c.id),
                escape(&format!("mcperr.{area}")),
                c.duration_ms as f64 / 1000.0
            );
            match c.verdict {
                Verdict::Fail => {
                    let kind = if c.baselined { "baselined" } else { "failure" };
                    let _ = write!(
                        x,
                        "<failure message=\"{}\" type=\"{}\">{}</failure>",
                        escape(c.message.lines().next().unwrap_or("")),
                        escape(&format!("{} {kind}", c.rule)),
                        escape(&details(c))
                    );
                }
                Verdict::Error => {
                    let _ = write!(
                        x,
                        "<error message=\"{}\" type=\"{}\">{}</error>",
                        escape(c.message.lines().next().unwrap_or("")),
                        escape(&c.rule),
                        escape(&details(c))
                    );
                }
                Verdict::Skip => {
                    let _ = write!(x, "<skipped message=\"{}\"/>", escape(&c.message));
                }
                Verdict::Warn => {
                    let _ = write!(
                        x,
                        "<system-out>{}</system-out>",
                        escape(&format!("warn [{}]: {}", c.rule, c.message))
                    );
                }
                Verdict::Pass => {}
            }
            x.push_str("</testcase>\n");
        }
        x.push_str("  </testsuite>\n");
    }
    x.push_str("</testsuites>\n");
    x
}
