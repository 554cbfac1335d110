//! The stdio edge: newline-delimited JSON-RPC on stdin/stdout, logs on stderr.
//!
//! Generic over readers and writers so tests can drive it in memory. Lines
//! longer than [`MAX_LINE`] are discarded whole, never buffered without bound.

use std::io::{self, BufRead, Read, Write};

use crate::faults::Fault;
use crate::handler::Handler;
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

/// Serves one connection until EOF.
pub fn serve(
    handler: &Handler,
    input: impl BufRead,
    mut output: impl Write,
    mut log: impl Write,
) -> io::Result<Stop> {
    let mut session = Session::new();
    let mut input = input;
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = Read::take(&mut input, MAX_LINE as u64 + 1).read_until(b'\n', &mut line)?;
        if n == 0 {
            return Ok(Stop::Eof);
        }
        if line.len() > MAX_LINE && line.last() != Some(&b'\n') {
            // Skip the rest of the oversized line.
            let mut sink = Vec::new();
            loop {
                sink.clear();
                let m = Read::take(&mut input, MAX_LINE as u64).read_until(b'\n', &mut sink)?;
                if m == 0 || sink.last() == Some(&b'\n') {
                    break;
                }
            }
            writeln!(
                log,
                "WARN mcperr_reference: dropping an input line longer than {MAX_LINE} bytes"
            )?;
            continue;
        }
        let trimmed = line.strip_suffix(b"\n").unwrap_or(&line);
        let trimmed = trimmed.strip_suffix(b"\r").unwrap_or(trimmed);
        if trimmed.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let outcome = session.handle_bytes(handler, trimmed);
        for record in &outcome.logs {
            if handler.fault() == Some(Fault::LogOnStdout) {
                writeln!(output, "{record}")?;
            } else {
                writeln!(log, "{record}")?;
            }
        }
        log.flush()?;
        if let Some(response) = outcome.response {
            let mut bytes = serde_json::to_vec(&response).expect("responses always serialize");
            bytes.push(b'\n');
            output.write_all(&bytes)?;
        }
        output.flush()?;
        if outcome.exit_after {
            return Ok(Stop::FaultExit);
        }
    }
}
