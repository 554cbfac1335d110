//! `completion/complete` (U4): suggestions for an argument of a prompt or of
//! a resource template. What the reference refuses, and how: a reference to
//! no prompt or template, a missing or malformed `argument`, and a `ref` of
//! no known type are each -32602 (server/utilities/completion#error-handling);
//! a suggester that fails unexpectedly is -32603 without its text.

use mcperr_protocol::{codes, ErrorObject};
use serde_json::{json, Value};

use crate::answer::Answer;
use crate::faults::Fault;
use crate::fixture::{PromptDef, TemplateDef};

/// Suggestions for argument `name` of the prompt or template `target`,
/// starting with `value`; `Err` with its internal text when it fails
/// unexpectedly.
pub type Suggest = fn(target: &str, name: &str, value: &str) -> Result<Vec<String>, String>;

/// The most values a completion carries (CompleteResult: "Must not exceed 100 items").
const MAX_VALUES: usize = 100;

/// Answers one `completion/complete`.
pub fn complete(
    prompts: &[PromptDef],
    templates: &[TemplateDef],
    suggest: Suggest,
    fault: Option<Fault>,
    params: Option<&Value>,
) -> Answer {
    match check(prompts, templates, params) {
        Ok((target, name, value)) => {
            let mut values = match suggest(target, name, value) {
                Ok(values) => values,
                Err(internal) => {
                    let message = match fault {
                        Some(Fault::CompletionCrashLeaks) => internal.clone(),
                        _ => format!("Error completing {name} of {target}"),
                    };
                    let code = match fault {
                        Some(Fault::CompletionCrashInvalidParams) => codes::INVALID_PARAMS,
                        _ => codes::INTERNAL_ERROR,
                    };
                    // The headline names no value; the chain keeps the text.
                    let log = crate::log::LogRecord::error(
                        format!("Completion of {name} of {target} raised an unexpected exception"),
                        vec![internal],
                    );
                    return Answer::error(ErrorObject::new(code, message)).log(log);
                }
            };
            let total = values.len();
            values.truncate(MAX_VALUES);
            Answer::result(json!({"completion": {
                "values": values, "total": total, "hasMore": total > MAX_VALUES,
            }}))
        }
        // Under the fault the request is not validated: whatever it named
        // gets an empty completion.
        Err(_) if fault == Some(Fault::CompletionUnchecked) => {
            Answer::result(json!({"completion": {"values": [], "total": 0, "hasMore": false}}))
        }
        Err(message) => Answer::error(ErrorObject::new(codes::INVALID_PARAMS, message)),
    }
}

/// The target (prompt name or URI template), argument name and value of a
/// valid request, or why it is invalid.
fn check<'p>(
    prompts: &'p [PromptDef],
    templates: &'p [TemplateDef],
    params: Option<&'p Value>,
) -> Result<(&'p str, &'p str, &'p str), String> {
    let text = |v: Option<&'p Value>, key: &str| v.and_then(|v| v.get(key)).and_then(Value::as_str);
    let reference = params.and_then(|p| p.get("ref"));
    let argument = params.and_then(|p| p.get("argument"));
    let (Some(name), Some(value)) = (text(argument, "name"), text(argument, "value")) else {
        return Err("Invalid params: \"argument\" must have a string name and value".into());
    };
    match text(reference, "type") {
        Some("ref/prompt") => {
            let Some(wanted) = text(reference, "name") else {
                return Err("Invalid params: a ref/prompt needs a string name".into());
            };
            let prompt = prompts
                .iter()
                .find(|p| p.name == wanted)
                .ok_or_else(|| format!("Unknown prompt: {wanted}"))?;
            if !prompt.arguments.iter().any(|(n, _)| *n == name) {
                return Err(format!("Prompt {wanted} has no argument {name}"));
            }
            Ok((prompt.name, name, value))
        }
        Some("ref/resource") => {
            let Some(uri) = text(reference, "uri") else {
                return Err("Invalid params: a ref/resource needs a string uri".into());
            };
            let template = templates
                .iter()
                .find(|t| t.uri_template == uri)
                .ok_or_else(|| format!("Unknown resource template: {uri}"))?;
            if !template.uri_template.contains(&format!("{{{name}}}")) {
                return Err(format!("Resource template {uri} has no parameter {name}"));
            }
            Ok((template.uri_template, name, value))
        }
        _ => Err("Invalid params: \"ref\" must be a ref/prompt or a ref/resource".into()),
    }
}
