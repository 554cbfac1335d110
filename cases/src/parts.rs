//! Parts: the roles a case needs something on the server to play (a tool
//! that reports progress, a tool that asks the client for input, a resource
//! that fails…), and who plays each one on the server under test.
//!
//! A case says `needs = ["part:progress"]` and names its player through
//! placeholders (`{{part.progress.tool}}`, `{{part.progress.arguments}}`),
//! never by a fixture's name. Who plays a part is decided, in this order:
//! 1. the user names it (`--part NAME=TARGET[:ARGUMENTS]`, or a `[parts]`
//!    file): naming a tool is consent to call it;
//! 2. mcperr finds it in what the server lists (annotations,
//!    `execution.taskSupport`, schemas, templates, prompts) or in how it
//!    answered a valid call with a `progressToken` (the harness's probe),
//!    among the tools the run may give valid calls;
//! 3. the Bookshop fixture contract (DESIGN.md section 3) names it, and the
//!    server lists that tool, template or prompt: how the SDK Bookshops and
//!    the reference play the parts nothing else can reveal (a crash, a
//!    failing backend).
//!
//! Everything here is I/O-free; [`finders`] reads listings and probe
//! observations, the harness does the probing.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

mod contract;
pub mod finders;
mod table;

pub use table::PARTS;

/// What plays a part: a tool, a resource (a URI), or a prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// A tool, called with `{{part.NAME.tool}}` and `{{part.NAME.arguments}}`.
    Tool,
    /// A resource, read with `{{part.NAME.uri}}`.
    Resource,
    /// A prompt, got with `{{part.NAME.prompt}}` and `{{part.NAME.arguments}}`.
    Prompt,
}

impl Kind {
    /// The placeholder key naming the player (`tool`, `uri`, `prompt`).
    pub fn key(self) -> &'static str {
        match self {
            Kind::Tool => "tool",
            Kind::Resource => "uri",
            Kind::Prompt => "prompt",
        }
    }
}

/// How mcperr can find a part's player without being told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finder {
    /// From the server's listings alone ([`finders::from_listing`]).
    Listing,
    /// From how a valid call with a `progressToken` was answered
    /// ([`finders::from_probe`]).
    Probe,
    /// Nothing the server lists or answers reveals it: only a name (the
    /// user's, or the Bookshop contract's) does.
    Named,
    /// Only the Bookshop contract's pair of tools plays it (a body-run
    /// counter mcperr reads with `limited_calls`).
    Contract,
}

/// One part: its name, what plays it, and how it is found.
#[derive(Debug, Clone, Copy)]
pub struct PartDef {
    /// Its name in `needs` (`part:NAME`), placeholders and `--part`.
    pub name: &'static str,
    /// What kind of thing plays it.
    pub kind: Kind,
    /// What a player is, in one sentence (shown by `mcperr list` and in skips).
    pub what: &'static str,
    /// How mcperr finds one.
    pub finder: Finder,
    /// The Bookshop contract's player and its arguments (JSON), if the
    /// contract has one: used only when the server lists it by that name.
    pub contract: Option<(&'static str, &'static str)>,
}

impl PartDef {
    /// The part called `name`.
    pub fn named(name: &str) -> Option<&'static PartDef> {
        PARTS.iter().find(|p| p.name == name)
    }

    /// The flag that names a player, for skips and `mcperr list`.
    pub fn flag_hint(&self) -> String {
        let target = match self.kind {
            Kind::Tool => "TOOL[:ARGUMENTS-JSON]",
            Kind::Resource => "URI",
            Kind::Prompt => "PROMPT[:ARGUMENTS-JSON]",
        };
        format!("--part {}={target}", self.name)
    }
}

/// How a player was chosen, for `mcperr list` and reports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "by", content = "why")]
pub enum Found {
    /// The user named it (`--part` or a parts file).
    Named(String),
    /// Its listing shows it plays the part.
    Listing(String),
    /// A valid call showed it plays the part.
    Probe(String),
    /// The Bookshop fixture contract names it.
    Contract,
    /// A tool the run may not call plays it: not a player, but the skip
    /// says which tool and how to allow it.
    Withheld(String),
}

impl std::fmt::Display for Found {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Found::Named(how) => write!(f, "named by {how}"),
            Found::Listing(why) => write!(f, "found in its listing: {why}"),
            Found::Probe(why) => write!(f, "found by a valid call: {why}"),
            Found::Contract => write!(f, "the Bookshop fixture contract's name for it"),
            Found::Withheld(why) => write!(f, "not called: {why}"),
        }
    }
}

