//! Generic cases generated from a server's own tool schemas (rule T4).
//!
//! For every tool the run may call: a wrong type, a missing required
//! property, an out-of-range value where the schema has bounds, and an extra
//! property where `additionalProperties` is `false`. Each must be rejected
//! before the body runs, as an `isError` result (SEP-1303, 2025-11-25); a
//! JSON-RPC −32602 is a warning (an older spec text shows it).

use serde_json::{json, Map, Value};

use crate::case::{Alternative, Case, RequestSpec};

/// Longest string a generated case sends.
const MAX_GENERATED_LEN: usize = 1 << 16;

const SPEC: &str = "2025-11-25 server/tools#error-handling (SEP-1303: input validation errors are tool execution errors)";

/// A valid sample value for a property schema (enough to isolate one fault).
pub fn sample(schema: &Value) -> Value {
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
    if let Some(d) = schema.get("default") {
        return d.clone();
    }
    let ty = match schema.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("null"),
        _ => "string",
    };
    match ty {
        "integer" => {
            let min = schema.get("minimum").and_then(Value::as_i64).unwrap_or(1);
            let exclusive = schema
                .get("exclusiveMinimum")
                .and_then(Value::as_i64)
                .map_or(i64::MIN, |m| m.saturating_add(1));
            json!(min.max(exclusive))
        }
        "number" => json!(schema.get("minimum").and_then(Value::as_f64).unwrap_or(1.0)),
        "boolean" => json!(true),
        "array" => json!([]),
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
            let n = schema.get("minLength").and_then(Value::as_u64).unwrap_or(6);
            json!("m".repeat(n.clamp(6, MAX_GENERATED_LEN as u64) as usize))
        }
    }
}

