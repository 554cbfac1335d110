//! The stdio edge: newline-delimited JSON-RPC on stdin/stdout, logs on stderr.
//!
//! Split in two so the decisions can be tested (and driven by a harness)
//! without pipes: [`StdioEdge`] decides what one input line produces — blank
//! lines skipped, the session's era lock, where log records go under the
//! `log-on-stdout` fault, the response line, whether to exit — as bytes;
//! [`serve`] only reads lines, feeds them in and writes what comes out.
//! Lines longer than [`MAX_LINE`] are discarded whole, never buffered without
//! bound. A slow tool's reply is held back by the edge's [`Work`] while the
//! next lines are read (a cancellation among them); [`StdioEdge::due`] gives
//! what has come due since, so [`serve`] reads on a thread of its own.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::sync::mpsc;
use std::time::Instant;

use crate::faults::Fault;
use crate::handler::Handler;
use crate::log::LogRecord;
use crate::session::Session;
use crate::work::Work;

/// The longest input line the server reads (16 MiB); longer ones are dropped.
pub const MAX_LINE: usize = 16 << 20;

/// Why [`serve`] returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// The input ended: a clean shutdown.
    Eof,
    /// An injected fault asked the process to exit.
    FaultExit,
}

/// What one input line produced.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct LineOutput {
    /// Bytes for stdout: the response line, preceded by the log lines under
    /// the `log-on-stdout` fault. Every line ends in `\n`.
    pub stdout: Vec<u8>,
    /// Bytes for the log (stderr), every line ending in `\n`.
    pub stderr: Vec<u8>,
    /// Whether the server must stop ([`Stop::FaultExit`]) after writing these.
    pub exit: bool,
}

/// The stdio edge's decisions for one connection, without I/O.
#[derive(Debug, Default, Clone)]
pub struct StdioEdge {
    session: Session,
    work: Work,
    /// Pings sent under the `server-requests` fault, for their ids.
    pings: u64,
}

/// Appends `record` as log lines ending in `\n` (its `Display` form).
fn push_record(out: &mut Vec<u8>, record: &LogRecord) {
    out.extend_from_slice(format!("{record}\n").as_bytes());
}

/// Appends `message` as one line.
fn push_message(out: &mut Vec<u8>, message: &serde_json::Value) {
    out.extend_from_slice(&serde_json::to_vec(message).expect("messages serialize"));
    out.push(b'\n');
}

impl StdioEdge {
    /// A connection that has not seen a line yet.
    pub fn new() -> Self {
        StdioEdge::default()
    }

    /// One input line without its newline (a trailing `\n` is tolerated, a
    /// trailing `\r` stripped). A blank line produces nothing.
    pub fn feed(&mut self, handler: &Handler, line: &[u8]) -> LineOutput {
        self.feed_at(handler, line, Instant::now())
    }

    /// [`StdioEdge::feed`] at `now`, the instant a slow tool's work starts.
    pub fn feed_at(&mut self, handler: &Handler, line: &[u8], now: Instant) -> LineOutput {
        self.decide(handler, line, now).unwrap_or_default()
    }

    /// When held-back work next has something to write, if any is working.
    pub fn next_due(&self) -> Option<Instant> {
        self.work.next_due()
    }

    /// What held-back work wrote by `now`: progress notifications and the
    /// responses of finished slow calls.
    pub fn due(&mut self, handler: &Handler, now: Instant) -> LineOutput {
        let mut out = LineOutput::default();
        for message in self.work.due(now, handler.fault()) {
            push_message(&mut out.stdout, &message);
        }
        out
    }

    /// What [`serve`] writes for an over-long line: one WARN log line, on the
    /// log whatever the fault (the handler is taken for symmetry with [`feed`]).
    ///
    /// [`feed`]: StdioEdge::feed
    pub fn oversized(&mut self, _handler: &Handler) -> LineOutput {
        let mut out = LineOutput::default();
        push_record(
            &mut out.stderr,
            &LogRecord::warn(format!(
                "dropping an input line longer than {MAX_LINE} bytes"
            )),
        );
        out
    }

