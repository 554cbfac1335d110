//! The line connection: what the client sends and reads over stdio, the
//! same for a child process ([`ChildLines`]: its pipes framed here, its
//! process started and reaped by [`super::stdio`]) and for the reference
//! server's stdio edge in process ([`super::memory`]).

use std::time::Duration;

use mcperr_wire::lines::LineDecoder;
pub use mcperr_wire::lines::StdoutEvent;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::ChildStdin;
use tokio::sync::mpsc;

use super::memory::MemoryLines;
use super::stderr::StderrLog;
use super::stdio::{ChildProcess, StdioTarget};

/// A line-framed connection: a child process or the in-process edge.
pub enum LineConn {
    /// A child process.
    Child(Box<ChildLines>),
    /// The reference server's stdio edge in process.
    Memory(MemoryLines),
}

impl LineConn {
    /// Writes one line.
    pub async fn send_line(&mut self, line: &[u8]) {
        tracing::debug!(target: "mcperr::wire", "→ {}", String::from_utf8_lossy(line));
        match self {
            LineConn::Child(c) => c.send_line(line).await,
            LineConn::Memory(m) => m.send_line(line),
        }
    }

    /// The next stdout event, or `None` after `wait` without one.
    pub async fn next_event(&mut self, wait: Duration) -> Option<StdoutEvent> {
        self.next_answer(wait).await.map(|(e, _)| e)
    }

    /// Events already waiting, without blocking.
    pub fn pending(&mut self) -> Vec<StdoutEvent> {
        let all = self.ready_answers(usize::MAX);
        all.into_iter().map(|(e, _)| e).collect()
    }

    /// [`LineConn::next_event`] for the fuzz pipeline: a line comes with its
    /// decoded value where the transport decoded it already (the in-process
    /// server's thread does).
    pub async fn next_answer(&mut self, wait: Duration) -> Option<(StdoutEvent, Option<Value>)> {
        let e = match self {
            LineConn::Child(c) => c.next_event(wait).await.map(|e| (e, None)),
            LineConn::Memory(m) => m.next_decoded(wait),
        };
        if let Some((StdoutEvent::Line(l), _)) = &e {
            tracing::debug!(target: "mcperr::wire", "← {}", String::from_utf8_lossy(l));
        }
        e
    }

    /// [`LineConn::pending`] for the fuzz pipeline, each line with its
    /// decoded value as [`LineConn::next_answer`] gives it; from a server
    /// thread in process at most `limit` (the rest stay queued), so that the
    /// pipeline feeds it again before the thread runs dry.
    pub fn ready_answers(&mut self, limit: usize) -> Vec<(StdoutEvent, Option<Value>)> {
        let events: Vec<_> = match self {
            LineConn::Child(c) => c.pending().into_iter().map(|e| (e, None)).collect(),
            LineConn::Memory(m) => m.pending_decoded(limit),
        };
        for (e, _) in &events {
            if let StdoutEvent::Line(l) = e {
                tracing::debug!(target: "mcperr::wire", "← {}", String::from_utf8_lossy(l));
            }
        }
        events
    }

    /// The server's stderr.
    pub fn stderr(&self) -> &StderrLog {
        match self {
            LineConn::Child(c) => &c.stderr,
            LineConn::Memory(m) => &m.stderr,
        }
    }

    /// Whether stderr is written with the answer (in process) rather than
    /// through a pipe that may lag behind stdout.
    pub fn stderr_is_synchronous(&self) -> bool {
        matches!(self, LineConn::Memory(_))
    }

    /// How the server ended, waiting up to `wait` for it.
    pub async fn exit_status(&mut self, wait: Duration) -> Option<String> {
        match self {
            LineConn::Child(c) => c.exit_status(wait).await,
            LineConn::Memory(m) => m.exit_status(),
        }
    }

    /// Closes the server's stdin and waits up to `wait` for it to exit: how
    /// it ended, or `None` while it still runs. The connection is spent.
    pub async fn close_stdin(&mut self, wait: Duration) -> Option<String> {
        match self {
            LineConn::Child(c) => {
                c.stdin = None;
                c.exit_status(wait).await
            }
            LineConn::Memory(m) => m.close_stdin(),
        }
    }

    /// The CPU time the server's process group has used so far: a child
    /// on Linux only (the in-process server shares mcperr's).
    pub fn cpu_time(&self) -> Option<Duration> {
        match self {
            LineConn::Child(c) => c.process.cpu_time(),
            LineConn::Memory(_) => None,
        }
    }

