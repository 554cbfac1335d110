//! The run report: a typed, deserializable record of one run (target, era,
//! transport, profile, one result per case). The JSON report is this
//! structure serialized, so a matrix can read many of them back; its other
//! renderings (terminal, JUnit XML, HTML, Markdown, SARIF, the matrix page)
//! are the `mcperr-render` crate's.

pub mod coverage;
pub mod groups;
pub mod snapshots;
pub mod stale;
mod valid_calls;

pub use valid_calls::{ValidCallOutcomes, TOOL_FAILED};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use mcperr_cases::case::Case;
use mcperr_model::rules::RuleId;
use mcperr_model::verdict::Verdict;
use mcperr_oracle::Judgement;

/// What was tested.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TargetInfo {
    /// `embedded` (the reference server in this binary), `stdio`, `http` or `in-process`.
    pub kind: String,
    /// The command line, for stdio servers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// The endpoint, for HTTP servers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

impl TargetInfo {
    /// The command line or the URL, for people.
    pub fn shown(&self) -> &str {
        self.command
            .as_deref()
            .or(self.url.as_deref())
            .unwrap_or(&self.kind)
    }
}

/// One case's outcome, as reports show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseResult {
    /// Case id.
    pub id: String,
    /// The deciding rule (the case's own, or an invariant's that decided).
    pub rule: RuleId,
    /// The rule the case proves, whichever decided: the matrix groups rows
    /// by it (absent from reports written before it existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case_rule: Option<RuleId>,
    /// The verdict.
    pub verdict: Verdict,
    /// The aspect that decided (`T4.invalid-params-code`), when a violation did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aspect: Option<mcperr_model::rules::AspectId>,
    /// Why: every violation found, the deciding one first.
    pub message: String,
    /// The judged request, as sent.
    pub request: Option<Value>,
    /// The raw response.
    pub response: Option<Value>,
    /// HTTP status (HTTP transports only).
    pub http_status: Option<u16>,
    /// The HTTP body, clipped, when it held no JSON-RPC response (an HTML
    /// error page, say): what the server sent instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// Wall time of the case, from its first message to its verdict (its
    /// steps, watches and judged exchange; 0 when nothing was sent).
    pub duration_ms: u64,
    /// The case's area (first id segment).
    #[serde(default)]
    pub area: String,
    /// The case's title.
    #[serde(default)]
    pub title: String,
    /// The citation: the rule's section in the era under test, and the case's own.
    #[serde(default)]
    pub spec: String,
    /// A baselined failure (does not fail the run).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub baselined: bool,
    /// The passing shape the case expects under the run's profile and era
    /// (its `[expect]` and `[aspects]` with the profile's overlays), so a
    /// report shows what the response was held to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<Value>,
}

impl CaseResult {
    /// The result of `case` judged as `j`, citing `spec`.
    pub fn judged(
        case: &Case,
        spec: &str,
        j: Judgement,
        request: Option<Value>,
        response: Option<Value>,
        ms: u64,
    ) -> CaseResult {
        CaseResult {
            id: case.id.clone(),
            rule: j.rule,
            case_rule: Some(case.rule),
            verdict: j.verdict,
            aspect: j.aspect,
            message: j.message,
            request,
            response,
            http_status: None,
            body: None,
            duration_ms: ms,
            area: case.area().to_string(),
            title: case.title.clone(),
            spec: spec.to_string(),
            baselined: false,
            expected: (!case.expect.is_null()).then(|| case.expect.clone()),
        }
    }

    /// The result of a planned case judged as `j`: as [`CaseResult::judged`],
    /// with the shape the run held the response to (the profile's and era's
    /// expectation, not the case file's base), citing the plan's or `spec`.
    pub fn planned(
        plan: &mcperr_cases::plan::CasePlan,
        spec: &str,
        j: Judgement,
        request: Option<Value>,
        response: Option<Value>,
        ms: u64,
    ) -> CaseResult {
        let mut r = CaseResult::judged(&plan.case, spec, j, request, response, ms);
        r.expected = Some(plan.shown_expectation());
        r
    }

    /// A skipped case.
    pub fn skipped(case: &Case, spec: &str, why: String) -> CaseResult {
        CaseResult::judged(
            case,
            spec,
            Judgement::new(Verdict::Skip, case.rule, why),
            None,
            None,
            0,
        )
    }

    /// The one result of a run whose server could not be set up.
    pub fn setup_error(rule: RuleId, message: String) -> CaseResult {
        CaseResult {
            id: "setup/connect".into(),
            rule,
            case_rule: Some(rule),
            verdict: Verdict::Error,
            aspect: None,
            message,
            request: None,
            response: None,
            http_status: None,
            body: None,
            duration_ms: 0,
            area: "setup".into(),
            title: "the server starts and completes the handshake".into(),
            spec: String::new(),
            baselined: false,
            expected: None,
        }
    }
}