fn required_props(schema: &Value) -> Vec<(String, Value)> {
    let props = schema.get("properties").and_then(Value::as_object);
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(Value::as_str)
                .map(|k| {
                    (
                        k.to_string(),
                        props.and_then(|p| p.get(k)).cloned().unwrap_or(json!({})),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// A value of another JSON type than the schema allows, if one can be named.
fn wrong_type(schema: &Value) -> Option<Value> {
    let types: Vec<&str> = match schema.get("type")? {
        Value::String(t) => vec![t.as_str()],
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
        _ => return None,
    };
    let candidates = [
        ("object", json!({"mcperr": "wrong type"})),
        ("array", json!(["mcperr"])),
        ("string", json!("mcperr-not-a-number")),
        ("boolean", json!(true)),
    ];
    candidates
        .into_iter()
        .find(|(t, _)| {
            let allowed = types.contains(t) || (*t == "string" && types.is_empty());
            // A string is never valid where only numbers, objects... are allowed;
            // booleans are tried only against types that cannot coerce them.
            let coercible =
                *t == "boolean" && types.iter().any(|x| *x == "integer" || *x == "number");
            !(allowed || coercible)
        })
        .map(|(_, v)| v)
}

/// A T4 case: `field` is what the rejection must name (as a whole word), so
/// that a crash of the body or a vague error cannot pass for a validation.
fn case(tool: &str, kind: &str, title: String, args: Value, field: &str) -> Case {
    Case {
        levels: Default::default(),
        at_most: None,
        id: format!("generated/{tool}/{kind}"),
        rule: "T4".into(),
        spec: SPEC.into(),
        title,
        needs: vec![format!("tool:{tool}")],
        eras: vec![],
        checks: vec![],
        transport: None,
        http: None,
        envelope: true,
        send: vec![],
        request: RequestSpec { raw: None, id: None, method: "tools/call".into(), params: Some(json!({"name": tool, "arguments": args})) },
        expect: json!({"result": {"isError": true, "content": {"0": {"text": format!("$word:{field}")}}}, "error": "$absent"}),
        also_pass: vec![],
        warn: vec![Alternative {
            pattern: json!({"error": {"code": -32602}}),
            reason: "invalid arguments answered as JSON-RPC -32602; since 2025-11-25 (SEP-1303) they are an isError tool result the model can read".into(),
            eras: vec![],
        }],
        profile: Default::default(),
        source: "generated from the tool's inputSchema".into(),
    }
}

/// Whether a `tools/list` entry is annotated destructive.
pub fn is_destructive(tool: &Value) -> bool {
    tool.pointer("/annotations/destructiveHint") == Some(&Value::Bool(true))
}

/// The T4 cases for one `tools/list` entry.
pub fn t4_cases(tool: &Value) -> Vec<Case> {
    let Some(name) = tool.get("name").and_then(Value::as_str) else {
        return vec![];
    };
    let schema = tool.get("inputSchema").cloned().unwrap_or(json!({}));
    let base = sample(
        &json!({"type": "object", "properties": schema.get("properties").cloned().unwrap_or(json!({})), "required": schema.get("required").cloned().unwrap_or(json!([]))}),
    );
    let props = schema
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut out = Vec::new();
    for (prop, pschema) in &props {
        if let Some(bad) = wrong_type(pschema) {
            let mut args = base.clone();
            args[prop] = bad.clone();
            out.push(case(
                name,
                &format!("wrong-type-{prop}"),
                format!("{name}: {prop} = {bad} (wrong type) is rejected before the body runs"),
                args,
                prop,
            ));
            break;
        }
    }
    if let Some((prop, _)) = required_props(&schema).first() {
        let mut args = base.clone();
        args.as_object_mut().map(|o| o.remove(prop));
        out.push(case(
            name,
            &format!("missing-{prop}"),
            format!("{name}: missing required {prop} is rejected"),
            args,
            prop,
        ));
    }
    for (prop, pschema) in &props {
        // Untrusted bounds: no overflow, no giant strings (out-of-range needs
        // a representable value; a maxLength beyond the cap is not probed).
        let bad = if let Some(max) = pschema.get("maximum").and_then(Value::as_i64) {
            max.checked_add(1).map(|v| json!(v))
        } else if let Some(min) = pschema.get("minimum").and_then(Value::as_i64) {
            min.checked_sub(1).map(|v| json!(v))
        } else {
            pschema
                .get("maxLength")
                .and_then(Value::as_u64)
                .filter(|n| *n < MAX_GENERATED_LEN as u64)
                .map(|n| json!("x".repeat(n as usize + 1)))
        };
        if let Some(bad) = bad {
            let mut args = base.clone();
            args[prop] = bad.clone();
            out.push(case(
                name,
                &format!("out-of-range-{prop}"),
                format!("{name}: {prop} = {bad} (out of range) is rejected"),
                args,
                prop,
            ));
            break;
        }
    }
    if schema.get("additionalProperties") == Some(&Value::Bool(false)) {
        let mut args = base.clone();
        args["mcperr_unexpected"] = json!(1);
        out.push(case(
            name,
            "extra-property",
            format!("{name}: an undeclared property is rejected (additionalProperties: false)"),
            args,
            "mcperr_unexpected",
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_bounds_neither_overflow_nor_allocate_wildly() {
        let tool = json!({"name": "t", "inputSchema": {"type": "object", "properties": {
            "a": {"type": "integer", "maximum": i64::MAX},
            "b": {"type": "integer", "minimum": i64::MIN},
            "c": {"type": "string", "maxLength": u64::MAX},
            "d": {"type": "string", "minLength": 100_000_000_000_u64},
            "e": {"type": "integer", "exclusiveMinimum": i64::MAX}}, "required": ["a", "b", "c", "d", "e"]}});
        let cases = t4_cases(&tool);
        assert!(!cases.is_empty());
        for c in cases {
            assert!(c.request.params.unwrap().to_string().len() < 200_000);
        }
    }

    #[test]
    fn limited_gets_all_four_kinds() {
        let tool = json!({"name": "limited", "inputSchema": {"type": "object", "properties": {
            "limit": {"type": "integer", "minimum": 1, "maximum": 50}}, "required": ["limit"], "additionalProperties": false}});
        let cases = t4_cases(&tool);
        let ids: Vec<&str> = cases.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "generated/limited/wrong-type-limit",
                "generated/limited/missing-limit",
                "generated/limited/out-of-range-limit",
                "generated/limited/extra-property"
            ]
        );
        assert_eq!(
            cases[0].request.params.as_ref().unwrap()["arguments"],
            json!({"limit": {"mcperr": "wrong type"}})
        );
        assert_eq!(
            cases[2].request.params.as_ref().unwrap()["arguments"],
            json!({"limit": 51})
        );
        assert_eq!(
            cases[1].request.params.as_ref().unwrap()["arguments"],
            json!({})
        );
    }
}
