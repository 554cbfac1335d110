//! A server's stderr, kept in a bounded buffer whose absolute offsets let
//! the oracle read just what a case logged. A child's is filled by the line
//! connection's reader task ([`super::lines`]); the in-process server's by
//! its edge ([`super::memory`]).

use std::sync::{Arc, Mutex};

/// The last bytes of stderr, with the absolute offset of the first one kept.
#[derive(Debug, Default)]
struct StderrBuf {
    start: usize,
    bytes: Vec<u8>,
}

const STDERR_KEEP: usize = 1 << 20;

/// Shared handle on a server's stderr.
#[derive(Debug, Clone, Default)]
pub struct StderrLog(Arc<Mutex<StderrBuf>>);

impl StderrLog {
    /// Appends what the server wrote.
    pub fn push(&self, chunk: &[u8]) {
        let mut b = self.0.lock().unwrap();
        b.bytes.extend_from_slice(chunk);
        if b.bytes.len() > STDERR_KEEP {
            let cut = b.bytes.len() - STDERR_KEEP / 2;
            b.bytes.drain(..cut);
            b.start += cut;
        }
    }

    /// The absolute offset of the end of stderr so far.
    pub fn mark(&self) -> usize {
        let b = self.0.lock().unwrap();
        b.start + b.bytes.len()
    }

    /// Everything written since `mark` (as much as is still kept).
    pub fn since(&self, mark: usize) -> String {
        let b = self.0.lock().unwrap();
        let from = mark.saturating_sub(b.start).min(b.bytes.len());
        String::from_utf8_lossy(&b.bytes[from..]).into_owned()
    }

    /// The last `lines` lines.
    pub fn tail(&self, lines: usize) -> String {
        let b = self.0.lock().unwrap();
        let text = String::from_utf8_lossy(&b.bytes);
        let all: Vec<&str> = text.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }
}
