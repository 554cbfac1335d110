//! The settings of one run (`RunSettings`: target, timeouts, jobs, canary,
//! pacing), the era to speak, and the error of a server that cannot be set
//! up. Apart from the engine so that connecting (`crate::connect`) and
//! running (`crate::engine`) both build on them without importing each
//! other. An in-process target gets its reference server here, shared by
//! every connection of the run.

use std::sync::Arc;
use std::time::Duration;

use mcperr_core::report::TargetInfo;
use mcperr_protocol::Era;
use mcperr_reference::http_edge::{HttpConfig, HttpEdge};
use mcperr_reference::Handler;

use crate::client::Conn;
use crate::transport::{
    ChildLines, HttpConnection, HttpTarget, InProcess, LineConn, MemoryLines, Target,
};

/// Which era to speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EraChoice {
    /// Try `server/discover`, fall back to `initialize`.
    Auto,
    /// Speak this era only.
    Pinned(Era),
}

/// The server could not be started or would not answer at all (exit code 2),
/// with the rule the failure implicates.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct SetupError {
    /// `J4` (no answer, died) or `J5` (garbage on stdout).
    pub rule: mcperr_model::rules::RuleId,
    /// The server could not be started at all (no era to try instead).
    pub spawn: bool,
    /// Not a failure: the server speaks the era through a version mcperr
    /// does not judge (it negotiated an older one, as the spec allows). Its
    /// report's one case is a skip, not an error.
    pub unjudged: bool,
    /// What happened, what the server printed, and which flag to raise.
    pub message: String,
}

/// Settings of one run.
#[derive(Clone)]
pub struct RunSettings {
    /// How to reach the server.
    pub target: Target,
    /// Per-request timeout.
    pub timeout: Duration,
    /// Timeout of the handshake at start-up (servers may be slow to start).
    pub startup_timeout: Duration,
    /// Parallel server processes.
    pub jobs: usize,
    /// The run's canary.
    pub canary: String,
    /// How long the first timed-out request of a method is waited for
    /// while the server answers others (`--slow-ms`, [`crate::pace`]).
    pub slow_timeout: Duration,
    /// Methods found hung on any process of this server, shared by all.
    pub hung: crate::pace::HungMethods,
    /// When `--deadline` ends the run: cases after it are not run.
    pub deadline: Option<std::time::Instant>,
    /// Whether an in-process stdio server runs on a thread of its own
    /// (fuzzing with a core to spare) rather than inline (exactly repeatable).
    pub server_thread: bool,
    /// The `x-mcp-header` parameters of the server's tools, shared by
    /// every HTTP connection of the run (learnt at discovery).
    pub mirrored: crate::transport::http::MirroredParams,
    /// The reference server shared by in-process connections of this run.
    memory: Option<Memory>,
}

#[derive(Clone)]
enum Memory {
    Lines(Arc<Handler>),
    Http(Arc<HttpEdge>),
}

impl RunSettings {
    /// Settings for `target`; an in-process target gets its server here.
    pub fn new(
        target: Target,
        timeout: Duration,
        startup_timeout: Duration,
        jobs: usize,
        canary: String,
    ) -> Self {
        let memory = match &target {
            Target::InProcess(p) if p.http => Some(Memory::Http(Arc::new(HttpEdge::new(
                p.fault,
                HttpConfig {
                    sse: p.sse,
                    max_body: 4 << 20,
                    max_sessions: 1024,
                    session_idle: Duration::from_secs(600),
                    allowed_hosts: vec![],
                    log: false,
                    auth: p.auth.then(|| mcperr_reference::auth::AuthConfig {
                        token: crate::transport::IN_PROCESS_TOKEN.into(),
                        limited_token: Some(crate::transport::IN_PROCESS_LIMITED_TOKEN.into()),
                    }),
                },
            )))),
            Target::InProcess(p) => Some(Memory::Lines(Arc::new(Handler::new(p.fault)))),
            _ => None,
        };
        RunSettings {
            target,
            timeout,
            startup_timeout,
            jobs,
            canary,
            slow_timeout: crate::pace::DEFAULT_SLOW,
            hung: Default::default(),
            deadline: None,
            server_thread: false,
            mirrored: Default::default(),
            memory,
        }
    }

    /// The same settings with `--deadline` set.
    pub fn with_deadline(mut self, deadline: Option<std::time::Instant>) -> Self {
        self.deadline = deadline;
        self
    }

    /// The same settings with `--slow-ms` set.
    pub fn with_slow_timeout(mut self, slow: Duration) -> Self {
        self.slow_timeout = slow;
        self
    }

    /// The report's description of the target.
    pub fn target_info(&self, embedded: bool) -> TargetInfo {
        let (kind, command, url) = match &self.target {
            Target::InProcess(_) if embedded => (
                "embedded",
                Some("mcperr reference (embedded reference server, in process)".to_string()),
                None,
            ),
            _ if embedded => (
                "embedded",
                Some("mcperr reference (embedded reference server)".to_string()),
                None,
            ),
            Target::Stdio(s) => ("stdio", Some(s.display()), None),
            Target::Http(h) => ("http", None, Some(h.url.clone())),
            Target::InProcess(_) => ("in-process", Some(self.target.display()), None),
        };
        TargetInfo {
            kind: kind.to_string(),
            command,
            url,
        }
    }

    pub(crate) fn spawn(&self, timeout: Duration) -> Result<Conn, SetupError> {
        let setup = |e: crate::transport::ConnectError| SetupError {
            rule: mcperr_model::rules::RuleId::J4,
            spawn: true,
            unjudged: false,
            message: e.0,
        };
        let conn = match (&self.target, &self.memory) {
            (Target::Stdio(t), _) => Conn::Lines(LineConn::Child(Box::new(
                ChildLines::spawn(t).map_err(setup)?,
            ))),
            (Target::Http(t), _) => Conn::Http(HttpConnection::remote(t, timeout).map_err(setup)?),
            (Target::InProcess(_), Some(Memory::Lines(h))) if self.server_thread => {
                Conn::Lines(LineConn::Memory(MemoryLines::threaded(h.clone())))
            }
            (Target::InProcess(_), Some(Memory::Lines(h))) => {
                Conn::Lines(LineConn::Memory(MemoryLines::new(h.clone())))
            }
            (Target::InProcess(p), Some(Memory::Http(edge))) => Conn::Http(HttpConnection::memory(
                edge.clone(),
                &HttpTarget {
                    url: "in-process://reference/mcp".into(),
                    options: if p.auth {
                        let token = format!("Bearer {}", crate::transport::IN_PROCESS_TOKEN);
                        crate::transport::HttpOptions::with_header("Authorization", &token)
                    } else {
                        Default::default()
                    },
                    max_body: 16 << 20,
                },
            )),
            (Target::InProcess(InProcess { .. }), None) => {
                unreachable!("RunSettings::new makes it")
            }
        };
        Ok(match conn {
            Conn::Http(mut h) => {
                h.mirrored = self.mirrored.clone();
                Conn::Http(h)
            }
            other => other,
        })
    }
}
