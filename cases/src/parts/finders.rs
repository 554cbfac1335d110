//! Finding who plays each part, from what the server lists and from how it
//! answered the probe's valid calls, and the Bookshop contract's fallback.
//! The harness makes the calls ([`ProbeCall`] is what it saw); this module
//! only decides.

use serde_json::{json, Map, Value};

use super::{Cast, Finder, Found, PartDef, Player};
use crate::discovery::Discovery;
use crate::generate;

/// What one valid probe call of a tool showed.
#[derive(Debug, Clone, PartialEq)]
pub struct ProbeCall {
    /// The tool.
    pub tool: String,
    /// The arguments it was called with.
    pub arguments: Value,
    /// How many progress notifications carried the call's token (one
    /// repeated back to back counted once: a step of work, not a line).
    pub progress: usize,
    /// Whether the server asked for input: an `input_required` result, or
    /// an `elicitation/create` request while the call was in flight.
    pub asked_input: bool,
    /// The call ended in a result without `isError`.
    pub succeeded: bool,
    /// How long the call took, from its request to its answer: the pace a
    /// case that cancels it in flight watches for (a server that ignores
    /// the cancellation answers about this long after the call).
    pub took: std::time::Duration,
}

/// What the probe saw: its tool calls, and the prompts that rendered when
/// given their one required argument.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Probe {
    /// Each tool's call.
    pub calls: Vec<ProbeCall>,
    /// The prompts (with one required argument) that rendered messages.
    pub rendered: Vec<String>,
}

/// The prompts with exactly one required argument: (prompt, argument).
pub fn one_argument_prompts(d: &Discovery) -> Vec<(String, String)> {
    d.prompts
        .iter()
        .filter_map(|p| {
            let required: Vec<&str> = p
                .get("arguments")?
                .as_array()?
                .iter()
                .filter(|a| a.get("required") == Some(&Value::Bool(true)))
                .filter_map(|a| a.get("name").and_then(Value::as_str))
                .collect();
            let [only] = required.as_slice() else {
                return None;
            };
            Some((name(p).to_string(), only.to_string()))
        })
        .collect()
}

fn name(tool: &Value) -> &str {
    tool.get("name").and_then(Value::as_str).unwrap_or("")
}

fn task_support(tool: &Value) -> &str {
    tool.pointer("/execution/taskSupport")
        .and_then(Value::as_str)
        .unwrap_or("forbidden")
}

/// The first valid argument set of `tool` (with the harvested values), or
/// `None` when mcperr can build none.
pub fn valid_arguments(tool: &Value, d: &Discovery) -> Option<Value> {
    let tool = generate::harvest::enrich(tool, &d.harvest);
    generate::argument_sets(&tool, 1).into_iter().next()
}

/// How far [`stretched`] raises a bounded integer.
const STRETCH: i64 = 10;

/// `arguments` with each integer property whose schema bounds it with a
/// `maximum` set to that maximum, or to 10 when it allows more: a tool that
/// reports progress per step then works long enough to be cancelled in
/// flight, and no longer. `None` when nothing changes.
pub fn stretched(tool: &Value, arguments: &Value) -> Option<Value> {
    stretched_to(tool, arguments, STRETCH)
}

/// [`stretched`], to `most` instead of 10.
pub fn stretched_to(tool: &Value, arguments: &Value, most: i64) -> Option<Value> {
    let props = tool.pointer("/inputSchema/properties")?.as_object()?;
    let mut out = arguments.as_object()?.clone();
    let mut changed = false;
    for (k, s) in props {
        let max = s.get("maximum").and_then(Value::as_i64);
        if let (true, Some(max)) = (generate::first_type(s) == "integer", max) {
            let v = json!(max.min(most));
            if max >= 2 && out.get(k) != Some(&v) {
                out.insert(k.clone(), v);
                changed = true;
            }
        }
    }
    changed.then_some(Value::Object(out))
}

