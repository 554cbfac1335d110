//! One test per case file (fixtures/cases), as cargo-nextest's datatest
//! tests do: each case, read from its file, runs in process against the
//! reference server over its stdio edge and its HTTP edge (JSON and SSE), in
//! every era it applies to: it must pass under `model` and `python-sdk`, and
//! may only warn under `spec` (the reference server follows the model, which
//! the spec at times only suggests, e.g. -32602 where 2025-11-25 says SHOULD
//! -32002). Then some fault of the reference server must make it fail under
//! `model`, so that no case file can pass vacuously.
//!
//! The SDK peers are data files too, tested the same way (`peers.rs`): one
//! test per peer manifest (its baselines are all there) and one per
//! baseline (one run of that column's Bookshop).

use std::path::Path;
use std::time::Duration;

use mcperr::engine::{self, EraChoice, RunSettings};
use mcperr::transport::{InProcess, Target};
use mcperr_cases::case::Case;
use mcperr_cases::parts::{finders, Cast};
use mcperr_cases::plan::CasePlan;
use mcperr_cases::profile::Profile;
use mcperr_core::report::CaseResult;
use mcperr_model::Verdict;
use mcperr_protocol::Era;
use mcperr_reference::Fault;

/// The edges of the in-process reference server: (http, sse).
const EDGES: [(bool, bool); 3] = [(false, false), (true, false), (true, true)];

/// Runs `case` once against a fresh in-process server; `None` when the
/// server lacks what the case needs.
fn run_once(
    case: &Case,
    era: Era,
    edge: (bool, bool),
    fault: Option<Fault>,
    profile: &Profile,
) -> Option<CaseResult> {
    // A protected server's case runs on a protected in-process server.
    let auth = case.needs.iter().any(|n| n.starts_with("auth:"));
    let target = Target::InProcess(InProcess {
        http: edge.0,
        sse: edge.1,
        fault,
        auth,
    });
    let wait = Duration::from_millis(500);
    let settings = RunSettings::new(target, wait, wait, 1, engine::canary());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    rt.block_on(async {
        let (mut client, info) = engine::connect(&settings, EraChoice::Pinned(era))
            .await
            .ok()?;
        let mut discovery = engine::discover(&mut client, info).await;
        // Who plays each part: the Bookshop contract's players first (the
        // arguments each case file was written for), then the listing. The
        // probe's valid calls are proven on other servers (it/parts.rs);
        // one per case and edge would cost minutes.
        let selection = mcperr_cases::select::Selection::default();
        let listed =
            finders::from_listing(&discovery, &|t| selection.may_call(t), &Cast::new(), &[]);
        let contract = finders::from_contract(&discovery);
        discovery.parts = finders::cast(&contract, &Cast::new(), &listed, &Cast::new());
        if discovery.applies(case, era).is_err() {
            client.conn.close().await;
            return None;
        }
        let limited = format!("Bearer {}", mcperr::transport::IN_PROCESS_LIMITED_TOKEN);
        let mut vars = vec![
            ("tool".to_string(), serde_json::json!("get_author")),
            ("auth_limited".to_string(), serde_json::json!(limited)),
        ];
        vars.extend(mcperr_cases::parts::placeholder_values(&discovery.parts));
        let plan = CasePlan::new(case, profile, era, &settings.canary, &vars, edge.0);
        engine::run_plans(&settings, era, client, vec![plan])
            .await
            .pop()
    })
}

fn case_file(path: &Path, text: String) -> datatest_stable::Result<()> {
    let case = Case::parse(&path.display().to_string(), &text)?;
    let mut runs = 0;
    for edge in EDGES {
        if case.transport_ok(edge.0).is_err() {
            continue;
        }
        for era in case.eras()? {
            for name in ["spec", "model", "python-sdk"] {
                let profile = Profile::load(name)?;
                let Some(r) = run_once(&case, era, edge, None, &profile) else {
                    continue;
                };
                runs += 1;
                let ok =
                    r.verdict == Verdict::Pass || (name == "spec" && r.verdict == Verdict::Warn);
                if !ok {
                    return Err(format!(
                        "{} over {edge:?} in {era} under {name}: {:?} [{}] {}",
                        case.id, r.verdict, r.rule, r.message
                    )
                    .into());
                }
            }
        }
    }
    // A case that judges only servers without a capability cannot run on the
    // faithful reference server, which declares them all: a fault that drops
    // the declaration (and still serves the feature) must both run and fail it.
    let undeclared = case
        .needs()?
        .iter()
        .any(|n| matches!(n, mcperr_cases::case::Need::Undeclared(_)));
    if runs == 0 && !undeclared {
        return Err(format!("{} never ran against the reference server", case.id).into());
    }
    // Some fault must make the case fail (or, where the table gives its
    // aspect no verdict, show the deviation): a case that cannot tells nothing.
    let model = Profile::load("model")?;
    // The faults of the case's own rule first: they are the likeliest to catch.
    let mut faults = Fault::ALL.to_vec();
    faults.sort_by_key(|f| f.rule() != case.rule);
    for fault in faults {
        for edge in EDGES {
            if case.transport_ok(edge.0).is_err() {
                continue;
            }
            for era in case.eras()? {
                if let Some(r) = run_once(&case, era, edge, Some(fault), &model) {
                    // Caught under the case's own rule (deciding or listed):
                    // any other rule would fail every case alike (a wrong id).
                    let own =
                        r.rule == case.rule || r.message.contains(&format!("[{}]", case.rule));
                    if !matches!(r.verdict, Verdict::Pass | Verdict::Skip) && own {
                        return Ok(());
                    }
                    // A requirement no sentence states and the error model
                    // does not hold (J6's statuses for malformed HTTP input,
                    // a bogus session's 404) has no verdict under any
                    // profile: the case must still see the deviation and
                    // name it, as the skip that says so.
                    let seen = r.verdict == Verdict::Skip
                        && r.message.starts_with("no verdict under")
                        && r.message.contains(&format!("[{}", case.rule));
                    if seen {
                        return Ok(());
                    }
                }
            }
        }
    }
    Err(format!("no fault of the reference server makes {} fail", case.id).into())
}

#[path = "cases/peers.rs"]
mod peers;

datatest_stable::harness! {
    { test = case_file, root = "../fixtures/cases", pattern = r"\.toml$" },
    { test = peers::peer_manifest, root = "../fixtures/servers", pattern = r"^[^/]+/peer\.toml$" },
    {
        test = peers::peer_baseline,
        root = "../fixtures/baselines",
        pattern = r"\.(stdio|http)\.[0-9]{4}-[0-9]{2}-[0-9]{2}\.[a-z-]+\.toml$",
    },
}
