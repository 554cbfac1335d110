//! The run as Markdown, for a pull-request comment or `$GITHUB_STEP_SUMMARY`:
//! the counts per era and transport, then each failure and warning with its
//! rule, the spec's sentence, the request and response folded away, and the
//! command that reproduces it.

use std::fmt::Write;

use mcperr_core::report::{CaseResult, RunReport};
use mcperr_model::verdict::Verdict;

/// `s` quoted for a POSIX shell.
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=@%+,".contains(c))
    {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// The `mcperr run` command that judges `case` again against the run's target.
pub fn reproduce(report: &RunReport, case: &CaseResult) -> String {
    let target = match (&report.target.command, &report.target.url) {
        (Some(cmd), _) => format!(" --stdio {}", shell_quote(cmd)),
        (None, Some(url)) if report.target.kind != "embedded" => {
            format!(" --http {}", shell_quote(url))
        }
        _ => String::new(),
    };
    // A proxied session's findings replay from the case files its --save wrote.
    let saved = if report.target.kind == "proxy" {
        " --cases-dir SAVED"
    } else {
        ""
    };
    format!(
        "mcperr run{target} --era {} --profile {}{saved} --cases {}",
        report.era,
        shell_quote(&report.profile),
        shell_quote(&case.id)
    )
}

/// A fenced block that no backtick run in `text` can close early.
fn fenced(lang: &str, text: &str) -> String {
    let mut fence = "```".to_string();
    while text.contains(&fence) {
        fence.push('`');
    }
    format!("{fence}{lang}\n{text}\n{fence}\n")
}

fn pretty(v: &Option<serde_json::Value>) -> String {
    v.as_ref().map_or("(none)".to_string(), |v| {
        serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string())
    })
}

fn entry(out: &mut String, report: &RunReport, c: &CaseResult) {
    let word = match c.verdict {
        Verdict::Fail if c.baselined => "FAIL (baselined)",
        Verdict::Fail => "FAIL",
        Verdict::Error => "ERROR",
        _ => "WARN",
    };
    // Each line's own citation goes: the sentence is quoted once, below.
    let message: Vec<&str> = c
        .message
        .trim()
        .lines()
        .map(|l| l.split(". Spec: ").next().unwrap_or(l))
        .collect();
    let _ = writeln!(
        out,
        "#### {word} `{}` [{}] {}\n\n{}\n",
        c.id,
        c.rule,
        c.title,
        message.join("  \n")
    );
    if !c.spec.is_empty() {
        let _ = writeln!(out, "> {}\n", c.spec.replace('\n', " "));
    }
    let _ = writeln!(
        out,
        "<details><summary>request and response</summary>\n\n{}\n{}{}\n</details>\n",
        fenced("json", &pretty(&c.request)),
        fenced("json", &pretty(&c.response)),
        c.http_status
            .map_or(String::new(), |s| format!("\nHTTP status {s}\n")),
    );
    let _ = writeln!(
        out,
        "Reproduce: `{}` · rule: `mcperr explain {}`\n",
        reproduce(report, c),
        c.rule
    );
}

/// Renders the runs of one invocation.
pub fn render_all(reports: &[RunReport]) -> String {
    let mut out = String::from("## mcperr\n\n");
    if let Some(first) = reports.first() {
        let _ = writeln!(out, "Target: `{}`\n", first.target.shown());
    }
    out.push_str(
        "| era | transport | profile | pass | fail | warn | skip | error |\n|---|---|---|---|---|---|---|---|\n",
    );
    for r in reports {
        let n = |v: Verdict| r.cases.iter().filter(|c| c.verdict == v).count();
        let baselined = r.cases.iter().filter(|c| c.baselined).count();
        let fail = match baselined {
            0 => n(Verdict::Fail).to_string(),
            b => format!("{} ({b} baselined)", n(Verdict::Fail)),
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {fail} | {} | {} | {} |",
            r.era,
            r.transport,
            r.profile,
            n(Verdict::Pass),
            n(Verdict::Warn),
            n(Verdict::Skip),
            n(Verdict::Error)
        );
    }
    out.push('\n');
    for r in reports.iter().filter(|r| r.coverage.is_some()) {
        let c = r.coverage.as_ref().expect("filtered");
        let _ = writeln!(out, "*{} · {}*: {}\n", r.era, r.transport, c.line());
    }
    for (title, wanted) in [
        (
            "Failures",
            &(|c: &CaseResult| matches!(c.verdict, Verdict::Fail | Verdict::Error) && !c.baselined)
                as &dyn Fn(&CaseResult) -> bool,
        ),
        ("Warnings", &|c: &CaseResult| c.verdict == Verdict::Warn),
        ("Baselined failures", &|c: &CaseResult| c.baselined),
    ] {
        let count: usize = reports
            .iter()
            .map(|r| r.cases.iter().filter(|c| wanted(c)).count())
            .sum();
        if count == 0 {
            continue;
        }
        let _ = writeln!(out, "### {title} ({count})\n");
        for r in reports {
            for c in r.cases.iter().filter(|c| wanted(c)) {
                let _ = writeln!(out, "*{} · {}*\n", r.era, r.transport);
                entry(&mut out, r, c);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_quoted_for_a_shell() {
        assert_eq!(shell_quote("tools/unknown-tool"), "tools/unknown-tool");
        assert_eq!(shell_quote("python server.py"), "'python server.py'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote(""), "''");
    }

    #[test]
    fn a_fence_outlasts_the_backticks_inside() {
        assert!(fenced("json", "a ``` b").starts_with("````json\n"));
    }
}