/// Who plays a part on the server under test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Player {
    /// The tool's or prompt's name, or the resource's URI.
    pub plays: String,
    /// The arguments a case calls it with (`{}` for a resource).
    #[serde(default = "empty_object")]
    pub arguments: Value,
    /// Further values a part's cases use (`param`, `header` of a mirrored
    /// parameter), as `{{part.NAME.KEY}}`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extra: BTreeMap<String, Value>,
    /// How it was chosen.
    pub found: Found,
    /// How long its valid call took when the parts probe made it (`None`:
    /// not probed): the pace of a case that watches it in flight. Not in
    /// reports: it varies from run to run.
    #[serde(skip)]
    pub took: Option<std::time::Duration>,
}

fn empty_object() -> Value {
    json!({})
}

impl Player {
    /// Whether it may play (not [`Found::Withheld`]).
    pub fn plays_here(&self) -> bool {
        !matches!(self.found, Found::Withheld(_))
    }

    /// A player with no extra values.
    pub fn new(plays: &str, arguments: Value, found: Found) -> Player {
        Player {
            plays: plays.to_string(),
            arguments,
            extra: BTreeMap::new(),
            found,
            took: None,
        }
    }
}

/// Every part's player on one server (absent: nothing plays it).
pub type Cast = BTreeMap<String, Player>;

/// The placeholder values of a cast: `part.NAME.tool` (or `uri`,
/// `prompt`), its Base64 as `part.NAME.tool-base64`, `part.NAME.arguments`
/// and `part.NAME.KEY` for each extra.
pub fn placeholder_values(cast: &Cast) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for (name, player) in cast {
        let key = PartDef::named(name).map_or("tool", |d| d.kind.key());
        out.push((format!("part.{name}.{key}"), json!(player.plays)));
        // The name in the Base64 form an Mcp-Name header may take.
        let b64 = mcperr_protocol::headers::base64_payload(&player.plays);
        out.push((format!("part.{name}.{key}-base64"), json!(b64)));
        out.push((format!("part.{name}.arguments"), player.arguments.clone()));
        for (k, v) in &player.extra {
            out.push((format!("part.{name}.{k}"), v.clone()));
        }
        // Derived values a player named without them still has. `message`
        // is the exact text its failure carries when the Bookshop contract
        // (or the user's parts file) knows it; else any non-empty text.
        let message = player.extra.get("message").and_then(Value::as_str);
        let derived = [
            ("short-arguments", player.arguments.clone()),
            ("altered-arguments", altered(&player.arguments)),
            ("message", json!(message.unwrap_or("$nonempty"))),
            (
                "text",
                json!(message.map_or("$nonempty".to_string(), |m| format!("$contains:{m}"))),
            ),
            // The MCP Python SDK's text for a tool's own error.
            (
                "python-sdk-text",
                json!(match message {
                    Some(m) => format!("Error executing tool {}: {m}", player.plays),
                    None => format!("$prefix:Error executing tool {}: ", player.plays),
                }),
            ),
        ];
        for (k, v) in derived {
            if !player.extra.contains_key(k) {
                out.push((format!("part.{name}.{k}"), v));
            }
        }
    }
    out
}

/// `arguments` with one value changed, for a retry that must not pass as
/// the same request: its first string gets " (altered)" appended, else its
/// first integer grows by one, else a member `mcperr-altered` is added.
pub fn altered(arguments: &Value) -> Value {
    let mut out = arguments.clone();
    let Some(o) = out.as_object_mut() else {
        return out;
    };
    if let Some(Value::String(s)) = o.values_mut().find(|v| v.is_string()) {
        s.push_str(" (altered)");
    } else if let Some(v) = o.values_mut().find(|v| v.is_i64()) {
        *v = json!(v.as_i64().unwrap_or(0).saturating_add(1));
    } else {
        o.insert("mcperr-altered".into(), json!(true));
    }
    out
}

/// A `--part` value that cannot be used (exit code 2).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct PartError(pub String);

/// Parses `NAME=TARGET[:ARGUMENTS-JSON]` (`progress=slow:{"steps":50}`,
/// `failing-resource=fail://db`): the arguments start at the first `{`.
pub fn parse_flag(value: &str) -> Result<(String, Player), PartError> {
    let (name, rest) = value.split_once('=').ok_or_else(|| {
        PartError(format!(
            "--part {value:?}: expected NAME=TARGET[:ARGUMENTS-JSON], e.g. --part 'progress=my_tool:{{\"n\":3}}'"
        ))
    })?;
    let (target, args) = match rest.find('{') {
        Some(i) => (rest[..i].trim_end_matches(':'), Some(&rest[i..])),
        None => (rest, None),
    };
    let arguments = match args {
        Some(text) => serde_json::from_str(text).map_err(|e| {
            PartError(format!(
                "--part {name}: its arguments are not a JSON object: {e}"
            ))
        })?,
        None => json!({}),
    };
    named_player(name.trim(), target.trim(), arguments, "--part")
}

