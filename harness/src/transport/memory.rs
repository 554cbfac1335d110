//! The in-process stdio transport: the reference server's pure stdio edge
//! driven directly, no child process. A line in gives the bytes the server
//! would have written to stdout and stderr, so every case file and every
//! fault (log lines on stdout, a process that exits, garbage that kills it)
//! can be judged in tests in microseconds.

use std::collections::VecDeque;
use std::sync::Arc;

use mcperr_reference::stdio::StdioEdge;
use mcperr_reference::Handler;

use super::stdio::{StderrLog, StdoutEvent};

/// One in-process "server process": a handler and its connection's edge.
pub struct MemoryLines {
    handler: Arc<Handler>,
    edge: StdioEdge,
    queue: VecDeque<StdoutEvent>,
    /// The server's stderr.
    pub stderr: StderrLog,
    exited: bool,
}

impl MemoryLines {
    /// A fresh connection to `handler`. A restarted "process" gets a fresh
    /// connection but keeps the run's handler, so fixture state (the count
    /// of `limited` runs) survives a restart, which no case relies on.
    pub fn new(handler: Arc<Handler>) -> MemoryLines {
        MemoryLines {
            handler,
            edge: StdioEdge::new(),
            queue: VecDeque::new(),
            stderr: StderrLog::default(),
            exited: false,
        }
    }

    /// Feeds one line (a raw line with newlines in it is several, as on a
    /// pipe), queueing what the server wrote.
    pub fn send_line(&mut self, bytes: &[u8]) {
        for line in bytes.split(|b| *b == b'\n') {
            self.feed(line);
        }
    }

    fn feed(&mut self, line: &[u8]) {
        if self.exited {
            return;
        }
        let out = self.edge.feed(&self.handler, line);
        self.stderr.push(&out.stderr);
        for l in out.stdout.split(|b| *b == b'\n') {
            if !l.is_empty() {
                self.queue.push_back(StdoutEvent::Line(l.to_vec()));
            }
        }
        if out.exit {
            self.exited = true;
            self.queue.push_back(StdoutEvent::Eof);
        }
    }

    /// The next event, or `None` at once when the server wrote nothing more:
    /// an in-process server never answers later.
    pub fn next_event(&mut self) -> Option<StdoutEvent> {
        match self.queue.pop_front() {
            Some(StdoutEvent::Eof) => {
                self.queue.push_front(StdoutEvent::Eof);
                Some(StdoutEvent::Eof)
            }
            other => other,
        }
    }

    /// Events already written, without waiting.
    pub fn pending(&mut self) -> Vec<StdoutEvent> {
        let mut out: Vec<StdoutEvent> = Vec::new();
        while let Some(e) = self.queue.pop_front() {
            if e == StdoutEvent::Eof {
                self.queue.push_front(StdoutEvent::Eof);
                break;
            }
            out.push(e);
        }
        out
    }

    /// How the "process" ended, if it did.
    pub fn exit_status(&self) -> Option<String> {
        self.exited.then(|| "exited with code 1".to_string())
    }
}
