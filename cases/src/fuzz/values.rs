//! Values drawn from a JSON Schema (draft 2020-12, as servers publish it):
//! valid instances, and minimally invalid ones that break exactly one
//! constraint. Both are classified by the `jsonschema` crate before use, so
//! "valid" is valid and "invalid" breaks one constraint only (one error).
//! Strings are where the hostile values go: Unicode edge cases, control
//! characters, long runs; nesting is hostile but bounded (48 levels, well
//! inside any JSON parser's limit, so a parse error is never the server's
//! right).

use serde_json::{json, Map, Value};

use super::formats::valid_form;
use super::source::Source;
use crate::generate::{format_sample, required_props};

/// How deep generated values nest before giving up.
pub(super) const MAX_DEPTH: usize = 6;
/// The longest string a live run sends.
pub const LONG: usize = 1 << 12;
/// The most items of a large array drawn where the schema sets no bound.
const LARGE_ARRAY: i64 = 512;
/// The deepest hostile nesting sent (JSON parsers allow at least 100 or so).
pub const DEEP: usize = 48;

/// Characters a string is drawn from: mostly plain, then the edge cases that
/// break servers (line separators, NUL and controls, combining marks, RTL,
/// astral code points, quotes and backslashes).
const PLAIN: &[char] = &['a', 'b', 'x', 'Z', '0', '7', ' ', '-', '_', '.'];
const HOSTILE: &[char] = &[
    'é',
    '日',
    '本',
    'ß',
    '\u{2028}',
    '\u{2029}',
    '\u{0}',
    '\u{1}',
    '\u{1b}',
    '\u{7f}',
    '\t',
    '\n',
    '\r',
    '"',
    '\\',
    '/',
    '\u{301}',
    '\u{200f}',
    '\u{202e}',
    '\u{200d}',
    '\u{feff}',
    '🦀',
    '\u{10ffff}',
    '%',
    '{',
    '}',
    '<',
    '\'',
];

/// A random string of `len` characters; `hostile` lets edge cases in.
/// A long one is a random run of [`RUN`] characters repeated, with one
/// fresh character drawn into each repeat: as varied at its edges and as
/// long, at a fraction of the draws (a campaign draws millions).
pub fn text(src: &mut dyn Source, len: usize, hostile: bool) -> String {
    let draw = |src: &mut dyn Source| {
        if hostile && src.chance(1, 3) {
            HOSTILE[src.index(HOSTILE.len())]
        } else {
            PLAIN[src.index(PLAIN.len())]
        }
    };
    if len <= RUN {
        return (0..len).map(|_| draw(src)).collect();
    }
    let run: Vec<char> = (0..RUN).map(|_| draw(src)).collect();
    let mut out = String::with_capacity(len * 2);
    let mut done = 0;
    while done < len {
        let n = RUN.min(len - done);
        let fresh = src.index(n);
        for (i, c) in run[..n].iter().enumerate() {
            out.push(if i == fresh { draw(src) } else { *c });
        }
        done += n;
    }
    out
}

/// The length of the run a long [`text`] repeats.
const RUN: usize = 64;

/// A random-length string: usually short, sometimes long, sometimes empty.
pub fn any_text(src: &mut dyn Source) -> String {
    let len = match src.below(10) {
        0 => 0,
        1 => src.int_in(256, LONG as i64) as usize,
        _ => src.int_in(1, 12) as usize,
    };
    let hostile = src.chance(1, 2);
    text(src, len, hostile)
}

pub(super) fn types(schema: &Value) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ if schema.get("properties").is_some() => vec!["object"],
        _ => vec![],
    }
}

fn int_bounds(schema: &Value) -> (i64, i64) {
    let get = |k| schema.get(k).and_then(Value::as_f64);
    let mut lo = get("minimum").map_or(-1000, |m| m.ceil() as i64);
    if let Some(m) = get("exclusiveMinimum") {
        lo = lo.max((m.floor() as i64).saturating_add(1));
    }
    let mut hi = get("maximum").map_or(lo.saturating_add(2000), |m| m.floor() as i64);
    if let Some(m) = get("exclusiveMaximum") {
        hi = hi.min((m.ceil() as i64).saturating_sub(1));
    }
    if get("minimum").is_none() && get("exclusiveMinimum").is_none() && hi < lo {
        lo = hi.saturating_sub(2000);
    }
    (lo, hi)
}

/// A valid-looking instance of `schema` (the caller checks it).
pub fn valid(schema: &Value, src: &mut dyn Source) -> Value {
    valid_at(schema, src, 0)
}

