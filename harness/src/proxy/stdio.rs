//! The proxy over stdio: a transparent man-in-the-middle between a
//! host and a server it would launch itself. Every byte the host writes
//! goes to the server's stdin and every byte the server writes to its
//! stdout goes to the host, unchanged, in order, as soon as it is read;
//! the server's stderr is the proxy's own (the host sees the server's logs
//! where it always did). A copy of each complete line goes to the
//! [`Observer`], which judges the server's answers. The two directions run
//! as independent futures, so a server that stops reading can never stop
//! its answers from reaching the host (nor the other way round).

use std::cell::RefCell;
use std::process::Stdio;
use std::time::{Duration, Instant};

use mcperr_core::proxy::Observer;
use mcperr_wire::lines::{LineDecoder, StdoutEvent};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::process::Command;
use tokio::sync::Notify;

use crate::transport::stdio::{describe_status, kill_process_group};

/// What to launch and how long to wait for it.
#[derive(Debug, Clone)]
pub struct ProxySettings {
    /// The server's program.
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// The longest line judged (longer ones are still forwarded whole).
    pub max_line: usize,
    /// How long the server may take to exit once the host has closed its
    /// stdin, before its process group is killed.
    pub exit_grace: Duration,
}

/// How a relayed session ended.
pub struct Relayed {
    /// The observer, with everything it saw.
    pub observer: Observer,
    /// How the server ended ("exited with code 0", "killed by signal 9").
    pub server_exit: String,
    /// Whether the server ended before the host closed its side.
    pub server_left_first: bool,
    /// Bytes forwarded host → server and server → host.
    pub bytes: (u64, u64),
}

/// The server could not be started.
#[derive(Debug, thiserror::Error)]
#[error("could not start `{command}`: {reason}")]
pub struct SpawnError {
    /// The command line.
    pub command: String,
    /// The OS's reason.
    pub reason: std::io::Error,
}

/// Splits `bytes` into complete lines for the observer (a line longer than
/// the cap is skipped: it was forwarded, it is not judged here).
fn lines(decoder: &mut LineDecoder, mut bytes: &[u8], mut each: impl FnMut(&[u8])) {
    while !bytes.is_empty() {
        let (used, event) = decoder.push(bytes);
        bytes = &bytes[used..];
        if let Some(StdoutEvent::Line(line)) = event {
            each(&line);
        }
    }
}

/// Relays between the host (`host_in`, `host_out`) and the server until
/// either side ends or `stop` resolves (a signal), feeding `observer`.
pub async fn relay<R, W>(
    settings: &ProxySettings,
    host_in: R,
    host_out: W,
    observer: Observer,
    stop: impl std::future::Future<Output = ()>,
) -> Result<Relayed, SpawnError>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut child = spawn(settings)?;
    let pgid = child.id().map(|p| p as i32);
    let server_in = child.stdin.take().expect("piped stdin");
    // Kept here, not moved into the relay: it stays open until the
    // server has had its exit grace, as it would under a host.
    let mut server_out = child.stdout.take().expect("piped stdout");
    let observer = RefCell::new(observer);
    let (host_done, server_done) = (Notify::new(), Notify::new());
    let server_left_first = std::cell::Cell::new(false);
    // Counted as the bytes pass, not returned at the end: a signal that
    // stops the relay mid-way must not make the summary say 0 bytes.
    let (to_server, to_host) = (std::cell::Cell::new(0u64), std::cell::Cell::new(0u64));
    let up = async {
        host_to_server(
            settings,
            host_in,
            server_in,
            &observer,
            &to_server,
            &server_done,
        )
        .await;
        host_done.notify_one();
    };
    let down = async {
        let kill = || {
            if let Some(g) = pgid {
                kill_process_group(g);
            }
        };
        let left = server_to_host(
            settings,
            &mut server_out,
            host_out,
            &observer,
            &to_host,
            &host_done,
            kill,
        )
        .await;
        server_left_first.set(left);
        server_done.notify_one();
    };

    let relayed = async { tokio::join!(up, down) };
    tokio::select! {
        _ = relayed => {}
        _ = stop => {}
    };
    kill_if_running(&mut child, pgid, settings.exit_grace).await;
    let server_exit = match child.try_wait() {
        Ok(Some(status)) => describe_status(status),
        _ => "still running when the proxy stopped (killed)".to_string(),
    };
    Ok(Relayed {
        observer: observer.into_inner(),
        server_exit,
        server_left_first: server_left_first.get(),
        bytes: (to_server.get(), to_host.get()),
    })
}

