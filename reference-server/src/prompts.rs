//! `prompts/list` and `prompts/get`: rules P1–P3.
//!
//! Rules only: the prompts arrive as [`crate::fixture::PromptDef`]s from the
//! handler, so this module knows no fixture in particular.

use mcperr_protocol::{codes, ErrorObject};
use serde_json::{json, Map, Value};

use crate::answer::Answer;
use crate::faults::Fault;
use crate::fixture::PromptDef;
use crate::log::{catch_panic, LogRecord};

/// The `prompts/list` result's `prompts` array.
pub fn list(prompts: &[PromptDef]) -> Value {
    prompts
        .iter()
        .map(|p| {
            let args: Vec<Value> = p
                .arguments
                .iter()
                .map(|(n, d)| json!({"name": n, "description": d, "required": true}))
                .collect();
            json!({"name": p.name, "description": p.description, "arguments": args})
        })
        .collect()
}

/// Answers one `prompts/get`.
pub fn get(prompts: &[PromptDef], fault: Option<Fault>, params: Option<&Value>) -> Answer {
    let invalid = |m: String| Answer::error(ErrorObject::new(codes::INVALID_PARAMS, m));
    let Some(name) = params.and_then(|p| p.get("name")).and_then(Value::as_str) else {
        return invalid("Invalid params: \"name\" must be a string".into());
    };
    let empty = Map::new();
    let rendered;
    let args = match params.and_then(|p| p.get("arguments")) {
        None | Some(Value::Null) => &empty,
        Some(Value::Object(a)) if a.values().all(Value::is_string) => a,
        Some(Value::Object(a)) if fault == Some(Fault::PromptArgumentsUnchecked) => {
            rendered = a
                .iter()
                .map(|(k, v)| (k.clone(), Value::String(v.to_string())))
                .collect::<Map<String, Value>>();
            &rendered
        }
        Some(_) => {
            return invalid("Invalid params: \"arguments\" must map names to strings".into())
        }
    };
    let Some(prompt) = prompts.iter().find(|p| p.name == name) else {
        let code = if fault == Some(Fault::UnknownPromptInternal) {
            codes::INTERNAL_ERROR
        } else {
            codes::INVALID_PARAMS
        };
        return Answer::error(ErrorObject::new(code, format!("Unknown prompt: {name}"))).log(
            LogRecord::info(format!("prompts/get for unknown prompt '{name}'")),
        );
    };
    let missing: Vec<&str> = prompt
        .arguments
        .iter()
        .map(|(n, _)| *n)
        .filter(|n| !args.contains_key(*n))
        .collect();
    if !missing.is_empty() && fault != Some(Fault::MissingArgumentRenders) {
        return invalid(format!(
            "Missing required arguments: {}",
            missing.join(", ")
        ))
        .log(LogRecord::info(format!(
            "Prompt '{name}' missing arguments: {}",
            missing.join(", ")
        )));
    }
    match catch_panic(|| (prompt.render)(args)).unwrap_or_else(|p| Err(vec![p.0])) {
        Ok(mut text) => {
            if fault == Some(Fault::PromptTemplateInjection) {
                // An expression language run over the rendered text: a
                // `${a*b}` an argument carried is evaluated.
                text = evaluated(&text);
            }
            Answer::result(json!({
            "description": prompt.description,
            "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
            }))
        }
        Err(chain) => {
            let mut message = format!("Error rendering prompt {name}");
            if fault == Some(Fault::PromptCrashLeaks) {
                message = format!("{message}: {}", chain.join("; "));
            }
            let log = LogRecord::error(
                format!("Prompt '{name}' raised an unexpected exception"),
                chain,
            );
            Answer::error(ErrorObject::new(codes::INTERNAL_ERROR, message)).log(log)
        }
    }
}

/// `text` with each `${A*B}` (two integers) replaced by its product, as an
/// expression language would (the `prompt-template-injection` fault).
fn evaluated(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let product = after.find('}').and_then(|end| {
            let (a, b) = after[..end].split_once('*')?;
            let value = a.trim().parse::<i64>().ok()? * b.trim().parse::<i64>().ok()?;
            Some((value, end))
        });
        match product {
            Some((value, end)) => {
                out.push_str(&value.to_string());
                rest = &after[end + 1..];
            }
            None => {
                out.push_str("${");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}
