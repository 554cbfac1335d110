//! Cases generated from what a server publishes, for any server: T4 cases
//! from each tool's `inputSchema` (each breaking exactly one constraint of
//! an otherwise valid call), a valid sample call of each tool that is safe
//! to call, a read of each resource template with a value that cannot
//! exist, a read of each static resource, and each prompt without its
//! required arguments or plainly. Samples are checked with the `jsonschema`
//! crate, so "valid" really is valid and "invalid" really is invalid.

mod candidates;
pub(crate) mod discovered;
pub mod harvest;
mod tools;

use serde_json::{json, Map, Value};

use crate::case::{Alternative, Case, RequestSpec};

pub use candidates::argument_sets;
pub use discovered::{
    prompt_cases, static_read, template_empty_value, template_not_found, NOT_FOUND_MODEL,
};
pub use tools::{t4_cases, valid_call, WRONG_TYPE_TEXTS};

/// Longest string a generated case sends.
const MAX_GENERATED_LEN: usize = 1 << 16;

/// Whether a `tools/list` entry is annotated destructive.
pub fn is_destructive(tool: &Value) -> bool {
    tool.pointer("/annotations/destructiveHint") == Some(&Value::Bool(true))
}

/// Whether a `tools/list` entry is annotated read-only (safe to call with a sample).
pub fn is_read_only(tool: &Value) -> bool {
    tool.pointer("/annotations/readOnlyHint") == Some(&Value::Bool(true))
}

/// Whether a tool may only be called as a task (`execution.taskSupport: "required"`).
pub fn task_required(tool: &Value) -> bool {
    tool.pointer("/execution/taskSupport") == Some(&Value::String("required".into()))
}

/// A sample string that satisfies `format` (JSON Schema 2020-12 formats).
pub(crate) fn format_sample(format: &str) -> Option<&'static str> {
    Some(match format {
        "uri" | "iri" | "uri-reference" | "iri-reference" => "https://example.com/mcperr",
        "email" | "idn-email" => "mcperr@example.com",
        "date" => "2026-01-01",
        "date-time" => "2026-01-01T00:00:00Z",
        "time" => "00:00:00Z",
        "duration" => "P1D",
        "uuid" => "00000000-0000-4000-8000-000000000000",
        "hostname" | "idn-hostname" => "example.com",
        "ipv4" => "192.0.2.1",
        "ipv6" => "2001:db8::1",
        "json-pointer" => "/mcperr",
        "relative-json-pointer" => "0",
        "regex" => "^mcperr$",
        "uri-template" => "https://example.com/{id}",
        _ => return None,
    })
}

pub(crate) fn first_type(schema: &Value) -> &str {
    match schema.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("null"),
        _ if schema.get("properties").is_some() => "object",
        _ => "string",
    }
}

/// A valid sample value for a schema, meeting its bounds, lengths, enum,
/// const and format (a `pattern` it cannot meet is left to the validator).
/// A server's schema is untrusted: nesting past a few levels gives up
/// (`null`, which the validator then rejects), and only the outermost array
/// gets more than one item, so the sample stays small.
pub fn sample(schema: &Value) -> Value {
    sample_at(schema, 0)
}

/// How deep a sample nests before giving up.
const MAX_DEPTH: usize = 8;