    /// [`StdioEdge::feed`], with `None` for a blank line, for which [`serve`]
    /// neither writes nor flushes.
    fn decide(&mut self, handler: &Handler, line: &[u8], now: Instant) -> Option<LineOutput> {
        let line = line.strip_suffix(b"\n").unwrap_or(line);
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.iter().all(u8::is_ascii_whitespace) {
            return None;
        }
        let outcome = self.session.handle_bytes(handler, line);
        let mut out = LineOutput {
            exit: outcome.exit_after,
            ..LineOutput::default()
        };
        let logs = if handler.fault() == Some(Fault::LogOnStdout) {
            &mut out.stdout
        } else {
            &mut out.stderr
        };
        for record in &outcome.logs {
            push_record(logs, record);
        }
        if let Some(id) = &outcome.cancels {
            // "Both parties SHOULD log cancellation reasons for debugging."
            if self.work.cancel(id, handler.fault()) {
                self.session.cancel_matched();
                push_record(logs, &LogRecord::info(format!("cancelled request {id}")));
            }
        }
        // Seven faults write a message of the server's own before the answer
        // to a tools/call: a notification with an id, a log message quoting
        // a secret, a log message without the capability, a ping request
        // (with ids of its own, a null id or one id each time), or a
        // cancellation.
        let calls_tool = outcome.method.as_deref() == Some("tools/call");
        let own = match handler.fault() {
            Some(Fault::NotificationWithId) if calls_tool => Some(serde_json::json!({
                "jsonrpc": "2.0", "id": 0, "method": "notifications/message",
                "params": {"level": "info", "data": "calling a tool"}})),
            Some(Fault::LogUndeclared) if calls_tool => Some(serde_json::json!({
                "jsonrpc": "2.0", "method": "notifications/message",
                "params": {"level": "info", "logger": "mcperr-reference", "data": "calling a tool"}})),
            Some(Fault::LogLeaksDsn) if calls_tool => Some(serde_json::json!({
                "jsonrpc": "2.0", "method": "notifications/message",
                "params": {"level": "error", "logger": "catalog",
                    "data": "catalog pool: postgres://bookshop:hunter2-s3cret@catalog-db.internal:5432/books"}})),
            Some(Fault::ServerRequests) if calls_tool => {
                self.pings += 1;
                Some(serde_json::json!({
                    "jsonrpc": "2.0", "id": format!("mcperr-reference-ping-{}", self.pings), "method": "ping"}))
            }
            Some(Fault::ServerRequestNullId) if calls_tool => Some(serde_json::json!({
                "jsonrpc": "2.0", "id": null, "method": "ping"})),
            Some(Fault::ServerRequestIdReused) if calls_tool => Some(serde_json::json!({
                "jsonrpc": "2.0", "id": "mcperr-reference-ping", "method": "ping"})),
            Some(Fault::ServerCancels) if calls_tool => Some(serde_json::json!({
                "jsonrpc": "2.0", "method": "notifications/cancelled", "params": {
                    "requestId": outcome.response.as_ref().and_then(|r| r.get("id")),
                    "reason": "the server gave up"}})),
            _ => None,
        };
        if let Some(message) = own {
            push_message(&mut out.stdout, &message);
        }
        for message in &outcome.notifications {
            push_message(&mut out.stdout, message);
        }
        if outcome.steps > 0 {
            if let Some(response) = outcome.response {
                let token = outcome.progress_token;
                self.work.start(response, token, outcome.steps, now);
                return Some(out);
            }
        }
        if let Some(response) = outcome.response {
            let pretty = handler.fault() == Some(Fault::PrettyPrinted)
                && response
                    .pointer("/error/code")
                    .and_then(mcperr_protocol::codes::Code::of)
                    == Some(mcperr_protocol::codes::METHOD_NOT_FOUND);
            let mut bytes = if pretty {
                serde_json::to_vec_pretty(&response)
            } else {
                serde_json::to_vec(&response)
            }
            .expect("responses always serialize");
            if handler.fault() == Some(Fault::Latin1Messages) {
                bytes = crate::faults::as_latin1(&bytes);
            }
            bytes = crate::mrtr::as_written(bytes, handler.fault());
            out.stdout.extend_from_slice(&bytes);
            out.stdout.push(b'\n');
        }
        Some(out)
    }
}

/// What the reader thread of [`serve`] hands over.
enum Input {
    /// One line, its newline kept.
    Line(Vec<u8>),
    /// A line over [`MAX_LINE`], skipped.
    Oversized,
}

/// Reads `input` line by line onto `lines` until EOF (then the channel
/// closes) or a read error (sent last). The lines already read in one go
/// travel together: a client that pipelines wakes the server once per
/// read, not once per line.
fn read_lines<R: Read>(mut input: BufReader<R>, lines: mpsc::Sender<Vec<io::Result<Input>>>) {
    let mut batch = Vec::new();
    loop {
        let item = read_one(&mut input);
        let end = matches!(item, None | Some(Err(_)));
        batch.extend(item);
        let flush = end || input.buffer().is_empty();
        if flush && (lines.send(std::mem::take(&mut batch)).is_err() || end) {
            return;
        }
    }
}