    /// Closes the connection (reaps the child and its process group).
    pub async fn close(self) {
        if let LineConn::Child(c) = self {
            // The reader keeps reading while the server exits.
            let ChildLines {
                process,
                stdin,
                events,
                ..
            } = *c;
            drop(stdin);
            process.close().await;
            drop(events);
        }
    }
}

/// A child's pipes, framed: lines written to its stdin, its stdout read by
/// a task of its own into [`StdoutEvent`]s (a line over the cap is reported,
/// not kept), its stderr read by another into a [`StderrLog`].
pub struct ChildLines {
    process: ChildProcess,
    stdin: Option<ChildStdin>,
    events: mpsc::Receiver<StdoutEvent>,
    eof: bool,
    stderr: StderrLog,
    /// The task reading stderr into `stderr`, until its end of file.
    stderr_reader: Option<tokio::task::JoinHandle<()>>,
}

/// How long, once the server exited, its stderr is read on to its end (a
/// process it started may hold the pipe open).
const STDERR_DRAIN: Duration = Duration::from_millis(250);

impl ChildLines {
    /// Starts the server and its readers. The error names the command and
    /// the OS reason.
    pub fn spawn(target: &StdioTarget) -> Result<ChildLines, super::ConnectError> {
        let (process, pipes) = ChildProcess::spawn(target)?;
        // Bounded: a server that floods stdout is slowed down by its own pipe
        // instead of growing mcperr's memory.
        let (tx, events) = mpsc::channel(1024);
        let (stdout, max_line) = (pipes.stdout, target.max_line);
        tokio::spawn(async move {
            let mut reader = BufReader::with_capacity(64 * 1024, stdout);
            let mut decoder = LineDecoder::new(max_line);
            while let Ok(buf) = reader.fill_buf().await {
                if buf.is_empty() {
                    if let Some(last) = decoder.finish() {
                        let _ = tx.send(last).await;
                    }
                    break;
                }
                let (consumed, event) = decoder.push(buf);
                reader.consume(consumed);
                if let Some(event) = event {
                    if tx.send(event).await.is_err() {
                        return;
                    }
                }
            }
            let _ = tx.send(StdoutEvent::Eof).await;
        });
        let stderr = StderrLog::default();
        let (sink, mut pipe) = (stderr.clone(), pipes.stderr);
        let stderr_reader = tokio::spawn(async move {
            let mut buf = vec![0u8; 16 * 1024];
            while let Ok(n) = pipe.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                sink.push(&buf[..n]);
            }
        });
        Ok(ChildLines {
            process,
            stdin: pipes.stdin,
            events,
            eof: false,
            stderr,
            stderr_reader: Some(stderr_reader),
        })
    }

    /// Writes one line (a newline is appended). A closed stdin is not an
    /// error here: the death shows up as EOF on stdout.
    async fn send_line(&mut self, line: &[u8]) {
        if let Some(stdin) = self.stdin.as_mut() {
            let mut buf = Vec::with_capacity(line.len() + 1);
            buf.extend_from_slice(line);
            buf.push(b'\n');
            if stdin.write_all(&buf).await.is_err() || stdin.flush().await.is_err() {
                self.stdin = None;
            }
        }
    }

    /// The next stdout event, or `None` after `wait` without one.
    async fn next_event(&mut self, wait: Duration) -> Option<StdoutEvent> {
        if self.eof {
            return Some(StdoutEvent::Eof);
        }
        match tokio::time::timeout(wait, self.events.recv()).await {
            Ok(Some(StdoutEvent::Eof)) | Ok(None) => {
                self.eof = true;
                Some(StdoutEvent::Eof)
            }
            Ok(Some(e)) => Some(e),
            Err(_) => None,
        }
    }

    /// Events already waiting, without blocking.
    fn pending(&mut self) -> Vec<StdoutEvent> {
        let mut out = Vec::new();
        while let Ok(e) = self.events.try_recv() {
            if e == StdoutEvent::Eof {
                self.eof = true;
            }
            out.push(e);
        }
        out
    }

    /// How the process ended, waiting up to `wait` for it. What it wrote to
    /// stderr before it exited is read to the end, so a report of its death
    /// carries its last words (a loaded machine may not have run the reader
    /// yet).
    async fn exit_status(&mut self, wait: Duration) -> Option<String> {
        let status = self.process.exit_status(wait).await?;
        if let Some(mut reader) = self.stderr_reader.take() {
            if tokio::time::timeout(STDERR_DRAIN, &mut reader)
                .await
                .is_err()
            {
                self.stderr_reader = Some(reader);
            }
        }
        Some(status)
    }
}
