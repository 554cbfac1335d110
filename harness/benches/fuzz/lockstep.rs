//! The minimal clients the figures compare mcperr with: lockstep round
//! trips through `cat`, with the reference server over stdio and HTTP, and
//! each peer's own ceiling (replaying a campaign knowing which requests go
//! unanswered, and blind to it); and lines through `cat` with a writer and a
//! reader at once.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Lockstep round trips through `cat`: the pipe's latency floor per request.
pub(crate) fn cat_lockstep(n: u64) -> Duration {
    let mut child = Command::new("cat")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("cat");
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let line = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_author","arguments":{"title":"Dune"}}}"#;
    let mut buf = String::new();
    let start = Instant::now();
    for _ in 0..n {
        stdin.write_all(line).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
        buf.clear();
        stdout.read_line(&mut buf).unwrap();
    }
    let took = start.elapsed();
    drop(stdin);
    child.wait().unwrap();
    took / n as u32
}

/// Lockstep round trips of one `tools/call` against the reference server
/// started by `command` (after its handshake): the mean time per request.
pub(crate) fn reference_lockstep(command: &[&str], n: u64) -> Duration {
    let mut child = Command::new(command[0])
        .args(&command[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the reference server");
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut buf = String::new();
    let mut ask = |line: &str, answer: bool| {
        stdin.write_all(format!("{line}\n").as_bytes()).unwrap();
        stdin.flush().unwrap();
        if answer {
            buf.clear();
            stdout.read_line(&mut buf).unwrap();
        }
    };
    ask(
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#,
        true,
    );
    ask(
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        false,
    );
    let line = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_author","arguments":{"title":"Dune"}}}"#;
    let start = Instant::now();
    for _ in 0..n {
        ask(line, true);
    }
    let took = start.elapsed();
    drop(stdin);
    let _ = child.wait();
    took / n as u32
}

/// Starts `command` (a server that prints its URL on stdout first) and
/// returns it with the URL.
pub(crate) fn url_server(command: &[&str]) -> (std::process::Child, String) {
    let mut child = Command::new(command[0])
        .args(&command[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the server");
    let mut url = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut url)
        .expect("its URL");
    (child, url.trim().to_string())
}

/// The mean time of one 2026-07-28 `tools/call` over one keep-alive
/// HTTP/1.1 connection to `url`, lockstep: a minimal client (a request
/// written whole, the answer read by its Content-Length).
pub(crate) fn http_lockstep(url: &str, n: u64) -> Duration {
    let addr = url.trim_start_matches("http://").split('/').next().unwrap();
    let path = &url[url.find(addr).unwrap() + addr.len()..];
    let stream = std::net::TcpStream::connect(addr).expect("connect");
    stream.set_nodelay(true).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut writer = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_author","arguments":{"title":"Dune"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: get_author\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut line = String::new();
    let mut answer = Vec::new();
    let start = Instant::now();
    for _ in 0..n {
        writer.write_all(request.as_bytes()).unwrap();
        let mut length = 0;
        loop {
            line.clear();
            reader.read_line(&mut line).expect("an answer");
            if line == "\r\n" {
                break;
            }
            if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = v.trim().parse().unwrap();
            }
        }
        answer.resize(length, 0);
        std::io::Read::read_exact(&mut reader, &mut answer).unwrap();
    }
    start.elapsed() / n as u32
}

/// Lines per second through `cat` with writer and reader concurrent: the
/// pipe's throughput ceiling for messages of this size.
pub(crate) fn cat_pipelined(n: u64) -> f64 {
    let mut child = Command::new("cat")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("cat");
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let start = Instant::now();
    let writer = std::thread::spawn(move || {
        let line = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"get_author\",\"arguments\":{\"title\":\"Dune\"}}}\n";
        for _ in 0..n {
            stdin.write_all(line).unwrap();
        }
    });
    let mut count = 0;
    for line in BufReader::new(stdout).lines() {
        line.unwrap();
        count += 1;
        if count == n {
            break;
        }
    }
    writer.join().unwrap();
    let _ = child.kill();
    let _ = child.wait();
    n as f64 / start.elapsed().as_secs_f64()
}

/// A minimal lockstep client: replays `lines` (the requests a fuzz run
/// sent, recorded by `tee`) one at a time, each waiting for its answer, on
/// a fresh server, and times the campaign's `requests` as the fuzz report
/// times its own: from the first input the campaign drew to its
/// `requests`-th (the handshake and discovery before are replayed untimed;
/// the confirming and shrinking after, which draw ids the same way, not at
/// all; the probes in between are replayed and timed, not counted). A
/// request the server never answered is sent without waiting: the server
/// does its work for it as it did in the campaign, and the client knows, as
/// no real client could, that no answer will come. The server's own
/// ceiling for exactly the campaign's stream.
pub(crate) fn lockstep_ceiling(
    server: &[String],
    lines: &[String],
    answered: &std::collections::HashSet<String>,
    requests: u64,
) -> (f64, u64) {
    let (mut child, mut stdin) = start_server(server);
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut buf = String::new();
    let mut drawn = 0u64;
    let mut start: Option<Instant> = None;
    for line in lines {
        if drawn == requests {
            break; // the campaign is over
        }
        // A line serde_json refuses (a lone surrogate) is sent without waiting:
        // a parser may refuse it in silence, which a lockstep client cannot
        // tell from slowness.
        let msg: serde_json::Value = serde_json::from_str(line).unwrap_or_default();
        let id = msg.get("id");
        if id.is_some_and(campaign_id) {
            start.get_or_insert_with(Instant::now);
            drawn += 1;
        }
        let id = id.map(|i| i.to_string());
        let wait = msg.get("method").is_some() && id.as_ref().is_some_and(|i| answered.contains(i));
        // One write per line: split writes (the line, then its newline)
        // cost a Node server a scheduling round each.
        stdin.write_all(format!("{line}\n").as_bytes()).unwrap();
        stdin.flush().unwrap();
        if !wait {
            continue;
        }
        loop {
            buf.clear();
            if stdout.read_line(&mut buf).unwrap() == 0 {
                break;
            }
            let r: serde_json::Value = serde_json::from_str(&buf).unwrap_or_default();
            if r.get("id").map(|i| i.to_string()) == id {
                break;
            }
        }
    }
    let rate = rate_since(start, drawn);
    stop_server(child);
    (rate, drawn)
}

/// Requests per second of `drawn` requests since the first was drawn.
fn rate_since(start: Option<Instant>, drawn: u64) -> f64 {
    drawn as f64
        / start
            .expect("the campaign drew requests")
            .elapsed()
            .as_secs_f64()
}

/// Kills a replay's server and reaps it.
fn stop_server(mut child: std::process::Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// Starts a replay's server (its stderr discarded) and takes its stdin.
fn start_server(server: &[String]) -> (std::process::Child, std::process::ChildStdin) {
    let mut child = Command::new(&server[0])
        .args(&server[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdin = child.stdin.take().unwrap();
    (child, stdin)
}

/// Whether a request id is one the campaign drew for an input (`1 << 20` on,
/// in every id style: negative, shifted past 2^31 or 2^53, or a `fz-N…`
/// string), not the client's own small counter (handshake, discovery, the
/// lockstep probes) nor its `limited_calls` count (`mcperr-count-N`).
pub(crate) fn campaign_id(id: &serde_json::Value) -> bool {
    match id {
        serde_json::Value::Number(n) => n.as_f64().is_some_and(|f| f.abs() >= (1u64 << 20) as f64),
        serde_json::Value::String(s) => s.starts_with("fz-"),
        _ => false,
    }
}

/// Lockstep round trips of the campaign's own request stream by a client
/// that knows nothing mcperr does not: it waits for every request's answer,
/// and gives a request up as dropped after the same kind of bounded wait
/// mcperr's pipeline uses (eight times the 90th percentile of the answer
/// times it has seen, at least 100 ms). Requests per second over the
/// campaign's requests, and how many it drew.
pub(crate) fn lockstep_blind(server: &[String], lines: &[String], requests: u64) -> (f64, u64) {
    let (mut child, mut stdin) = start_server(server);
    let stdout = BufReader::new(child.stdout.take().unwrap());
    // Answers come through a reader thread, so that a wait can end.
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let reader = std::thread::spawn(move || {
        for line in stdout.lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut latencies: Vec<Duration> = Vec::new();
    let mut drawn = 0u64;
    let mut start: Option<Instant> = None;
    for line in lines {
        if drawn == requests {
            break;
        }
        let msg: serde_json::Value = serde_json::from_str(line).unwrap_or_default();
        let id = msg.get("id");
        if id.is_some_and(campaign_id) {
            start.get_or_insert_with(Instant::now);
            drawn += 1;
        }
        stdin.write_all(format!("{line}\n").as_bytes()).unwrap();
        stdin.flush().unwrap();
        // A notification, or a line it cannot parse (a lone surrogate: its
        // id unknown), expects no answer it could match.
        if id.is_none() || msg.get("method").is_none() {
            continue;
        }
        let sent = Instant::now();
        let grace = blind_grace(&mut latencies);
        loop {
            let left = grace.saturating_sub(sent.elapsed());
            match rx.recv_timeout(left) {
                Ok(answer) => {
                    // In lockstep one request is out: any response is its
                    // answer, whatever id it carries (a server that mangles
                    // ids is answered, not silent). Notifications are not.
                    let r: serde_json::Value = serde_json::from_str(&answer).unwrap_or_default();
                    if r.get("method").is_none() && r.get("id").is_some() {
                        latencies.push(sent.elapsed());
                        break;
                    }
                }
                Err(_) => break, // given up as dropped
            }
        }
    }
    let rate = rate_since(start, drawn);
    stop_server(child);
    let _ = reader.join();
    (rate, drawn)
}

/// The blind client's wait for one answer: mcperr's drop grace over the
/// answer times seen so far (the last 128), 1 s until 16 are seen.
fn blind_grace(latencies: &mut Vec<Duration>) -> Duration {
    if latencies.len() < 16 {
        return Duration::from_secs(1);
    }
    if latencies.len() > 128 {
        latencies.drain(..latencies.len() - 128);
    }
    let mut recent = latencies.clone();
    let at = recent.len() * 9 / 10;
    let p90 = *recent.select_nth_unstable(at).1;
    (p90 * 8).max(Duration::from_millis(100))
}
