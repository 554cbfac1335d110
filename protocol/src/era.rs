//! The two protocol eras mcperr speaks and the modern `_meta` envelope keys.

use std::fmt;
use std::str::FromStr;

/// `params._meta` key carrying the protocol version on every modern request.
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `params._meta` key carrying the client's capabilities on every modern request.
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `params._meta` key carrying the client's identity (optional).
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// `params._meta` key carrying the log level a modern request asks for (optional).
pub const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";

/// The published MCP protocol versions before 2025-11-25, which mcperr does
/// not judge: a server that answers `initialize` with one of them follows
/// "Otherwise, the server MUST respond with another protocol version it
/// supports" (basic/lifecycle#version-negotiation), unless it also claims
/// 2025-11-25 elsewhere.
pub const OLDER_VERSIONS: [&str; 3] = ["2024-11-05", "2025-03-26", "2025-06-18"];

/// A protocol era: how a session starts and what every request must carry.
///
/// The two eras differ in their error surface too (−32002 is a warning in the
/// legacy era and a failure in the modern one), so verdicts are per era.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Era {
    /// 2025-11-25: `initialize` handshake, HTTP sessions by `Mcp-Session-Id`.
    Legacy,
    /// 2026-07-28: stateless, `_meta` envelope on every request, `server/discover`.
    Modern,
}

impl Era {
    /// Both eras, oldest first.
    pub const ALL: [Era; 2] = [Era::Legacy, Era::Modern];

    /// The protocol version string of this era.
    pub fn version(self) -> &'static str {
        match self {
            Era::Legacy => "2025-11-25",
            Era::Modern => "2026-07-28",
        }
    }
}

impl fmt::Display for Era {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.version())
    }
}

/// A version string that names no era mcperr knows.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown protocol era '{0}' (expected 2025-11-25 or 2026-07-28)")]
pub struct UnknownEra(pub String);

impl FromStr for Era {
    type Err = UnknownEra;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "2025-11-25" | "legacy" => Ok(Era::Legacy),
            "2026-07-28" | "modern" => Ok(Era::Modern),
            other => Err(UnknownEra(other.to_string())),
        }
    }
}