/// Who plays the parts a probe reveals (`progress`, `asks-input`,
/// `succeeds`, `structured`: four at most).
pub fn from_probe(calls: &[ProbeCall], tools: &[Value]) -> Cast {
    let mut cast = Cast::new();
    let mut first = |part: &str, found: &dyn Fn(&ProbeCall) -> Option<String>| {
        if let Some((c, why)) = calls.iter().find_map(|c| found(c).map(|w| (c, w))) {
            let mut player = Player::new(&c.tool, c.arguments.clone(), Found::Probe(why));
            player.took = Some(c.took);
            cast.insert(part.into(), player);
        }
    };
    first("progress", &|c| {
        (c.progress >= 2).then(|| format!("{} progress notifications for its token", c.progress))
    });
    first("asks-input", &|c| {
        c.asked_input
            .then(|| "it asked the client for input".to_string())
    });
    first("succeeds", &|c| {
        c.succeeded
            .then(|| "answered with a result without isError".to_string())
    });
    let schema_of = |t: &str| {
        tools
            .iter()
            .find(|x| name(x) == t)
            .and_then(|x| x.get("outputSchema"))
    };
    first("structured", &|c| {
        (c.succeeded && schema_of(&c.tool).is_some())
            .then(|| "it has an outputSchema and answered without isError".to_string())
    });
    cast
}

const KEYWORDS_2020_12: [&str; 7] = [
    "prefixItems",
    "$defs",
    "dependentRequired",
    "dependentSchemas",
    "unevaluatedProperties",
    "unevaluatedItems",
    "$dynamicRef",
];

/// The first key of `keys` anywhere in `schema` (as an object key).
fn uses_key<'a>(schema: &Value, keys: &[&'a str]) -> Option<&'a str> {
    match schema {
        Value::Object(o) => keys
            .iter()
            .find(|k| o.contains_key(**k))
            .copied()
            .or_else(|| o.values().find_map(|v| uses_key(v, keys))),
        Value::Array(a) => a.iter().find_map(|v| uses_key(v, keys)),
        _ => None,
    }
}

/// A `$ref` in `schema` that points outside it.
fn outside_ref(schema: &Value) -> Option<String> {
    match schema {
        Value::Object(o) => o
            .get("$ref")
            .and_then(Value::as_str)
            .filter(|r| !r.starts_with('#'))
            .map(str::to_string)
            .or_else(|| o.values().find_map(outside_ref)),
        Value::Array(a) => a.iter().find_map(outside_ref),
        _ => None,
    }
}

/// Arguments for a tool whose schema mcperr cannot resolve: each required
/// property its sample, or a plain string.
fn plain_arguments(tool: &Value) -> Value {
    let schema = tool.get("inputSchema").cloned().unwrap_or(json!({}));
    let mut args = Map::new();
    for (k, s) in generate::required_props(&schema) {
        let v = if outside_ref(&s).is_some() {
            json!("mcperr")
        } else {
            generate::sample(&s)
        };
        args.insert(k, v);
    }
    Value::Object(args)
}

/// A mirrored top-level parameter of `tool` whose type is `ty`, with the
/// tool's valid arguments: (player, the parameter's schema).
fn mirrored(tool: &Value, d: &Discovery, ty: &str) -> Option<Player> {
    let schema = tool.get("inputSchema")?;
    let param = mcperr_protocol::headers::mirrored_params(schema)
        .into_iter()
        .find(|p| {
            p.path.len() == 1
                && schema
                    .pointer(&format!("/properties/{}", p.path[0]))
                    .is_some_and(|s| generate::first_type(s) == ty)
        })?;
    let arguments = valid_arguments(tool, d)?;
    let key = param.path[0].clone();
    let prop = schema.pointer(&format!("/properties/{key}"))?;
    let mut p = Player::new(
        name(tool),
        arguments,
        Found::Listing(format!(
            "its {ty} parameter {key} is mirrored into {}",
            param.header()
        )),
    );
    p.extra.insert("param".into(), json!(key));
    p.extra.insert("header".into(), json!(param.header()));
    p.extra.insert(
        "header-odd-case".into(),
        json!(format!("mcp-param-{}", param.name.to_uppercase())),
    );
    p.extra.insert("value".into(), generate::sample(prop));
    Some(p)
}

