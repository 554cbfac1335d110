//! Real values for valid calls, harvested before calling: a tool that looks
//! up a catalog refuses `"mmmmmm"` but takes a title the server itself
//! names. Values come, for a tool's argument, from
//!
//! - `completion/complete` on a resource template or prompt with an
//!   argument of the same name (asked by the harness where the server
//!   declares completions: [`completion_requests`]);
//! - the URIs `resources/list` gives, matched against the templates (an
//!   argument named as a template's variable gets that variable's value),
//!   and whole, for an argument that takes a URI;
//! - values quoted in the tool's description or the argument's own
//!   (`'Dune'`, `"Dune"`, `` `Dune` ``).
//!
//! They are tried before mcperr's samples ([`enrich`] puts them first in the
//! argument's `examples`); each is still checked against the schema.

use serde_json::{json, Value};

use crate::discovery::{Discovery, Harvest};

/// The required string arguments of every tool, by name.
fn string_arguments(d: &Discovery) -> Vec<String> {
    let mut names = Vec::new();
    for tool in &d.tools {
        let schema = tool.get("inputSchema").cloned().unwrap_or(json!({}));
        for (name, s) in super::required_props(&schema) {
            if super::first_type(&s) == "string" && !names.contains(&name) {
                names.push(name);
            }
        }
    }
    names
}

/// The variables of a URI template (`books://{title}` → `title`).
fn variables(template: &str) -> Vec<&str> {
    template
        .split('{')
        .skip(1)
        .filter_map(|s| s.split('}').next())
        .map(|v| v.trim_start_matches(['+', '#', '/', '?', '&', '.', ';']))
        .collect()
}

/// The `completion/complete` params worth asking, each with the argument
/// name its values are for: a template variable or prompt argument named as
/// a tool's string argument. None unless completions are declared.
pub fn completion_requests(d: &Discovery) -> Vec<(String, Value)> {
    if !d.advertises("completions") {
        return vec![];
    }
    let wanted = string_arguments(d);
    let mut out = Vec::new();
    for t in &d.templates {
        let Some(uri) = t.get("uriTemplate").and_then(Value::as_str) else {
            continue;
        };
        for v in variables(uri) {
            if wanted.iter().any(|w| w == v) {
                out.push((
                    v.to_string(),
                    json!({"ref": {"type": "ref/resource", "uri": uri},
                           "argument": {"name": v, "value": ""}}),
                ));
            }
        }
    }
    for p in &d.prompts {
        let Some(name) = p.get("name").and_then(Value::as_str) else {
            continue;
        };
        let args = p.get("arguments").and_then(Value::as_array);
        for a in args.into_iter().flatten() {
            let Some(arg) = a.get("name").and_then(Value::as_str) else {
                continue;
            };
            if wanted.iter().any(|w| w == arg) {
                out.push((
                    arg.to_string(),
                    json!({"ref": {"type": "ref/prompt", "name": name},
                           "argument": {"name": arg, "value": ""}}),
                ));
            }
        }
    }
    out
}