/// Counts per verdict.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    /// Passing cases.
    pub pass: usize,
    /// Failing cases (baselined ones included).
    pub fail: usize,
    /// Warnings.
    pub warn: usize,
    /// Skipped cases.
    pub skip: usize,
    /// Cases that could not be judged.
    pub error: usize,
}

impl Summary {
    /// Counts the verdicts of `cases`.
    pub fn of(cases: &[CaseResult]) -> Summary {
        let mut s = Summary::default();
        for c in cases {
            match c.verdict {
                Verdict::Pass => s.pass += 1,
                Verdict::Fail => s.fail += 1,
                Verdict::Warn => s.warn += 1,
                Verdict::Skip => s.skip += 1,
                Verdict::Error => s.error += 1,
            }
        }
        s
    }
}

/// Everything one run found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunReport {
    /// What was tested.
    pub target: TargetInfo,
    /// The era judged (`2025-11-25`, `2026-07-28`), or what was asked for
    /// when setup failed before an era was established.
    pub era: String,
    /// `stdio` or `http`.
    pub transport: String,
    /// The profile's name.
    pub profile: String,
    /// One result per case.
    pub cases: Vec<CaseResult>,
    /// Counts per verdict.
    pub summary: Summary,
    /// Baseline entries that no longer fail (or name no case).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stale_baseline: Vec<String>,
    /// Tools the run did not call, each with the reason.
    #[serde(default)]
    pub left_out: Vec<mcperr_cases::select::LeftOut>,
    /// The tools the run called, each with whether valid arguments were
    /// sent (its body ran) and why.
    #[serde(default)]
    pub valid_calls: Vec<mcperr_cases::select::ToolCalls>,
    /// What became of the generated valid calls (counted afresh in
    /// [`RunReport::to_json`]).
    #[serde(default)]
    pub valid_call_outcomes: ValidCallOutcomes,
    /// Who played each part the cases needed, and how it was found.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub parts: mcperr_cases::parts::Cast,
    /// How much of the era's requirements the run judged on this server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coverage: Option<coverage::Coverage>,
    /// The protocol version in force: what `initialize` answered
    /// (2025-11-25), or the era's version (2026-07-28, every request
    /// names its own). Reports state it next to the era asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
    /// The versions `server/discover` listed (2026-07-28's
    /// `supportedVersions`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub server_versions: Vec<String>,
    /// With `--snapshots`: what became of this run's transcripts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshots: Option<snapshots::SnapshotOutcome>,
}

impl RunReport {
    /// The report of findings (a fuzz campaign's, a proxied session's): one
    /// result per finding, with its hits and the inputs grouped into it, in
    /// the shape `mcperr run` reports take, so every report format applies;
    /// `area` names where they came from (`fuzz`, `proxy`).
    pub fn of_findings(
        found: &[&mcperr_oracle::findings::Finding],
        era: mcperr_protocol::Era,
        profile: &str,
        target: TargetInfo,
        area: &str,
    ) -> RunReport {
        let cases = found
            .iter()
            .map(|f| CaseResult {
                id: f.id.clone(),
                rule: f.rule,
                case_rule: Some(f.rule),
                verdict: f.verdict,
                aspect: Some(f.aspect),
                message: format!(
                    "{} ({} hit{}{}){}",
                    f.message,
                    f.hits,
                    if f.hits == 1 { "" } else { "s" },
                    // Stray output answers no request: no method to name.
                    if f.methods.is_empty() {
                        String::new()
                    } else {
                        format!(" in {}", f.methods.join(", "))
                    },
                    mcperr_oracle::findings::group::more_inputs(f)
                        .map(|m| format!("\n{m}"))
                        .unwrap_or_default()
                ),
                request: Some(f.request.clone()),
                response: Some(f.response.clone()),
                http_status: f.http_status,
                body: None,
                duration_ms: 0,
                area: area.into(),
                title: f.aspect.rule().rule().title.clone(),
                spec: f.aspect.text(era).cite(),
                baselined: f.baselined,
                expected: None,
            })
            .collect();
        let transport = if target.url.is_some() {
            "http"
        } else {
            "stdio"
        };
        RunReport::new(target, era.to_string(), transport, profile, cases)
    }

    /// A report of `cases`, with its summary.
    pub fn new(
        target: TargetInfo,
        era: String,
        transport: &str,
        profile: &str,
        cases: Vec<CaseResult>,
    ) -> RunReport {
        RunReport {
            target,
            era,
            transport: transport.to_string(),
            profile: profile.to_string(),
            summary: Summary::of(&cases),
            cases,
            stale_baseline: vec![],
            left_out: vec![],
            valid_calls: vec![],
            valid_call_outcomes: ValidCallOutcomes::default(),
            parts: Default::default(),
            coverage: None,
            protocol_version: None,
            server_versions: vec![],
            snapshots: None,
        }
    }

    /// Counts per verdict.
    pub fn summary(&self) -> Summary {
        Summary::of(&self.cases)
    }

