//! What a case needs from the server under test (`needs = [...]`): parsed
//! from its file, met or not by what the server lists ([`crate::discovery`]).

use super::FieldError;

/// Something a case needs from the server under test; missing → skip.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Need {
    /// A tool by name.
    Tool(String),
    /// A resource template by its URI template.
    Template(String),
    /// A prompt by name.
    Prompt(String),
    /// Any tool the run may call (`tool:*`); `{{tool}}` names it.
    AnyTool,
    /// A part something on the server plays (`part:progress`,
    /// [`crate::parts`]); `{{part.NAME.tool}}` and the like name it.
    Part(String),
    /// A capability the server declares (`capability:logging`).
    Capability(String),
    /// A capability the server does not declare (`undeclared:tools`): the
    /// cases that check it is not served anyway.
    Undeclared(String),
    /// The server supports only the revision under test
    /// (`revision:only`): its `server/discover` lists no other version in
    /// `supportedVersions` (an unlisted set counts as only). The 2026-07-28
    /// sentences on "traffic from an older client" bind such a server only:
    /// a server that also supports 2025-11-25 serves that traffic as it.
    OnlyRevision,
    /// The run judges authorization (`auth:required`: `--auth-required`),
    /// or has a token with too few scopes for it too (`auth:limited`:
    /// `--auth-limited-header`). Never guessed.
    Auth(String),
}

impl std::fmt::Display for Need {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Need::Tool(n) => write!(f, "tool:{n}"),
            Need::Template(n) => write!(f, "template:{n}"),
            Need::Prompt(n) => write!(f, "prompt:{n}"),
            Need::AnyTool => write!(f, "tool:*"),
            Need::Part(p) => write!(f, "part:{p}"),
            Need::Capability(c) => write!(f, "capability:{c}"),
            Need::Undeclared(c) => write!(f, "undeclared:{c}"),
            Need::Auth(a) => write!(f, "auth:{a}"),
            Need::OnlyRevision => write!(f, "revision:only"),
        }
    }
}

impl std::str::FromStr for Need {
    type Err = FieldError;

    fn from_str(n: &str) -> Result<Need, FieldError> {
        match n.split_once(':') {
            Some(("tool", "*")) => Ok(Need::AnyTool),
            Some(("tool", x)) => Ok(Need::Tool(x.into())),
            Some(("template", x)) => Ok(Need::Template(x.into())),
            Some(("prompt", x)) => Ok(Need::Prompt(x.into())),
            Some(("part", x)) if crate::parts::PartDef::named(x).is_some() => {
                Ok(Need::Part(x.into()))
            }
            Some(("capability", x)) => Ok(Need::Capability(x.into())),
            Some(("undeclared", x)) => Ok(Need::Undeclared(x.into())),
            Some(("auth", x @ ("required" | "limited"))) => Ok(Need::Auth(x.into())),
            Some(("revision", "only")) => Ok(Need::OnlyRevision),
            _ => Err(FieldError(format!(
                "bad need '{n}' (expected part:NAME of a known part, tool:NAME, template:URI-TEMPLATE, prompt:NAME, capability:NAME, undeclared:NAME, auth:required, auth:limited or revision:only)"
            ))),
        }
    }
}
