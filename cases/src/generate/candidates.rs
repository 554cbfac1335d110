//! Valid argument sets a tool is likely to accept, in the order a generated
//! valid call tries them: the values the schema itself offers first
//! (`examples`, `default`, each `enum` value, `const`), then mcperr's
//! sample, then plain everyday values (`"1"`, `"test"`, `0`, `false`, …).
//! A tool that refuses `"mmmmmm"` may well take `"1"`; a call the tool
//! refuses every time is no valid call, and the case says so (a skip).
//! Every set is checked against the whole schema, so each is valid.

use serde_json::{json, Map, Value};

use super::{first_type, required_props, sample, validator};

/// Everyday values of each type, tried after the schema's own.
fn plain(schema: &Value) -> Vec<Value> {
    match first_type(schema) {
        "integer" => vec![json!(1), json!(0), json!(10), json!(100)],
        "number" => vec![json!(1), json!(0), json!(0.5), json!(100)],
        "boolean" => vec![json!(true), json!(false)],
        "array" => vec![json!([])],
        "object" | "null" => vec![],
        _ => ["1", "test", "example", "hello", "a"]
            .into_iter()
            .map(Value::from)
            .collect(),
    }
}

/// The values worth trying for one property, best first, without repeats.
fn options(schema: &Value) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    let listed = |key: &str| {
        schema
            .get(key)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    out.extend(listed("examples"));
    out.extend(schema.get("default").cloned());
    out.extend(schema.get("const").cloned());
    out.extend(listed("enum"));
    out.push(sample(schema));
    out.extend(plain(schema));
    // Only values the property's own schema admits (no "1" for an enum).
    let fits = validator(schema);
    let mut seen = Vec::new();
    out.retain(|v| {
        let new = !seen.contains(v) && fits.as_ref().is_none_or(|f| f.is_valid(v));
        seen.push(v.clone());
        new
    });
    out
}

/// Up to `most` distinct valid argument sets for `tool`: set `i` gives each
/// required property its `i`-th option (its last when it has fewer).
/// Empty when the schema admits none mcperr can build.
pub fn argument_sets(tool: &Value, most: usize) -> Vec<Value> {
    let schema = tool
        .get("inputSchema")
        .cloned()
        .unwrap_or(json!({"type": "object"}));
    let Some(v) = validator(&schema) else {
        return vec![];
    };
    let props: Vec<(String, Vec<Value>)> = required_props(&schema)
        .into_iter()
        .map(|(k, s)| (k, options(&s)))
        .collect();
    let rounds = props.iter().map(|(_, o)| o.len()).max().unwrap_or(1);
    let mut sets: Vec<Value> = Vec::new();
    for i in 0..rounds {
        let mut args = Map::new();
        for (k, opts) in &props {
            if let Some(x) = opts.get(i).or(opts.last()) {
                args.insert(k.clone(), x.clone());
            }
        }
        let args = Value::Object(args);
        if v.is_valid(&args) && !sets.contains(&args) {
            sets.push(args);
        }
        if sets.len() == most {
            break;
        }
    }
    sets
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schemas_own_values_come_first_then_the_sample_then_plain_ones() {
        let tool = json!({"name": "t", "inputSchema": {"type": "object", "properties": {
            "city": {"type": "string", "examples": ["Paris"]},
            "unit": {"type": "string", "enum": ["c", "f"]}}, "required": ["city", "unit"]}});
        let sets = argument_sets(&tool, 8);
        assert_eq!(sets[0], json!({"city": "Paris", "unit": "c"}));
        assert_eq!(sets[1], json!({"city": "mmmmmm", "unit": "f"}));
        assert!(
            sets.contains(&json!({"city": "1", "unit": "f"})),
            "{sets:?}"
        );
        assert!(sets.len() <= 8);
    }

    #[test]
    fn every_set_is_valid_and_none_repeats() {
        let tool = json!({"name": "t", "inputSchema": {"type": "object", "properties": {
            "code": {"type": "string", "minLength": 3},
            "n": {"type": "integer", "minimum": 5}}, "required": ["code", "n"]}});
        let sets = argument_sets(&tool, 8);
        let v = validator(&tool["inputSchema"]).unwrap();
        assert!(!sets.is_empty());
        for (i, s) in sets.iter().enumerate() {
            assert!(v.is_valid(s), "{s}");
            assert!(!sets[..i].contains(s), "{s} twice");
        }
        // "1" and "a" break minLength 3, 0 and 1 break minimum 5: never sent.
        assert!(!sets
            .iter()
            .any(|s| s["code"] == json!("1") || s["n"] == json!(0)));
    }

    #[test]
    fn a_tool_without_required_arguments_gets_one_empty_set() {
        let tool = json!({"name": "t", "inputSchema": {"type": "object"}});
        assert_eq!(argument_sets(&tool, 8), vec![json!({})]);
    }
}
