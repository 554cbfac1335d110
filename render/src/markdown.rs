//! The run as Markdown, for a pull-request comment or `$GITHUB_STEP_SUMMARY`:
//! the counts, version and coverage per era and transport and the eras not
//! judged, then each cause of failure or warning once (how many cases it
//! has, one example with its rule, the spec's sentence, the request and
//! response folded away, and the command that reproduces it), the skips by
//! reason; never more than [`MAX_MARKDOWN`] characters.

use std::fmt::Write;

use mcperr_core::report::groups::{self, CauseGroup};
use mcperr_core::report::{CaseResult, RunReport, RunSet};
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

/// The most a Markdown report holds, in bytes (so in characters too): a
/// pull-request comment holds 65,536 characters, and the job summary
/// 1 MiB. What does not fit is counted, and the JSON and HTML reports
/// hold every case.
pub const MAX_MARKDOWN: usize = 60_000;

/// How much of a request's or response's JSON an entry shows.
const SHOWN_JSON: usize = 2_000;

/// How much of a reason an entry shows.
const SHOWN_MESSAGE: usize = 2_000;

/// How many skip reasons the report lists.
const SKIP_REASONS_SHOWN: usize = 15;

/// `text` cut to `max` bytes at a character boundary, saying so.
fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}… ({} characters in all; the JSON report has it whole)",
        &text[..end],
        text.chars().count()
    )
}

fn pretty(v: &Option<serde_json::Value>) -> String {
    v.as_ref().map_or("(none)".to_string(), |v| {
        cut(
            &serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string()),
            SHOWN_JSON,
        )
    })
}

/// One cause: its example in full (request and response folded), the
/// other cases of the cause named.
fn entry(g: &CauseGroup) -> String {
    let mut out = String::new();
    let (report, c) = (g.example().run, g.example().case);
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
        "#### {word} `{}` [{}] {}\n\n*{} · {}*{}\n\n{}\n",
        c.id,
        c.rule,
        c.title,
        report.era,
        report.transport,
        others(g),
        cut(&message.join("  \n"), SHOWN_MESSAGE)
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
    out
}

/// ` · and 3 more with the same cause: `a`, `b` (in 2025-11-25 · http)`.
fn others(g: &CauseGroup) -> String {
    if g.members.len() < 2 {
        return String::new();
    }
    let ids = g.case_ids();
    let mut text = format!(" · and {} more with the same cause", g.members.len() - 1);
    if ids.len() > 1 {
        let shown: Vec<String> = ids[1..].iter().take(10).map(|i| format!("`{i}`")).collect();
        text.push_str(&format!(": {}", shown.join(", ")));
        if ids.len() - 1 > shown.len() {
            text.push_str(&format!(" and {} more", ids.len() - 1 - shown.len()));
        }
    }
    let runs = g.run_labels();
    if runs.len() > 1 {
        text.push_str(&format!(" (in {})", runs.join(", ")));
    }
    text
}

/// The head: target, profile, a row per run with the version the server
/// agreed and its coverage, the eras not judged.
fn head(set: &RunSet) -> String {
    let mut out = String::from("## mcperr\n\n");
    if let Some(first) = set.runs.first() {
        let _ = writeln!(
            out,
            "Target: `{}` · profile `{}`\n",
            first.target.shown(),
            first.profile
        );
    }
    out.push_str(
        "| era | transport | version | pass | fail | warn | skip | error | coverage |\n|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in &set.runs {
        let n = |v: Verdict| r.cases.iter().filter(|c| c.verdict == v).count();
        let baselined = r.cases.iter().filter(|c| c.baselined).count();
        let fail = match baselined {
            0 => n(Verdict::Fail).to_string(),
            b => format!("{} ({b} baselined)", n(Verdict::Fail)),
        };
        let coverage = r.coverage.as_ref().map_or("—".to_string(), |c| {
            format!("{} % ({} of {})", c.percent(), c.judged, c.applicable)
        });
        let negotiated = r.negotiated();
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {fail} | {} | {} | {} | {coverage} |",
            r.era,
            r.transport,
            if negotiated.is_empty() {
                "—"
            } else {
                &negotiated
            },
            n(Verdict::Pass),
            n(Verdict::Warn),
            n(Verdict::Skip),
            n(Verdict::Error)
        );
    }
    out.push('\n');
    for n in &set.not_judged {
        let _ = writeln!(out, "- Not judged: {}", n.replace('\n', " "));
    }
    for r in &set.runs {
        let Some(c) = &r.coverage else { continue };
        let rest = c.not_reached();
        if !rest.is_empty() {
            let _ = writeln!(out, "- *{} · {}* not reached: {rest}", r.era, r.transport);
        }
    }
    out.push('\n');
    out
}