fn sample_at(schema: &Value, depth: usize) -> Value {
    if depth > MAX_DEPTH {
        return Value::Null;
    }
    let sample = |s: &Value| sample_at(s, depth + 1);
    if let Some(c) = schema.get("const") {
        return c.clone();
    }
    if let Some(e) = schema
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return e.clone();
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(first) = schema
            .get(key)
            .and_then(Value::as_array)
            .and_then(|a| a.first())
        {
            return sample(first);
        }
    }
    match first_type(schema) {
        "integer" => {
            let min = schema.get("minimum").and_then(Value::as_i64).unwrap_or(1);
            let exclusive = schema
                .get("exclusiveMinimum")
                .and_then(Value::as_i64)
                .map_or(i64::MIN, |m| m.saturating_add(1));
            json!(min.max(exclusive))
        }
        "number" => {
            let min = schema.get("minimum").and_then(Value::as_f64).unwrap_or(1.0);
            let exclusive = schema
                .get("exclusiveMinimum")
                .and_then(Value::as_f64)
                .map_or(f64::MIN, |m| m + 1.0);
            json!(min.max(exclusive))
        }
        "boolean" => json!(true),
        "array" => {
            let most = if depth == 0 { 8 } else { 1 };
            let n = schema
                .get("minItems")
                .and_then(Value::as_u64)
                .unwrap_or(0)
                .min(most);
            let item = schema.get("items").map_or(json!("mcperr"), sample);
            Value::Array(vec![item; n as usize])
        }
        "object" => {
            let mut o = Map::new();
            for (k, v) in required_props(schema) {
                o.insert(k, sample(&v));
            }
            Value::Object(o)
        }
        "null" => Value::Null,
        // A server's schema is untrusted input: lengths are capped.
        _ => {
            if let Some(f) = schema
                .get("format")
                .and_then(Value::as_str)
                .and_then(format_sample)
            {
                return json!(f);
            }
            let n = schema.get("minLength").and_then(Value::as_u64).unwrap_or(6);
            json!("m".repeat(n.clamp(6, MAX_GENERATED_LEN as u64) as usize))
        }
    }
}

/// The required properties of an object schema with their schemas.
pub(crate) fn required_props(schema: &Value) -> Vec<(String, Value)> {
    let props = schema.get("properties").and_then(Value::as_object);
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(Value::as_str)
                .map(|k| {
                    let s = props.and_then(|p| p.get(k)).cloned().unwrap_or(json!({}));
                    (k.to_string(), s)
                })
                .collect()
        })
        .unwrap_or_default()
}

/// A validator with format checks on, or `None` for a schema that does not compile.
pub fn validator(schema: &Value) -> Option<jsonschema::Validator> {
    jsonschema::options()
        .should_validate_formats(true)
        .build(schema)
        .ok()
}

/// A generated case: the fields a case file would have.
pub(crate) struct Draft<'a> {
    pub id: String,
    pub rule: mcperr_model::rules::RuleId,
    pub spec: &'a str,
    pub title: String,
    pub needs: Vec<String>,
    pub method: &'a str,
    pub params: Value,
    pub expect: Value,
    pub also_pass: Vec<Alternative>,
    pub warn: Vec<Alternative>,
    pub checks: Vec<&'a str>,
    pub profile: std::collections::BTreeMap<String, crate::case::Override>,
    pub output_schema: Option<Value>,
}

impl Draft<'_> {
    pub(crate) fn build(self, source: &str) -> Case {
        Case {
            id: self.id,
            rule: self.rule,
            spec: self.spec.into(),
            title: self.title,
            needs: self.needs,
            eras: vec![],
            replays: None,
            checks: self.checks.into_iter().map(String::from).collect(),
            transport: None,
            http: None,
            envelope: true,
            handshake: true,
            hold_asks: false,
            slow_ms: None,
            send: vec![],
            request: RequestSpec {
                raw: None,
                id: None,
                method: self.method.into(),
                params: Some(self.params),
                params_json: None,
            },
            expect: self.expect,
            also_pass: self.also_pass,
            warn: self.warn,
            profile: self.profile,
            aspect: None,
            aspects: Default::default(),
            at_most: None,
            output_schema: self.output_schema,
            arguments_to_try: None,
            takes_no_arguments: false,
            rebase: None,
            source: source.into(),
        }
    }
}

/// An alternative outcome for generated cases.
pub(crate) fn alternative(pattern: Value, reason: &str, eras: &[&str]) -> Alternative {
    Alternative {
        pattern,
        reason: reason.into(),
        eras: eras.iter().map(|e| e.to_string()).collect(),
        aspect: None,
    }
}

/// The `[[warn]]` shapes of an expected answer ([`crate::expect::Shape`]),
/// each graded by its aspect.
pub(crate) fn aspect_warnings(shape: crate::expect::Shape) -> Vec<Alternative> {
    shape
        .warn
        .into_iter()
        .map(|(aspect, pattern)| Alternative {
            pattern,
            reason: String::new(),
            eras: vec![],
            aspect: Some(aspect.into()),
        })
        .collect()
}
