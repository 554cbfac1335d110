//! Findings grouped by cause, and skips by reason, over every run of one
//! invocation: a server that ignores an unknown cursor on four list methods
//! in two eras and two transports has one cause, shown once with its count
//! and one example, not sixteen times. The terminal and the Markdown report
//! read these; the JSON report keeps every case.

use mcperr_model::verdict::Verdict;

use super::{CaseResult, RunReport};

/// One case of one run.
#[derive(Debug, Clone, Copy)]
pub struct Member<'a> {
    /// The run the case belongs to (its era and transport).
    pub run: &'a RunReport,
    /// The case.
    pub case: &'a CaseResult,
}

impl Member<'_> {
    /// `2025-11-25 over stdio`.
    pub fn run_label(&self) -> String {
        format!("{} over {}", self.run.era, self.run.transport)
    }
}

/// The failures, errors or warnings of one cause: the same verdict (and
/// baseline state), the same deciding rule and aspect, and the same
/// reason once the values that vary from case to case are blanked
/// ([`cause_of`]).
#[derive(Debug, Clone)]
pub struct CauseGroup<'a> {
    /// The verdict every member has.
    pub verdict: Verdict,
    /// Whether the members are baselined failures.
    pub baselined: bool,
    /// The deciding rule.
    pub rule: mcperr_model::rules::RuleId,
    /// The reason with its varying values blanked.
    pub cause: String,
    /// Every case of the cause, the first one the example.
    pub members: Vec<Member<'a>>,
}

impl<'a> CauseGroup<'a> {
    /// The case shown in full.
    pub fn example(&self) -> Member<'a> {
        self.members[0]
    }

    /// The distinct case ids, in the order met.
    pub fn case_ids(&self) -> Vec<&'a str> {
        distinct(self.members.iter().map(|m| m.case.id.as_str()))
    }

    /// The distinct `era over transport` labels, in the order met.
    pub fn run_labels(&self) -> Vec<String> {
        labels(&self.members)
    }
}

/// `items` without repeats, in the order met (the report's lists are
/// short: eras, transports, case ids of one cause).
pub fn distinct<'a>(items: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for i in items {
        if !out.contains(&i) {
            out.push(i);
        }
    }
    out
}

/// The distinct `era over transport` labels of `members`, in the order met.
pub fn labels(members: &[Member]) -> Vec<String> {
    let labels: Vec<String> = members.iter().map(Member::run_label).collect();
    distinct(labels.iter().map(String::as_str))
        .into_iter()
        .map(str::to_string)
        .collect()
}

/// The failures and errors (not baselined), then the warnings, then the
/// baselined failures of `runs`, each kind grouped by cause in the order
/// first met.
pub fn by_cause(runs: &[RunReport]) -> Vec<CauseGroup<'_>> {
    let mut groups: Vec<CauseGroup> = Vec::new();
    let rank = |c: &CaseResult| match (c.verdict, c.baselined) {
        (Verdict::Fail | Verdict::Error, false) => Some(0),
        (Verdict::Warn, _) => Some(1),
        (Verdict::Fail | Verdict::Error, true) => Some(2),
        _ => None,
    };
    for wanted in 0..3 {
        for run in runs {
            for case in run.cases.iter().filter(|c| rank(c) == Some(wanted)) {
                let cause = cause_of(&case.message);
                let member = Member { run, case };
                let same = groups.iter_mut().find(|g| {
                    g.verdict == case.verdict
                        && g.baselined == case.baselined
                        && g.rule == case.rule
                        && g.example().case.aspect == case.aspect
                        && g.cause == cause
                });
                match same {
                    Some(g) => g.members.push(member),
                    None => groups.push(CauseGroup {
                        verdict: case.verdict,
                        baselined: case.baselined,
                        rule: case.rule,
                        cause,
                        members: vec![member],
                    }),
                }
            }
        }
    }
    groups
}

/// The skips of one reason over every run.
#[derive(Debug, Clone)]
pub struct SkipReason<'a> {
    /// The reason ([`cause_of`] of the first line).
    pub reason: String,
    /// Every skipped case of it.
    pub members: Vec<Member<'a>>,
}

impl<'a> SkipReason<'a> {
    /// The distinct case ids, in the order met.
    pub fn case_ids(&self) -> Vec<&'a str> {
        distinct(self.members.iter().map(|m| m.case.id.as_str()))
    }
}