/// Who plays the parts the listings reveal. `may_call` says which tools
/// the run may give valid calls (their bodies run); `probed` is what the
/// probe found (the task part prefers the progress tool), `rendered` the
/// prompts that rendered for it.
pub fn from_listing(
    d: &Discovery,
    may_call: &dyn Fn(&Value) -> bool,
    probed: &Cast,
    rendered: &[String],
) -> Cast {
    let callable: Vec<&Value> = d.tools.iter().filter(|t| may_call(t)).collect();
    let mut found = task_players(d, &callable, probed);
    found.extend(schema_players(d, &callable));
    found.push(("file-template", file_template(d)));
    found.push(("prompt-arg", prompt_player(d, rendered)));
    found
        .into_iter()
        .filter_map(|(part, p)| Some((part.to_string(), p?)))
        .collect()
}

/// The first of `tools` that `why` says plays a part, with its first valid
/// arguments.
fn first_listed(
    d: &Discovery,
    tools: &[&Value],
    why: &dyn Fn(&Value) -> Option<String>,
) -> Option<Player> {
    tools.iter().find_map(|t| {
        let why = why(t)?;
        Some(Player::new(
            name(t),
            valid_arguments(t, d)?,
            Found::Listing(why),
        ))
    })
}

/// The task parts, by `execution.taskSupport`.
fn task_players<'a>(
    d: &Discovery,
    callable: &[&Value],
    probed: &Cast,
) -> Vec<(&'a str, Option<Player>)> {
    let support = |t: &Value, wanted: &[&str]| {
        let s = task_support(t);
        wanted
            .contains(&s)
            .then(|| format!("execution.taskSupport is {s:?}"))
    };
    // A task player works long enough to be cancelled (its arguments
    // stretched, or the progress tool's), and has short-arguments: its
    // first valid ones with bounded integers at 3 at most, a task whose work
    // soon ends, though not before it can be cancelled.
    let task_player = |t: &Value, long: Option<Value>, why: String| {
        let first = valid_arguments(t, d)?;
        let long = long.unwrap_or_else(|| stretched(t, &first).unwrap_or(first.clone()));
        let mut player = Player::new(name(t), long, Found::Listing(why));
        let short = stretched_to(t, &first, 3).unwrap_or(first);
        player.extra.insert("short-arguments".into(), short);
        Some(player)
    };
    let progress_task = probed.get("progress").and_then(|p| {
        let t = callable.iter().find(|t| name(t) == p.plays)?;
        let why = support(t, &["optional", "required"])?;
        task_player(
            t,
            Some(p.arguments.clone()),
            format!("{why}, and it reports progress"),
        )
    });
    let task = progress_task.or_else(|| {
        callable.iter().find_map(|t| {
            let why = support(t, &["optional", "required"])?;
            task_player(t, None, why)
        })
    });
    vec![
        ("task", task),
        (
            "task-required",
            first_listed(d, callable, &|t| support(t, &["required"])),
        ),
        (
            "task-forbidden",
            first_listed(d, callable, &|t| support(t, &["forbidden"])),
        ),
    ]
}

/// The parts an `inputSchema` reveals: mirrored parameters, 2020-12
/// keywords, a `$ref` no one can resolve.
fn schema_players<'a>(d: &Discovery, callable: &[&Value]) -> Vec<(&'a str, Option<Player>)> {
    let schema_2020 = first_listed(d, callable, &|t| {
        let key = uses_key(t.get("inputSchema")?, &KEYWORDS_2020_12)?;
        Some(format!("its inputSchema uses {key}"))
    });
    let unresolved = callable.iter().find_map(|t| {
        let r = outside_ref(t.get("inputSchema")?)?;
        let found = Found::Listing(format!("its inputSchema refers to {r}"));
        Some(Player::new(name(t), plain_arguments(t), found))
    });
    vec![
        (
            "header-param",
            callable.iter().find_map(|t| mirrored(t, d, "string")),
        ),
        (
            "header-number",
            callable.iter().find_map(|t| mirrored(t, d, "integer")),
        ),
        ("schema-2020-12", schema_2020),
        ("unresolved-ref", unresolved),
    ]
}

/// A `file://` template, read with a percent-encoded `../` path.
fn file_template(d: &Discovery) -> Option<Player> {
    d.templates.iter().find_map(|t| {
        let tpl = t.get("uriTemplate").and_then(Value::as_str)?;
        let open = tpl.find('{')?;
        tpl.starts_with("file://").then_some(())?;
        let close = open + tpl[open..].find('}')?;
        let uri = format!(
            "{}..%2F..%2Fetc%2Fpasswd{}",
            &tpl[..open],
            &tpl[close + 1..]
        );
        let found = Found::Listing(format!("its template {tpl} is a file:// one"));
        Some(Player::new(&strip_variables(&uri), json!({}), found))
    })
}

