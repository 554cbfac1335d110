//! The run engine: connect in an era, discover, run each applicable case,
//! restart a server that died, and collect one [`CaseResult`] per case.

use std::collections::BTreeMap;
use std::time::Duration;

use mcperr_protocol::Era;
use serde::Serialize;
use serde_json::{json, Value};

use crate::case::{Case, Check, SendStep};
use crate::client::Conn;
use crate::client::{Client, Ending, Exchange};
pub use crate::discovery::{discover, Discovery};
use crate::oracle::{self, pattern, Evidence, Judgement, Verdict};
use crate::profile::Profile;
use crate::transport::{HttpConnection, StdioConnection, Target};

/// Which era to speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EraChoice {
    /// Try `server/discover`, fall back to `initialize`.
    Auto,
    /// Speak this era only.
    Pinned(Era),
}

/// The server could not be started or would not answer at all: exit code 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct SetupError(pub String);

/// One case's outcome, as reports show it.
#[derive(Debug, Clone, Serialize)]
pub struct CaseResult {
    /// Case id.
    pub id: String,
    /// The deciding rule.
    pub rule: String,
    /// The verdict.
    pub verdict: Verdict,
    /// Why.
    pub message: String,
    /// The judged request, as sent.
    pub request: Option<Value>,
    /// The raw response.
    pub response: Option<Value>,
    /// HTTP status (HTTP transports only).
    pub http_status: Option<u16>,
    /// Wall time of the case.
    pub duration_ms: u64,
    /// The case's area (first id segment).
    #[serde(skip)]
    pub area: String,
    /// The case's title.
    #[serde(skip)]
    pub title: String,
    /// The case's spec section.
    #[serde(skip)]
    pub spec: String,
    /// A baselined failure (does not fail the run).
    #[serde(skip)]
    pub baselined: bool,
}

impl CaseResult {
    /// A skipped case.
    pub fn skipped(case: &Case, why: String) -> CaseResult {
        CaseResult::from_judgement(
            case,
            Judgement::new(Verdict::Skip, case, why),
            None,
            None,
            0,
        )
    }

    fn from_judgement(
        case: &Case,
        j: Judgement,
        request: Option<Value>,
        response: Option<Value>,
        ms: u64,
    ) -> CaseResult {
        CaseResult {
            id: case.id.clone(),
            rule: j.rule,
            verdict: j.verdict,
            message: j.message,
            request,
            response,
            http_status: None,
            duration_ms: ms,
            area: case.area().to_string(),
            title: case.title.clone(),
            spec: case.spec.clone(),
            baselined: false,
        }
    }
}

/// Settings of one run.
#[derive(Debug, Clone)]
pub struct RunSettings {
    /// How to reach the server.
    pub target: Target,
    /// Per-request timeout.
    pub timeout: Duration,
    /// Parallel server processes.
    pub jobs: usize,
    /// The run's canary.
    pub canary: String,
}

/// The 2025-11-25 handshake: `initialize`, then `notifications/initialized`.
pub(crate) async fn legacy_handshake(client: &mut Client) -> Result<Value, String> {
    let params = json!({"protocolVersion": Era::Legacy.version(), "capabilities": {},
        "clientInfo": {"name": "mcperr", "version": env!("CARGO_PKG_VERSION")}});
    let ex = client.request("initialize", Some(params), false).await;
    match &ex.ending {
        Ending::Answered(r) | Ending::WrongId(r) if r.get("result").is_some() => {
            client
                .notify("notifications/initialized", None, false)
                .await;
            Ok(r["result"]["serverInfo"].clone())
        }
        _ => Err(describe_failure("initialize", &ex)),
    }
}

fn describe_failure(what: &str, ex: &Exchange) -> String {
    match &ex.ending {
        Ending::Answered(r) | Ending::WrongId(r) => format!("{what} was answered {r}"),
        Ending::Timeout => format!("{what} got no answer within {} ms", ex.duration.as_millis()),
        Ending::Empty(why) | Ending::NotApplicable(why) => {
            format!("{what} got no JSON-RPC answer ({why})")
        }
        Ending::Died(how) => format!("{what} got no answer: {how}"),
    }
}

