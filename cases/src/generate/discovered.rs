//! Cases from the resources and prompts a server lists: a read of each
//! template with a value that cannot exist (not found as the era says, or a
//! real result; never an `isError` result or empty `contents`), a read of
//! each static resource, and each prompt without its required arguments
//! (P2) or, with none required, plainly (its result must fit the schema).

use serde_json::{json, Value};

use super::{alternative, Draft};
use crate::case::Case;

/// The value put in every template variable: it names no real item (one
/// of [`crate::fuzz::inputs::MADE_UP_VALUES`], then the run's canary).
const NO_SUCH: &str = "mcperr-no-such-{{canary}}";

/// `template` with every `{var}` (any RFC 6570 operator) replaced by `value`
/// (shared with the fuzz generator).
pub(crate) fn expand(template: &str, value: &str) -> String {
    let mut out = String::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        match rest[open..].find('}') {
            Some(close) => {
                out.push_str(value);
                rest = &rest[open + close + 1..];
            }
            None => {
                out.push_str(&rest[open..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// The id of the scripted case a generated not-found read is judged as.
pub const NOT_FOUND_MODEL: &str = "resources/not-found";

/// A read of `template` (a `resources/templates/list` entry) with a value
/// that cannot exist, judged exactly as the scripted not-found case
/// (`model`, [`NOT_FOUND_MODEL`]): the same code per era and profile, the
/// same `data.uri` aspect and the `no-empty-contents` check, from the rule
/// table. Only the message is not compared (the scripted case knows the
/// fixture's words; a server's own are its own). A real result passes too:
/// a template may serve any value.
pub fn template_not_found(template: &Value, model: &Case) -> Option<Case> {
    let t = template.get("uriTemplate").and_then(Value::as_str)?;
    let uri = expand(t, NO_SUCH);
    let mut case = model.clone();
    case.id = format!("generated/resources/{t}/not-found");
    case.title = format!(
        "{t} read with a value that names nothing: judged as {NOT_FOUND_MODEL} (or real contents)"
    );
    case.needs = vec![format!("template:{t}")];
    case.request.params = Some(json!({"uri": uri}));
    if let Some(error) = case.expect.get_mut("error").and_then(Value::as_object_mut) {
        error.remove("message");
    }
    for shape in case.aspects.values_mut() {
        if let Some(u) = shape.pointer_mut("/error/data/uri") {
            *u = json!(uri);
        }
    }
    case.also_pass.push(accepts_any_value());
    case.source = format!("generated from resources/templates/list, judged as {NOT_FOUND_MODEL}");
    Some(case)
}

fn accepts_any_value() -> crate::case::Alternative {
    alternative(
        json!({"result": {"contents": "$nonempty", "isError": "$absent"}, "error": "$absent"}),
        "the template serves any value: a real result (its shape is checked)",
        &[],
    )
}

/// A read of `template` with every variable empty (`books://`), unless a
/// listed resource has that URI: an error, or real contents; never empty
/// `contents` (R1 `no-empty-contents`, by its level per era) nor an
/// `isError` result (R1). Which error is the server's to say: an empty
/// value may be malformed rather than missing.
pub fn template_empty_value(template: &Value, listed: &[Value]) -> Option<Case> {
    let t = template.get("uriTemplate").and_then(Value::as_str)?;
    let uri = expand(t, "");
    let is_listed = listed
        .iter()
        .any(|r| r.get("uri").and_then(Value::as_str) == Some(uri.as_str()));
    if is_listed || uri == t {
        return None;
    }
    let mut case = Draft {
        id: format!("generated/resources/{t}/empty-value"),
        rule: mcperr_model::rules::RuleId::R1,
        spec: "",
        title: format!("{t} read with an empty value ({uri}): an error or real contents, never empty contents or isError"),
        needs: vec![format!("template:{t}")],
        method: "resources/read",
        params: json!({"uri": uri}),
        expect: json!({"result": "$absent", "error": "$object"}),
        also_pass: vec![accepts_any_value()],
        warn: vec![crate::case::Alternative {
            pattern: json!({"result": {"isError": true}}),
            reason: "an isError result: resources have none; a failed read is a JSON-RPC error".into(),
            eras: vec![],
            aspect: Some("main".into()),
        }],
        checks: vec!["no-empty-contents"],
        profile: Default::default(),
        output_schema: None,
    }
    .build("generated from resources/templates/list (an empty value)");
    case.aspect = Some("no-empty-contents".into());
    Some(case)
}

/// A read of a static resource (a `resources/list` entry): a result whose
/// `contents` fit the era's schema.
pub fn static_read(resource: &Value) -> Option<Case> {
    let uri = resource.get("uri").and_then(Value::as_str)?;
    Some(
        Draft {
            id: format!("generated/resources/{uri}/read"),
            rule: mcperr_model::rules::RuleId::J1,
            spec: "",
            title: format!("{uri}, a listed resource, reads as contents that fit the schema"),
            needs: vec![],
            method: "resources/read",
            params: json!({"uri": uri}),
            expect: json!({"result": {"contents": "$array"}, "error": "$absent"}),
            // Whether a listed resource can be read now is the server's to
            // say; what it answers must fit the schema either way.
            also_pass: vec![alternative(
                json!({"error": "$object"}),
                "a JSON-RPC error: the resource is listed but cannot be read now",
                &[],
            )],
            warn: vec![],
            checks: vec![],
            profile: Default::default(),
            output_schema: None,
        }
        .build("generated from resources/list"),
    )
}

/// The cases of one `prompts/list` entry: without its required arguments
/// (P2: -32602), or plainly when none is required (a result that fits).
pub fn prompt_cases(prompt: &Value) -> Vec<Case> {
    let Some(name) = prompt.get("name").and_then(Value::as_str) else {
        return vec![];
    };
    let required: Vec<&str> = prompt
        .get("arguments")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter(|x| x.get("required") == Some(&Value::Bool(true)))
                .filter_map(|x| x.get("name").and_then(Value::as_str))
                .collect()
        })
        .unwrap_or_default();
    let needs = vec![format!("prompt:{name}")];
    let case = if required.is_empty() {
        Draft {
            id: format!("generated/prompts/{name}/render"),
            rule: mcperr_model::rules::RuleId::J1,
            spec: "",
            title: format!("{name}, which needs no argument, renders messages that fit the schema"),
            needs,
            method: "prompts/get",
            params: json!({"name": name}),
            expect: json!({"result": {"messages": "$array"}, "error": "$absent"}),
            also_pass: vec![alternative(
                json!({"error": "$object"}),
                "a JSON-RPC error: the server's choice for a plain render; its shape is checked",
                &[],
            )],
            warn: vec![],
            checks: vec![],
            profile: Default::default(),
            output_schema: None,
        }
    } else {
        Draft {
            id: format!("generated/prompts/{name}/missing-arguments"),
            rule: mcperr_model::rules::RuleId::P2,
            spec: "",
            title: format!(
                "{name} without its required {} is -32602",
                required.join(", ")
            ),
            needs,
            method: "prompts/get",
            params: json!({"name": name, "arguments": {}}),
            expect: json!({"result": "$absent", "error": {"code": mcperr_protocol::codes::INVALID_PARAMS}}),
            also_pass: vec![],
            warn: vec![],
            checks: vec![],
            profile: Default::default(),
            output_schema: None,
        }
    };
    vec![case.build("generated from prompts/list")]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_expand_every_variable() {
        assert_eq!(expand("books://{title}", "X"), "books://X");
        assert_eq!(expand("a://{x}/b/{+y}{?q}", "V"), "a://V/b/VV");
        assert_eq!(expand("a://{broken", "V"), "a://{broken");
        // The not-found value is one the oracle knows as made up.
        assert!(crate::fuzz::inputs::names_made_up_value(&expand(
            "a://{x}", NO_SUCH
        )));
    }

    #[test]
    fn prompts_with_required_arguments_get_p2_the_others_a_plain_render() {
        let p = prompt_cases(
            &json!({"name": "greet", "arguments": [{"name": "name", "required": true}]}),
        );
        assert_eq!(
            (p[0].rule.as_str(), p[0].id.as_str()),
            ("P2", "generated/prompts/greet/missing-arguments")
        );
        let p = prompt_cases(&json!({"name": "tip"}));
        assert_eq!(p[0].rule, "J1");
    }
}
