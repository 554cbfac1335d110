//! Cases from a tool's published schemas: T4 cases that each break exactly
//! one constraint of an otherwise valid call (the rejection must come before
//! the body runs, as an `isError` result; −32602 warns), and a valid sample
//! call (T8: a result whose `structuredContent` fits the `outputSchema`, or
//! a well-formed JSON-RPC error).

use serde_json::{json, Value};

use super::{alternative, required_props, sample, validator, Draft, MAX_GENERATED_LEN};
use crate::case::Case;

const T4_SPEC: &str = "2025-11-25 server/tools#error-handling (SEP-1303: input validation errors are tool execution errors)";

/// The texts inside the wrong-type values the T4 cases send (no valid
/// sample holds them): a success that shows one ran its body on the value.
pub const WRONG_TYPE_TEXTS: [&str; 2] = ["wrong type", "mcperr-not-a-number"];

/// A value of another JSON type than the schema allows, if one can be named.
fn wrong_type(schema: &Value) -> Option<Value> {
    let types: Vec<&str> = match schema.get("type")? {
        Value::String(t) => vec![t.as_str()],
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
        _ => return None,
    };
    let candidates = [
        ("object", json!({"mcperr": WRONG_TYPE_TEXTS[0]})),
        ("array", json!(["mcperr"])),
        ("string", json!(WRONG_TYPE_TEXTS[1])),
        ("boolean", json!(true)),
    ];
    candidates
        .into_iter()
        .find(|(t, _)| {
            let allowed = types.contains(t);
            // Booleans are tried only against types that cannot coerce them.
            let coercible =
                *t == "boolean" && types.iter().any(|x| *x == "integer" || *x == "number");
            !(allowed || coercible)
        })
        .map(|(_, v)| v)
}

/// One broken constraint of one property: (case-id part, the constraint
/// broken as people say it, the bad value).
fn breakers(prop: &str, schema: &Value) -> Vec<(String, String, Value)> {
    let mut out = Vec::new();
    if let Some(bad) = wrong_type(schema) {
        let ty = schema.get("type").map(Value::to_string).unwrap_or_default();
        out.push((format!("type-{prop}"), format!("type {ty}"), bad));
    }
    if let Some(max) = schema.get("maximum").and_then(Value::as_i64) {
        if let Some(v) = max.checked_add(1) {
            out.push((
                format!("maximum-{prop}"),
                format!("maximum {max}"),
                json!(v),
            ));
        }
    }
    if let Some(min) = schema.get("minimum").and_then(Value::as_i64) {
        if let Some(v) = min.checked_sub(1) {
            out.push((
                format!("minimum-{prop}"),
                format!("minimum {min}"),
                json!(v),
            ));
        }
    }
    if let Some(min) = schema.get("exclusiveMinimum").and_then(Value::as_f64) {
        out.push((
            format!("exclusive-minimum-{prop}"),
            format!("exclusiveMinimum {min}"),
            json!(min),
        ));
    }
    if let Some(max) = schema.get("exclusiveMaximum").and_then(Value::as_f64) {
        out.push((
            format!("exclusive-maximum-{prop}"),
            format!("exclusiveMaximum {max}"),
            json!(max),
        ));
    }
    // Lengths are broken with "x"s, which would break a format or pattern too.
    let free_text = schema.get("format").is_none() && schema.get("pattern").is_none();
    if let Some(n) = schema
        .get("maxLength")
        .and_then(Value::as_u64)
        .filter(|_| free_text)
    {
        if n < MAX_GENERATED_LEN as u64 {
            out.push((
                format!("max-length-{prop}"),
                format!("maxLength {n}"),
                json!("x".repeat(n as usize + 1)),
            ));
        }
    }
    if let Some(n) = schema
        .get("minLength")
        .and_then(Value::as_u64)
        .filter(|_| free_text)
    {
        if n > 0 && n <= MAX_GENERATED_LEN as u64 {
            out.push((
                format!("min-length-{prop}"),
                format!("minLength {n}"),
                json!("x".repeat(n as usize - 1)),
            ));
        }
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        // A value of the enum's own type that is not in it, so only enum breaks.
        let bad = if values.iter().all(Value::is_i64) {
            let max = values.iter().filter_map(Value::as_i64).max().unwrap_or(0);
            max.checked_add(1).map(|v| json!(v))
        } else if values.iter().all(Value::is_string) {
            Some(json!("mcperr-not-in-the-enum"))
        } else {
            None
        };
        if let Some(bad) = bad {
            out.push((format!("enum-{prop}"), "enum".into(), bad));
        }
    }
    out
}

