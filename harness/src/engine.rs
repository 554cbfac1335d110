//! Run orchestration, shared by `mcperr run`, `mcperr list` and the modes to
//! come: reach the server, establish the era, discover what it offers, plan
//! the cases, execute them on one or more server processes (restarting the
//! dead), and return the typed report. The CLI only parses and prints.

use mcperr_model::rules::AspectId;
use std::collections::BTreeMap;

use mcperr_cases::discovery::Discovery;
use mcperr_cases::plan::CasePlan;
use mcperr_cases::profile::Profile;
use mcperr_cases::select::{RunPlan, SelectError, Selection};
use mcperr_core::report::{CaseResult, RunReport, TargetInfo};
use mcperr_model::Verdict;
use mcperr_oracle::Judgement;
use mcperr_protocol::Era;
use mcperr_wire::exchange::Stray;

use crate::client::Client;
pub use crate::connect::{connect, discover};
use crate::execute::execute;
pub use crate::settings::{EraChoice, RunSettings, SetupError};

/// An error before any server started: a bad selection.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The server could not be set up.
    #[error(transparent)]
    Setup(#[from] SetupError),
    /// The selection is unusable.
    #[error(transparent)]
    Select(#[from] SelectError),
}

/// A connected server, what it offers, and the run's cases.
pub struct Opened {
    /// The client, in the era established.
    pub client: Client,
    /// What the server offers.
    pub discovery: Discovery,
    /// The cases, each to run or skipped with its reason, the tools left
    /// out, and the placeholder values discovery chose.
    pub plan: RunPlan,
    /// The version in force and the versions `server/discover` listed
    /// ([`RunReport::protocol_version`], [`RunReport::server_versions`]).
    pub versions: (Option<String>, Vec<String>),
}

/// Connects in `choice`'s era, discovers what the server offers, and plans the cases.
pub async fn open(
    settings: &RunSettings,
    choice: EraChoice,
    selection: &Selection,
) -> Result<Opened, EngineError> {
    let (mut client, info) = connect(settings, choice).await?;
    let versions = versions_of(client.era, &info);
    let mut discovery = discover(&mut client, info).await;
    let probed = if selection.wants_probe() {
        crate::parts::probe(&mut client, &discovery, selection, settings.deadline).await
    } else {
        Default::default()
    };
    let planned = selection.cast(&discovery, &probed).and_then(|cast| {
        discovery.parts = cast;
        selection.plan(&discovery, client.era, settings.target.is_http())
    });
    match planned {
        Ok(plan) => Ok(Opened {
            client,
            discovery,
            plan,
            versions,
        }),
        Err(e) => {
            client.conn.close().await;
            Err(e.into())
        }
    }
}

/// The version in force and the versions the server listed, from the
/// handshake's result: `initialize`'s `protocolVersion` (2025-11-25); the
/// era's own version and `server/discover`'s `supportedVersions`
/// (2026-07-28, where every request names its version).
fn versions_of(era: Era, info: &serde_json::Value) -> (Option<String>, Vec<String>) {
    match era {
        Era::Legacy => (
            info.get("protocolVersion")
                .and_then(serde_json::Value::as_str)
                .map(str::to_string),
            vec![],
        ),
        Era::Modern => (
            Some(era.version().to_string()),
            crate::connect::listed_versions(info),
        ),
    }
}

/// What a run produced: the report and every case id the server could have
/// (for judging baselines).
pub struct RunOutcome {
    /// The typed report.
    pub report: RunReport,
    /// Every case id this server could have in a run.
    pub known_ids: Vec<String>,
}

/// Runs the selected cases against the server and returns the report. A
/// server that cannot be set up yields `Err` with a report holding one
/// `error` case that says what happened.
pub async fn run(
    settings: &RunSettings,
    choice: EraChoice,
    selection: &Selection,
    profile: &Profile,
    target: TargetInfo,
) -> Result<RunOutcome, (EngineError, Option<RunReport>)> {
    let transport = if settings.target.is_http() {
        "http"
    } else {
        "stdio"
    };
    let opened = match open(settings, choice, selection).await {
        Ok(o) => o,
        Err(EngineError::Setup(e)) => {
            let era = match choice {
                EraChoice::Auto => "auto".to_string(),
                EraChoice::Pinned(e) => e.to_string(),
            };
            let mut case = CaseResult::setup_error(e.rule, e.message.clone());
            if e.unjudged {
                // An older version it negotiated, as the spec allows: not judged.
                case.verdict = Verdict::Skip;
            }
            let report = RunReport::new(target, era, transport, &profile.name, vec![case]);
            return Err((EngineError::Setup(e), Some(report)));
        }
        Err(e) => return Err((e, None)),
    };
    let known_ids = match Selection::known_ids(&opened.discovery) {
        Ok(ids) => ids,
        Err(e) => {
            opened.client.conn.close().await;
            return Err((e.into(), None));
        }
    };
    let mut opened = opened;
    let era = opened.client.era;
    // Noise on stdout before the first case (a banner at start-up, output
    // during discovery) is its own J5 finding, not the first case's.
    let early = opened.client.drain();
    let (noise, rest): (Vec<Stray>, Vec<Stray>) = early
        .into_iter()
        .partition(|s| matches!(s, Stray::NotJson(_) | Stray::TooLong(_) | Stray::More(_)));
    opened.client.requeue(rest);
    let startup = (!noise.is_empty()).then(|| startup_noise(&noise, era, profile));
    let mut plans = Vec::new();
    let mut slots: Vec<Option<CaseResult>> = Vec::new();
    let http = settings.target.is_http();
    let vars = opened.plan.vars.clone();
    for (case, verdict) in opened.plan.cases {
        match verdict {
            Ok(()) => {
                let mut plan = CasePlan::new(&case, profile, era, &settings.canary, &vars, http);
                plan.logging_declared = Some(opened.discovery.advertises("logging"));
                plan.tool_tasks_declared =
                    Some(opened.discovery.advertises("tasks.requests.tools.call"));
                plan.parts_took = case
                    .needs
                    .iter()
                    .filter_map(|n| n.strip_prefix("part:"))
                    .filter_map(|p| opened.discovery.parts.get(p)?.took)
                    .max();
                plans.push(plan);
                slots.push(None);
            }
            Err(why) => {
                let spec = mcperr_cases::plan::citation(&case, era);
                slots.push(Some(CaseResult::skipped(&case, &spec, why.0)))
            }
        }
    }
    let mut ran = run_plans(settings, era, opened.client, plans)
        .await
        .into_iter();
    let cases = startup
        .into_iter()
        .chain(
            slots
                .into_iter()
                .map(|s| s.unwrap_or_else(|| ran.next().expect("one result per case"))),
        )
        .collect();
    let mut report = RunReport::new(target, era.to_string(), transport, &profile.name, cases);
    report.left_out = opened.plan.left_out;
    report.valid_calls = opened.plan.tool_calls;
    let declared = |c: &str| opened.discovery.advertises(c);
    let gates = mcperr_core::report::coverage::Gates {
        declared: &declared,
        transport,
        auth: selection.auth_required,
    };
    report.coverage = Some(mcperr_core::report::coverage::of_run(
        era,
        &gates,
        &report.cases,
    ));
    report.parts = opened.discovery.parts;
    (report.protocol_version, report.server_versions) = opened.versions;
    Ok(RunOutcome { report, known_ids })
}

/// The finding for stdout noise before the first case (J5).
fn startup_noise(noise: &[Stray], era: Era, profile: &Profile) -> CaseResult {
    let lines: Vec<String> = noise
        .iter()
        .map(|s| match s {
            Stray::NotJson(l) => format!("{l:?}"),
            Stray::TooLong(n) => format!("a line of over {n} bytes"),
            other => format!("{other:?}"),
        })
        .collect();
    let grader = mcperr_model::grading::Grader {
        era,
        over_http: false,
        grading: profile.grading,
        strict: profile.strict,
    };
    let noise = mcperr_model::grading::Violation::new(
        AspectId::J5Main,
        format!(
            "stdout carried output that is not a JSON-RPC message before the first case (start-up or discovery): {}",
            lines.join(", ")
        ),
    );
    let verdict = grader.grade(&noise, false).unwrap_or(Verdict::Pass);
    CaseResult {
        id: "setup/stdout-noise".into(),
        rule: AspectId::J5Main.rule(),
        case_rule: Some(AspectId::J5Main.rule()),
        verdict,
        aspect: Some(AspectId::J5Main),
        message: grader.message(&noise),
        request: None,
        response: None,
        http_status: None,
        body: None,
        duration_ms: 0,
        area: "setup".into(),
        title: "stdout carries only JSON-RPC messages from the start".into(),
        spec: grader.cite(AspectId::J5Main),
        baselined: false,
        expected: None,
    }
}

/// Runs `plans` on `jobs` servers (the first already connected), in order.
pub async fn run_plans(
    settings: &RunSettings,
    era: Era,
    first: Client,
    plans: Vec<CasePlan>,
) -> Vec<CaseResult> {
    let jobs = settings.jobs.max(1).min(plans.len().max(1));
    let mut groups: Vec<Vec<(usize, CasePlan)>> = vec![Vec::new(); jobs];
    for (i, p) in plans.into_iter().enumerate() {
        groups[i % jobs].push((i, p));
    }
    let mut set = tokio::task::JoinSet::new();
    let mut first = Some(first);
    for group in groups {
        let settings = settings.clone();
        let client = first.take();
        set.spawn(async move { run_group(&settings, era, client, group).await });
    }
    let mut results = BTreeMap::new();
    while let Some(done) = set.join_next().await {
        for (i, r) in done.expect("a case worker panicked") {
            results.insert(i, r);
        }
    }
    results.into_values().collect()
}

async fn run_group(
    settings: &RunSettings,
    era: Era,
    client: Option<Client>,
    group: Vec<(usize, CasePlan)>,
) -> Vec<(usize, CaseResult)> {
    let mut client = client;
    let mut out = Vec::new();
    // Cases on a process of their own that only start it run beside the
    // session, one at a time: a slow-starting server's start-ups (a second
    // or more each for a Python server) no longer add up with the session's.
    let (beside, group): (Vec<_>, Vec<_>) = group.into_iter().partition(|(_, plan)| {
        crate::execute::runs_beside_the_session(plan, settings.target.is_http())
    });
    let beside = (!beside.is_empty()).then(|| {
        let settings = settings.clone();
        tokio::spawn(async move {
            let mut out = Vec::new();
            for (i, plan) in beside {
                let result = match past_deadline(&settings, &plan) {
                    Some(skipped) => skipped,
                    None => execute_alone(&settings, era, &plan, None).await,
                };
                out.push((i, result));
            }
            out
        })
    });
    // What a dead process taught of the server's pace, for the next one.
    let mut pace = None;
    for (i, plan) in group {
        if let Some(skipped) = past_deadline(settings, &plan) {
            out.push((i, skipped));
            continue;
        }
        if !plan.case.handshake {
            let other = client.as_ref().and_then(Client::session_id);
            out.push((i, execute_alone(settings, era, &plan, other).await));
            continue;
        }
        if client.is_none() {
            match connect(settings, EraChoice::Pinned(era)).await {
                Ok((mut c, _)) => {
                    if let Some(p) = pace.take() {
                        c.pace = p;
                    }
                    client = Some(c)
                }
                Err(e) => {
                    let j = Judgement::new(
                        Verdict::Error,
                        plan.case.rule,
                        format!("could not restart the server: {e}"),
                    );
                    out.push((
                        i,
                        CaseResult::planned(&plan, &plan.citation, j, None, None, 0),
                    ));
                    continue;
                }
            }
        }
        let c = client.as_mut().expect("connected above");
        let (result, alive) = execute(c, &plan).await;
        out.push((i, result));
        if !alive {
            if let Some(dead) = client.take() {
                pace = Some(dead.pace.clone());
                dead.conn.close().await;
            }
        }
    }
    if let Some(c) = client {
        c.conn.close().await;
    }
    if let Some(beside) = beside {
        out.extend(beside.await.expect("a case beside the session panicked"));
    }
    out
}

/// The skip of a case not run because `--deadline` was reached, if it was.
fn past_deadline(settings: &RunSettings, plan: &CasePlan) -> Option<CaseResult> {
    let past = settings
        .deadline
        .is_some_and(|d| std::time::Instant::now() >= d);
    let why = "not run: the --deadline was reached before this case";
    past.then(|| CaseResult::skipped(&plan.case, &plan.citation, why.to_string()))
}

/// Runs a case that opens a connection of its own, with no handshake
/// (`handshake = false`): a fresh process over stdio, no session over HTTP.
/// Its request is the server's first, so it waits as long as start-up may.
/// `other_session` is the run's own session id, for the session-id checks.
async fn execute_alone(
    settings: &RunSettings,
    era: Era,
    plan: &CasePlan,
    other_session: Option<String>,
) -> CaseResult {
    let wait = settings.startup_timeout;
    let conn = match settings.spawn(wait) {
        Ok(c) => c,
        Err(e) => {
            let why = format!(
                "could not start the server for a connection of its own: {}",
                e.message
            );
            let j = Judgement::new(Verdict::Error, plan.case.rule, why);
            return CaseResult::planned(plan, &plan.citation, j, None, None, 0);
        }
    };
    let mut client = Client::new(conn, era, wait);
    client.other_session = other_session;
    let (result, _) = execute(&mut client, plan).await;
    client.conn.close().await;
    result
}

/// A fresh canary: a random secret planted in crash inputs.
pub fn canary() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    h.write_u32(std::process::id());
    format!("mcperrcanary{:016x}", h.finish())
}
