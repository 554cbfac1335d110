//! The fuzz [`Generator`]: draws requests from what a server publishes (its
//! tools' `inputSchema`s, its resource templates and static resources, its
//! prompts' arguments), envelope mutations of `tools/call`,
//! `resources/read` and `prompts/get`, unknown methods, and ids of every
//! legal kind, each a [`FuzzInput`] with its [`Class`]. The run's canary is
//! planted in crash inputs and valid calls.

use mcperr_protocol::Era;
use serde_json::{json, Value};

use super::inputs::{Class, FuzzInput, IdStyle};
use super::invalid::invalid;
use super::plant::{plant_canary, plant_surrogate};
use super::source::Source;
use super::values::{any_text, text, valid};
use crate::discovery::Discovery;
use crate::generate::discovered::expand;
use crate::generate::{is_read_only, validator};

mod envelope;

struct ToolTarget {
    name: String,
    schema: Value,
    validator: jsonschema::Validator,
    /// Valid arguments may be sent (the tool's body runs): by consent.
    valid_calls: bool,
    /// At most this many valid calls (a tool that may write), and how many
    /// were drawn.
    valid_limit: Option<u64>,
    valid_drawn: std::sync::atomic::AtomicU64,
    output: Option<jsonschema::Validator>,
}

impl ToolTarget {
    /// Whether one more valid call may be drawn (counting it).
    fn draw_valid(&self) -> bool {
        use std::sync::atomic::Ordering;
        let Some(limit) = self.valid_limit else {
            return true;
        };
        self.valid_drawn
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                (n < limit).then_some(n + 1)
            })
            .is_ok()
    }

    /// Arguments for a request whose envelope is broken: `{}`, unless the
    /// tool takes `{}` and has no unbounded consent for valid calls (a
    /// server that reads past the broken envelope would run its body), then
    /// arguments its own schema rejects; `None` when there are none.
    fn envelope_arguments(&self, src: &mut dyn Source) -> Option<Value> {
        let empty = json!({});
        // A tool that writes has consent for a bounded number of valid calls,
        // drawn by `tool_call` alone: an envelope mutation spends none.
        let free = self.valid_calls && self.valid_limit.is_none();
        if free || !self.validator.is_valid(&empty) {
            return Some(empty);
        }
        invalid(&self.schema, &self.validator, &empty, src).map(|(bad, _)| bad)
    }
}

struct PromptTarget {
    name: String,
    arguments: Vec<(String, bool)>,
}

/// Draws fuzz inputs for one server. Tools are those the caller allows
/// (destructive and task-only tools are left out by the caller); valid
/// calls go to read-only tools only, since a valid call runs the tool.
pub struct Generator {
    tools: Vec<ToolTarget>,
    templates: Vec<String>,
    statics: Vec<String>,
    prompts: Vec<PromptTarget>,
    era: Era,
    canary: Option<String>,
}

const UNKNOWN_METHODS: &[&str] = &[
    "mcperr/unknown",
    "tools/calls",
    "resources/write",
    "prompts/execute",
    "Tools/call",
    "tools/call/",
    "sampling/mcperr",
];

impl Generator {
    /// Sends valid arguments to exactly the tools `calls` marks valid (the
    /// run's consent, [`crate::select::ToolCalls`]); by default only to tools
    /// annotated read-only.
    pub fn with_valid_calls(mut self, calls: &[crate::select::ToolCalls]) -> Generator {
        for t in &mut self.tools {
            let consent = calls.iter().find(|c| c.valid && c.name == t.name);
            t.valid_calls = consent.is_some();
            t.valid_limit = consent.and_then(|c| c.valid_limit);
        }
        self
    }

    /// Plants `canary` (the run's secret, [`CANARY_PREFIX`] and hex) in
    /// string arguments of some valid calls: an answer that quotes it back
    /// is known to echo the argument, however it re-escapes the rest, and
    /// only text beyond that echo is searched for leaks.
    pub fn with_canary(mut self, canary: String) -> Generator {
        self.canary = Some(canary);
        self
    }