/// The values of a `completion/complete` answer.
pub fn completion_values(response: &Value) -> Vec<Value> {
    mcperr_wire::edges::at(response, &["result", "completion", "values"])
        .and_then(Value::as_array)
        .map(|v| {
            v.iter()
                .filter(|x| x.is_string())
                .take(8)
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

/// Values read off the listing alone: listed URIs matched against the
/// templates, and whole for arguments that take a URI.
pub fn from_listing(d: &Discovery) -> Harvest {
    let mut out = Harvest::new();
    let uris: Vec<&str> = d
        .resources
        .iter()
        .filter_map(|r| r.get("uri").and_then(Value::as_str))
        .collect();
    for t in &d.templates {
        let Some(template) = t.get("uriTemplate").and_then(Value::as_str) else {
            continue;
        };
        // Only the simplest form, `prefix{var}suffix`.
        let vars = variables(template);
        let (Some(open), [var]) = (template.find('{'), vars.as_slice()) else {
            continue;
        };
        let prefix = &template[..open];
        let suffix = template.rsplit('}').next().unwrap_or_default();
        for uri in &uris {
            if let Some(value) = uri
                .strip_prefix(prefix)
                .and_then(|rest| rest.strip_suffix(suffix))
                .filter(|v| !v.is_empty() && !v.contains('/'))
            {
                add(&mut out, var, json!(value));
            }
        }
    }
    for name in string_arguments(d) {
        let lower = name.to_lowercase();
        if lower.contains("uri") || lower.contains("url") {
            for uri in &uris {
                add(&mut out, &name, json!(uri));
            }
        }
    }
    out
}

/// Adds `value` for `name`, once.
pub fn add(harvest: &mut Harvest, name: &str, value: Value) {
    let list = harvest.entry(name.to_string()).or_default();
    if !list.contains(&value) {
        list.push(value);
    }
}

/// Words quoted in `text`: `'…'`, `"…"` or `` `…` ``, 1 to 80 characters,
/// each quote standing apart from letters (so an apostrophe is no quote).
fn quoted(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let apart = |i: usize| chars.get(i).is_none_or(|c| !c.is_alphanumeric());
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let q = chars[i];
        if !matches!(q, '\'' | '"' | '`') || !apart(i.wrapping_sub(1)) {
            i += 1;
            continue;
        }
        let close = (i + 1..chars.len()).find(|&j| chars[j] == q && apart(j + 1));
        let Some(j) = close else {
            break;
        };
        let inside: String = chars[i + 1..j].iter().collect();
        if (1..=80).contains(&(j - i - 1)) && !inside.contains('\n') && !out.contains(&inside) {
            out.push(inside);
        }
        i = j + 1;
    }
    out
}

/// `tool` with harvested and quoted values first in each required string
/// argument's `examples` (the values a generated valid call tries first).
pub fn enrich(tool: &Value, harvest: &Harvest) -> Value {
    let mut tool = tool.clone();
    let described = quoted(
        tool.get("description")
            .and_then(Value::as_str)
            .unwrap_or(""),
    );
    let Some(props) = tool
        .pointer_mut("/inputSchema/properties")
        .and_then(Value::as_object_mut)
    else {
        return tool;
    };
    for (name, schema) in props.iter_mut() {
        if super::first_type(schema) != "string" {
            continue;
        }
        let own = quoted(
            schema
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or(""),
        );
        let mut values: Vec<Value> = harvest.get(name).cloned().unwrap_or_default();
        values.extend(own.into_iter().chain(described.clone()).map(Value::from));
        if values.is_empty() {
            continue;
        }
        let Some(obj) = schema.as_object_mut() else {
            continue;
        };
        if let Some(Value::Array(given)) = obj.get("examples") {
            values.extend(given.iter().cloned());
        }
        let mut seen = Vec::new();
        values.retain(|v| {
            let new = !seen.contains(v);
            seen.push(v.clone());
            new
        });
        obj.insert("examples".into(), Value::Array(values));
    }
    tool
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bookshop() -> Discovery {
        Discovery {
            tools: vec![
                json!({"name": "get_author", "description": "Look up a book, e.g. 'Dune'.",
                "inputSchema": {"type": "object", "properties": {"title": {"type": "string"}},
                                "required": ["title"]}}),
            ],
            resources: vec![json!({"uri": "books://Neuromancer", "name": "n"})],
            templates: vec![json!({"uriTemplate": "books://{title}", "name": "book"})],
            prompts: vec![],
            server_info: Value::Null,
            capabilities: json!({"completions": {}}),
            harvest: Harvest::new(),
            parts: Default::default(),
            versions: vec![],
        }
    }

    #[test]
    fn values_come_from_completions_the_listing_and_quoted_descriptions() {
        let d = bookshop();
        let asks = completion_requests(&d);
        assert_eq!(asks.len(), 1);
        assert_eq!(asks[0].0, "title");
        assert_eq!(asks[0].1["ref"]["uri"], "books://{title}");
        let mut h = from_listing(&d);
        assert_eq!(h["title"], [json!("Neuromancer")]);
        add(&mut h, "title", json!("Dune"));
        let tool = enrich(&d.tools[0], &h);
        assert_eq!(
            tool.pointer("/inputSchema/properties/title/examples")
                .unwrap(),
            &json!(["Neuromancer", "Dune"]),
            "harvested first, the quoted one once"
        );
        let sets = super::super::argument_sets(&tool, 8);
        assert_eq!(sets[0], json!({"title": "Neuromancer"}));
    }

    #[test]
    fn nothing_is_asked_or_invented_without_a_source() {
        let mut d = bookshop();
        d.capabilities = json!({});
        d.resources.clear();
        d.tools[0]["description"] = json!("Look up a book's author.");
        assert!(completion_requests(&d).is_empty());
        assert!(from_listing(&d).is_empty());
        assert_eq!(enrich(&d.tools[0], &Harvest::new()), d.tools[0]);
        assert_eq!(
            quoted("the book's author and the reader's"),
            Vec::<String>::new()
        );
    }
}
