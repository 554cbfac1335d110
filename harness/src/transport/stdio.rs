//! The stdio transport: a child process, newline framing, stderr kept.
//!
//! stdout and stderr are read concurrently by their own tasks; stdout lines
//! arrive as [`StdoutEvent`]s (a line over the cap is reported, not kept);
//! stderr is kept in a bounded buffer whose absolute offsets let the oracle
//! read just what a case logged. The child runs in its own process group,
//! which is killed and reaped when the connection closes or is dropped.

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::mpsc;

/// How to start a stdio server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StdioTarget {
    /// The program.
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Its working directory and environment.
    pub options: super::StdioOptions,
    /// Longest stdout line accepted.
    pub max_line: usize,
}

impl StdioTarget {
    /// The command line, for reports.
    pub fn display(&self) -> String {
        std::iter::once(self.program.as_str())
            .chain(self.args.iter().map(String::as_str))
            .map(|a| {
                if a.contains(' ') || a.is_empty() {
                    format!("{a:?}")
                } else {
                    a.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

use mcperr_wire::lines::LineDecoder;
pub use mcperr_wire::lines::StdoutEvent;

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

/// A running stdio server.
pub struct StdioConnection {
    child: Child,
    pgid: Option<i32>,
    stdin: Option<ChildStdin>,
    events: mpsc::Receiver<StdoutEvent>,
    /// The server's stderr.
    pub stderr: StderrLog,
    /// The task reading stderr into `stderr`, until its end of file.
    stderr_reader: Option<tokio::task::JoinHandle<()>>,
    eof: bool,
}

/// How long, once the server exited, its stderr is read on to its end (a
/// process it started may hold the pipe open).
const STDERR_DRAIN: Duration = Duration::from_millis(250);

/// How a child process ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExitInfo(pub String);

impl StdioConnection {
    /// Starts the server. The error names the command and the OS reason.
    pub fn spawn(target: &StdioTarget) -> Result<StdioConnection, super::ConnectError> {
        let mut cmd = Command::new(&target.program);
        cmd.args(&target.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        #[cfg(unix)]
        cmd.process_group(0);
        // mcperr runs without transparent huge pages (main.rs), a setting a
        // child inherits: the server under test gets the machine's default.
        #[cfg(target_os = "linux")]
        // SAFETY: between fork and exec only prctl, which is async-signal-safe, runs.
        unsafe {
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_THP_DISABLE, 0, 0, 0, 0);
                Ok(())
            });
        }
        if let Some(dir) = &target.options.cwd {
            cmd.current_dir(dir);
        }
        cmd.envs(target.options.vars());
        // Spawned and registered under the registry's lock, and never once
        // shutdown has begun: a server must not start between a signal's kill
        // and mcperr's exit (the run would restart the one just killed).
        let mut registry = live_groups().lock().unwrap_or_else(|e| e.into_inner());
        if SHUTTING_DOWN.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(super::ConnectError("mcperr is shutting down".to_string()));
        }
        let mut child = cmd.spawn().map_err(|e| {
            super::ConnectError(format!("could not start `{}`: {e}", target.display()))
        })?;
        let pgid = child.id().map(|p| p as i32);
        if let Some(g) = pgid {
            registry.insert(g);
        }
        drop(registry);
        let stdout = child.stdout.take().expect("piped stdout");
        let stderr_pipe = child.stderr.take().expect("piped stderr");
        // Bounded: a server that floods stdout is slowed down by its own pipe
        // instead of growing mcperr's memory.
        let (tx, events) = mpsc::channel(1024);
        let max_line = target.max_line;
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
        let sink = stderr.clone();
        let stderr_reader = tokio::spawn(async move {
            let mut pipe = stderr_pipe;
            let mut buf = vec![0u8; 16 * 1024];
            while let Ok(n) = pipe.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                sink.push(&buf[..n]);
            }
        });
        Ok(StdioConnection {
            stdin: child.stdin.take(),
            child,
            pgid,
            events,
            stderr,
            stderr_reader: Some(stderr_reader),
            eof: false,
        })
    }

    /// Writes one line (a newline is appended). A closed stdin is not an
    /// error here: the death shows up as EOF on stdout.
    pub async fn send_line(&mut self, line: &[u8]) {
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
    pub async fn next_event(&mut self, wait: Duration) -> Option<StdoutEvent> {
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
    pub fn pending(&mut self) -> Vec<StdoutEvent> {
        let mut out = Vec::new();
        while let Ok(e) = self.events.try_recv() {
            if e == StdoutEvent::Eof {
                self.eof = true;
            }
            out.push(e);
        }
        out
    }

    /// How the process ended, waiting up to `wait` for it.
    pub async fn exit_status(&mut self, wait: Duration) -> Option<ExitInfo> {
        match tokio::time::timeout(wait, self.child.wait()).await {
            Ok(Ok(status)) => {
                // What it wrote before it exited is read to the end, so a
                // report of its death carries its last words (a loaded
                // machine may not have run the reader yet).
                if let Some(mut reader) = self.stderr_reader.take() {
                    if tokio::time::timeout(STDERR_DRAIN, &mut reader)
                        .await
                        .is_err()
                    {
                        self.stderr_reader = Some(reader);
                    }
                }
                Some(ExitInfo(describe_status(status)))
            }
            _ => None,
        }
    }

    /// Closes the server's stdin (end of file), leaving the process be.
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// The CPU time the server's process group has used so far
    /// ([`super::cpu::group_cpu_time`]).
    pub fn cpu_time(&self) -> Option<Duration> {
        super::cpu::group_cpu_time(self.pgid?)
    }

    /// Closes stdin, gives the server [`CLOSE_GRACE`] to exit, then kills
    /// its process group and reaps it.
    pub async fn close(mut self) {
        self.stdin = None;
        if tokio::time::timeout(CLOSE_GRACE, self.child.wait())
            .await
            .is_err()
        {
            self.kill();
            let _ = tokio::time::timeout(Duration::from_secs(5), self.child.wait()).await;
        }
        self.kill_group();
    }

    fn kill(&mut self) {
        self.kill_group();
        let _ = self.child.start_kill();
    }

    fn kill_group(&self) {
        #[cfg(unix)]
        if let Some(pgid) = self.pgid {
            live_groups()
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&pgid);
            kill_process_group(pgid);
        }
    }
}

/// How long a server whose stdin was closed may take to exit before its
/// process group is killed.
pub const CLOSE_GRACE: Duration = Duration::from_millis(500);

/// Kills a process group mcperr started (a child spawned with
/// `process_group(0)`: its group id is its pid), grandchildren included.
pub(crate) fn kill_process_group(pgid: i32) {
    #[cfg(unix)]
    // SAFETY: killpg only sends a signal; the group is a child's own.
    unsafe {
        libc::killpg(pgid, libc::SIGKILL);
    }
}

impl Drop for StdioConnection {
    fn drop(&mut self) {
        self.kill_group();
    }
}

fn live_groups() -> &'static Mutex<std::collections::HashSet<i32>> {
    static GROUPS: std::sync::OnceLock<Mutex<std::collections::HashSet<i32>>> =
        std::sync::OnceLock::new();
    GROUPS.get_or_init(Default::default)
}

/// Kills the process group of every server still running. For signal
/// handlers: mcperr interrupted must not leave servers behind.
pub fn kill_all_servers() {
    let registry = live_groups().lock().unwrap_or_else(|e| e.into_inner());
    SHUTTING_DOWN.store(true, std::sync::atomic::Ordering::SeqCst);
    let mut groups: std::collections::HashSet<i32> = registry.iter().copied().collect();
    // Belt and braces: every direct child's own process group too.
    groups.extend(child_groups());
    for pgid in groups {
        #[cfg(unix)]
        // SAFETY: killpg only sends a signal to a group mcperr started.
        unsafe {
            libc::killpg(pgid, libc::SIGKILL);
        }
    }
}

/// Set once a signal has stopped the servers: no new server may start.
static SHUTTING_DOWN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The process groups led by this process's direct children (Linux `/proc`),
/// excluding mcperr's own group.
fn child_groups() -> Vec<i32> {
    let me = std::process::id() as i32;
    // SAFETY: getpgrp has no preconditions.
    #[cfg(unix)]
    let own = unsafe { libc::getpgrp() };
    #[cfg(not(unix))]
    let own = -1;
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return vec![];
    };
    entries
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
        .filter_map(|stat| {
            // Fields after the command name, which is in parentheses: state ppid pgrp …
            let rest = &stat[stat.rfind(')')? + 1..];
            let mut fields = rest.split_whitespace().skip(1);
            let ppid: i32 = fields.next()?.parse().ok()?;
            let pgrp: i32 = fields.next()?.parse().ok()?;
            (ppid == me && pgrp != own && pgrp > 1).then_some(pgrp)
        })
        .collect()
}

/// How a child ended, for people ("exited with code 1", "killed by signal 9").
pub(crate) fn describe_status(status: std::process::ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = status.signal() {
            return format!("killed by signal {sig}");
        }
    }
    match status.code() {
        Some(c) => format!("exited with code {c}"),
        None => "exited".to_string(),
    }
}
