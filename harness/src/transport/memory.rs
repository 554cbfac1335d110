//! The in-process stdio transport: the reference server's pure stdio edge
//! driven directly, no child process. A line in gives the bytes the server
//! would have written to stdout and stderr, so every case file and every
//! fault (log lines on stdout, a process that exits, garbage that kills it)
//! can be judged in tests in microseconds.
//!
//! Two ways to drive the edge: inline (the line is answered inside
//! [`MemoryLines::send_line`]: a run is exactly repeatable and nothing ever
//! answers later) and on a server thread of its own ([`MemoryLines::threaded`],
//! for fuzzing on a spare core: the server works while the fuzzer generates
//! and judges, as a server process would). Either way a line's stderr is
//! taken in before its stdout, and a line whose answer has not come back is
//! waited for, never lost, so "the server wrote nothing more" still means
//! exactly that. A slow tool's held-back reply (the edge's paced work) is
//! written as time passes: inline on a clock of the connection's own that
//! moves only while the caller waits for output (so a run stays exactly
//! repeatable and never sleeps), on the server thread by the wall clock.
//! The server thread also decodes each line it wrote (as
//! [`mcperr_wire::text::decode`] does, which is all a reader of the bytes
//! would do first), so the fuzzer gets the value with the bytes.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use mcperr_reference::stdio::{LineOutput, StdioEdge};
use mcperr_reference::Handler;
use serde_json::Value;

use super::stderr::StderrLog;
use mcperr_wire::lines::StdoutEvent;

/// One in-process "server process": a handler and its connection's edge.
pub struct MemoryLines {
    server: Server,
    /// What the server wrote, each line with its decoded value when the
    /// server thread decoded it.
    queue: VecDeque<(StdoutEvent, Option<Value>)>,
    /// The server's stderr.
    pub stderr: StderrLog,
    exited: bool,
}

/// Where the edge runs.
enum Server {
    Inline {
        handler: Arc<Handler>,
        edge: StdioEdge,
        /// The connection's own clock: it moves to the next due step of
        /// held-back work when the caller waits for output past it.
        clock: Instant,
    },
    Thread(ServerThread),
}

/// The edge on a thread of its own: lines go in batches, each line's output
/// comes back on its own (an empty one for a blank line), in order.
struct ServerThread {
    lines: Option<mpsc::Sender<Vec<u8>>>,
    /// In a mutex only so that a connection is `Sync`; it is reached with
    /// `get_mut`, never locked.
    outputs: Mutex<mpsc::Receiver<Reply>>,
    /// Lines sent whose output has not come back yet.
    outstanding: usize,
    /// The edge holds work back (a slow tool): output may come unasked.
    working: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    /// The server keeps running at the end of its input (`eof-ignored`).
    eof_ignored: bool,
}

/// How long a line whose output has not come back is waited for when the
/// caller gives no wait of its own: the in-process server never blocks, so
/// only a thread that died could take this long.
const SETTLE: Duration = Duration::from_secs(10);

impl MemoryLines {
    /// A fresh connection to `handler`, answered inline. A restarted
    /// "process" gets a fresh connection but keeps the run's handler, so
    /// fixture state (the count of `limited` runs) survives a restart, which
    /// no case relies on.
    pub fn new(handler: Arc<Handler>) -> MemoryLines {
        MemoryLines::with(Server::Inline {
            handler,
            edge: StdioEdge::new(),
            clock: Instant::now(),
        })
    }