/// The server's process, in a process group of its own (so that its
/// grandchildren are reaped with it), its stdin and stdout piped.
fn spawn(settings: &ProxySettings) -> Result<tokio::process::Child, SpawnError> {
    let mut cmd = Command::new(&settings.program);
    cmd.args(&settings.args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true);
    #[cfg(unix)]
    cmd.process_group(0);
    cmd.spawn().map_err(|reason| SpawnError {
        command: std::iter::once(settings.program.as_str())
            .chain(settings.args.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" "),
        reason,
    })
}

/// The host's bytes to the server, each line observed, until the host's
/// EOF or the server's end; then EOF to the server, as the host's own EOF
/// would have been.
async fn host_to_server<R: AsyncRead + Unpin>(
    settings: &ProxySettings,
    mut host_in: R,
    mut server_in: tokio::process::ChildStdin,
    observer: &RefCell<Observer>,
    to_server: &std::cell::Cell<u64>,
    server_done: &Notify,
) {
    let mut buf = vec![0u8; 64 * 1024];
    let mut decoder = LineDecoder::new(settings.max_line);
    loop {
        let n = tokio::select! {
            r = host_in.read(&mut buf) => r.unwrap_or(0),
            _ = server_done.notified() => break,
        };
        if n == 0 {
            break;
        }
        let chunk = &buf[..n];
        // Counted and observed before the write, which may yield: a
        // signal then still finds this chunk in the summary and judged.
        to_server.set(to_server.get() + n as u64);
        let now = Instant::now();
        lines(&mut decoder, chunk, |l| {
            observer.borrow_mut().from_host(l, now)
        });
        if server_in.write_all(chunk).await.is_err() || server_in.flush().await.is_err() {
            break; // the server closed its stdin: its end shows on stdout
        }
    }
}

/// The server's bytes to the host, each line observed, until the server's
/// stdout ends; once the host has left, the server gets the exit grace and
/// is then killed. Whether the server left first.
async fn server_to_host<W: AsyncWrite + Unpin>(
    settings: &ProxySettings,
    server_out: &mut tokio::process::ChildStdout,
    mut host_out: W,
    observer: &RefCell<Observer>,
    to_host: &std::cell::Cell<u64>,
    host_done: &Notify,
    kill: impl Fn(),
) -> bool {
    let mut buf = vec![0u8; 64 * 1024];
    let mut decoder = LineDecoder::new(settings.max_line);
    let mut host_left = false;
    let mut grace: Option<tokio::time::Instant> = None;
    loop {
        let deadline =
            grace.unwrap_or_else(|| tokio::time::Instant::now() + Duration::from_secs(86_400));
        let n = tokio::select! {
            r = server_out.read(&mut buf) => r.unwrap_or(0),
            _ = host_done.notified(), if grace.is_none() => {
                grace = Some(tokio::time::Instant::now() + settings.exit_grace);
                continue;
            }
            _ = tokio::time::sleep_until(deadline), if grace.is_some() => {
                kill(); // it did not exit after its stdin closed
                continue;
            }
        };
        if n == 0 {
            break;
        }
        let chunk = &buf[..n];
        // Counted and observed before the write, as above.
        to_host.set(to_host.get() + n as u64);
        let now = Instant::now();
        lines(&mut decoder, chunk, |l| {
            observer.borrow_mut().from_server(l, now)
        });
        if !host_left
            && (host_out.write_all(chunk).await.is_err() || host_out.flush().await.is_err())
        {
            host_left = true; // the host is gone; the answers are still judged
        }
    }
    grace.is_none()
}

/// Waits a moment for the server to exit, then kills its process group
/// (grandchildren included) and reaps it.
async fn kill_if_running(child: &mut tokio::process::Child, pgid: Option<i32>, grace: Duration) {
    if tokio::time::timeout(grace, child.wait()).await.is_err() {
        if let Some(g) = pgid {
            kill_process_group(g);
        }
        let _ = child.start_kill();
        let _ = tokio::time::timeout(Duration::from_secs(5), child.wait()).await;
    } else if let Some(g) = pgid {
        // Whatever the server left running in its group goes with it.
        kill_process_group(g);
    }
}
