//! `mcperr proxy` under real hosts: the MCP Python SDK's client and the
//! TypeScript SDK 1.x client (fixtures/clients, fixtures/servers/typescript-v1)
//! launch a Bookshop through the proxy exactly as a host configuration
//! would. The clients must see the same session as without the proxy, byte
//! for byte what the server wrote, and the report must name the Bookshop's
//! real deviations.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::sdk_peers::{npm_bookshop, python};
use crate::support::{mcperr, report, scratch, MCPERR};

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

/// Runs a client (`program` and its args, the server's command line last)
/// to completion, bounded; returns its stdout (its one JSON summary).
fn client(program: &[String]) -> String {
    let mut child = Command::new(&program[0])
        .args(&program[1..])
        .env_remove("GITHUB_ACTIONS")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the client");
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            panic!("client {program:?} hung");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut out = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut out).unwrap();
    assert!(status.success(), "client {program:?} failed: {out}");
    out
}

/// Drives `server` (a shell command line) with the client `host`, once
/// directly and once through `mcperr proxy`, each side of the proxy
/// recorded with `tee`; returns the proxy's JSON report.
fn through_the_proxy(name: &str, host: &[&str], server: &str) -> serde_json::Value {
    let dir = scratch(&format!("proxy-{name}"));
    let d = dir.display();
    // What the server reads and writes, and what the host reads and writes.
    std::fs::write(
        dir.join("server.sh"),
        format!("tee '{d}/s_in' | {server} | tee '{d}/s_out'\n"),
    )
    .unwrap();
    std::fs::write(
        dir.join("proxy.sh"),
        format!(
            "tee '{d}/c_in' | '{MCPERR}' proxy --json '{d}/r.json' --markdown '{d}/r.md' --sarif '{d}/r.sarif' \
             --save '{d}/saved' --log '{d}/log' -- sh '{d}/server.sh' | tee '{d}/c_out'\n"
        ),
    )
    .unwrap();
    let with = |server: &[&str]| -> Vec<String> {
        host.iter().chain(server).map(|s| s.to_string()).collect()
    };
    let direct = client(&with(&["sh", "-c", server]));
    let proxied = client(&with(&["sh", dir.join("proxy.sh").to_str().unwrap()]));
    assert_eq!(
        proxied, direct,
        "the client saw another session through the proxy"
    );
    let read = |f: &str| std::fs::read(dir.join(f)).unwrap();
    assert!(!read("s_in").is_empty() && !read("s_out").is_empty());
    assert!(
        read("c_in") == read("s_in"),
        "the server read other bytes than the host wrote"
    );
    assert!(
        read("c_out") == read("s_out"),
        "the host read other bytes than the server wrote"
    );
    let log = String::from_utf8(read("log")).unwrap();
    assert!(log.contains("answers judged"), "{log}");
    report(&dir.join("r.json"))
}

/// `(rule, verdict)` of each finding in a proxy's report.
fn findings(r: &serde_json::Value) -> Vec<(String, String)> {
    r["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let s = |k: &str| c[k].as_str().unwrap().to_string();
            (s("rule"), s("verdict"))
        })
        .collect()
}

#[test]
fn the_python_sdk_client_works_unchanged_through_the_proxy_and_its_deviations_are_named() {
    let py = python();
    let bookshop = format!("'{py}' '{ROOT}/fixtures/servers/python/bookshop.py'");
    let client = format!("{ROOT}/fixtures/clients/python_client.py");
    let r = through_the_proxy("python", &[&py, &client], &bookshop);
    assert_eq!(r["era"], "2025-11-25");
    assert_eq!(r["target"]["kind"], "proxy");
    // The Python SDK answers an unknown prompt and a missing prompt
    // argument with error code 0, not -32602 (a SHOULD in 2025-11-25:
    // docs/findings/python-sdk.md).
    let found = findings(&r);
    for rule in ["P1", "P2"] {
        assert!(found.contains(&(rule.into(), "warn".into())), "{found:?}");
    }
    // Each saved finding replays with `mcperr run --cases-dir` to the same verdict.
    let saved = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("proxy-python/saved");
    let out = mcperr(&[
        "run",
        "--stdio",
        &format!("{py} {ROOT}/fixtures/servers/python/bookshop.py"),
        "--era",
        "2025-11-25",
        "--cases-dir",
        saved.to_str().unwrap(),
    ]);
    assert_eq!(out.code, Some(0), "{}", out.stdout);
    for rule in ["P1", "P2"] {
        assert!(
            out.stdout.contains(&format!("WARN  {rule}")),
            "{}",
            out.stdout
        );
    }
}