    /// A fresh connection to `handler` whose edge runs on a thread of its
    /// own (ended and joined when this is dropped).
    pub fn threaded(handler: Arc<Handler>) -> MemoryLines {
        let eof_ignored = !handler.exits_at_eof();
        let (line_tx, line_rx) = mpsc::channel::<Vec<u8>>();
        let (out_tx, out_rx) = mpsc::channel();
        let working = Arc::new(AtomicBool::new(false));
        let busy = working.clone();
        let thread = std::thread::Builder::new()
            .name("mcperr-reference".into())
            .spawn(move || {
                let mut edge = StdioEdge::new();
                let mut exited = false;
                loop {
                    let batch = match edge.next_due() {
                        None => next_batch(&line_rx),
                        Some(due) => {
                            match line_rx
                                .recv_timeout(due.saturating_duration_since(Instant::now()))
                            {
                                Ok(batch) => Some(batch),
                                Err(mpsc::RecvTimeoutError::Timeout) => {
                                    let out = edge.due(&handler, Instant::now());
                                    busy.store(edge.next_due().is_some(), Ordering::Release);
                                    let late = Reply {
                                        late: true,
                                        ..Reply::of(out, true)
                                    };
                                    if exited || out_tx.send(late).is_ok() {
                                        continue;
                                    }
                                    return;
                                }
                                Err(mpsc::RecvTimeoutError::Disconnected) => None,
                            }
                        }
                    };
                    let Some(batch) = batch else { return };
                    for line in batch.split(|b| *b == b'\n') {
                        let out = if exited {
                            LineOutput::default()
                        } else {
                            edge.feed(&handler, line)
                        };
                        exited |= out.exit;
                        busy.store(edge.next_due().is_some(), Ordering::Release);
                        if out_tx.send(Reply::of(out, true)).is_err() {
                            return;
                        }
                    }
                }
            })
            .expect("a thread for the in-process server");
        MemoryLines::with(Server::Thread(ServerThread {
            lines: Some(line_tx),
            outputs: Mutex::new(out_rx),
            outstanding: 0,
            working,
            thread: Some(thread),
            eof_ignored,
        }))
    }

    fn with(server: Server) -> MemoryLines {
        MemoryLines {
            server,
            queue: VecDeque::new(),
            stderr: StderrLog::default(),
            exited: false,
        }
    }

    /// Feeds one line (a raw line with newlines in it is several, as on a
    /// pipe), queueing what the server wrote (inline) or handing it to the
    /// server thread.
    pub fn send_line(&mut self, bytes: &[u8]) {
        match &mut self.server {
            Server::Inline {
                handler,
                edge,
                clock,
            } => {
                for line in bytes.split(|b| *b == b'\n') {
                    if self.exited {
                        return;
                    }
                    let out = Reply::of(edge.feed_at(handler, line, *clock), false);
                    take(&mut self.queue, &mut self.stderr, &mut self.exited, out);
                }
            }
            Server::Thread(t) => {
                if let Some(tx) = &t.lines {
                    if tx.send(bytes.to_vec()).is_ok() {
                        t.outstanding += bytes.split(|b| *b == b'\n').count();
                    }
                }
            }
        }
    }