/// One line of `input`, its newline kept; `None` at EOF.
fn read_one<R: Read>(input: &mut BufReader<R>) -> Option<io::Result<Input>> {
    let mut line = Vec::new();
    match Read::take(&mut *input, MAX_LINE as u64 + 1).read_until(b'\n', &mut line) {
        Ok(0) => None,
        Ok(_) if line.len() > MAX_LINE && line.last() != Some(&b'\n') => {
            // Skip the rest of the oversized line.
            let mut sink = Vec::new();
            loop {
                sink.clear();
                match Read::take(&mut *input, MAX_LINE as u64).read_until(b'\n', &mut sink) {
                    Ok(m) if m == 0 || sink.last() == Some(&b'\n') => {
                        return Some(Ok(Input::Oversized))
                    }
                    Ok(_) => {}
                    Err(e) => return Some(Err(e)),
                }
            }
        }
        Ok(_) => Some(Ok(Input::Line(line))),
        Err(e) => Some(Err(e)),
    }
}

/// Writes one output: the log first (flushed when `flush`), then stdout.
fn write_out(
    out: &LineOutput,
    flush: bool,
    output: &mut impl Write,
    log: &mut impl Write,
) -> io::Result<()> {
    if !out.stderr.is_empty() {
        log.write_all(&out.stderr)?;
    }
    if flush {
        log.flush()?;
    }
    if !out.stdout.is_empty() {
        output.write_all(&out.stdout)?;
    }
    if flush {
        output.flush()?;
    }
    Ok(())
}

