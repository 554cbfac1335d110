//! Minimally invalid instances of a JSON Schema: a value of the wrong type,
//! or one constraint broken at one site of an otherwise valid instance (a
//! bound, a length, a pattern, a required property, an enum). The caller
//! keeps only those the `jsonschema` crate finds one error in.

use serde_json::{json, Value};

use super::formats::near_miss;
use super::source::Source;

use super::values::{any_text, types, DEEP, LONG, MAX_DEPTH};

/// A value of another JSON type than `schema` allows (including the string
/// numeral for a number, the most common coercion bug, and hostile nesting).
fn wrong_type(schema: &Value, src: &mut dyn Source) -> Value {
    // Nested by moving: `json!([v])` would serialize `v` again at every level.
    let deep = (0..src.int_in(8, DEEP as i64)).fold(json!("mcperr"), |v, _| Value::Array(vec![v]));
    let candidates = [
        json!({"mcperr": "wrong type"}),
        json!(["mcperr"]),
        json!("5"),
        json!("mcperr"),
        json!(true),
        json!(1.5),
        json!(7),
        Value::Null,
        deep,
    ];
    let allowed = types(schema);
    let kind = |v: &Value| match v {
        Value::Object(_) => "object",
        Value::Array(_) => "array",
        Value::String(_) => "string",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() => "integer",
        Value::Number(_) => "number",
        Value::Null => "null",
    };
    let fits = |v: &Value| {
        let k = kind(v);
        allowed.contains(&k) || (k == "integer" && allowed.contains(&"number"))
    };
    let mut left: Vec<Value> = candidates.into_iter().filter(|v| !fits(v)).collect();
    if left.is_empty() {
        return Value::Null;
    }
    left.swap_remove(src.index(left.len()))
}

/// A place in a valid instance where one constraint can be broken.
struct Site<'a> {
    path: Vec<PathStep>,
    schema: &'a Value,
    parent: Option<&'a Value>,
}

#[derive(Clone)]
enum PathStep {
    Key(String),
    Index(usize),
}

fn sites<'a>(
    schema: &'a Value,
    value: &Value,
    parent: Option<&'a Value>,
    path: Vec<PathStep>,
    out: &mut Vec<Site<'a>>,
) {
    out.push(Site {
        path: path.clone(),
        schema,
        parent,
    });
    if path.len() > MAX_DEPTH {
        return;
    }
    match value {
        Value::Object(o) => {
            let props = schema.get("properties").and_then(Value::as_object);
            for (k, v) in o {
                if let Some(s) = props.and_then(|p| p.get(k)) {
                    let mut p = path.clone();
                    p.push(PathStep::Key(k.clone()));
                    sites(s, v, Some(schema), p, out);
                }
            }
        }
        Value::Array(a) => {
            if let Some(items) = schema.get("items") {
                for (i, v) in a.iter().enumerate().take(2) {
                    let mut p = path.clone();
                    p.push(PathStep::Index(i));
                    sites(items, v, Some(schema), p, out);
                }
            }
        }
        _ => {}
    }
}

fn at_mut<'v>(value: &'v mut Value, path: &[PathStep]) -> Option<&'v mut Value> {
    path.iter().try_fold(value, |v, step| match step {
        PathStep::Key(k) => v.get_mut(k.as_str()),
        PathStep::Index(i) => v.get_mut(*i),
    })
}

fn show_path(path: &[PathStep]) -> String {
    if path.is_empty() {
        return "the arguments".into();
    }
    path.iter()
        .map(|s| match s {
            PathStep::Key(k) => k.clone(),
            PathStep::Index(i) => i.to_string(),
        })
        .collect::<Vec<_>>()
        .join(".")
}

