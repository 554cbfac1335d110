//! `mcperr proxy` under real hosts: the MCP Python SDK's client and the
//! TypeScript SDK 1.x client (fixtures/clients, fixtures/servers/typescript-v1)
//! launch a Bookshop through the proxy exactly as a host configuration
//! would. The clients must see the same session as without the proxy, byte
//! for byte what the server wrote, and the report must name the Bookshop's
//! real deviations. Over Streamable HTTP the same: the Python SDK's client
//! pointed at the proxy's URL sees the session it sees without it.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::http::{raw, HttpServer};
use crate::sdk_peers::{bookshop, python};
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
    let server = format!("{py} {ROOT}/fixtures/servers/python/bookshop.py");
    replays_to_the_prompt_warnings(&["--stdio", &server], &saved);
}

/// The Python Bookshop's saved findings, replayed with `mcperr run
/// TARGET --cases-dir SAVED`, warn under P1 and P2 again.
fn replays_to_the_prompt_warnings(target: &[&str], saved: &std::path::Path) {
    let mut args = vec!["run"];
    args.extend(target);
    args.extend([
        "--era",
        "2025-11-25",
        "--cases-dir",
        saved.to_str().unwrap(),
    ]);
    let out = mcperr(&args);
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
    let client = format!("{ROOT}/fixtures/servers/typescript-v1/client.mjs");
    let r = through_the_proxy(
        "typescript-v1",
        &["node", &client],
        &bookshop("typescript-sdk-v1"),
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
    let initialize = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}\n";
    stdin.write_all(initialize).unwrap();
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
    // The summary counts what was relayed before the signal (it said 0 and
    // 0), and the answer the host read was judged (it was left unjudged
    // when the signal came while the write to the host was pending).
    let mut log = String::new();
    proxy
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut log)
        .unwrap();
    let relayed = format!(
        "{} bytes to the server, {} to the host",
        initialize.len(),
        line.len() + 1
    );
    assert!(log.contains(&relayed), "not {relayed:?}:\n{log}");
    assert!(
        log.contains("1 requests from the host, 1 answers judged, 0 unanswered"),
        "{log}"
    );
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

/// `mcperr proxy --listen 127.0.0.1:0 --upstream URL` with reports in
/// `dir`, as a server process that printed the URL to give the host.
fn http_proxy(dir: &std::path::Path, upstream: &str) -> HttpServer {
    let d = |f: &str| dir.join(f).to_str().unwrap().to_string();
    HttpServer::start(
        MCPERR,
        &[
            "proxy",
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            upstream,
            "--json",
            &d("r.json"),
            "--save",
            &d("saved"),
            "--log",
            &d("log"),
        ],
    )
}

#[test]
fn the_python_sdk_client_works_unchanged_through_the_http_proxy_and_its_deviations_are_named() {
    let py = python();
    let bookshop = format!("{ROOT}/fixtures/servers/python/bookshop.py");
    let server = HttpServer::start(&py, &[&bookshop, "--http", "127.0.0.1:0"]);
    let dir = scratch("proxy-http-python");
    let proxy = http_proxy(&dir, &server.url);
    let client = format!("{ROOT}/fixtures/clients/python_client.py");
    let direct = self::client(&[
        py.clone(),
        client.clone(),
        "--url".into(),
        server.url.clone(),
    ]);
    let proxied = self::client(&[py.clone(), client, "--url".into(), proxy.url.clone()]);
    assert_eq!(
        proxied, direct,
        "the client saw another session through the proxy"
    );
    assert_eq!(proxy.terminate(), Some(0));
    let r = report(&dir.join("r.json"));
    assert_eq!(r["era"], "2025-11-25");
    assert_eq!(r["transport"], "http");
    assert_eq!(r["target"]["url"], server.url.as_str());
    let found = findings(&r);
    for rule in ["P1", "P2"] {
        assert!(found.contains(&(rule.into(), "warn".into())), "{found:?}");
    }
    let log = std::fs::read_to_string(dir.join("log")).unwrap();
    assert!(log.contains("18 answers judged"), "{log}");
    // The saved findings replay against the server itself, over HTTP.
    replays_to_the_prompt_warnings(&["--http", &server.url], &dir.join("saved"));
}