/// The skips by reason, as a table.
fn skipped(runs: &[RunReport]) -> String {
    let reasons = groups::skips_by_reason(runs);
    if reasons.is_empty() {
        return String::new();
    }
    let total: usize = reasons.iter().map(|r| r.members.len()).sum();
    let mut out = format!("### Skipped ({total})\n\n| cases | reason | e.g. |\n|---|---|---|\n");
    for r in reasons.iter().take(SKIP_REASONS_SHOWN) {
        let _ = writeln!(
            out,
            "| {} | {} | `{}` |",
            r.members.len(),
            cut(&r.reason, 300).replace('|', "\\|"),
            r.case_ids()[0]
        );
    }
    if reasons.len() > SKIP_REASONS_SHOWN {
        let rest = &reasons[SKIP_REASONS_SHOWN..];
        let n: usize = rest.iter().map(|r| r.members.len()).sum();
        let _ = writeln!(out, "| {n} | {} other reasons | |", rest.len());
    }
    out.push('\n');
    out
}

/// Which causes a section of the report holds.
type Wanted = fn(&CauseGroup) -> bool;

/// Renders every run of one invocation, under [`MAX_MARKDOWN`]: the
/// failures, warnings and baselined failures grouped by cause, each with
/// one example; causes that do not fit are counted at the end.
pub fn render_all(set: &RunSet) -> String {
    let mut out = head(set);
    let groups = groups::by_cause(&set.runs);
    let skips = skipped(&set.runs);
    // Room for the skips and the closing note.
    let reserve = skips.len() + 400;
    let (mut left_causes, mut left_cases) = (0, 0);
    let sections: [(&str, Wanted); 3] = [
        ("Failures", |g| !g.baselined && g.verdict != Verdict::Warn),
        ("Warnings", |g| g.verdict == Verdict::Warn),
        ("Baselined failures", |g| g.baselined),
    ];
    for (title, wanted) in sections {
        let mine: Vec<&CauseGroup> = groups.iter().filter(|g| wanted(g)).collect();
        if mine.is_empty() {
            continue;
        }
        let cases: usize = mine.iter().map(|g| g.members.len()).sum();
        let causes = match mine.len() {
            1 => "1 cause".to_string(),
            n => format!("{n} causes"),
        };
        let _ = writeln!(out, "### {title} ({cases} cases, {causes})\n");
        for g in mine {
            let text = entry(g);
            if out.len() + text.len() + reserve > MAX_MARKDOWN {
                left_causes += 1;
                left_cases += g.members.len();
                continue;
            }
            out.push_str(&text);
        }
    }
    out.push_str(&skips);
    if left_causes > 0 {
        let _ = writeln!(
            out,
            "*{left_causes} more causes ({left_cases} cases) are not shown, to keep this report under {MAX_MARKDOWN} characters: the JSON (`--json`) and HTML (`--html`) reports hold every case.*"
        );
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

    /// A run of `n` warnings, each a cause of its own (a distinct rule
    /// text), each response a 5 kB JSON value.
    fn warnings(n: usize, same_cause: bool) -> RunSet {
        use mcperr_core::report::TargetInfo;
        let cases = (0..n)
            .map(|i| CaseResult {
                id: format!("tools/case-{i}"),
                rule: mcperr_model::rules::RuleId::T4,
                case_rule: Some(mcperr_model::rules::RuleId::T4),
                verdict: Verdict::Warn,
                aspect: None,
                message: if same_cause {
                    format!("result.isError: expected true, got \"{i}\". Spec: x")
                } else {
                    // Letters: numbers in a reason are blanked (a count varies).
                    let word: String = format!("{i:03}")
                        .chars()
                        .map(|d| (b'a' + d.to_digit(10).unwrap() as u8) as char)
                        .collect();
                    format!("cause {word}. Spec: x")
                },
                request: Some(serde_json::json!({"method": "tools/call", "id": i})),
                response: Some(serde_json::json!({"result": "x".repeat(5_000)})),
                http_status: None,
                body: None,
                duration_ms: 1,
                area: "tools".into(),
                title: "a title".into(),
                spec: "2026-07-28 server/tools: \"a sentence\"".into(),
                baselined: false,
                expected: None,
            })
            .collect();
        let target = TargetInfo {
            kind: "stdio".into(),
            command: Some("server".into()),
            url: None,
        };
        RunSet::new(vec![RunReport::new(
            target,
            "2026-07-28".into(),
            "stdio",
            "spec",
            cases,
        )])
    }

    #[test]
    fn a_report_of_many_findings_fits_a_pull_request_comment() {
        let md = render_all(&warnings(300, false));
        assert!(md.len() < MAX_MARKDOWN, "{}", md.len());
        // What does not fit is counted, and where the rest is said.
        assert!(md.contains("### Warnings (300 cases, 300 causes)"), "{md}");
        assert!(
            md.contains("more causes (") && md.contains("the JSON (`--json`)"),
            "{md}"
        );
        // A long response is cut, saying so.
        assert!(md.contains("characters in all; the JSON report has it whole"));
    }

    #[test]
    fn warnings_of_one_cause_are_one_entry() {
        let md = render_all(&warnings(100, true));
        assert_eq!(md.matches("#### WARN").count(), 1, "{md}");
        assert!(md.contains("### Warnings (100 cases, 1 cause)"), "{md}");
        assert!(
            md.contains("and 99 more with the same cause: `tools/case-1`"),
            "{md}"
        );
        assert!(!md.contains("more causes ("), "{md}");
    }

    #[test]
    fn a_fence_outlasts_the_backticks_inside() {
        assert!(fenced("json", "a ``` b").starts_with("````json\n"));
    }
}
