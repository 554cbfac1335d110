//! The default terminal page of one invocation: every run (era ×
//! transport) on one page a person reads top to bottom, in the manner of
//! cargo-nextest: a header with the versions the server agreed, the tools
//! once, each cause of failure or warning once (its count, one example
//! with its request and response), the skips counted by reason, and the
//! summary last. `-v` has every case line ([`super::render_run`]).

use std::fmt::Write;

use mcperr_core::report::groups::{self, distinct, CauseGroup};
use mcperr_core::report::{RunReport, RunSet};
use mcperr_model::verdict::Verdict;

use super::wrap::hanging;
use super::{label, paint, visible};

/// Where lines are wrapped.
const WIDTH: usize = 100;

/// How much of a request or response the page shows (`-v` shows it whole).
const SHOWN_CHARS: usize = 400;

/// How many skip reasons the page lists (`-v` lists every skip).
const SKIP_REASONS_SHOWN: usize = 8;

/// How many other case ids a group names.
const OTHER_IDS_SHOWN: usize = 5;

pub(super) fn render(set: &RunSet, colour: bool, quiet: bool) -> String {
    let mut out = header(set);
    if !quiet {
        out.push_str(&tools(&set.runs));
    }
    let groups = groups::by_cause(&set.runs);
    for g in &groups {
        out.push_str(&group(g, colour));
    }
    out.push_str(&skips(&set.runs, quiet));
    out.push_str(&summary(set, colour));
    out
}

/// The target, the profile and transports, each era with how the server
/// agreed it, and the eras not judged.
fn header(set: &RunSet) -> String {
    let mut out = String::new();
    let Some(first) = set.runs.first() else {
        return out;
    };
    let _ = writeln!(out, "mcperr run: {}", first.target.shown());
    let transports = distinct(set.runs.iter().map(|r| r.transport.as_str()));
    let _ = writeln!(
        out,
        "profile {} · {}",
        first.profile,
        transports.join(" and ")
    );
    for era in distinct(set.runs.iter().map(|r| r.era.as_str())) {
        let how = set
            .runs
            .iter()
            .filter(|o| o.era == era)
            .map(RunReport::negotiated)
            .find(|n| !n.is_empty())
            .unwrap_or_else(|| "no handshake (see below)".to_string());
        out.push_str(&hanging(&format!("  {era}: "), &how, WIDTH));
    }
    for n in &set.not_judged {
        // With --era auto an era the server does not speak is not a failure.
        out.push_str(&hanging("  not judged: ", &n.replace('\n', " "), WIDTH));
    }
    out.push('\n');
    out
}

/// The tools of every run in one block, grouped by how each is called
/// and why; a tool that only some eras list says which.
fn tools(runs: &[RunReport]) -> String {
    // (how, why) -> names, in the order met.
    let mut ways: Vec<(String, &str, Vec<String>)> = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    let listing = |r: &&RunReport| !r.valid_calls.is_empty() || !r.left_out.is_empty();
    let eras_listing = |name: &str| -> Vec<&str> {
        let lists = |r: &&RunReport| {
            r.valid_calls.iter().any(|c| c.name == name)
                || r.left_out.iter().any(|l| l.name == name)
        };
        distinct(runs.iter().filter(lists).map(|r| r.era.as_str()))
    };
    let all_eras = distinct(runs.iter().filter(listing).map(|r| r.era.as_str())).len();
    for r in runs {
        let calls = r
            .valid_calls
            .iter()
            .map(|c| (c.how(), c.reason.as_str(), c.name.as_str()));
        let left = r
            .left_out
            .iter()
            .map(|l| ("not called".to_string(), l.reason.as_str(), l.name.as_str()));
        for (how, why, name) in calls.chain(left) {
            if seen.contains(&name) {
                continue;
            }
            seen.push(name);
            let eras = eras_listing(name);
            let shown = if eras.len() < all_eras {
                format!("{name} [{} only]", eras.join(", "))
            } else {
                name.to_string()
            };
            match ways.iter_mut().find(|(h, w, _)| *h == how && *w == why) {
                Some(way) => way.2.push(shown),
                None => ways.push((how, why, vec![shown])),
            }
        }
    }
    if seen.is_empty() {
        return String::new();
    }
    let mut out = format!("Tools ({}):\n", seen.len());
    for (how, why, names) in ways {
        out.push_str(&hanging(
            "  ",
            &format!("{how}: {} ({why})", names.join(", ")),
            WIDTH,
        ));
    }
    out.push('\n');
    out
}