/// A stateless (2026-07-28) `tools/call` of `tool` with `args`, as raw HTTP.
fn modern_call(url: &str, tool: &str, args: &str) -> (u16, String) {
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {{host}}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: {tool}\r\nContent-Length: {{len}}\r\nConnection: close\r\n\r\n"
    );
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"{tool}","arguments":{args},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}}}}}}}}"#
    );
    let (status, text) = raw(url, &head, body.as_bytes());
    // The Date header is the only part of an answer that is the hour's.
    let text = text
        .lines()
        .filter(|l| !l.to_ascii_lowercase().starts_with("date:"))
        .collect::<Vec<_>>()
        .join("\n");
    (status, text)
}

#[test]
fn the_http_proxy_forwards_answers_unchanged_and_judges_them() {
    // A stream cut before the answer leaves nothing to judge: an `error`
    // under H3, as `mcperr run --http` reports the same fault.
    for (sse, fault, rule) in [
        (false, None, None),
        (true, None, None),
        (true, Some("http-sse-truncated"), Some("H3")),
    ] {
        let mut args = vec!["reference", "--http", "127.0.0.1:0"];
        if sse {
            args.push("--sse");
        }
        if let Some(f) = fault {
            args.extend(["--fault", f]);
        }
        let server = HttpServer::start(MCPERR, &args);
        let dir = scratch(&format!(
            "proxy-http-{}-{}",
            if sse { "sse" } else { "json" },
            fault.unwrap_or("clean")
        ));
        let proxy = http_proxy(&dir, &server.url);
        for (tool, args) in [
            ("get_author", r#"{"title":"Dune"}"#),
            ("get_author", r#"{"title":"Necronomicon"}"#),
            ("limited", r#"{"limit":"many"}"#),
        ] {
            let direct = modern_call(&server.url, tool, args);
            let proxied = modern_call(&proxy.url, tool, args);
            assert_eq!(proxied, direct, "{fault:?}: {tool} {args}");
        }
        assert_eq!(proxy.terminate(), Some(if rule.is_some() { 1 } else { 0 }));
        let r = report(&dir.join("r.json"));
        assert_eq!(r["era"], "2026-07-28");
        let found = findings(&r);
        match rule {
            None => assert_eq!(found, vec![], "the reference server deviates from nothing"),
            Some(rule) => assert!(
                found.contains(&(rule.into(), "error".into())),
                "{fault:?}: {found:?}"
            ),
        }
    }
}

#[test]
fn bad_input_to_the_http_proxy_is_a_one_line_error() {
    for (args, says) in [
        (
            vec![
                "--listen",
                "127.0.0.1:0",
                "--upstream",
                "https://example.com/mcp",
            ],
            "https is not",
        ),
        (
            vec!["--listen", "127.0.0.1:0", "--upstream", "not a url"],
            "not a URL",
        ),
        (
            vec![
                "--listen",
                "256.0.0.1:1",
                "--upstream",
                "http://127.0.0.1:9/mcp",
            ],
            "cannot listen there",
        ),
        (vec!["--upstream", "http://127.0.0.1:9/mcp"], "--listen"),
    ] {
        let mut all = vec!["proxy"];
        all.extend(args);
        let out = mcperr(&all);
        assert_eq!(out.code, Some(2), "{all:?}: {}", out.stderr);
        assert!(out.stderr.contains(says), "{all:?}: {}", out.stderr);
        if out.stderr.starts_with("mcperr:") {
            // mcperr's own refusals are one line (clap's usage errors are clap's).
            assert_eq!(out.stderr.trim().lines().count(), 1, "{}", out.stderr);
        }
    }
}