fn valid_at(schema: &Value, src: &mut dyn Source, depth: usize) -> Value {
    if depth > MAX_DEPTH {
        return Value::Null;
    }
    if let Some(c) = schema.get("const") {
        return c.clone();
    }
    if let Some(e) = schema.get("enum").and_then(Value::as_array) {
        if !e.is_empty() {
            return e[src.index(e.len())].clone();
        }
    }
    // The values the schema itself offers, now and then (the caller checks
    // them like any other: a stale example is no valid value).
    let offered: Vec<&Value> = schema
        .get("examples")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .chain(schema.get("default"))
        .collect();
    if !offered.is_empty() && src.chance(1, 4) {
        return offered[src.index(offered.len())].clone();
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(a) = schema.get(key).and_then(Value::as_array) {
            if !a.is_empty() {
                return valid_at(&a[src.index(a.len())], src, depth + 1);
            }
        }
    }
    let ts = types(schema);
    let ty = if ts.is_empty() {
        "string"
    } else {
        ts[src.index(ts.len())]
    };
    match ty {
        "integer" => {
            let (lo, hi) = int_bounds(schema);
            let v = match src.below(4) {
                0 => lo,
                1 => hi,
                _ => src.int_in(lo, hi),
            };
            match schema.get("multipleOf").and_then(Value::as_i64) {
                Some(m) if m > 0 => json!((v / m).saturating_mul(m)),
                _ => json!(v),
            }
        }
        "number" => {
            let (lo, hi) = int_bounds(schema);
            let whole = src.int_in(lo, hi.saturating_sub(1).max(lo));
            if src.chance(1, 2) {
                json!(whole)
            } else {
                json!(whole as f64 + 0.5)
            }
        }
        "boolean" => json!(src.chance(1, 2)),
        "null" => Value::Null,
        "array" => {
            let min = schema
                .get("minItems")
                .and_then(Value::as_u64)
                .unwrap_or(0)
                .min(64) as i64;
            let cap = schema.get("maxItems").and_then(Value::as_u64);
            let max = cap.map_or(min + 3, |m| (m as i64).min(min + 3));
            let items = schema.get("items").cloned().unwrap_or(json!({}));
            let unique = schema.get("uniqueItems") == Some(&Value::Bool(true));
            // Now and then a large array: up to maxItems, or hundreds where
            // unbounded; a few drawn items repeated (unique ones would each
            // be drawn, and the caller checks the whole value anyway).
            if !unique && depth == 1 && src.chance(1, 12) {
                let most = cap.map_or(LARGE_ARRAY, |m| (m as i64).min(LARGE_ARRAY));
                let n = src.int_in(min.max(most / 2), most.max(min)) as usize;
                let drawn: Vec<Value> = (0..3).map(|_| valid_at(&items, src, depth + 1)).collect();
                return Value::Array((0..n).map(|i| drawn[i % 3].clone()).collect());
            }
            let n = src.int_in(min, max.max(min)) as usize;
            Value::Array((0..n).map(|_| valid_at(&items, src, depth + 1)).collect())
        }
        "object" => {
            let mut o = Map::new();
            let required = required_props(schema);
            for (k, s) in &required {
                o.insert(k.clone(), valid_at(s, src, depth + 1));
            }
            if let Some(props) = schema.get("properties").and_then(Value::as_object) {
                for (k, s) in props {
                    if !o.contains_key(k) && src.chance(1, 2) {
                        o.insert(k.clone(), valid_at(s, src, depth + 1));
                    }
                }
            }
            Value::Object(o)
        }
        _ => valid_string(schema, src),
    }
}

