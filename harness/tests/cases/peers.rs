//! The SDK peers against their baselines, one test per data file, as the
//! case files are: each `fixtures/servers/<sdk>/peer.toml` must have a
//! baseline for every column × transport × era × profile it declares (and
//! none more), and each baseline `fixtures/baselines/<column>.<transport>.
//! <era>.<profile>.toml` is one `mcperr run` against that column's Bookshop
//! (a fresh HTTP server per run over HTTP). Adding a column is its folder
//! and its findings page: its baselines are written by
//! `MCPERR_BLESS=1 cargo test -p mcperr --test cases -- peer_manifest`.
//!
//! With `MCPERR_BLESS=1` a stale entry (a deviation the SDK no longer has,
//! or one whose grading became a warning) is removed; a new failure is never
//! added to an existing baseline this way.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mcperr_peers::{Column, Transport};
use serde_json::Value;

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

const MCPERR: &str = env!("CARGO_BIN_EXE_mcperr");

fn root() -> std::path::PathBuf {
    mcperr_peers::root()
}

fn blessing() -> bool {
    std::env::var("MCPERR_BLESS").as_deref() == Ok("1")
}

/// A baseline's file name: `<column>.<transport>.<era>.<profile>.toml`.
fn baseline_name(column: &str, transport: Transport, era: &str, profile: &str) -> String {
    format!("{column}.{}.{era}.{profile}.toml", transport.as_str())
}

/// Every baseline a manifest's columns need exists, and no baseline names
/// one of its columns in a transport, era or profile it does not declare.
/// Blessing writes the missing ones from a run.
pub fn peer_manifest(path: &Path) -> Result<()> {
    let root = root();
    let folder = path
        .parent()
        .and_then(Path::file_name)
        .ok_or("a manifest sits in its folder")?
        .to_string_lossy()
        .into_owned();
    let peer = mcperr_peers::all(&root)?
        .into_iter()
        .find(|p| p.folder == folder)
        .ok_or("the manifest was not read")?;
    let baselines = root.join("fixtures/baselines");
    let mut missing = Vec::new();
    for column in peer.columns(&root)? {
        let mut wanted = Vec::new();
        for &transport in &peer.manifest.transports {
            for era in &peer.manifest.eras {
                for profile in &peer.manifest.profiles {
                    wanted.push(baseline_name(&column.name, transport, era, profile));
                }
            }
        }
        for entry in std::fs::read_dir(&baselines)? {
            let name = entry?.file_name().to_string_lossy().into_owned();
            let mine = ["stdio", "http"]
                .iter()
                .any(|t| name.starts_with(&format!("{}.{t}.", column.name)));
            if mine && !wanted.contains(&name) {
                return Err(format!(
                    "fixtures/baselines/{name}: {} declares no such transport, era or profile",
                    path.display()
                )
                .into());
            }
        }
        for name in wanted {
            if baselines.join(&name).exists() {
                continue;
            }
            if blessing() {
                write_first_baseline(&column, &baselines.join(&name))?;
            } else {
                missing.push(name);
            }
        }
    }
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "no baseline {}: write them with `MCPERR_BLESS=1 cargo test -p mcperr --test cases -- peer_manifest`, then read each entry",
            missing.join(", ")
        )
        .into())
    }
}

/// One baseline: its column's Bookshop judged in its transport, era and
/// profile must fail exactly as listed, with no error verdict.
pub fn peer_baseline(path: &Path) -> Result<()> {
    let file = path.file_name().unwrap().to_string_lossy().into_owned();
    let (column, transport, era, profile) = parse_name(&file)?;
    let column = mcperr_peers::column(&root(), column)?;
    let transport = match transport {
        "stdio" => Transport::Stdio,
        _ => Transport::Http,
    };
    if !column.serves(transport)
        || !column.eras().iter().any(|e| e == era)
        || !column.profiles().iter().any(|p| p == profile)
    {
        return Err(format!("{file}: its manifest does not declare this run").into());
    }
    let what = format!("{} {} {era} {profile}", column.name, transport.as_str());
    let json = scratch(&file).join("r.json");
    let out = judge(&column, transport, era, profile, Some(path), &json)?;
    if out.code == Some(1) && blessing() && bless_stale(path, &out.stdout)? {
        return Ok(());
    }
    if out.code != Some(0) {
        return Err(format!("{what}: exit {:?}\n{}{}", out.code, out.stdout, out.stderr).into());
    }
    let r = report(&json)?;
    // An error (a case mcperr could not judge) only where the baseline
    // lists it: a batch the server never answers, say.
    if let Some(c) = cases(&r)
        .into_iter()
        .find(|c| c["verdict"] == "error" && c["baselined"] != true)
    {
        return Err(format!("{what}: {} is an error: {}", c["id"], c["message"]).into());
    }
    valid_calls_were_accepted(&r, &what)?;
    still_judged(path, &r, &what)?;
    // Every Bookshop's read-only slow reports progress: the probe finds it,
    // not the contract's name (over stdio: over HTTP mcp-framework sends no
    // progress on the call's stream). A framework that cannot express a
    // progress-reporting tool says so in its README and has no `slow`.
    let has_slow = r["valid_calls"]
        .as_array()
        .is_some_and(|t| t.iter().any(|t| t["name"] == "slow"));
    if transport == Transport::Stdio && has_slow && r["parts"]["progress"]["found"]["by"] != "probe"
    {
        return Err(format!("{what}: the probe found no progress: {}", r["parts"]).into());
    }
    Ok(())
}