    /// Failures and errors that are not baselined.
    pub fn unexpected(&self) -> impl Iterator<Item = &CaseResult> {
        self.cases
            .iter()
            .filter(|c| matches!(c.verdict, Verdict::Fail | Verdict::Error) && !c.baselined)
    }

    /// The process exit code: 0 clean, 1 an unexpected failure or a stale baseline entry.
    pub fn exit_code(&self) -> i32 {
        if self.unexpected().next().is_some() || !self.stale_baseline.is_empty() {
            1
        } else {
            0
        }
    }

    /// A one-line count of the generated valid calls: how many the tools
    /// accepted, refused, answered against a rule, and were not allowed.
    pub fn valid_call_line(&self) -> String {
        let o = ValidCallOutcomes::of(self);
        format!(
            "valid calls: {} succeeded, {} failed on their own (no arguments to vary), {} refused, {} broke a rule, {} not allowed (invalid calls only; --tools, --allow-additive or --allow-destructive)",
            o.succeeded, o.tool_failed, o.refused, o.judged_wrong, o.not_allowed
        )
    }

    /// How the server agreed the era's version, for a report's header:
    /// `initialize answered 2025-11-25`, `server/discover lists
    /// 2026-07-28, 2025-11-25`; empty when setup never got that far.
    pub fn negotiated(&self) -> String {
        negotiated(self.protocol_version.as_deref(), &self.server_versions)
    }

    /// A one-line summary: era, transport and counts.
    pub fn summary_line(&self) -> String {
        let s = self.summary();
        format!(
            "{} over {}: {} passed, {} failed, {} warned, {} skipped, {} errors",
            self.era, self.transport, s.pass, s.fail, s.warn, s.skip, s.error
        )
    }

    /// The JSON report text (its summary counted afresh).
    pub fn to_json(&self) -> String {
        let mut report = self.clone();
        report.summary = self.summary();
        report.valid_call_outcomes = ValidCallOutcomes::of(self);
        serde_json::to_string_pretty(&report).expect("reports serialize") + "\n"
    }
}

/// How a server agreed an era's version: `server/discover lists …` when it
/// listed versions (2026-07-28), else `initialize answered V`; empty when
/// neither is known.
pub fn negotiated(version: Option<&str>, listed: &[String]) -> String {
    match (version, listed) {
        (_, [_, ..]) => format!("server/discover lists {}", listed.join(", ")),
        (Some(v), []) => format!("initialize answered {v}"),
        (None, []) => String::new(),
    }
}

/// The reports of one invocation: one per era and transport judged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSet {
    /// The profile every run was graded under (as each run says too).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub profile: String,
    /// The eras judged, in the order run (each run names its own).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub eras: Vec<String>,
    /// Each run.
    pub runs: Vec<RunReport>,
    /// Counts over every run.
    pub summary: Summary,
    /// Eras that could not be judged (with `--era auto`: the server does not
    /// speak them), and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_judged: Vec<String>,
}

impl RunSet {
    /// The set of `runs`, with the counts over them.
    pub fn new(runs: Vec<RunReport>) -> RunSet {
        let all: Vec<CaseResult> = runs.iter().flat_map(|r| r.cases.clone()).collect();
        let mut eras: Vec<String> = Vec::new();
        for r in &runs {
            if !eras.contains(&r.era) {
                eras.push(r.era.clone());
            }
        }
        RunSet {
            profile: runs.first().map(|r| r.profile.clone()).unwrap_or_default(),
            eras,
            summary: Summary::of(&all),
            runs,
            not_judged: vec![],
        }
    }

    /// Keeps in each run only the baseline entries stale in every run, as
    /// the matrix's gate does: with several eras or transports an entry
    /// that fails in one of them is not stale for passing in another.
    pub fn keep_stale_in_all(&mut self) {
        let all = stale::stale_in_all(self.runs.iter().map(|r| r.stale_baseline.as_slice()));
        for r in &mut self.runs {
            r.stale_baseline
                .retain(|note| all.iter().any(|e| e == stale::stale_entry(note)));
        }
    }

    /// 1 if any run has an unexpected failure or a stale baseline entry.
    pub fn exit_code(&self) -> i32 {
        self.runs
            .iter()
            .map(RunReport::exit_code)
            .max()
            .unwrap_or(0)
    }

    /// The JSON text: the one run's report as it is, or `{"runs": [...],
    /// "summary": {...}}` when several eras or transports were judged.
    pub fn to_json(&self) -> String {
        match self.runs.as_slice() {
            [one] if self.not_judged.is_empty() => one.to_json(),
            runs => {
                let runs: Vec<RunReport> = runs
                    .iter()
                    .map(|r| {
                        let mut r = r.clone();
                        r.summary = r.summary();
                        r.valid_call_outcomes = ValidCallOutcomes::of(&r);
                        r
                    })
                    .collect();
                let mut set = RunSet::new(runs);
                set.not_judged = self.not_judged.clone();
                serde_json::to_string_pretty(&set).expect("reports serialize") + "\n"
            }
        }
    }
}