/// Starts the server and establishes `choice`'s era. Returns the client and the server's `serverInfo`.
pub async fn connect(
    settings: &RunSettings,
    choice: EraChoice,
) -> Result<(Client, Value), SetupError> {
    let spawn = || match &settings.target {
        Target::Stdio(t) => StdioConnection::spawn(t)
            .map(Conn::Stdio)
            .map_err(SetupError),
        Target::Http(t) => HttpConnection::new(t, settings.timeout)
            .map(Conn::Http)
            .map_err(SetupError),
    };
    let mut errors = Vec::new();
    if matches!(choice, EraChoice::Auto | EraChoice::Pinned(Era::Modern)) {
        let mut client = Client::new(spawn()?, Era::Modern, settings.timeout);
        let ex = client.request("server/discover", None, true).await;
        match &ex.ending {
            // A wrong id is judged (J1) by every case; it does not stop the run.
            Ending::Answered(r) | Ending::WrongId(r) if r.get("result").is_some() => {
                let info = r["result"]
                    .get("serverInfo")
                    .cloned()
                    .unwrap_or(Value::Null);
                return Ok((client, info));
            }
            _ => errors.push(format!(
                "2026-07-28: {}",
                describe_failure("server/discover", &ex)
            )),
        }
        client.conn.close().await;
    }
    if matches!(choice, EraChoice::Auto | EraChoice::Pinned(Era::Legacy)) {
        let mut client = Client::new(spawn()?, Era::Legacy, settings.timeout);
        match legacy_handshake(&mut client).await {
            Ok(info) => return Ok((client, info)),
            Err(e) => errors.push(format!("2025-11-25: {e}")),
        }
        client.conn.close().await;
    }
    Err(SetupError(format!(
        "the server `{}` did not complete a handshake ({})",
        settings.target.display(),
        errors.join("; ")
    )))
}

fn count_of(ex: &Exchange) -> Option<Value> {
    let r = ex.response()?.get("result")?;
    if let Some(c) = r.pointer("/structuredContent/count") {
        return Some(c.clone());
    }
    let text = r.pointer("/content/0/text")?.as_str()?;
    Some(
        text.trim()
            .parse::<i64>()
            .map(Value::from)
            .unwrap_or_else(|_| Value::String(text.to_string())),
    )
}

async fn limited_calls(client: &mut Client) -> Option<Value> {
    let ex = client
        .request(
            "tools/call",
            Some(json!({"name": "limited_calls", "arguments": {}})),
            true,
        )
        .await;
    count_of(&ex)
}