/// One way to break the constraint at a site: (constraint broken, new value
/// for the site, or `None` to remove the site from its parent object).
fn breaker(site: &Site, current: &Value, src: &mut dyn Source) -> Option<(String, Option<Value>)> {
    let s = site.schema;
    let num = |k: &str| s.get(k).and_then(Value::as_f64);
    let mut options: Vec<(String, Option<Value>)> = Vec::new();
    // The arguments object itself keeps its type: a non-object `arguments`
    // breaks the request's schema (T6), not the tool's (T4).
    let root = site.path.is_empty();
    if !root && (!types(s).is_empty() || s.get("anyOf").is_some() || s.get("oneOf").is_some()) {
        options.push(("type".into(), Some(wrong_type(s, src))));
    }
    if let Some(max) = num("maximum") {
        let v = (max.floor() as i64).saturating_add(src.int_in(1, 100));
        options.push((format!("maximum {max}"), Some(json!(v))));
    }
    if let Some(min) = num("minimum") {
        let v = (min.ceil() as i64).saturating_sub(src.int_in(1, 100));
        options.push((format!("minimum {min}"), Some(json!(v))));
    }
    if let Some(m) = num("exclusiveMaximum") {
        options.push((format!("exclusiveMaximum {m}"), Some(json!(m))));
    }
    if let Some(m) = num("exclusiveMinimum") {
        options.push((format!("exclusiveMinimum {m}"), Some(json!(m))));
    }
    if let Some(m) = s
        .get("multipleOf")
        .and_then(Value::as_i64)
        .filter(|m| *m > 1)
    {
        options.push((format!("multipleOf {m}"), Some(json!(m.saturating_add(1)))));
    }
    if let Some(n) = s.get("maxLength").and_then(Value::as_u64) {
        if (n as usize) < LONG {
            let extra = src.int_in(1, 16) as usize;
            options.push((
                format!("maxLength {n}"),
                Some(json!("x".repeat(n as usize + extra))),
            ));
        }
    }
    if let Some(n) = s
        .get("minLength")
        .and_then(Value::as_u64)
        .filter(|n| *n > 0 && *n <= LONG as u64)
    {
        options.push((
            format!("minLength {n}"),
            Some(json!("x".repeat(n as usize - 1))),
        ));
    }
    if s.get("pattern").is_some() {
        options.push(("pattern".into(), Some(json!(any_text(src)))));
    }
    if let Some(f) = s.get("format").and_then(Value::as_str) {
        if let Some(miss) = near_miss(f, src) {
            options.push((format!("format {f}"), Some(json!(miss))));
        }
    }
    if let Some(e) = s.get("enum").and_then(Value::as_array) {
        let bad = if e.iter().all(Value::is_i64) {
            json!(e
                .iter()
                .filter_map(Value::as_i64)
                .max()
                .unwrap_or(0)
                .saturating_add(src.int_in(1, 9)))
        } else {
            json!(format!("{}-mcperr", any_text(src)))
        };
        options.push(("enum".into(), Some(bad)));
    }
    if s.get("const").is_some() {
        options.push(("const".into(), Some(json!("mcperr-not-the-const"))));
    }
    if let Some(n) = s
        .get("maxItems")
        .and_then(Value::as_u64)
        .filter(|n| *n < 64)
    {
        let item = current.get(0).cloned().unwrap_or(json!("mcperr"));
        options.push((
            format!("maxItems {n}"),
            Some(Value::Array(vec![item; n as usize + 1])),
        ));
    }
    if let Some(n) = s.get("minItems").and_then(Value::as_u64).filter(|n| *n > 0) {
        let mut a = current.as_array().cloned().unwrap_or_default();
        a.truncate(n as usize - 1);
        options.push((format!("minItems {n}"), Some(Value::Array(a))));
    }
    if s.get("additionalProperties") == Some(&Value::Bool(false)) && current.is_object() {
        let mut o = current.clone();
        o["mcperr_extra"] = json!(any_text(src));
        options.push(("additionalProperties false".into(), Some(o)));
    }
    if let (Some(parent), Some(PathStep::Key(k))) = (site.parent, site.path.last()) {
        let required = parent
            .get("required")
            .and_then(Value::as_array)
            .is_some_and(|r| r.iter().any(|x| x == k.as_str()));
        if required {
            options.push(("required".into(), None));
        }
    }
    if options.is_empty() {
        return None;
    }
    let i = src.index(options.len());
    Some(options.swap_remove(i))
}

/// A minimally invalid instance: `base` (valid) with exactly one constraint
/// of `schema` broken, as `validator` confirms (exactly one error). Returns
/// the instance and the constraint broken, as people say it.
pub fn invalid(
    schema: &Value,
    validator: &jsonschema::Validator,
    base: &Value,
    src: &mut dyn Source,
) -> Option<(Value, String)> {
    let mut all = Vec::new();
    sites(schema, base, None, vec![], &mut all);
    for _ in 0..8 {
        let site = &all[src.index(all.len())];
        let mut value = base.clone();
        let current = at_mut(&mut value, &site.path)?.clone();
        let Some((what, new)) = breaker(site, &current, src) else {
            continue;
        };
        match new {
            Some(v) => *at_mut(&mut value, &site.path)? = v,
            None => {
                let (last, parent) = site.path.split_last()?;
                if let (PathStep::Key(k), Some(Value::Object(o))) =
                    (last, at_mut(&mut value, parent))
                {
                    o.remove(k);
                }
            }
        }
        if validator.iter_errors(&value).take(2).count() == 1 {
            return Some((
                value,
                format!("{} breaks its {what}", show_path(&site.path)),
            ));
        }
    }
    None
}
