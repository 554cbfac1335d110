//! The stdio edge: newline-delimited JSON-RPC on stdin/stdout, logs on stderr.
//!
//! Split in two so the decisions can be tested (and driven by a harness)
//! without pipes: [`StdioEdge`] decides what one input line produces — blank
//! lines skipped, the session's era lock, where log records go under the
//! `log-on-stdout` fault, the response line, whether to exit — as bytes;
//! [`serve`] only reads lines, feeds them in and writes what comes out.
//! Lines longer than [`MAX_LINE`] are discarded whole, never buffered without
//! bound.

use std::io::{self, BufRead, Read, Write};

use crate::faults::Fault;
use crate::handler::Handler;
use crate::log::LogRecord;
use crate::session::Session;

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
}

/// Appends `record` as log lines ending in `\n` (its `Display` form).
fn push_record(out: &mut Vec<u8>, record: &LogRecord) {
    out.extend_from_slice(format!("{record}\n").as_bytes());
}

impl StdioEdge {
    /// A connection that has not seen a line yet.
    pub fn new() -> Self {
        StdioEdge::default()
    }

    /// One input line without its newline (a trailing `\n` is tolerated, a
    /// trailing `\r` stripped). A blank line produces nothing.
    pub fn feed(&mut self, handler: &Handler, line: &[u8]) -> LineOutput {
        self.decide(handler, line).unwrap_or_default()
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
    fn decide(&mut self, handler: &Handler, line: &[u8]) -> Option<LineOutput> {
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
        // Three faults write a message of the server's own before the answer
        // to a tools/call: a notification with an id, a log message quoting
        // a secret, or a ping request.
        let calls_tool = outcome.method.as_deref() == Some("tools/call");
        let own = match handler.fault() {
            Some(Fault::NotificationWithId) if calls_tool => Some(serde_json::json!({
                "jsonrpc": "2.0", "id": 0, "method": "notifications/message",
                "params": {"level": "info", "data": "calling a tool"}})),
            Some(Fault::LogLeaksDsn) if calls_tool => Some(serde_json::json!({
                "jsonrpc": "2.0", "method": "notifications/message",
                "params": {"level": "error", "logger": "catalog",
                    "data": "catalog pool: postgres://bookshop:hunter2-s3cret@catalog-db.internal:5432/books"}})),
            Some(Fault::ServerRequests) if calls_tool => Some(serde_json::json!({
                "jsonrpc": "2.0", "id": "mcperr-reference-ping", "method": "ping"})),
            _ => None,
        };
        if let Some(message) = own {
            out.stdout
                .extend_from_slice(&serde_json::to_vec(&message).expect("serializes"));
            out.stdout.push(b'\n');
        }
        if let Some(response) = outcome.response {
            let pretty = handler.fault() == Some(Fault::PrettyPrinted)
                && response
                    .pointer("/error/code")
                    .and_then(serde_json::Value::as_i64)
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
            out.stdout.extend_from_slice(&bytes);
            out.stdout.push(b'\n');
        }
        Some(out)
    }
}

/// Serves one connection until EOF.
pub fn serve(
    handler: &Handler,
    input: impl BufRead,
    mut output: impl Write,
    mut log: impl Write,
) -> io::Result<Stop> {
    let mut edge = StdioEdge::new();
    let mut input = input;
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = Read::take(&mut input, MAX_LINE as u64 + 1).read_until(b'\n', &mut line)?;
        if n == 0 {
            return Ok(Stop::Eof);
        }
        // Over-long lines are logged without a flush; answered lines flush
        // the log before the response is written, and the response after.
        let (out, flush) = if line.len() > MAX_LINE && line.last() != Some(&b'\n') {
            // Skip the rest of the oversized line.
            let mut sink = Vec::new();
            loop {
                sink.clear();
                let m = Read::take(&mut input, MAX_LINE as u64).read_until(b'\n', &mut sink)?;
                if m == 0 || sink.last() == Some(&b'\n') {
                    break;
                }
            }
            (edge.oversized(handler), false)
        } else {
            match edge.decide(handler, &line) {
                Some(out) => (out, true),
                None => continue,
            }
        };
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
        let stop = serve(&handler, &input[..], &mut stdout, &mut stderr).unwrap();
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