    /// A generator over `tools` (already filtered by the caller) and the
    /// resources and prompts of `discovery`. A tool that may only be called
    /// as a task (`execution.taskSupport: "required"`) is left out: no
    /// plain call of it can be valid, and the generator makes no tasks.
    pub fn new(discovery: &Discovery, tools: &[Value], era: Era) -> Generator {
        let tools = tools
            .iter()
            .filter(|t| !crate::generate::task_required(t))
            .filter_map(|t| {
                let name = t.get("name")?.as_str()?.to_string();
                let schema = t
                    .get("inputSchema")
                    .cloned()
                    .unwrap_or(json!({"type": "object"}));
                Some(ToolTarget {
                    name,
                    validator: validator(&schema)?,
                    schema,
                    valid_calls: is_read_only(t),
                    valid_limit: None,
                    valid_drawn: Default::default(),
                    output: t.get("outputSchema").and_then(validator),
                })
            })
            .collect();
        let str_of = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(String::from);
        let prompts = discovery
            .prompts
            .iter()
            .filter_map(|p| {
                let args = p
                    .get("arguments")
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(|x| {
                                Some((str_of(x, "name")?, x.get("required") == Some(&json!(true))))
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                Some(PromptTarget {
                    name: str_of(p, "name")?,
                    arguments: args,
                })
            })
            .collect();
        Generator {
            tools,
            templates: discovery
                .templates
                .iter()
                .filter_map(|t| str_of(t, "uriTemplate"))
                .collect(),
            statics: discovery
                .resources
                .iter()
                .filter_map(|r| str_of(r, "uri"))
                .collect(),
            prompts,
            era,
            canary: None,
        }
    }

    /// The validator of a fuzzed tool's `outputSchema`, if it declares one.
    pub fn output_validator(&self, tool: &str) -> Option<&jsonschema::Validator> {
        self.tools.iter().find(|t| t.name == tool)?.output.as_ref()
    }

    /// `input` with its class checked again after a change (shrinking): a
    /// valid call must still be valid, an invalid one must still break
    /// exactly one constraint; `None` when it no longer does.
    pub fn reclassify(&self, input: FuzzInput) -> Option<FuzzInput> {
        let valid = matches!(input.class, Class::ValidCall);
        if !(valid || matches!(input.class, Class::InvalidCall(_))) {
            return Some(input);
        }
        let tool = self.tools.iter().find(|t| t.name == input.target)?;
        let args = input.params.get("arguments")?;
        let errors = tool.validator.iter_errors(args).take(2).count();
        ((valid && errors == 0) || (!valid && errors == 1)).then_some(input)
    }

    /// Whether the named tool may write and has a bounded number of valid
    /// calls: its valid calls are never sent again (to shrink or to prove
    /// a finding), since each runs its body once more.
    pub fn writes(&self, name: &str) -> bool {
        self.tools
            .iter()
            .any(|t| t.name == name && t.valid_limit.is_some())
    }

    /// Whether the named tool's calls are fuzzed.
    pub fn has_tool(&self, name: &str) -> bool {
        self.tools.iter().any(|t| t.name == name)
    }

    /// The next input.
    pub fn next(&self, src: &mut dyn Source) -> FuzzInput {
        let mut input = loop {
            let pick = src.below(100);
            let made = match pick {
                0..=44 => self.tool_call(src),
                45..=64 => self.resource_read(src),
                65..=79 => self.prompt_get(src),
                80..=94 => self.envelope(src),
                _ => None,
            };
            if let Some(i) = made {
                break i;
            }
            if pick >= 95 || src.chance(1, 4) {
                break unknown_method(src);
            }
        };
        input.id_style = match src.below(20) {
            0..=10 => IdStyle::Counter,
            11..=13 => IdStyle::Text,
            14..=15 => IdStyle::Negative,
            16..=18 => IdStyle::Above31,
            _ => IdStyle::Above53,
        };
        input
    }

    fn tool_call(&self, src: &mut dyn Source) -> Option<FuzzInput> {
        if self.tools.is_empty() {
            return None;
        }
        let tool = &self.tools[src.index(self.tools.len())];
        let mut base = valid(&tool.schema, src);
        if !tool.validator.is_valid(&base) {
            base = crate::generate::sample(&tool.schema);
            if !tool.validator.is_valid(&base) {
                return None;
            }
        }
        let want_valid = tool.valid_calls && src.chance(1, 3) && tool.draw_valid();
        let (arguments, class) = if want_valid {
            if let Some(c) = self.canary.as_deref().filter(|_| src.chance(1, 4)) {
                plant_canary(&mut base, c, &tool.validator, src);
            }
            (base, Class::ValidCall)
        } else {
            // Only invalid calls carry a lone surrogate: a valid call must stay
            // valid, and a parser may refuse the line (RFC 8259 §8.2).
            if src.chance(1, 64) {
                plant_surrogate(&mut base);
            }
            let (bad, what) = invalid(&tool.schema, &tool.validator, &base, src)?;
            (bad, Class::InvalidCall(what))
        };
        Some(FuzzInput {
            method: "tools/call".into(),
            // Built by moving: `json!` would copy `arguments` by serializing it.
            params: Value::Object(serde_json::Map::from_iter([
                ("name".to_string(), Value::String(tool.name.clone())),
                ("arguments".to_string(), arguments),
            ])),
            envelope: true,
            id_style: IdStyle::Counter,
            class,
            target: tool.name.clone(),
        })
    }

    fn resource_read(&self, src: &mut dyn Source) -> Option<FuzzInput> {
        let n = self.templates.len() + self.statics.len();
        if n == 0 {
            return None;
        }
        let i = src.index(n);
        let (target, uri, class) = if i < self.templates.len() {
            let t = &self.templates[i];
            let (value, class) = match src.below(8) {
                0..=2 => (
                    format!("{}{}", super::inputs::MADE_UP_VALUES[0], letters(src, 10)),
                    Class::ResourceMissing,
                ),
                3 => (String::new(), Class::ResourceOther),
                4 => {
                    let escapes = ["%2F", "%00", "%25", "%E2%80%A8", "%ZZ", "%", "%C3%A9"];
                    let e = escapes[src.index(escapes.len())];
                    (format!("mcperr{e}x"), Class::ResourceOther)
                }
                5 => (any_text(src), Class::ResourceOther),
                _ => (text(src, 6, true), Class::ResourceOther),
            };
            (t.clone(), expand(t, &value), class)
        } else {
            let uri = &self.statics[i - self.templates.len()];
            let near = match src.below(5) {
                0 => uri.clone(),
                1 => format!("{uri}x"),
                2 => uri.to_uppercase(),
                3 => uri.replacen("://", ":/", 1),
                _ => format!("{uri}#mcperr"),
            };
            (uri.clone(), near, Class::ResourceOther)
        };
        Some(FuzzInput {
            method: "resources/read".into(),
            params: json!({"uri": uri}),
            envelope: true,
            id_style: IdStyle::Counter,
            class,
            target,
        })
    }

    fn prompt_get(&self, src: &mut dyn Source) -> Option<FuzzInput> {
        if self.prompts.is_empty() {
            return None;
        }
        let p = &self.prompts[src.index(self.prompts.len())];
        let mut args = serde_json::Map::new();
        for (name, required) in &p.arguments {
            if *required || src.chance(1, 2) {
                args.insert(name.clone(), json!(any_text(src)));
            }
        }
        let required: Vec<&String> = p.arguments.iter().filter(|a| a.1).map(|a| &a.0).collect();
        let (name, class) = match src.below(6) {
            0 => (
                format!("mcperr-no-prompt-{}", letters(src, 6)),
                Class::UnknownPrompt,
            ),
            1 if !required.is_empty() => {
                args.remove(required[src.index(required.len())]);
                (p.name.clone(), Class::PromptMissingArgument)
            }
            2 => {
                args.insert("mcperr_extra".into(), json!(any_text(src)));
                (p.name.clone(), Class::PromptOther)
            }
            3 if !args.is_empty() => {
                let keys: Vec<String> = args.keys().cloned().collect();
                let k = &keys[src.index(keys.len())];
                let wrong = [json!(5), json!(true), json!([]), json!({}), Value::Null];
                args.insert(k.clone(), wrong[src.index(wrong.len())].clone());
                (p.name.clone(), Class::PromptOther)
            }
            _ => (p.name.clone(), Class::PromptOther),
        };
        Some(FuzzInput {
            method: "prompts/get".into(),
            params: json!({"name": name, "arguments": args}),
            envelope: true,
            id_style: IdStyle::Counter,
            class,
            target: p.name.clone(),
        })
    }
}

fn unknown_method(src: &mut dyn Source) -> FuzzInput {
    let m = UNKNOWN_METHODS[src.index(UNKNOWN_METHODS.len())];
    FuzzInput {
        method: m.into(),
        params: json!({}),
        envelope: true,
        id_style: IdStyle::Counter,
        class: Class::UnknownMethod,
        target: m.into(),
    }
}

fn letters(src: &mut dyn Source, n: usize) -> String {
    (0..n)
        .map(|_| (b'a' + src.below(26) as u8) as char)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fuzz::inputs::canary_of_seed;
    use crate::fuzz::source::Seeded;

    #[test]
    fn templates_expand_every_variable() {
        assert_eq!(expand("books://{title}", "Dune"), "books://Dune");
        assert_eq!(expand("a://{x}/{y}", ""), "a:///");
        assert_eq!(expand("a://{x", "v"), "a://{x");
    }

    #[test]
    fn every_class_is_drawn_from_a_full_server() {
        let discovery = Discovery {
            tools: vec![json!({"name": "t", "annotations": {"readOnlyHint": true},
                "inputSchema": {"type": "object", "properties": {"n": {"type": "integer", "maximum": 3}}, "required": ["n"]}})],
            templates: vec![json!({"uriTemplate": "books://{title}"})],
            prompts: vec![
                json!({"name": "greet", "arguments": [{"name": "name", "required": true}]}),
            ],
            ..Default::default()
        };
        let tools = discovery.tools.clone();
        let g = Generator::new(&discovery, &tools, Era::Modern);
        let mut src = Seeded::new(9);
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..2000 {
            let i = g.next(&mut src);
            seen.insert(
                format!("{:?}", i.class)
                    .split('(')
                    .next()
                    .unwrap()
                    .to_string(),
            );
        }
        assert_eq!(seen.len(), 9, "{seen:?}");
    }

    #[test]
    fn valid_calls_carry_the_canary_large_arrays_and_every_form_of_a_format() {
        let schema = json!({"type": "object", "properties": {
            "title": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string", "maxLength": 8}},
            "when": {"type": "string", "format": "date-time"}},
            "required": ["title", "tags", "when"]});
        let discovery = Discovery {
            tools: vec![
                json!({"name": "t", "annotations": {"readOnlyHint": true}, "inputSchema": schema}),
            ],
            ..Default::default()
        };
        let canary = canary_of_seed(3);
        let g = Generator::new(&discovery, &discovery.tools.clone(), Era::Modern)
            .with_canary(canary.clone());
        let mut src = Seeded::new(3);
        let valid: Vec<Value> = (0..3000)
            .map(|_| g.next(&mut src))
            .filter(|i| i.class == Class::ValidCall)
            .map(|i| i.params["arguments"].clone())
            .collect();
        let v = crate::generate::validator(&schema).unwrap();
        assert!(valid.iter().all(|a| v.is_valid(a)), "valid stays valid");
        let carried = valid
            .iter()
            .filter(|a| a.to_string().contains(&canary))
            .count();
        assert!(carried * 10 > valid.len(), "{carried} of {}", valid.len());
        let most = valid
            .iter()
            .filter_map(|a| a["tags"].as_array())
            .map(Vec::len)
            .max();
        assert!(most.is_some_and(|n| n >= 256), "a large array: {most:?}");
        let forms: std::collections::BTreeSet<&str> =
            valid.iter().filter_map(|a| a["when"].as_str()).collect();
        assert!(forms.len() >= 4, "{forms:?}");
    }
}