/// The tool's valid sample arguments, if its schema admits one mcperr can build.
fn valid_arguments(tool: &Value) -> Option<(Value, Value)> {
    let schema = tool
        .get("inputSchema")
        .cloned()
        .unwrap_or(json!({"type": "object"}));
    let args = sample(&json!({"type": "object",
        "properties": schema.get("properties").cloned().unwrap_or(json!({})),
        "required": schema.get("required").cloned().unwrap_or(json!([]))}));
    let v = validator(&schema)?;
    v.is_valid(&args).then_some((schema, args))
}

fn t4(tool: &str, kind: &str, title: String, args: Value, field: &str) -> Case {
    Draft {
        id: format!("generated/tools/{tool}/{kind}"),
        rule: mcperr_model::rules::RuleId::T4,
        spec: T4_SPEC,
        title,
        needs: vec![format!("tool:{tool}")],
        method: "tools/call",
        params: json!({"name": tool, "arguments": args}),
        // What the rejection must name (as a whole word), so that a crash of
        // the body or a vague error cannot pass for a validation.
        expect: json!({"result": {"isError": true, "content": {"0": {"text": format!("$word:{field}")}}}, "error": "$absent"}),
        also_pass: vec![],
        warn: super::aspect_warnings(crate::expect::tool_rejection_shape()),
        // A refusal that prints the bad value as code does is the body's.
        checks: vec!["body-ran-on-value"],
        profile: Default::default(),
        output_schema: None,
    }
    .build("generated from the tool's inputSchema")
}

/// The T4 cases for one `tools/list` entry: each breaks exactly one
/// constraint (checked: the base call is valid, the broken one is not), at
/// most one case per kind of constraint. `valid_calls`: the run may send
/// the tool valid calls, so the extra-property case is sent on an argument
/// set the tool is first seen to accept ([`Case::rebase`]).
pub fn t4_cases(tool: &Value, valid_calls: bool) -> Vec<Case> {
    let Some(name) = tool.get("name").and_then(Value::as_str) else {
        return vec![];
    };
    let Some((schema, base)) = valid_arguments(tool) else {
        return vec![];
    };
    let Some(v) = validator(&schema) else {
        return vec![];
    };
    let props = schema
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut out = Vec::new();
    let mut kinds_done = std::collections::BTreeSet::new();
    for (prop, pschema) in &props {
        for (kind, constraint, bad) in breakers(prop, pschema) {
            let family = kind.trim_end_matches(prop.as_str()).to_string();
            if kinds_done.contains(&family) {
                continue;
            }
            let mut args = base.clone();
            args[prop] = bad.clone();
            if v.is_valid(&args) {
                continue;
            }
            kinds_done.insert(family);
            out.push(t4(
                name,
                &kind,
                format!("{name}: {prop} = {} breaks only its {constraint}; rejected before the body runs", short(&bad)),
                args,
                prop,
            ));
        }
    }
    if let Some((prop, _)) = required_props(&schema).first() {
        let mut args = base.clone();
        args.as_object_mut().map(|o| o.remove(prop));
        out.push(t4(
            name,
            &format!("required-{prop}"),
            format!(
                "{name}: without {prop} it breaks only required; rejected before the body runs"
            ),
            args,
            prop,
        ));
    }
    if schema.get("additionalProperties") == Some(&Value::Bool(false)) {
        let mut args = base.clone();
        args["mcperr_unexpected"] = json!(1);
        let mut case = t4(
            name,
            "additional-properties",
            format!(
                "{name}: an undeclared property breaks only additionalProperties: false; rejected"
            ),
            args,
            "mcperr_unexpected",
        );
        // Without a call the tool accepts, an error that names the extra
        // property may still be about something else (a tool that quotes
        // its arguments when it refuses a title, say). Where no valid call
        // may be made (no consent for the body), no set is tried: a refusal
        // then shows the property refused only when it names it.
        let sets = if valid_calls {
            super::argument_sets(tool, MOST_ARGUMENT_SETS)
        } else {
            vec![]
        };
        case.rebase = Some(crate::case::Rebase {
            sets,
            extra: ("mcperr_unexpected".into(), json!(1)),
        });
        out.push(case);
    }
    out
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 40 {
        format!("{}… ({} chars)", &s[..30], s.len())
    } else {
        s
    }
}

/// How many valid argument sets a generated valid call tries at most.
const MOST_ARGUMENT_SETS: usize = 8;

