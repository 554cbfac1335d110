//! The stdio transport's process: a child started in its own process
//! group, which is killed and reaped when it closes or is dropped (and by
//! [`kill_all_servers`] when a signal stops mcperr). Its pipes go to the
//! line connection ([`super::lines`]), which frames and reads them.

use std::process::Stdio;
use std::sync::Mutex;
use std::time::Duration;

use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};

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

/// A running stdio server's process.
pub struct ChildProcess {
    child: Child,
    pgid: Option<i32>,
}

/// The pipes of a child just started, for the line connection.
pub struct ChildPipes {
    /// Its stdin.
    pub stdin: Option<ChildStdin>,
    /// Its stdout.
    pub stdout: ChildStdout,
    /// Its stderr.
    pub stderr: ChildStderr,
}

impl ChildProcess {
    /// Starts the server. The error names the command and the OS reason.
    pub fn spawn(target: &StdioTarget) -> Result<(ChildProcess, ChildPipes), super::ConnectError> {
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
        let pipes = ChildPipes {
            stdin: child.stdin.take(),
            stdout: child.stdout.take().expect("piped stdout"),
            stderr: child.stderr.take().expect("piped stderr"),
        };
        Ok((ChildProcess { child, pgid }, pipes))
    }

    /// How the process ended ("exited with code 1"), waiting up to `wait`
    /// for it; `None` while it still runs.
    pub async fn exit_status(&mut self, wait: Duration) -> Option<String> {
        match tokio::time::timeout(wait, self.child.wait()).await {
            Ok(Ok(status)) => Some(describe_status(status)),
            _ => None,
        }
    }

    /// The CPU time the server's process group has used so far
    /// ([`super::cpu::group_cpu_time`]).
    pub fn cpu_time(&self) -> Option<Duration> {
        super::cpu::group_cpu_time(self.pgid?)
    }

    /// Gives the server, whose stdin the caller has closed, [`CLOSE_GRACE`]
    /// to exit, then kills its process group and reaps it.
    pub async fn close(mut self) {
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

impl Drop for ChildProcess {
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