    /// Takes in one output from the server thread, waiting up to `wait`;
    /// false when none came (or none is due).
    fn receive(&mut self, wait: Duration) -> bool {
        let t = match &mut self.server {
            Server::Thread(t) => t,
            Server::Inline {
                handler,
                edge,
                clock,
            } => {
                // Held-back work due within the wait: the clock moves to it.
                let Some(due) = edge.next_due().filter(|d| *d <= *clock + wait) else {
                    return false;
                };
                *clock = due.max(*clock);
                let out = Reply::of(edge.due(handler, *clock), false);
                take(&mut self.queue, &mut self.stderr, &mut self.exited, out);
                return true;
            }
        };
        if t.outstanding == 0 && !t.working.load(Ordering::Acquire) {
            return false;
        }
        let outputs = t.outputs.get_mut().unwrap_or_else(|e| e.into_inner());
        match outputs.recv_timeout(wait) {
            Ok(out) => {
                if !out.late {
                    t.outstanding = t.outstanding.saturating_sub(1);
                }
                take(&mut self.queue, &mut self.stderr, &mut self.exited, out);
                true
            }
            Err(mpsc::RecvTimeoutError::Timeout) => false,
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                // The thread is gone (it panicked): as a process that died.
                t.outstanding = 0;
                if !self.exited {
                    self.exited = true;
                    self.queue.push_back((StdoutEvent::Eof, None));
                }
                false
            }
        }
    }

    /// Takes in every output the server thread has ready, without waiting.
    fn receive_ready(&mut self) {
        while self.receive(Duration::ZERO) {}
    }

    /// The next event, or `None` when the server wrote nothing more: an
    /// inline server answers at once or never; a server thread's line not
    /// answered yet is waited for up to `wait`.
    pub fn next_event(&mut self, wait: Duration) -> Option<StdoutEvent> {
        self.next_decoded(wait).map(|(e, _)| e)
    }

    /// [`MemoryLines::next_event`], a line with its decoded value when the
    /// server thread decoded it.
    pub fn next_decoded(&mut self, wait: Duration) -> Option<(StdoutEvent, Option<Value>)> {
        loop {
            match self.queue.pop_front() {
                Some((StdoutEvent::Eof, _)) => {
                    self.queue.push_front((StdoutEvent::Eof, None));
                    return Some((StdoutEvent::Eof, None));
                }
                Some(e) => return Some(e),
                None if self.receive(wait) => {}
                None => return None,
            }
        }
    }

    /// At most `limit` of the events already written, without waiting, each
    /// line with its decoded value when the server thread decoded it.
    pub fn pending_decoded(&mut self, limit: usize) -> Vec<(StdoutEvent, Option<Value>)> {
        self.receive_ready();
        let mut out = Vec::new();
        while out.len() < limit {
            let Some(e) = self.queue.pop_front() else {
                break;
            };
            if e.0 == StdoutEvent::Eof {
                self.queue.push_front(e);
                break;
            }
            out.push(e);
        }
        out
    }

    /// Ends the input as a closed stdin does: the reference's stdio edge
    /// finishes the work still running, then exits unless its fault ignores
    /// the end of input. How it ended, or `None` while it "runs".
    pub fn close_stdin(&mut self) -> Option<String> {
        match &mut self.server {
            Server::Inline {
                handler,
                edge,
                clock,
            } => {
                while let Some(due) = edge.next_due() {
                    *clock = due.max(*clock);
                    let out = Reply::of(edge.due(handler, *clock), false);
                    take(&mut self.queue, &mut self.stderr, &mut self.exited, out);
                }
                if !handler.exits_at_eof() {
                    return None;
                }
            }
            Server::Thread(t) if t.eof_ignored => return None,
            Server::Thread(t) => {
                t.lines = None;
                while self.receive(SETTLE) {}
            }
        }
        if !self.exited {
            self.exited = true;
            self.queue.push_back((StdoutEvent::Eof, None));
        }
        Some("exited at the end of its input".into())
    }

    /// How the "process" ended, if it did (a server thread first answers
    /// every line sent).
    pub fn exit_status(&mut self) -> Option<String> {
        while self.receive(SETTLE) {}
        self.exited.then(|| "exited with code 1".to_string())
    }
}

/// How long the server thread looks for new lines before it sleeps: the
/// fuzzer sends every few microseconds, and a sleeping thread costs each
/// send a system call to wake it (the thread has a core of its own,
/// [`crate::fuzz`] gives it one only then).
const SPIN: Duration = Duration::from_micros(50);

/// The next batch of lines, or `None` when the connection is closed.
fn next_batch(lines: &mpsc::Receiver<Vec<u8>>) -> Option<Vec<u8>> {
    let start = std::time::Instant::now();
    loop {
        match lines.try_recv() {
            Ok(batch) => return Some(batch),
            Err(mpsc::TryRecvError::Disconnected) => return None,
            Err(mpsc::TryRecvError::Empty) if start.elapsed() < SPIN => std::hint::spin_loop(),
            Err(mpsc::TryRecvError::Empty) => return lines.recv().ok(),
        }
    }
}

/// One input line's output as the connection takes it in.
struct Reply {
    /// Written by held-back work, not in answer to a line.
    late: bool,
    stderr: Vec<u8>,
    /// The stdout lines (blank ones dropped), each decoded when asked.
    lines: Vec<(Vec<u8>, Option<Value>)>,
    exit: bool,
}

impl Reply {
    fn of(out: LineOutput, decode: bool) -> Reply {
        let lines = out
            .stdout
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| {
                let value = decode.then(|| mcperr_wire::text::decode(l).ok()).flatten();
                (l.to_vec(), value)
            })
            .collect();
        Reply {
            late: false,
            stderr: out.stderr,
            lines,
            exit: out.exit,
        }
    }
}