fn valid_string(schema: &Value, src: &mut dyn Source) -> Value {
    if let Some(f) = schema.get("format").and_then(Value::as_str) {
        if let Some(form) = valid_form(f, src).or_else(|| format_sample(f)) {
            return json!(form);
        }
    }
    // A server's schema is untrusted: lengths are capped.
    let min = schema
        .get("minLength")
        .and_then(Value::as_u64)
        .unwrap_or(0)
        .min(LONG as u64) as i64;
    let max = schema
        .get("maxLength")
        .and_then(Value::as_u64)
        .map(|m| m.min(LONG as u64) as i64);
    let free = schema.get("pattern").is_none();
    // The edges first: empty and blank where allowed, exactly at the bounds.
    match src.below(12) {
        0 if min == 0 && free => return json!(""),
        1 if min <= 3 && max.is_none_or(|m| m >= 3) && free => {
            return json!(["   ", " ", "\t", "\n "][src.index(4)]);
        }
        2 if max.is_some() => {
            let m = max.unwrap_or(0).max(min);
            let len = if src.chance(1, 2) {
                m
            } else {
                (m - 1).max(min)
            };
            let hostile = free && src.chance(1, 2);
            return json!(text(src, len as usize, hostile));
        }
        3 => {
            let hostile = free && src.chance(1, 2);
            return json!(text(src, min as usize, hostile));
        }
        _ => {}
    }
    let len = match (src.below(8), max) {
        (0, None) => src.int_in(256, LONG as i64),
        (_, Some(m)) => src.int_in(min, m.min(min + 16)),
        _ => src.int_in(min.max(1), min.max(1) + 12),
    };
    let hostile = free && src.chance(1, 2);
    json!(text(src, len.max(0) as usize, hostile))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fuzz::invalid::invalid;
    use crate::fuzz::source::{Bytes, Seeded};
    use proptest::prelude::*;

    fn schemas() -> Vec<Value> {
        vec![
            json!({"type": "object", "properties": {"limit": {"type": "integer", "minimum": 1, "maximum": 50}}, "required": ["limit"], "additionalProperties": false}),
            json!({"type": "object", "properties": {"title": {"type": "string", "minLength": 1, "maxLength": 40},
                   "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "maxItems": 3},
                   "when": {"type": "string", "format": "date"}, "n": {"type": "number", "exclusiveMinimum": 0},
                   "nested": {"type": "object", "properties": {"k": {"type": "boolean"}}, "required": ["k"]}},
                   "required": ["title", "nested"]}),
            json!({"type": "object", "properties": {"unit": {"oneOf": [{"const": "g"}, {"const": "oz"}]}}, "required": ["unit"]}),
        ]
    }

    fn check(src: &mut dyn Source) {
        for schema in schemas() {
            let v = crate::generate::validator(&schema).unwrap();
            let good = valid(&schema, src);
            assert!(v.is_valid(&good), "{good} should fit {schema}");
            if let Some((bad, what)) = invalid(&schema, &v, &good, src) {
                let errors: Vec<_> = v.iter_errors(&bad).collect();
                assert_eq!(
                    errors.len(),
                    1,
                    "{bad} ({what}) must break exactly one constraint"
                );
            }
        }
    }

    #[test]
    fn valid_strings_reach_the_edges_and_the_schemas_own_examples() {
        let schema = json!({"type": "string", "maxLength": 40, "examples": ["Paris"]});
        let drawn: Vec<Value> = (0..400)
            .map(|seed| valid(&schema, &mut Seeded::new(seed)))
            .collect();
        let has = |f: &dyn Fn(&str) -> bool| drawn.iter().filter_map(Value::as_str).any(f);
        assert!(has(&|s| s == "Paris"), "the example");
        assert!(has(&|s| s.is_empty()), "empty");
        assert!(has(&|s| !s.is_empty() && s.trim().is_empty()), "blank");
        assert!(has(&|s| s.chars().count() == 40), "at maxLength");
        assert!(has(&|s| s.chars().count() == 39), "one below maxLength");
        let long = json!({"type": "string"});
        let most = (0..400)
            .filter_map(|seed| {
                valid(&long, &mut Seeded::new(seed))
                    .as_str()
                    .map(|s| s.chars().count())
            })
            .max();
        assert!(
            most.is_some_and(|n| n >= 1000),
            "long strings where unbounded: {most:?}"
        );
    }

    #[test]
    fn seeded_values_are_valid_and_breakers_break_exactly_one_constraint() {
        for seed in 0..300 {
            check(&mut Seeded::new(seed));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        /// The same generator driven by proptest's bytes (shrinkable choices).
        #[test]
        fn proptest_choices_give_the_same_guarantees(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
            check(&mut Bytes::new(&bytes));
        }
    }

    #[test]
    fn an_integer_above_a_maximum_reaches_multiples_of_seven() {
        let schema = &schemas()[0];
        let v = crate::generate::validator(schema).unwrap();
        let mut src = Seeded::new(1);
        let hit = (0..2000).any(|_| {
            let good = valid(schema, &mut src);
            invalid(schema, &v, &good, &mut src)
                .and_then(|(bad, _)| bad["limit"].as_i64())
                .is_some_and(|l| l > 50 && l % 7 == 0)
        });
        assert!(hit);
    }
}
