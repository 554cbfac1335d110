//! The terminal report. By default ([`Detail::Normal`]) one invocation's
//! runs read as one page ([`grouped`]): a header with the negotiated
//! versions, the tools once, the failures and warnings grouped by cause
//! with one example each, the skips counted by reason, the summary last.
//! `-v` ([`Detail::Verbose`]) prints every run in full, a line per case;
//! `-q` the findings and the summary only. Colour only on a TTY, and never
//! with `NO_COLOR` set.

mod grouped;
mod wrap;

use std::fmt::Write;

use mcperr_core::report::{RunReport, RunSet};
use mcperr_model::verdict::Verdict;

pub use wrap::wrap;

/// How much the terminal report shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detail {
    /// Findings grouped by cause and the summary (`-q`).
    Quiet,
    /// The default: header, tools, findings by cause, skips by reason, summary.
    Normal,
    /// Every run in full: a line per case, each failure's request and response whole (`-v`).
    Verbose,
}

/// Renders every run of one invocation at `detail`.
pub fn render_set(set: &RunSet, colour: bool, detail: Detail) -> String {
    match detail {
        Detail::Verbose => {
            let mut out = String::new();
            let mut blocks_shown: Vec<String> = Vec::new();
            for r in &set.runs {
                let block = mcperr_cases::select::tool_calls_block(&r.valid_calls, &r.left_out);
                let first = !blocks_shown.contains(&block);
                if first {
                    blocks_shown.push(block);
                }
                out.push_str(&render_run(r, colour, first));
            }
            out.push_str(&grouped::summary(set, colour));
            out
        }
        Detail::Normal | Detail::Quiet => grouped::render(set, colour, detail == Detail::Quiet),
    }
}

pub(crate) fn paint(text: &str, code: &str, colour: bool) -> String {
    if colour {
        format!("\x1b[{code}m{text}\x1b[0m")
    } else {
        text.to_string()
    }
}

pub(crate) fn label(v: Verdict, baselined: bool, colour: bool) -> String {
    let (text, code) = match (v, baselined) {
        (Verdict::Fail, true) => ("FAIL*", "33"),
        (Verdict::Pass, _) => ("PASS ", "32"),
        (Verdict::Warn, _) => ("WARN ", "33"),
        (Verdict::Fail, _) => ("FAIL ", "31;1"),
        (Verdict::Skip, _) => ("SKIP ", "2"),
        (Verdict::Error, _) => ("ERROR", "35;1"),
    };
    paint(text, code, colour)
}

/// Server-provided text with control characters made visible, so that a
/// server's escape sequences cannot reach the terminal.
pub(crate) fn visible(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() && c != '\n' {
                format!("\\u{{{:x}}}", c as u32)
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// One run in full, as `-v` prints it: a line per case, each failure
/// with its request and response whole. `tools_block`: false when an
/// earlier run of the same invocation printed the same block (one line
/// says so instead).
pub fn render_run(report: &RunReport, colour: bool, tools_block: bool) -> String {
    let mut out = String::new();
    let target = report.target.shown();
    let _ = writeln!(
        out,
        "mcperr run: {target}\nera {} · {} · profile {}\n",
        report.era, report.transport, report.profile
    );
    let tools = mcperr_cases::select::tool_calls_block(&report.valid_calls, &report.left_out);
    if !tools.is_empty() {
        if tools_block {
            let _ = writeln!(out, "{tools}");
        } else {
            let _ = writeln!(out, "Tools: as above\n");
        }
    }
    for c in &report.cases {
        let note = match c.verdict {
            Verdict::Skip | Verdict::Warn => {
                format!("  ({})", c.message.lines().next().unwrap_or(""))
            }
            _ => String::new(),
        };
        let _ = writeln!(
            out,
            "{} {:<4} {:<52} {:>5} ms{}",
            label(c.verdict, c.baselined, colour),
            c.rule,
            c.id,
            c.duration_ms,
            note
        );
    }
    let details: Vec<_> = report
        .cases
        .iter()
        .filter(|c| matches!(c.verdict, Verdict::Fail | Verdict::Error))
        .collect();
    if !details.is_empty() {
        let _ = writeln!(out, "\nFailures:");
    }
    for c in details {
        let tag = if c.baselined { " (baselined)" } else { "" };
        let _ = writeln!(
            out,
            "\n{} {} [{}]{tag}",
            label(c.verdict, c.baselined, colour),
            c.id,
            c.rule
        );
        if !c.title.is_empty() {
            let _ = writeln!(out, "  checks:   {}", c.title);
        }
        for (i, line) in visible(&c.message).lines().enumerate() {
            let _ = writeln!(
                out,
                "  {} {line}",
                if i == 0 { "why:     " } else { "         " }
            );
        }
        if let Some(r) = &c.request {
            let _ = writeln!(out, "  request:  {r}");
        }
        match &c.response {
            Some(r) => {
                let _ = writeln!(out, "  response: {}", visible(&r.to_string()));
            }
            None => {
                let _ = writeln!(out, "  response: (none)");
            }
        }
        let _ = writeln!(out, "  spec:     {}", c.spec);
        let _ = writeln!(
            out,
            "  rule:     {} (mcperr explain {})",
            mcperr_core::explain::page_path(c.rule),
            c.rule
        );
    }
    let baselined = report.cases.iter().filter(|c| c.baselined).count();
    let _ = writeln!(out, "\n{}", counts(&report.summary(), baselined));
    if let Some(c) = &report.coverage {
        let _ = writeln!(out, "{}", c.line());
    }
    out
}

/// `N passed, N failed, N warned, N skipped, N errors (N of them baselined)`.
pub(crate) fn counts(s: &mcperr_core::report::Summary, baselined: usize) -> String {
    let of_them = if baselined > 0 {
        format!(" ({baselined} of them baselined)")
    } else {
        String::new()
    };
    format!(
        "{} passed, {} failed, {} warned, {} skipped, {} errors{of_them}",
        s.pass, s.fail, s.warn, s.skip, s.error
    )
}

/// What to do about a stale baseline entry (`report.stale_baseline`).
pub(crate) fn stale_advice(note: &str) -> String {
    match note.strip_suffix(mcperr_core::report::stale::NAMES_NO_CASE) {
        Some(entry) => format!("baseline entry {entry} names no case: fix or remove it"),
        None => format!("baseline entry {note} no longer fails: remove it"),
    }
}
