//! Test-only package: the servers under test as transcripts. Its one test
//! binary (`tests/transcripts.rs`) judges every case against each server
//! (the reference server in process, the Bookshop on the MCP Python SDK, on
//! the TypeScript SDK 2.x and 1.x, on FastMCP (as shipped and with
//! `mask_error_details`), punkpeye's fastmcp,
//! mcp-framework and rmcp, each over stdio and Streamable HTTP,
//! every era each speaks),
//! keeps one insta snapshot per case per column in
//! `snapshots/<server>/<transport>-<era>/<case>.snap`, and renders the same
//! run as the matrix page, checked in headless Chromium.
//!
//! It is its own package because cargo-insta finds snapshots only inside a
//! package directory. This library holds what the test needs around it:
//! starting the peers and turning a cell into its transcript.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use mcperr::engine::RunSettings;
use mcperr::matrix::{Server, ServerTarget};
use mcperr::target;
use mcperr::transport::{InProcess, Target};
use mcperr_protocol::Era;
use mcperr_render::matrix::Cell;
use mcperr_render::snapshot::{Redactions, Snapshot};

/// The repository's root.
pub const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

/// The canary every run plants in crash inputs. Fixed, so transcripts do
/// not change from run to run (mcperr picks a fresh one per run otherwise).
pub const CANARY: &str = "mcperrcanary5eed5eed5eed5eed";

/// Per-request and start-up timeouts: generous, for a loaded 2-core machine.
const TIMEOUT: Duration = Duration::from_secs(10);
const STARTUP: Duration = Duration::from_secs(30);

/// A peer serving Streamable HTTP as a child process; killed when dropped.
pub struct HttpChild {
    child: Child,
    /// The endpoint it printed.
    pub url: String,
}

impl HttpChild {
    /// Starts `program args…`, which prints its endpoint URL as its first
    /// line on stdout once it listens.
    pub fn start(program: &str, args: &[&str]) -> Result<HttpChild, String> {
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("start {program}: {e}"))?;
        let stdout = child.stdout.take().expect("piped");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let mut server = HttpChild {
            child,
            url: String::new(),
        };
        let line = rx
            .recv_timeout(STARTUP)
            .map_err(|_| format!("{program} {args:?} printed no URL within {STARTUP:?}"))?;
        server.url = line.trim().to_string();
        if !server.url.starts_with("http://") {
            return Err(format!(
                "{program} {args:?} printed {:?}, not a URL",
                server.url
            ));
        }
        Ok(server)
    }
}