/// One cause: the example in full, the count and the other cases named.
fn group(g: &CauseGroup, colour: bool) -> String {
    let mut out = String::new();
    let ex = g.example();
    let c = ex.case;
    let tag = if g.baselined { " (baselined)" } else { "" };
    let _ = writeln!(
        out,
        "{} {:<4} {} · {}{tag}",
        label(g.verdict, g.baselined, colour),
        c.rule,
        c.id,
        ex.run_label()
    );
    if g.members.len() > 1 {
        out.push_str(&hanging("  also:     ", &others(g), WIDTH));
    }
    if !c.title.is_empty() {
        // Decided by another rule than the case's own (a stray message
        // around its request, say): the title is what the case is for.
        let title = match c.case_rule {
            Some(own) if own != c.rule => format!(
                "{} (what the {own} case is for; the finding is {}'s, about what came with its request)",
                c.title, c.rule
            ),
            _ => c.title.clone(),
        };
        out.push_str(&hanging("  checks:   ", &title, WIDTH));
    }
    // Each line's own citation goes: the case's sentence is quoted once, below.
    for (i, line) in visible(&c.message).lines().enumerate() {
        let lead = if i == 0 {
            "  why:      "
        } else {
            "            "
        };
        let line = line.split(". Spec: ").next().unwrap_or(line);
        out.push_str(&hanging(lead, line, WIDTH));
    }
    if let Some(r) = &c.request {
        let _ = writeln!(out, "  request:  {}", cut(&r.to_string()));
    }
    let response = c
        .response
        .as_ref()
        .map_or("(none)".to_string(), |r| cut(&visible(&r.to_string())));
    let _ = writeln!(out, "  response: {response}");
    if !c.spec.is_empty() {
        out.push_str(&hanging("  spec:     ", &c.spec.replace('\n', " "), WIDTH));
    }
    let _ = writeln!(
        out,
        "  rule:     {} (mcperr explain {})\n",
        mcperr_core::explain::page_path(c.rule),
        c.rule
    );
    out
}

/// `N more: ids … · in runs` (the runs of the others, besides the example's).
fn others(g: &CauseGroup) -> String {
    let ids = g.case_ids();
    let example_run = g.example().run_label();
    let runs = groups::labels(&g.members[1..]);
    let mut text = format!("{} more", g.members.len() - 1);
    if ids.len() > 1 {
        let shown: Vec<&str> = ids[1..].iter().take(OTHER_IDS_SHOWN).copied().collect();
        let rest = ids.len() - 1 - shown.len();
        text.push_str(&format!(": {}", shown.join(", ")));
        if rest > 0 {
            text.push_str(&format!(" and {rest} more"));
        }
    }
    if runs != [example_run] {
        text.push_str(&format!(" · in {}", runs.join(", ")));
    }
    text.push_str(" (-v lists each)");
    text
}

/// JSON text cut to [`SHOWN_CHARS`], saying so.
fn cut(text: &str) -> String {
    let n = text.chars().count();
    if n <= SHOWN_CHARS {
        return text.to_string();
    }
    let head: String = text.chars().take(SHOWN_CHARS).collect();
    format!("{head}… ({n} characters; -v or --json shows it whole)")
}

/// The skips counted by reason, the most frequent first; with `quiet`,
/// one line.
fn skips(runs: &[RunReport], quiet: bool) -> String {
    let reasons = groups::skips_by_reason(runs);
    let total: usize = reasons.iter().map(|r| r.members.len()).sum();
    if total == 0 {
        return String::new();
    }
    let mut out = String::new();
    if quiet {
        let _ = writeln!(out, "{total} skipped (listed by reason without -q)\n");
        return out;
    }
    let _ = writeln!(out, "Skipped: {total} (by reason; -v lists each)");
    for r in reasons.iter().take(SKIP_REASONS_SHOWN) {
        let ids = r.case_ids();
        let which = match ids.as_slice() {
            [one] => one.to_string(),
            [first, rest @ ..] => format!("{first} and {} more", rest.len()),
            [] => String::new(),
        };
        out.push_str(&hanging(
            &format!("  {:>3} × ", r.members.len()),
            &format!("{} ({which})", r.reason),
            WIDTH,
        ));
    }
    if reasons.len() > SKIP_REASONS_SHOWN {
        let rest = &reasons[SKIP_REASONS_SHOWN..];
        let n: usize = rest.iter().map(|r| r.members.len()).sum();
        let _ = writeln!(
            out,
            "        … {n} more for {} other reasons (-v lists each)",
            rest.len()
        );
    }
    out.push('\n');
    out
}

/// Each run's counts and coverage, the valid calls, stale baseline
/// entries, and the total over runs.
pub(super) fn summary(set: &RunSet, colour: bool) -> String {
    let mut out = String::from("Summary:\n");
    for r in &set.runs {
        let _ = writeln!(out, "  {}", r.summary_line());
        if let Some(c) = &r.coverage {
            out.push_str(&hanging("    ", &c.line(), WIDTH));
        }
    }
    if let Some(r) = set.runs.first() {
        // The tools and their consent are the same in every run.
        out.push_str(&hanging("  ", &r.valid_call_line(), WIDTH));
    }
    let stale = set.runs.iter().flat_map(|r| &r.stale_baseline);
    for s in distinct(stale.map(String::as_str)) {
        let why = super::stale_advice(s);
        let _ = writeln!(out, "{} {why}", paint("STALE", "31;1", colour));
    }
    let s = &set.summary;
    let baselined = set
        .runs
        .iter()
        .flat_map(|r| &r.cases)
        .filter(|c| c.baselined && c.verdict != Verdict::Pass)
        .count();
    if set.runs.len() < 2 && baselined == 0 {
        // The run's own line above is the total.
        return out;
    }
    let _ = writeln!(out, "in all: {}", super::counts(s, baselined));
    out
}