/// A player the user named (by `how`: `--part` or the parts file's path),
/// checked against the part table.
pub fn named_player(
    name: &str,
    target: &str,
    arguments: Value,
    how: &str,
) -> Result<(String, Player), PartError> {
    if PartDef::named(name).is_none() {
        let known: Vec<&str> = PARTS.iter().map(|p| p.name).collect();
        return Err(PartError(format!(
            "{how}: there is no part {name:?} (`mcperr list` describes each; the parts are {})",
            known.join(", ")
        )));
    }
    if target.is_empty() {
        return Err(PartError(format!("{how}: part {name} names no player")));
    }
    if !arguments.is_object() {
        return Err(PartError(format!(
            "{how}: part {name}'s arguments must be a JSON object"
        )));
    }
    let found = Found::Named(how.to_string());
    Ok((name.to_string(), Player::new(target, arguments, found)))
}

/// A parts file: `[parts.NAME]` tables with the player (`tool`, `uri` or
/// `prompt`), optional `arguments`, and optional `message`: the exact text
/// its failure carries, which the cases then hold it to.
pub fn parse_file(text: &str, path: &str) -> Result<Cast, PartError> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct File {
        #[serde(default)]
        parts: BTreeMap<String, Entry>,
    }
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Entry {
        tool: Option<String>,
        uri: Option<String>,
        prompt: Option<String>,
        #[serde(default = "empty_object")]
        arguments: Value,
        /// The exact message its failure carries, when known.
        message: Option<String>,
    }
    let file: File = toml::from_str(text).map_err(|e| PartError(format!("{path}: {e}")))?;
    let mut cast = Cast::new();
    for (name, e) in file.parts {
        let target = e.tool.or(e.uri).or(e.prompt).ok_or_else(|| {
            PartError(format!("{path}: part {name} names no tool, uri or prompt"))
        })?;
        let (name, mut player) = named_player(&name, &target, e.arguments, path)?;
        if let Some(m) = e.message {
            player.extra.insert("message".into(), json!(m));
        }
        cast.insert(name, player);
    }
    Ok(cast)
}

/// Why nothing found a player for `part`: what the finder looked at.
pub fn unfound(part: &PartDef) -> &'static str {
    match part.finder {
        Finder::Listing => "nothing the server lists plays it",
        Finder::Probe => {
            "no tool mcperr may call showed it (only read-only tools get valid calls unless --allow-additive, --allow-destructive or --tools allow more)"
        }
        Finder::Named => "no listing or answer can reveal it",
        Finder::Contract => "only the Bookshop fixture contract's tools play it",
    }
}

/// Why nothing plays `part` on this server, for a skip: what a player is,
/// why none was found, and the flag that names one.
pub fn missing(part: &PartDef) -> String {
    let name = match part.finder {
        Finder::Contract => String::new(),
        _ => format!("; name one with {}", part.flag_hint()),
    };
    format!(
        "no part {} ({}): {}{name}",
        part.name,
        part.what,
        unfound(part)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flag_names_a_player_with_its_arguments() {
        let (name, p) = parse_flag(r#"progress=slow_count:{"n": 40}"#).unwrap();
        assert_eq!(
            (name.as_str(), p.plays.as_str()),
            ("progress", "slow_count")
        );
        assert_eq!(p.arguments, json!({"n": 40}));
        let (_, p) = parse_flag("failing-resource=fail://db").unwrap();
        assert_eq!((p.plays.as_str(), &p.arguments), ("fail://db", &json!({})));
    }

    #[test]
    fn a_flag_with_an_unknown_part_or_bad_arguments_is_refused() {
        assert!(parse_flag("slowness=slow")
            .unwrap_err()
            .0
            .contains("no part"));
        assert!(parse_flag("progress=slow:{nope")
            .unwrap_err()
            .0
            .contains("JSON"));
        assert!(parse_flag("progress")
            .unwrap_err()
            .0
            .contains("NAME=TARGET"));
    }

    #[test]
    fn a_parts_file_names_players() {
        let cast = parse_file(
            "[parts.crash]\ntool = \"boom\"\narguments = { why = \"{{canary}}\" }\n",
            "p.toml",
        )
        .unwrap();
        assert_eq!(cast["crash"].plays, "boom");
        assert!(parse_file("[parts.crash]\n", "p.toml").is_err());
    }

    #[test]
    fn every_part_placeholder_names_its_kind() {
        let mut cast = Cast::new();
        cast.insert(
            "failing-resource".into(),
            Player::new("fail://x", json!({}), Found::Contract),
        );
        let v = placeholder_values(&cast);
        assert!(v.contains(&("part.failing-resource.uri".into(), json!("fail://x"))));
    }
}