#[test]
fn the_typescript_sdk_client_works_unchanged_through_the_proxy() {
    let bookshop = npm_bookshop("typescript-v1", "@modelcontextprotocol/sdk");
    let client = format!("{ROOT}/fixtures/servers/typescript-v1/client.mjs");
    let r = through_the_proxy(
        "typescript-v1",
        &["node", &client],
        &format!("node '{bookshop}'"),
    );
    assert_eq!(r["era"], "2025-11-25");
    // The Bookshop's raise_protocol_error forwards code -32042, which
    // 2025-11-25 gives to URLElicitationRequiredError, with data that is
    // not that error's (the schema's `elicitations` is missing).
    let found = findings(&r);
    assert!(found.contains(&("J1".into(), "warn".into())), "{found:?}");
}

#[test]
fn a_signal_stops_the_proxy_with_its_reports_and_the_server_with_it() {
    let dir = scratch("proxy-signal");
    let json = dir.join("r.json");
    let mut proxy = Command::new(MCPERR)
        .args([
            "proxy",
            "--json",
            json.to_str().unwrap(),
            "--",
            MCPERR,
            "reference",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = proxy.stdin.take().unwrap();
    // The proxy's stdout is read on a thread, so that no read can hang the test.
    let (lines, got) = std::sync::mpsc::channel();
    let stdout = proxy.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if lines.send(line.unwrap_or_default()).is_err() {
                return;
            }
        }
    });
    // Requests after which the reference server answers at once; the host
    // keeps its stdin open (as a host that is being shut down would).
    stdin
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}\n")
        .unwrap();
    stdin.flush().unwrap();
    let line = got
        .recv_timeout(Duration::from_secs(20))
        .expect("the proxy relayed no answer within 20 s");
    assert!(line.contains("\"id\":1"), "{line}");
    // The server the proxy started (Linux lists a task's children).
    let children = std::fs::read_to_string(format!("/proc/{0}/task/{0}/children", proxy.id()))
        .unwrap_or_default();
    let server: Vec<String> = children.split_whitespace().map(String::from).collect();
    assert_eq!(server.len(), 1, "{children:?}");
    // SAFETY: kill only sends a signal to the proxy this test started.
    unsafe {
        libc::kill(proxy.id() as i32, libc::SIGTERM);
    }
    let start = Instant::now();
    let status = loop {
        if let Some(s) = proxy.try_wait().unwrap() {
            break s;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the proxy ignored SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(0));
    // The server was stopped and reaped with it.
    assert!(
        !std::path::Path::new(&format!("/proc/{}", server[0])).exists(),
        "the server outlived the proxy"
    );
    let r = report(&json);
    assert_eq!(r["target"]["kind"], "proxy");
    // Nothing but the server's answer reached the host's stdout (it is
    // closed now: the reader thread ends without another line).
    match got.recv_timeout(Duration::from_secs(5)) {
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {}
        Ok(line) => panic!("more on the host's stdout: {line}"),
        Err(e) => panic!("the host's stdout stayed open after the proxy exited: {e}"),
    }
}

#[test]
fn bad_input_to_the_proxy_is_a_one_line_error() {
    let out = mcperr(&["proxy", "--", "/nonexistent/server"]);
    assert_eq!(out.code, Some(2));
    assert!(
        out.stderr.contains("could not start `/nonexistent/server`"),
        "{}",
        out.stderr
    );
    assert_eq!(out.stdout, "");
    let out = mcperr(&["proxy"]);
    assert_eq!(out.code, Some(2), "{}", out.stderr);
}