/// A valid sample call of a tool that is safe to call (T8). It passes only
/// when the tool accepts it: a result without `isError` (whose
/// `structuredContent` fits the `outputSchema`); the executor tries the
/// next schema-derived argument set ([`super::argument_sets`]) while the
/// tool refuses, and a call refused every time is a skip. A refusal is
/// still judged (its shape, leaks in its text); the probe after it judges
/// liveness. `None` when no valid arguments can be built.
pub fn valid_call(tool: &Value) -> Option<Case> {
    let name = tool.get("name").and_then(Value::as_str)?;
    let mut sets = super::argument_sets(tool, MOST_ARGUMENT_SETS).into_iter();
    let args = sets.next()?;
    let output_schema = tool.get("outputSchema").cloned();
    // A valid call's success must be one: an error returned as a success
    // (T9) is no T8 pass, on any server.
    let mut checks = vec!["also-text", "error-as-success"];
    if output_schema.is_some() {
        checks.push("structured-output");
    }
    let mut case = Draft {
        id: format!("generated/tools/{name}/valid-call"),
        rule: mcperr_model::rules::RuleId::T8,
        spec: "",
        title: format!(
            "{name} accepts valid arguments: a result without isError, of the right shape"
        ),
        needs: vec![format!("tool:{name}")],
        method: "tools/call",
        params: json!({"name": name, "arguments": args}),
        expect: json!({"result": "$object"}),
        // A refusal is well-formed or not (judged), but never the pass: the
        // executor sends the next set, and skips when every one is refused.
        also_pass: vec![alternative(
            json!({"error": "$object"}),
            "a JSON-RPC error for a valid call: well-formed; the next argument set is tried",
            &[],
        )],
        warn: vec![],
        checks,
        profile: Default::default(),
        output_schema,
    }
    .build("generated from the tool's inputSchema (a valid call)");
    case.arguments_to_try = Some(sets.collect());
    case.takes_no_arguments = tool
        .pointer("/inputSchema/properties")
        .and_then(Value::as_object)
        .is_none_or(|p| p.is_empty());
    Some(case)
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
        for c in t4_cases(&tool, false) {
            assert!(c.request.params.unwrap().to_string().len() < 200_000);
        }
    }

    #[test]
    fn each_case_breaks_exactly_one_constraint_of_a_valid_call() {
        let tool = json!({"name": "fetch", "inputSchema": {"type": "object", "properties": {
            "url": {"type": "string", "format": "uri"},
            "limit": {"type": "integer", "minimum": 1, "maximum": 50}},
            "required": ["url", "limit"], "additionalProperties": false}});
        let cases = t4_cases(&tool, false);
        let ids: Vec<&str> = cases.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "generated/tools/fetch/type-url",
                "generated/tools/fetch/maximum-limit",
                "generated/tools/fetch/minimum-limit",
                "generated/tools/fetch/required-url",
                "generated/tools/fetch/additional-properties"
            ]
        );
        // The other argument stays valid, format included: a URL, not "mmmmmm".
        let args = &cases[1].request.params.as_ref().unwrap()["arguments"];
        assert_eq!(
            args,
            &json!({"url": "https://example.com/mcperr", "limit": 51})
        );
        let schema = &tool["inputSchema"];
        let v = validator(schema).unwrap();
        for c in &cases {
            assert!(
                !v.is_valid(&c.request.params.as_ref().unwrap()["arguments"]),
                "{}",
                c.id
            );
        }
        assert!(cases[1].title.contains("maximum 50"), "{}", cases[1].title);
    }

    #[test]
    fn deep_hostile_schemas_give_small_samples() {
        let mut s = json!({"type": "string"});
        for _ in 0..12 {
            s = json!({"type": "array", "minItems": 8, "items": s});
        }
        assert!(super::super::sample(&s).to_string().len() < 200);
    }

    #[test]
    fn a_valid_call_is_valid_and_checks_structured_output_when_declared() {
        let tool = json!({"name": "t", "inputSchema": {"type": "object", "properties": {
            "when": {"type": "string", "format": "date"}, "n": {"type": "number", "exclusiveMinimum": 0}},
            "required": ["when", "n"]}, "outputSchema": {"type": "object"}});
        let c = valid_call(&tool).unwrap();
        let args = &c.request.params.as_ref().unwrap()["arguments"];
        assert!(
            validator(&tool["inputSchema"]).unwrap().is_valid(args),
            "{args}"
        );
        assert_eq!(
            c.checks,
            ["also-text", "error-as-success", "structured-output"]
        );
        // A pattern mcperr cannot meet: no sample, so no case rather than a wrong one.
        let hard = json!({"name": "h", "inputSchema": {"type": "object", "properties": {
            "code": {"type": "string", "pattern": "^[0-9]{4}$"}}, "required": ["code"]}});
        assert!(valid_call(&hard).is_none());
        assert!(t4_cases(&hard, false).is_empty());
        assert!(!c.takes_no_arguments);
    }

    #[test]
    fn only_a_tool_without_properties_takes_no_arguments() {
        let none = json!({"name": "b", "inputSchema": {"type": "object", "properties": {}}});
        assert!(valid_call(&none).unwrap().takes_no_arguments);
        // Optional arguments: {} is one valid call, but the tool may want one.
        let optional = json!({"name": "s", "inputSchema": {"type": "object", "properties": {
            "query": {"type": "string"}}}});
        assert!(!valid_call(&optional).unwrap().takes_no_arguments);
    }
}