impl Drop for HttpChild {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The Python interpreter of the MCP Python SDK's venv (`MCPERR_PYTHON`, or
/// the one `fixtures/servers/python/setup.sh` makes under target/).
pub fn python() -> Result<String, String> {
    if let Ok(p) = std::env::var("MCPERR_PYTHON") {
        return Ok(p);
    }
    let venv = format!("{ROOT}/target/py-venv/bin/python");
    if Path::new(&venv).exists() {
        Ok(venv)
    } else {
        Err("the Python SDK peer is not installed: run scripts/test.sh, or fixtures/servers/python/setup.sh and set MCPERR_PYTHON".into())
    }
}

/// A TypeScript SDK Bookshop's entry in `fixtures/servers/<folder>`, once
/// `npm ci` has installed `package` there.
pub fn typescript_bookshop(folder: &str, package: &str) -> Result<String, String> {
    let dir = format!("{ROOT}/fixtures/servers/{folder}");
    if Path::new(&format!("{dir}/node_modules/{package}")).exists() {
        Ok(format!("{dir}/bookshop.mjs"))
    } else {
        Err(format!("{package} is not installed: run scripts/test.sh, or fixtures/servers/{folder}/setup.sh"))
    }
}

/// The Python interpreter of FastMCP's venv (`MCPERR_FASTMCP_PYTHON`, or the
/// one `fixtures/servers/fastmcp/setup.sh` makes under target/).
pub fn fastmcp_python() -> Result<String, String> {
    if let Ok(p) = std::env::var("MCPERR_FASTMCP_PYTHON") {
        return Ok(p);
    }
    let venv = format!("{ROOT}/target/fastmcp-venv/bin/python");
    if Path::new(&venv).exists() {
        Ok(venv)
    } else {
        Err("the FastMCP peer is not installed: run scripts/test.sh, or fixtures/servers/fastmcp/setup.sh and set MCPERR_FASTMCP_PYTHON".into())
    }
}

/// The rmcp Bookshop's binary (`MCPERR_RMCP_BOOKSHOP`, or the one
/// `fixtures/servers/rust/setup.sh` builds under target/).
pub fn rmcp_bookshop() -> Result<String, String> {
    if let Ok(p) = std::env::var("MCPERR_RMCP_BOOKSHOP") {
        return Ok(p);
    }
    let binary = format!("{ROOT}/target/rmcp-fixture/release/bookshop-rmcp");
    if Path::new(&binary).exists() {
        Ok(binary)
    } else {
        Err("the rmcp peer is not built: run scripts/test.sh, or fixtures/servers/rust/setup.sh and set MCPERR_RMCP_BOOKSHOP".into())
    }
}

/// Servers that do not speak every era, and the era they lack: the 1.x
/// TypeScript SDK predates 2026-07-28, and so do the two frameworks on it.
pub const ERA_NOT_SPOKEN: &[(&str, &str)] = &[
    ("typescript-sdk-v1", "2026-07-28"),
    ("fastmcp-ts", "2026-07-28"),
    ("mcp-framework", "2026-07-28"),
];

/// Every server's name, in column order.
pub const SERVER_NAMES: [&str; 9] = [
    "reference",
    "python-sdk",
    "typescript-sdk",
    "typescript-sdk-v1",
    "fastmcp",
    "fastmcp-masked",
    "fastmcp-ts",
    "mcp-framework",
    "rmcp",
];

fn settings(target: Target) -> RunSettings {
    RunSettings::new(target, TIMEOUT, STARTUP, 1, CANARY.to_string())
}

fn in_process(http: bool) -> ServerTarget {
    let s = settings(Target::InProcess(InProcess {
        http,
        sse: false,
        fault: None,
        auth: false,
    }));
    let info = s.target_info(false);
    ServerTarget::new(s, info)
}

fn stdio(command: &str) -> Result<ServerTarget, String> {
    let t = target::from_command_line(command, None, &[]).map_err(|e| e.to_string())?;
    let s = settings(Target::Stdio(t));
    let info = s.target_info(false);
    Ok(ServerTarget::new(s, info))
}

/// One HTTP child per era: a running server keeps state across requests
/// (the Bookshop's `limited` counter), so each era starts from a fresh one,
/// as each stdio era does, and a transcript does not depend on what the
/// other era ran before it.
fn http_per_era(
    program: &str,
    args: &[&str],
    children: &mut Vec<HttpChild>,
) -> Result<Vec<ServerTarget>, String> {
    let mut targets = Vec::new();
    for era in ERAS {
        let mut all = args.to_vec();
        all.extend(["--http", "127.0.0.1:0"]);
        let child = HttpChild::start(program, &all)?;
        let t = target::http(&child.url, vec![]).map_err(|e| e.to_string())?;
        let s = settings(Target::Http(t));
        let info = s.target_info(false);
        targets.push(ServerTarget {
            settings: s,
            info,
            era: Some(era),
        });
        children.push(child);
    }
    Ok(targets)
}

/// The eras judged, in column order.
pub const ERAS: [Era; 2] = [Era::Modern, Era::Legacy];

/// The servers under test, and the HTTP children to keep alive while they
/// are judged: the reference server (in process, stdio and HTTP), the
/// Bookshop on the Python SDK, on the TypeScript SDK 2.x and the 1.x line,
/// on FastMCP, punkpeye's fastmcp, mcp-framework and rmcp (each a child over stdio
/// per era, and one serving HTTP per era).
pub fn servers() -> Result<(Vec<Server>, Vec<HttpChild>), String> {
    let python = python()?;
    let ts = typescript_bookshop("typescript", "@modelcontextprotocol/server")?;
    let ts1 = typescript_bookshop("typescript-v1", "@modelcontextprotocol/sdk")?;
    let fastmcp = fastmcp_python()?;
    let fastmcp_ts = typescript_bookshop("fastmcp-ts", "fastmcp")?;
    let framework = typescript_bookshop("mcp-framework", "mcp-framework")?;
    let rmcp = rmcp_bookshop()?;
    let bookshop_py = format!("{ROOT}/fixtures/servers/python/bookshop.py");
    let bookshop_fastmcp = format!("{ROOT}/fixtures/servers/fastmcp/bookshop.py");
    let mut children = Vec::new();
    let mut with_http = |name: &str, stdio_cmd: String, program: &str, args: &[&str]| {
        let mut targets = vec![stdio(&stdio_cmd)?];
        targets.extend(http_per_era(program, args, &mut children)?);
        Ok::<_, String>(Server {
            name: name.into(),
            targets,
            baseline: None,
            independent: false,
        })
    };
    let servers = vec![
        Server {
            name: "reference".into(),
            targets: vec![in_process(false), in_process(true)],
            baseline: None,
            // One run at a time, as before: the transcripts are the record.
            independent: false,
        },
        with_http(
            "python-sdk",
            format!("{python} {bookshop_py}"),
            &python,
            &[&bookshop_py],
        )?,
        with_http("typescript-sdk", format!("node {ts}"), "node", &[&ts])?,
        with_http("typescript-sdk-v1", format!("node {ts1}"), "node", &[&ts1])?,
        with_http(
            "fastmcp",
            format!("{fastmcp} {bookshop_fastmcp}"),
            &fastmcp,
            &[&bookshop_fastmcp],
        )?,
        // FastMCP(mask_error_details=True): its second column, since masking
        // changes what a crash shows (T3, J7, P3 pass; R4 still fails).
        with_http(
            "fastmcp-masked",
            format!("{fastmcp} {bookshop_fastmcp} --mask-errors"),
            &fastmcp,
            &[&bookshop_fastmcp, "--mask-errors"],
        )?,
        with_http(
            "fastmcp-ts",
            format!("node {fastmcp_ts}"),
            "node",
            &[&fastmcp_ts],
        )?,
        with_http(
            "mcp-framework",
            format!("node {framework}"),
            "node",
            &[&framework],
        )?,
        with_http("rmcp", rmcp.clone(), &rmcp, &[])?,
    ];
    Ok((servers, children))
}

/// A cell's snapshot: the transcript mcperr writes for a user's server
/// (`mcperr matrix --snapshots`), under this package's folder
/// `<server>/<transport>-<era>/<case id's folders>/<name>.snap`; `None`
/// where the case did not run in this column.
pub fn snapshot(cell: &Cell, redactions: &Redactions) -> Option<Snapshot> {
    let r = cell.result.as_ref()?;
    Some(Snapshot::of(
        Some(&cell.server),
        &cell.transport,
        &cell.era,
        r,
        redactions,
    ))
}