/// Every case a baseline lists was judged, not skipped: mcperr's stale
/// check lets a skip by (a run may leave a case out), but here a listed
/// finding that stops being judged is a finding lost (a part no longer
/// cast, a case no longer applying), not one fixed.
fn still_judged(baseline: &Path, r: &Value, what: &str) -> Result<()> {
    let text = std::fs::read_to_string(baseline)?;
    let listed: toml::Table = toml::from_str(&text)?;
    let entries = listed.get("expected").and_then(|e| e.as_array()).cloned();
    for entry in entries.unwrap_or_default() {
        let entry = entry.as_str().unwrap_or("");
        let id = entry.rsplit_once(':').map_or(entry, |(id, _)| id);
        for c in cases(r).into_iter().filter(|c| c["id"] == id) {
            if c["verdict"] == "skip" {
                return Err(format!(
                    "{what}: the baselined {entry} was not judged: {}",
                    c["message"]
                )
                .into());
            }
        }
    }
    Ok(())
}

/// `<column>.<transport>.<era>.<profile>.toml` into its four parts.
fn parse_name(file: &str) -> Result<(&str, &str, &str, &str)> {
    let stem = file.strip_suffix(".toml").ok_or("not a .toml")?;
    let parts: Vec<&str> = stem.split('.').collect();
    match parts[..] {
        [c, t @ ("stdio" | "http"), e, p] => Ok((c, t, e, p)),
        _ => Err(format!("{file}: not <column>.<stdio|http>.<era>.<profile>.toml").into()),
    }
}

/// What one `mcperr run` printed and returned.
struct Output {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Runs the column's Bookshop in `era` under `profile`, against `baseline`
/// when given, writing the JSON report to `json`.
fn judge(
    column: &Column,
    transport: Transport,
    era: &str,
    profile: &str,
    baseline: Option<&Path>,
    json: &Path,
) -> Result<Output> {
    let _server;
    let target = match transport {
        Transport::Stdio => ["--stdio".to_string(), column.command_line()],
        Transport::Http => {
            let server = mcperr_peers::HttpChild::start(&column.argv)?;
            let url = server.url.clone();
            _server = server;
            ["--http".to_string(), url]
        }
    };
    let mut args = vec![
        "run".to_string(),
        "--json".into(),
        json.display().to_string(),
        target[0].clone(),
        target[1].clone(),
        "--era".into(),
        era.into(),
        "--profile".into(),
        profile.into(),
        "--timeout-ms".into(),
        "10000".into(),
    ];
    if let Some(b) = baseline {
        args.extend(["--baseline".into(), b.display().to_string()]);
    }
    run_bounded(&args, Duration::from_secs(300))
}

/// Runs mcperr with `args`, killed (and the test failed) past `limit`.
fn run_bounded(args: &[String], limit: Duration) -> Result<Output> {
    let mut child = Command::new(MCPERR)
        .args(args)
        .env_remove("GITHUB_ACTIONS")
        .env_remove("INSTA_UPDATE")
        .env_remove("INSTA_FORCE_PASS")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            r.read_to_string(&mut s).ok();
            s
        })
    };
    let out = drain(Box::new(child.stdout.take().unwrap()));
    let err = drain(Box::new(child.stderr.take().unwrap()));
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait()? {
            break s;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("mcperr {args:?} hung past {limit:?}").into());
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Ok(Output {
        code: status.code(),
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    })
}