/// A prompt that rendered with its one argument; without a probe, the
/// first such prompt (one that may still fail: prompts/get is no write).
fn prompt_player(d: &Discovery, rendered: &[String]) -> Option<Player> {
    let prompts = one_argument_prompts(d);
    let ((prompt, arg), why) = prompts
        .iter()
        .find(|(p, _)| rendered.contains(p))
        .map(|x| (x, "it rendered with its one required argument"))
        .or_else(|| {
            let first = prompts.first().filter(|_| rendered.is_empty())?;
            Some((first, "its one required argument"))
        })?;
    let mut player = Player::new(prompt, json!({}), Found::Listing(format!("{why}, {arg}")));
    player.extra.insert("argument".into(), json!(arg));
    Some(player)
}

/// `uri` with any `{…}` variable left replaced by `x`.
fn strip_variables(uri: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for c in uri.chars() {
        match (c, inside) {
            ('{', _) => inside = true,
            ('}', true) => {
                inside = false;
                out.push('x');
            }
            (_, true) => {}
            (c, false) => out.push(c),
        }
    }
    out
}

pub use super::contract::from_contract;

/// The run's cast: what the user named, else what the probe or the
/// listings found, else the Bookshop contract's player.
pub fn cast(named: &Cast, probed: &Cast, listed: &Cast, contract: &Cast) -> Cast {
    let mut out = contract.clone();
    for layer in [listed, probed, named] {
        out.extend(layer.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    out
}

/// Whether finding `part` takes the probe's calls.
pub fn probed(part: &PartDef) -> bool {
    part.finder == Finder::Probe || matches!(part.name, "task" | "prompt-arg")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(tool: &str, progress: usize, asked: bool, ok: bool) -> ProbeCall {
        ProbeCall {
            tool: tool.into(),
            arguments: json!({}),
            progress,
            asked_input: asked,
            succeeded: ok,
            took: std::time::Duration::from_millis(100),
        }
    }

    #[test]
    fn the_probe_makes_a_progress_player_only_of_two_notifications_or_more() {
        let tools = vec![json!({"name": "b", "outputSchema": {"type": "object"}})];
        let cast = from_probe(
            &[
                call("a", 1, false, true),
                call("b", 2, false, true),
                call("c", 0, true, false),
            ],
            &tools,
        );
        assert_eq!(cast["progress"].plays, "b");
        assert_eq!(cast["asks-input"].plays, "c");
        assert_eq!(cast["succeeds"].plays, "a");
        assert_eq!(cast["structured"].plays, "b");
    }

    #[test]
    fn a_bounded_integer_is_stretched_to_ten_at_most() {
        let tool = json!({"inputSchema": {"properties": {
            "n": {"type": "integer", "minimum": 1, "maximum": 50},
            "k": {"type": "integer", "maximum": 4}, "s": {"type": "string"}}}});
        let out = stretched(&tool, &json!({"n": 1, "k": 1, "s": "x"})).unwrap();
        assert_eq!(out, json!({"n": 10, "k": 4, "s": "x"}));
        assert_eq!(stretched(&tool, &out), None);
    }

    #[test]
    fn listings_reveal_parts_among_the_tools_the_run_may_call() {
        let d = Discovery {
            tools: vec![
                json!({"name": "hours", "inputSchema": {"type": "object", "properties": {
                    "shop": {"type": "string", "x-mcp-header": "Shop"}}, "required": ["shop"]}}),
                json!({"name": "bake", "execution": {"taskSupport": "required"},
                    "inputSchema": {"type": "object", "properties": {}}}),
            ],
            ..Default::default()
        };
        let all = from_listing(&d, &|_| true, &Cast::new(), &[]);
        assert_eq!(all["header-param"].extra["header"], json!("Mcp-Param-Shop"));
        assert_eq!(all["task-required"].plays, "bake");
        assert_eq!(all["task-forbidden"].plays, "hours");
        let read_only = from_listing(&d, &|t| name(t) == "hours", &Cast::new(), &[]);
        assert!(!read_only.contains_key("task-required"));
    }
}