/// Queues one line's output: its stderr first, then its stdout lines, then
/// the end of the "process" if the line ended it.
fn take(
    queue: &mut VecDeque<(StdoutEvent, Option<Value>)>,
    stderr: &mut StderrLog,
    exited: &mut bool,
    out: Reply,
) {
    if *exited {
        return;
    }
    stderr.push(&out.stderr);
    for (line, value) in out.lines {
        queue.push_back((StdoutEvent::Line(line), value));
    }
    if out.exit {
        *exited = true;
        queue.push_back((StdoutEvent::Eof, None));
    }
}

impl Drop for MemoryLines {
    fn drop(&mut self) {
        if let Server::Thread(t) = &mut self.server {
            t.lines = None; // the thread's loop ends with its input
            if let Some(thread) = t.thread.take() {
                let _ = thread.join();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcperr_reference::Fault;

    const WAIT: Duration = Duration::from_secs(5);

    /// A session's lines in one batch, as the fuzz pipeline sends them:
    /// a handshake, a ping, a line that is not JSON, a blank line, an
    /// unknown method, and a ping after it.
    const BATCH: &str = concat!(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#,
        "\nnot json\n\n",
        r#"{"jsonrpc":"2.0","id":3,"method":"no/such/method"}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":"four","method":"ping"}"#,
    );

    /// Every event until the server has nothing more (or ended), and its stderr.
    fn drain(mut conn: MemoryLines) -> (Vec<StdoutEvent>, String) {
        conn.send_line(BATCH.as_bytes());
        let mut events = Vec::new();
        while let Some(e) = conn.next_event(WAIT) {
            let end = e == StdoutEvent::Eof;
            events.push(e);
            if end {
                break;
            }
        }
        assert_eq!(
            conn.exit_status().is_some(),
            events.last() == Some(&StdoutEvent::Eof)
        );
        (events, conn.stderr.since(0))
    }

    #[test]
    fn a_server_thread_writes_exactly_what_the_inline_server_writes() {
        for fault in [None, Some(Fault::LogOnStdout), Some(Fault::ExitAfterError)] {
            let inline = drain(MemoryLines::new(Arc::new(Handler::new(fault))));
            let threaded = drain(MemoryLines::threaded(Arc::new(Handler::new(fault))));
            assert_eq!(threaded, inline, "{fault:?}");
            let lines = inline
                .0
                .iter()
                .filter(|e| matches!(e, StdoutEvent::Line(_)));
            match fault {
                // initialize, ping, the unknown method, the last ping.
                None => assert_eq!(lines.count(), 4),
                // The log line for the input that is not JSON joins them.
                Some(Fault::LogOnStdout) => assert_eq!(lines.count(), 5),
                // The process ends after answering the unknown method.
                _ => {
                    assert_eq!(lines.count(), 3);
                    assert_eq!(inline.0.last(), Some(&StdoutEvent::Eof));
                }
            }
        }
    }

    #[test]
    fn a_server_thread_hands_each_line_over_decoded_and_is_joined_on_drop() {
        let mut conn = MemoryLines::threaded(Arc::new(Handler::new(None)));
        conn.send_line(BATCH.as_bytes());
        let mut decoded = Vec::new();
        while let Some((StdoutEvent::Line(bytes), value)) = conn.next_decoded(WAIT) {
            assert_eq!(
                value.as_ref(),
                Some(&mcperr_wire::text::decode(&bytes).unwrap())
            );
            decoded.push(value.unwrap()["id"].clone());
        }
        assert_eq!(
            decoded,
            [1, 2, 3]
                .map(serde_json::Value::from)
                .into_iter()
                .chain([serde_json::json!("four")])
                .collect::<Vec<_>>()
        );
        // Nothing outstanding: no wait at all, as inline.
        let start = std::time::Instant::now();
        assert_eq!(conn.next_event(WAIT), None);
        assert!(start.elapsed() < WAIT / 2);
        drop(conn); // joins the thread: a hang here fails the test run
    }
}