/// The skipped cases of `runs` by reason, the most frequent reason first.
pub fn skips_by_reason(runs: &[RunReport]) -> Vec<SkipReason<'_>> {
    let mut out: Vec<SkipReason> = Vec::new();
    for run in runs {
        for case in run.cases.iter().filter(|c| c.verdict == Verdict::Skip) {
            let reason = cause_of(&case.message);
            let member = Member { run, case };
            match out.iter_mut().find(|s| s.reason == reason) {
                Some(s) => s.members.push(member),
                None => out.push(SkipReason {
                    reason,
                    members: vec![member],
                }),
            }
        }
    }
    // Stable: reasons of equal count keep the order met.
    out.sort_by_key(|s| std::cmp::Reverse(s.members.len()));
    out
}

/// A reason's cause: its first line without the quoted sentence of the
/// spec (each era quotes its own), with quoted text blanked to `"…"` and
/// JSON objects and arrays to `{…}` and `[…]` (the answer a case got, the
/// tool or value it named). Two cases with the same cause broke the same
/// thing in the same way.
pub fn cause_of(message: &str) -> String {
    let first = message.lines().next().unwrap_or("").trim();
    let first = first.split(". Spec: ").next().unwrap_or(first);
    let first = first.replace(" (see the response)", "");
    let mut out = String::with_capacity(first.len());
    let mut chars = first.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                // To the closing quote, escapes skipped.
                let mut escaped = false;
                for d in chars.by_ref() {
                    match (escaped, d) {
                        (false, '\\') => escaped = true,
                        (false, '"') => break,
                        _ => escaped = false,
                    }
                }
                out.push_str("\"…\"");
            }
            '{' | '[' if chars.peek().is_some_and(|n| !n.is_whitespace()) => {
                let (open, close) = if c == '{' { ('{', '}') } else { ('[', ']') };
                let mut depth = 1;
                let mut in_string = false;
                let mut escaped = false;
                for d in chars.by_ref() {
                    match (in_string, escaped, d) {
                        (true, false, '\\') => escaped = true,
                        (true, false, '"') => in_string = false,
                        (true, _, _) => escaped = false,
                        (false, _, '"') => in_string = true,
                        (false, _, d) if d == open => depth += 1,
                        (false, _, d) if d == close => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                out.push(open);
                out.push('…');
                out.push(close);
            }
            // A count or a duration ("from 0 to 1", "within 5001 ms"):
            // not a negative code, nor part of a name or a date.
            d if d.is_ascii_digit()
                && !out.ends_with(|p: char| p.is_alphanumeric() || "-._/".contains(p)) =>
            {
                let mut rest = String::from(d);
                while let Some(n) = chars.next_if(|n| n.is_ascii_digit()) {
                    rest.push(n);
                }
                if chars
                    .peek()
                    .is_some_and(|n| n.is_alphanumeric() || *n == '-')
                {
                    out.push_str(&rest);
                } else {
                    out.push('N');
                }
            }
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cause_blanks_what_varies_and_keeps_what_was_wrong() {
        let a = r#"error: expected an object, got absent; result: expected absent, got {"tools":[{"name":"a"}]}. Spec: 2025-11-25 server/utilities/pagination#error-handling: "Invalid cursors""#;
        let b = r#"error: expected an object, got absent; result: expected absent, got {"prompts":[],"x":"}"} (see the response). Spec: 2026-07-28 x: "y""#;
        assert_eq!(cause_of(a), cause_of(b));
        assert_eq!(
            cause_of(a),
            "error: expected an object, got absent; result: expected absent, got {…}"
        );
        // The code a server sent is the cause, not a detail.
        assert_ne!(
            cause_of("error.code: expected -32602, got 0"),
            cause_of("error.code: expected -32602, got -32603")
        );
        assert_eq!(
            cause_of(
                r#"the result carries structuredContent {"result":"done 1"} but text blocks "done \"1\"", none"#
            ),
            r#"the result carries structuredContent {…} but text blocks "…", none"#
        );
        // Counts and durations vary; codes and names do not.
        assert_eq!(
            cause_of("limited_calls went from 0 to 1; no response within 5001 ms"),
            "limited_calls went from N to N; no response within N ms"
        );
        assert_eq!(
            cause_of("got -32603 from T4 at 2025-11-25"),
            "got -32603 from T4 at 2025-11-25"
        );
        // Only the first line: the rest are the other violations of the case.
        assert_eq!(cause_of("a\nalso warn [T4]: b"), "a");
    }
}
