//! JUnit XML, as CI test reporters read it: a `<testsuite>` per area, a
//! `<testcase>` per case, `<failure>`/`<error>`/`<skipped>` children.
//! Warnings pass, with the reason in `<system-out>`. Written with
//! `quick-junit` (the serializer cargo-nextest uses), which escapes text and
//! counts the attributes.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::time::Duration;

use quick_junit::{NonSuccessKind, Property, Report, TestCase, TestCaseStatus, TestSuite};

use mcperr_core::report::{CaseResult, RunReport};
use mcperr_model::verdict::Verdict;

fn details(c: &CaseResult) -> String {
    let mut d = format!(
        "{}\nrule: {} ({}, mcperr explain {})\nspec: {}",
        c.message,
        c.rule,
        mcperr_core::explain::page_path(c.rule),
        c.rule,
        c.spec
    );
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

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

fn test_case(area: &str, c: &CaseResult) -> TestCase {
    let status = match c.verdict {
        Verdict::Pass | Verdict::Warn => TestCaseStatus::success(),
        Verdict::Skip => {
            let mut s = TestCaseStatus::skipped();
            s.set_message(c.message.as_str());
            s
        }
        Verdict::Fail | Verdict::Error => {
            let kind = if c.verdict == Verdict::Fail {
                NonSuccessKind::Failure
            } else {
                NonSuccessKind::Error
            };
            let ty = match (c.verdict, c.baselined) {
                (Verdict::Fail, true) => format!("{} baselined", c.rule),
                (Verdict::Fail, false) => format!("{} failure", c.rule),
                _ => c.rule.to_string(),
            };
            let mut s = TestCaseStatus::non_success(kind);
            s.set_message(first_line(&c.message))
                .set_type(ty)
                .set_description(details(c));
            s
        }
    };
    let mut t = TestCase::new(c.id.as_str(), status);
    t.set_classname(format!("mcperr.{area}"))
        .set_time(Duration::from_millis(c.duration_ms));
    if c.verdict == Verdict::Warn {
        t.set_system_out(format!("warn [{}]: {}", c.rule, c.message));
    }
    t
}

/// Renders the report as JUnit XML.
pub fn render(report: &RunReport) -> String {
    render_all(std::slice::from_ref(report), &[])
}

/// Renders the reports of one invocation (each era and transport) as one
/// JUnit document: a suite per area and run, each with the run's facts as
/// properties (the version the server agreed, the eras not judged).
pub fn render_all(reports: &[RunReport], not_judged: &[String]) -> String {
    let mut x = Report::new("mcperr");
    let total_ms: u64 = reports
        .iter()
        .flat_map(|r| &r.cases)
        .map(|c| c.duration_ms)
        .sum();
    x.set_time(Duration::from_millis(total_ms));
    for report in reports {
        add_suites(&mut x, report, not_judged);
    }
    x.to_string().expect("JUnit XML serializes to a string")
}

fn add_suites(x: &mut Report, report: &RunReport, not_judged: &[String]) {
    let mut areas: BTreeMap<&str, Vec<&CaseResult>> = BTreeMap::new();
    for c in &report.cases {
        areas.entry(c.area.as_str()).or_default().push(c);
    }
    for (area, cases) in areas {
        let mut suite = TestSuite::new(format!(
            "{area} ({} · {} · {})",
            report.era, report.transport, report.profile
        ));
        let ms: u64 = cases.iter().map(|c| c.duration_ms).sum();
        suite.set_time(Duration::from_millis(ms));
        if let Some(v) = &report.protocol_version {
            suite.add_property(Property::new("protocolVersion", v.as_str()));
            suite.add_property(Property::new("negotiated", report.negotiated()));
        }
        for n in not_judged {
            suite.add_property(Property::new("notJudged", n.as_str()));
        }
        suite.add_test_cases(cases.iter().map(|c| test_case(area, c)));
        x.add_test_suite(suite);
    }
}