/// Runs one case on a live client. The second value is false when the
/// server stopped answering (the caller restarts it).
pub async fn run_case(
    client: &mut Client,
    case: &Case,
    profile: &Profile,
    canary: &str,
) -> (CaseResult, bool) {
    let vars = [("canary", canary)];
    let mut exp = profile.expectation(case, client.era);
    exp.pattern = pattern::substitute(&exp.pattern, &vars);
    let early = client.drain();
    let mark = client.stderr().mark();
    let wants_counts = exp.checks.contains(&Check::BodyNeverRan);
    let before = if wants_counts {
        limited_calls(client).await
    } else {
        None
    };
    let mut evidence = Evidence {
        canary: canary.to_string(),
        ..Default::default()
    };
    for step in &case.send {
        match step {
            SendStep::Raw { raw } => {
                client
                    .send_raw(
                        pattern::substitute(&Value::String(raw.clone()), &vars)
                            .as_str()
                            .unwrap_or_default(),
                    )
                    .await
            }
            SendStep::Notification {
                notification,
                params,
            } => {
                evidence.sent_notification = true;
                client
                    .notify(
                        notification,
                        params.as_ref().map(|p| pattern::substitute(p, &vars)),
                        case.envelope,
                    )
                    .await;
            }
            SendStep::Request { method, params } => {
                let ex = client
                    .request(
                        method,
                        params.as_ref().map(|p| pattern::substitute(p, &vars)),
                        case.envelope,
                    )
                    .await;
                if ex.response().is_none() {
                    let j = oracle::judge(case, &exp, &ex, &evidence);
                    return (
                        CaseResult::from_judgement(
                            case,
                            j,
                            Some(ex.request),
                            None,
                            ex.duration.as_millis() as u64,
                        ),
                        false,
                    );
                }
            }
        }
    }
    let params = case
        .request
        .params
        .as_ref()
        .map(|p| pattern::substitute(p, &vars));
    let mut ex = match (&case.http, matches!(client.conn, Conn::Http(_))) {
        (Some(spec), true) => crate::http_case::exchange(client, case, spec, &vars).await,
        _ => {
            let id = match &case.request.id {
                Some(v) => mcperr_protocol::Id::from_value(v).unwrap_or_else(|| client.fresh_id()),
                None => client.fresh_id(),
            };
            let msg = mcperr_protocol::jsonrpc::request(
                &id,
                &case.request.method,
                client.params_for(params, case.envelope),
            );
            client.exchange(id, msg).await
        }
    };
    ex.strays.splice(0..0, early);
    if wants_counts {
        evidence.counts = Some((before, limited_calls(client).await));
    }
    // Log checks need the server's stderr: only a stdio child's is ours to read.
    if client.has_stderr()
        && exp
            .checks
            .iter()
            .any(|c| matches!(c, Check::LogNoTraceback | Check::LogCrashTraceback))
    {
        // stderr is a separate pipe: let the lines the server wrote with its answer arrive.
        let mut last = client.stderr().mark();
        for _ in 0..10 {
            tokio::time::sleep(Duration::from_millis(20)).await;
            let now = client.stderr().mark();
            if now == last && now > mark {
                break;
            }
            last = now;
        }
        evidence.stderr = Some(client.stderr().since(mark));
    }
    // The liveness probe runs before judging, so that whatever the server
    // wrote during the case (steps, counts, probe included) is judged here.
    let mut alive = ex.response().is_some() || ex.http.is_some();
    let mut stopped = None;
    if alive {
        let probe = client.probe().await;
        if probe.response().is_none() {
            alive = false;
            stopped = Some(match &probe.ending {
                Ending::Died(how) => how.clone(),
                _ => "it gave no answer to the next request".to_string(),
            });
        }
    }
    let late = client.drain();
    ex.strays.extend(late);
    let mut judgement = oracle::judge(case, &exp, &ex, &evidence);
    if let Some(how) = stopped {
        if judgement.verdict != Verdict::Fail {
            judgement = Judgement {
                verdict: Verdict::Fail,
                rule: "J4".into(),
                message: format!(
                    "the server stopped answering after this request: {how}. Spec: DESIGN.md §1 J4"
                ),
            };
        }
    }
    if judgement.verdict == Verdict::Error && client.has_stderr() {
        let tail = client.stderr().tail(10);
        if !tail.is_empty() && !judgement.message.contains("stderr tail") {
            judgement.message = format!("{}; stderr tail:\n{tail}", judgement.message);
        }
    }
    let ms = ex.duration.as_millis() as u64;
    let mut result = CaseResult::from_judgement(
        case,
        judgement,
        Some(ex.request.clone()),
        ex.response().cloned(),
        ms,
    );
    result.http_status = ex.http.as_ref().map(|a| a.status);
    (result, alive)
}

/// Runs `cases` (already filtered to the applicable ones) on `jobs` servers.
pub async fn run_cases(
    settings: &RunSettings,
    era: Era,
    first: Client,
    cases: Vec<Case>,
    profile: &Profile,
) -> Vec<CaseResult> {
    let jobs = settings.jobs.max(1).min(cases.len().max(1));
    let mut groups: Vec<Vec<(usize, Case)>> = vec![Vec::new(); jobs];
    for (i, case) in cases.into_iter().enumerate() {
        groups[i % jobs].push((i, case));
    }
    let mut set = tokio::task::JoinSet::new();
    let mut first = Some(first);
    for group in groups {
        let settings = settings.clone();
        let profile = profile.clone();
        let client = first.take();
        set.spawn(async move { run_group(&settings, era, client, group, &profile).await });
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
    group: Vec<(usize, Case)>,
    profile: &Profile,
) -> Vec<(usize, CaseResult)> {
    let mut client = client;
    let mut out = Vec::new();
    for (i, case) in group {
        if client.is_none() {
            match connect(settings, EraChoice::Pinned(era)).await {
                Ok((c, _)) => client = Some(c),
                Err(e) => {
                    let j = Judgement::new(
                        Verdict::Error,
                        &case,
                        format!("could not restart the server: {e}"),
                    );
                    out.push((i, CaseResult::from_judgement(&case, j, None, None, 0)));
                    continue;
                }
            }
        }
        let c = client.as_mut().unwrap();
        let (result, alive) = run_case(c, &case, profile, &settings.canary).await;
        out.push((i, result));
        if !alive {
            if let Some(dead) = client.take() {
                dead.conn.close().await;
            }
        }
    }
    if let Some(c) = client {
        c.conn.close().await;
    }
    out
}