/// Serves one connection until EOF. Lines are read on a thread of their
/// own, so that held-back work (a slow tool) writes its progress and its
/// reply on time while the next lines are read; at EOF the work still
/// running is finished, then the server stops.
pub fn serve(
    handler: &Handler,
    input: impl Read + Send + 'static,
    mut output: impl Write,
    mut log: impl Write,
) -> io::Result<Stop> {
    let mut edge = StdioEdge::new();
    let (tx, rx) = mpsc::channel();
    // Not joined: after a fault exit it may still be blocked on a read,
    // and the process ends with the return.
    std::thread::Builder::new()
        .name("stdin".into())
        .spawn(move || read_lines(BufReader::with_capacity(1 << 16, input), tx))?;
    let mut queued: std::collections::VecDeque<io::Result<Input>> = Default::default();
    loop {
        // Work that came due is written first, however fast lines come.
        if edge.next_due().is_some_and(|due| due <= Instant::now()) {
            write_out(
                &edge.due(handler, Instant::now()),
                true,
                &mut output,
                &mut log,
            )?;
            continue;
        }
        let next = match queued.pop_front() {
            Some(item) => Ok(item),
            None => {
                let batch = match edge.next_due() {
                    None => rx.recv().map_err(|_| mpsc::RecvTimeoutError::Disconnected),
                    Some(due) => rx.recv_timeout(due.saturating_duration_since(Instant::now())),
                };
                match batch {
                    Ok(batch) => {
                        queued.extend(batch);
                        continue;
                    }
                    Err(e) => Err(e),
                }
            }
        };
        // Over-long lines are logged without a flush; answered lines flush
        // the log before the response is written, and the response after.
        let (out, flush) = match next {
            Ok(Err(e)) => return Err(e),
            Ok(Ok(Input::Oversized)) => (edge.oversized(handler), false),
            Ok(Ok(Input::Line(line))) => match edge.decide(handler, &line, Instant::now()) {
                Some(out) => (out, true),
                None => continue,
            },
            Err(mpsc::RecvTimeoutError::Timeout) => (edge.due(handler, Instant::now()), true),
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                // EOF: the work still running is finished first.
                while let Some(due) = edge.next_due() {
                    std::thread::sleep(due.saturating_duration_since(Instant::now()));
                    write_out(
                        &edge.due(handler, Instant::now()),
                        true,
                        &mut output,
                        &mut log,
                    )?;
                }
                if !handler.exits_at_eof() {
                    // Stays until it is killed, as a server that never
                    // looks at its input again would.
                    loop {
                        std::thread::park();
                    }
                }
                return Ok(Stop::Eof);
            }
        };
        write_out(&out, flush, &mut output, &mut log)?;
        if out.exit {
            return Ok(Stop::FaultExit);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{serve, LineOutput, StdioEdge, Stop, MAX_LINE};
    use crate::{Fault, Handler};

    const INITIALIZE: &[u8] =
        br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#;

    fn lines(bytes: &[u8]) -> Vec<&str> {
        std::str::from_utf8(bytes).unwrap().lines().collect()
    }

    #[test]
    fn edge_is_send() {
        fn assert_send<T: Send>() {}
        assert_send::<StdioEdge>();
        assert_send::<LineOutput>();
    }

    #[test]
    fn a_request_yields_one_response_line() {
        let handler = Handler::new(None);
        let out = StdioEdge::new().feed(&handler, INITIALIZE);
        assert!(out.stderr.is_empty(), "{out:?}");
        assert!(!out.exit);
        assert!(out.stdout.ends_with(b"\n"));
        let stdout = lines(&out.stdout);
        assert_eq!(stdout.len(), 1);
        assert!(stdout[0].starts_with(r#"{"jsonrpc":"2.0","id":1,"result":{"#));
    }

    #[test]
    fn a_malformed_line_yields_one_warn_line_on_the_log() {
        let handler = Handler::new(None);
        let out = StdioEdge::new().feed(&handler, b"not json\r");
        assert!(out.stdout.is_empty(), "{out:?}");
        assert!(!out.exit);
        let stderr = lines(&out.stderr);
        assert_eq!(stderr.len(), 1);
        assert!(stderr[0].starts_with("WARN mcperr_reference: dropping input"));
    }

    #[test]
    fn blank_lines_produce_nothing() {
        let handler = Handler::new(None);
        let mut edge = StdioEdge::new();
        for line in [&b""[..], b"  \t", b"\r", b"\n", b" \r\n"] {
            assert_eq!(edge.feed(&handler, line), LineOutput::default());
        }
    }

    #[test]
    fn log_on_stdout_puts_log_lines_before_the_response() {
        let handler = Handler::new(Some(Fault::LogOnStdout));
        let mut edge = StdioEdge::new();
        let out = edge.feed(&handler, b"not json");
        assert!(out.stderr.is_empty(), "{out:?}");
        assert_eq!(lines(&out.stdout).len(), 1);
        assert!(out
            .stdout
            .starts_with(b"WARN mcperr_reference: dropping input"));
        // The over-long-line warning stays on the log, as serve() always did.
        assert!(edge.oversized(&handler).stdout.is_empty());
    }

    #[test]
    fn garbage_kills_exits_on_a_non_json_line() {
        let handler = Handler::new(Some(Fault::GarbageKills));
        let mut edge = StdioEdge::new();
        assert!(edge.feed(&handler, b"{\"jsonrpc\":").exit);
        // JSON that is not a message is dropped without exiting.
        assert!(!StdioEdge::new().feed(&handler, b"[1,2]").exit);
    }

    #[test]
    fn oversized_is_one_warn_line() {
        let handler = Handler::new(None);
        let out = StdioEdge::new().oversized(&handler);
        let expected =
            format!("WARN mcperr_reference: dropping an input line longer than {MAX_LINE} bytes\n");
        assert_eq!(out.stderr, expected.as_bytes());
        assert!(out.stdout.is_empty() && !out.exit);
    }

    #[test]
    fn serve_writes_what_the_edge_decides() {
        let handler = Handler::new(Some(Fault::ExitAfterCrash));
        let crash = br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"crash","arguments":{"secret":"s"}}}"#;
        let input = [
            &b"\n"[..],
            INITIALIZE,
            b"\r\nnot json\n",
            crash,
            b"\n",
            INITIALIZE,
        ]
        .concat();
        let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
        let stop = serve(
            &handler,
            std::io::Cursor::new(input),
            &mut stdout,
            &mut stderr,
        )
        .unwrap();
        assert_eq!(stop, Stop::FaultExit);

        let fresh = Handler::new(Some(Fault::ExitAfterCrash));
        let mut edge = StdioEdge::new();
        let outs: Vec<LineOutput> = [&b""[..], INITIALIZE, b"not json", crash]
            .iter()
            .map(|l| edge.feed(&fresh, l))
            .collect();
        assert!(outs[3].exit);
        assert_eq!(
            stdout,
            outs.iter()
                .flat_map(|o| o.stdout.clone())
                .collect::<Vec<_>>()
        );
        // The crash's chain names a source line, identical for both handlers.
        assert_eq!(
            stderr,
            outs.iter()
                .flat_map(|o| o.stderr.clone())
                .collect::<Vec<_>>()
        );
    }
}