/// A new column's first baseline: every failing case of a run, each with
/// the first line of its reason; the reader then reads each entry (the
/// header says so) before committing it.
fn write_first_baseline(column: &Column, path: &Path) -> Result<()> {
    let file = path.file_name().unwrap().to_string_lossy().into_owned();
    let (_, transport, era, profile) = parse_name(&file)?;
    let transport = if transport == "stdio" {
        Transport::Stdio
    } else {
        Transport::Http
    };
    let json = scratch(&format!("bless-{file}")).join("r.json");
    let out = judge(column, transport, era, profile, None, &json)?;
    if out.code.is_none_or(|c| c > 1) {
        return Err(format!("{file}: exit {:?}\n{}", out.code, out.stderr).into());
    }
    let r = report(&json)?;
    let mut entries = Vec::new();
    for c in cases(&r)
        .into_iter()
        .filter(|c| c["verdict"] == "fail" || c["verdict"] == "error")
    {
        let (id, rule) = (c["id"].as_str(), c["rule"].as_str());
        let entry = format!("\"{}:{}\"", id.unwrap_or(""), rule.unwrap_or(""));
        entries.push(format!(
            "    {entry}, # {}",
            reason(c["message"].as_str().unwrap_or(""))
        ));
    }
    entries.sort();
    entries.dedup();
    let text = format!(
        "# Known deviations of the Bookshop on {} ({}), judged over {}.\n\
         # Era {era}, profile {profile}. Each entry is a real finding (written by MCPERR_BLESS=1 from a run;\n\
         # read each before committing); an entry that stops failing makes the run fail (stale).\n\
         expected = [\n{}{}]\n",
        column.title,
        column.peer.dir.strip_prefix(root()).unwrap_or(&column.peer.dir).display(),
        transport.as_str(),
        entries.join("\n"),
        if entries.is_empty() { "" } else { "\n" },
    );
    std::fs::write(path, text)?;
    Ok(())
}

/// A failure's reason for a baseline's comment: its first line up to the
/// spec's sentence (the rule pages hold that), the run's canary masked, at
/// most 160 characters.
fn reason(message: &str) -> String {
    let line = message.lines().next().unwrap_or("");
    let line = line.split(". Spec: ").next().unwrap_or(line);
    let mut out = String::new();
    let mut rest = line;
    while let Some(at) = rest.find("mcperrcanary") {
        out.push_str(&rest[..at]);
        out.push_str("[canary]");
        let tail = &rest[at + "mcperrcanary".len()..];
        rest = tail.trim_start_matches(|c: char| c.is_ascii_hexdigit());
    }
    out.push_str(rest);
    if out.chars().count() > 160 {
        out = out.chars().take(159).collect::<String>() + "…";
    }
    out
}

/// Removes from `baseline` each entry the run called stale; whether any was.
fn bless_stale(baseline: &Path, stdout: &str) -> Result<bool> {
    let stale: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("STALE baseline entry "))
        .filter_map(|l| l.split_once(' ').map(|(entry, _)| entry))
        .collect();
    let text = std::fs::read_to_string(baseline)?;
    let kept: Vec<&str> = text
        .lines()
        .filter(|l| {
            !stale
                .iter()
                .any(|e| l.trim_start().starts_with(&format!("\"{e}\"")))
        })
        .collect();
    std::fs::write(baseline, kept.join("\n") + "\n")?;
    Ok(!stale.is_empty())
}

/// A generated valid call that passed was accepted (a result, not an
/// `isError`), and where the server listed a valid call, one passed.
fn valid_calls_were_accepted(r: &Value, what: &str) -> Result<()> {
    let any_valid = r["valid_calls"]
        .as_array()
        .is_some_and(|v| v.iter().any(|c| c["valid"] == true));
    let cases = cases(r);
    let passes: Vec<&&Value> = cases
        .iter()
        .filter(|c| c["id"].as_str().is_some_and(|i| i.ends_with("/valid-call")))
        .filter(|c| c["verdict"] == "pass" || c["aspect"] == "T8.also-text")
        .collect();
    if any_valid && passes.is_empty() {
        return Err(format!("{what}: no valid call passed").into());
    }
    for c in passes {
        let result = &c["response"]["result"];
        if !result.is_object() || result["isError"] == true {
            return Err(format!("{what}: {} passed with {}", c["id"], c["response"]).into());
        }
    }
    Ok(())
}

/// A report's cases: one era's at the top, or every era's under `runs`.
fn cases(r: &Value) -> Vec<&Value> {
    match r["cases"].as_array() {
        Some(cases) => cases.iter().collect(),
        None => r["runs"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|run| run["cases"].as_array().into_iter().flatten())
            .collect(),
    }
}

fn report(path: &Path) -> Result<Value> {
    Ok(mcperr_wire::text::decode(&std::fs::read(path)?)?)
}

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("peers")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    dir
}
