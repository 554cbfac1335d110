//! `tools/list` and `tools/call`: rules T1–T9.
//!
//! A call goes through the same gates as in the MCP Python SDK: params shape
//! (T6), tool lookup (T5), `inputSchema` validation before the body (T4), the
//! body itself with panics caught (T1–T3), and `outputSchema` validation of
//! what it produced (T7, T8).
//!
//! Rules only: the tools arrive as [`crate::fixture::ToolDef`]s from the
//! handler, so this module knows no fixture in particular.

use mcperr_protocol::{codes, ErrorObject};
use serde_json::{json, Map, Value};
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::answer::Answer;
use crate::faults::{declare_faults, Fault};
use crate::fixture::{FixtureState, TaskSupport, ToolDef, ToolFailure, ToolOutput};
use crate::log::{catch_panic, LogRecord};

struct Tool {
    def: ToolDef,
    /// The compiled `inputSchema`, or why it does not compile (an
    /// unresolvable external `$ref`): then every call is refused.
    input: Result<jsonschema::Validator, String>,
    output: Option<jsonschema::Validator>,
}

declare_faults! {
    ListShrinksAfterFailure => "list-shrinks-after-failure", T10,
        "tools/list leaves out one tool more for each tools/call of a tool that does not exist (all are listed again once none is left)";
}

/// The tools a server offers, with their schemas compiled once.
pub struct ToolSet {
    tools: Vec<Tool>,
    /// The era has tasks (2025-11-25): `execution.taskSupport` is listed.
    tasks: bool,
    /// Under `list-shrinks-after-failure`: the calls of a tool that does
    /// not exist so far, each hiding one more tool from `tools/list`.
    shrinks: Option<AtomicUsize>,
}

fn compile(schema: &Value) -> jsonschema::Validator {
    jsonschema::validator_for(schema).expect("the Bookshop's schemas are valid JSON Schema")
}

/// An `inputSchema` read in its dialect: 2020-12 unless it names another
/// (basic/index#implementation-requirements); under `schema-draft7` every
/// schema is read as draft 7. One that does not compile (an external `$ref`
/// no one can resolve) is an error, not a permissive schema: "Schemas that
/// fail to validate due to an unresolved external `$ref` SHOULD be rejected
/// rather than silently treated as permissive" (under `ref-permissive` it
/// is `true`).
fn compile_input(schema: &Value, fault: Option<Fault>) -> Result<jsonschema::Validator, String> {
    let compiled = if fault == Some(Fault::SchemaDraft7) {
        jsonschema::draft7::new(schema)
    } else {
        jsonschema::validator_for(schema)
    };
    match compiled {
        Ok(v) => Ok(v),
        Err(_) if fault == Some(Fault::RefPermissive) => Ok(compile(&json!(true))),
        Err(e) => Err(e.to_string()),
    }
}

/// Validation errors as one line naming each failing field.
fn describe_errors(
    validator: &jsonschema::Validator,
    instance: &Value,
) -> Option<(String, Vec<String>)> {
    let mut messages = Vec::new();
    let mut fields = Vec::new();
    for err in validator.iter_errors(instance) {
        let path = err
            .instance_path()
            .as_str()
            .trim_start_matches('/')
            .replace('/', ".");
        let field = match err.kind() {
            jsonschema::error::ValidationErrorKind::Required { property } => property
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| property.to_string()),
            jsonschema::error::ValidationErrorKind::AdditionalProperties { unexpected } => {
                unexpected.join(",")
            }
            _ => path.clone(),
        };
        messages.push(if path.is_empty() {
            err.to_string()
        } else {
            format!("{path}: {err}")
        });
        fields.push(if field.is_empty() {
            "(root)".to_string()
        } else {
            field
        });
    }
    (!messages.is_empty()).then(|| (messages.join("; "), fields))
}

fn tool_error(name: &str, message: &str) -> Value {
    json!({"content": [{"type": "text", "text": format!("Error executing tool {name}: {message}")}], "isError": true})
}

impl ToolSet {
    /// Compiles the schemas of `defs`. Without `tasks` (an era that has
    /// none) the tools that may only be called as a task are left out.
    pub fn new(defs: Vec<ToolDef>, tasks: bool, fault: Option<Fault>) -> Self {
        let tools = defs
            .into_iter()
            .filter(|def| tasks || def.task_support != TaskSupport::Required)
            .map(|def| Tool {
                input: compile_input(&def.input_schema, fault),
                output: def.output_schema.as_ref().map(compile),
                def,
            })
            .collect();
        let shrinks = (fault == Some(Fault::ListShrinksAfterFailure)).then(AtomicUsize::default);
        ToolSet {
            tools,
            tasks,
            shrinks,
        }
    }

    /// How the tool `name` may be called as a task, if it is a tool here.
    pub fn task_support(&self, name: &str) -> Option<TaskSupport> {
        let tool = self.tools.iter().find(|t| t.def.name == name)?;
        Some(tool.def.task_support)
    }

    /// The `tools/list` result's `tools` array.
    pub fn list(&self) -> Value {
        let hidden = self
            .shrinks
            .as_ref()
            .map_or(0, |n| n.load(Ordering::SeqCst) % (self.tools.len() + 1));
        self.tools[..self.tools.len() - hidden]
            .iter()
            .map(|t| {
                let mut v = json!({"name": t.def.name, "description": t.def.description, "inputSchema": t.def.input_schema});
                if let Some(o) = &t.def.output_schema {
                    v["outputSchema"] = o.clone();
                }
                if t.def.read_only {
                    v["annotations"] = json!({"readOnlyHint": true});
                }
                if let (true, Some(support)) = (self.tasks, t.def.task_support.declared()) {
                    v["execution"] = json!({"taskSupport": support});
                }
                v
            })
            .collect()
    }

    /// Answers one `tools/call`.
    pub fn call(
        &self,
        shop: &FixtureState,
        fault: Option<Fault>,
        params: Option<&Value>,
    ) -> Answer {
        self.call_gated(shop, fault, params, || None)
    }

    /// [`ToolSet::call`], with `gate` asked once the call is well-formed
    /// and its arguments valid, before the body runs: its answer, if any,
    /// is the call's (a capability the client lacks, say).
    pub fn call_gated(
        &self,
        shop: &FixtureState,
        fault: Option<Fault>,
        params: Option<&Value>,
        gate: impl FnOnce() -> Option<Answer>,
    ) -> Answer {
        let malformed = |why: &str| {
            let code = if fault == Some(Fault::MalformedParamsInternal) {
                codes::INTERNAL_ERROR
            } else {
                codes::INVALID_PARAMS
            };
            Answer::error(ErrorObject::new(code, format!("Invalid params: {why}")))
        };
        let Some(params) = params.and_then(Value::as_object) else {
            return malformed("tools/call needs params with a tool name");
        };
        let Some(name) = params.get("name").and_then(Value::as_str) else {
            return malformed("\"name\" must be a string");
        };
        let empty = Map::new();
        let args = match params.get("arguments") {
            None | Some(Value::Null) => &empty,
            Some(Value::Object(a)) => a,
            Some(_) => return malformed("\"arguments\" must be an object"),
        };
        let Some(tool) = self.tools.iter().find(|t| t.def.name == name) else {
            let msg = format!("Unknown tool: {name}");
            let log = LogRecord::info(format!("tools/call for unknown tool '{name}'"));
            if let Some(calls) = &self.shrinks {
                calls.fetch_add(1, Ordering::SeqCst);
            }
            return if fault == Some(Fault::UnknownToolResult) {
                Answer::result(json!({"content": [{"type": "text", "text": msg}], "isError": true}))
                    .log(log)
            } else {
                Answer::error(ErrorObject::new(codes::INVALID_PARAMS, msg)).log(log)
            };
        };
        if fault == Some(Fault::SilentTool) && name == "get_author" {
            return Answer::silent();
        }
        let title = args
            .get("title")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if fault == Some(Fault::NonAsciiTitleLeaks) && name == "get_author" && !title.is_ascii() {
            // As a body that slices bytes would: it panics, and the panic text goes out.
            let c = title.chars().find(|c| !c.is_ascii()).unwrap_or_default();
            let message = format!("panicked at reference-server/src/bookshop.rs:64:17: byte index 1 is not a char boundary; it is inside {c:?}");
            return Answer::result(tool_error(name, &message));
        }
        if let Some(refusal) = refused_arguments(tool, name, args, fault) {
            return refusal;
        }
        if let Some(answer) = gate() {
            return answer;
        }
        // In the body, after validation: pathological but valid titles.
        let blank = args
            .get("title")
            .and_then(Value::as_str)
            .is_some_and(|t| t.trim().is_empty());
        if fault == Some(Fault::BlankTitleLeaksDsn) && name == "get_author" && blank {
            // As a lookup that reports its failed query with the whole config would.
            let message = "catalog lookup failed for '' on postgres://bookshop:hunter2-s3cret@catalog-db.internal:5432/books";
            return Answer::result(tool_error(name, message));
        }
        if fault == Some(Fault::LongTitleSilent)
            && name == "get_author"
            && title.chars().count() >= 1000
        {
            // As a body stuck on a pathological input would: no answer at all.
            return Answer::silent();
        }
        let outcome = catch_panic(|| (tool.def.body)(shop, args))
            .unwrap_or_else(|panic| Err(ToolFailure::Crash(vec![panic.0])));
        match checked_output(tool, outcome, fault) {
            Ok(out) => succeeded(out, fault),
            Err(ToolFailure::Tool(message)) => tool_failed(name, message, fault),
            Err(ToolFailure::Protocol(e)) => protocol_failed(name, e, fault),
            Err(ToolFailure::Crash(chain)) => crashed(name, chain, fault),
        }
    }
}

/// The refusal of arguments that fail the tool's `inputSchema` (or of a
/// schema that cannot be resolved), as a tool error, before the body runs;
/// `None` when they are valid or a fault skips the validation.
fn refused_arguments(
    tool: &Tool,
    name: &str,
    args: &Map<String, Value>,
    fault: Option<Fault>,
) -> Option<Answer> {
    let seven = fault == Some(Fault::LimitMultipleOf7)
        && name == "limited"
        && args
            .get("limit")
            .and_then(Value::as_i64)
            .is_some_and(|l| l > 50 && l % 7 == 0);
    if fault == Some(Fault::NoInputValidation) || seven {
        return None;
    }
    let input = match &tool.input {
        Ok(v) => v,
        Err(why) => {
            let message = format!("Invalid arguments: the inputSchema cannot be resolved: {why}");
            let log = LogRecord::info(format!("Tool '{name}' refused: {message}"));
            return Some(Answer::result(tool_error(name, &message)).log(log));
        }
    };
    let (message, fields) = describe_errors(input, &Value::Object(args.clone()))?;
    let log = LogRecord::info(format!(
        "Tool '{name}' rejected invalid arguments: {}",
        fields.join(", ")
    ));
    Some(Answer::result(tool_error(name, &format!("Invalid arguments: {message}"))).log(log))
}

/// A body's success whose `structuredContent` fails the tool's
/// `outputSchema` becomes a crash (never the invalid value), unless a
/// fault leaves the output unchecked.
fn checked_output(
    tool: &Tool,
    outcome: Result<ToolOutput, ToolFailure>,
    fault: Option<Fault>,
) -> Result<ToolOutput, ToolFailure> {
    let out = outcome?;
    match (&tool.output, &out.structured) {
        (Some(v), structured) if fault != Some(Fault::OutputUnchecked) => {
            let instance = structured.clone().unwrap_or(Value::Null);
            match describe_errors(v, &instance) {
                Some((msg, _)) => Err(ToolFailure::Crash(vec![format!(
                    "output validation failed: {msg}"
                )])),
                None => Ok(out),
            }
        }
        _ => Ok(out),
    }
}

/// A successful call's result: its content and `structuredContent`.
fn succeeded(out: ToolOutput, fault: Option<Fault>) -> Answer {
    let steps = out.steps;
    let mut result = json!({"content": out.content});
    if let Some(s) = out.structured {
        if fault == Some(Fault::StructuredWithoutText) {
            // As a tool that writes its own summary for the model would.
            result["content"] = json!([{"type": "text", "text": "see structuredContent"}]);
        }
        result["structuredContent"] = s;
    }
    if fault == Some(Fault::SuccessFlaggedError) {
        result["isError"] = true.into();
    }
    Answer::result(result).after_steps(steps)
}

/// A tool error the model can act on: an `isError` result with its message.
fn tool_failed(name: &str, message: String, fault: Option<Fault>) -> Answer {
    let log = LogRecord::info(format!("Tool '{name}' failed: {message}"));
    match fault {
        Some(Fault::ErrorReturnedAsSuccess) => Answer::result(
            json!({"content": [{"type": "text", "text": format!("Error: {message}")}]}),
        ),
        Some(Fault::ToolErrorAsProtocol) => {
            Answer::error(ErrorObject::new(codes::INVALID_PARAMS, message))
        }
        Some(Fault::ToolErrorLeaksKey) => Answer::result(tool_error(
            name,
            // As a client library that quotes its configuration would.
            &format!("{message} (catalog client api_key=sk-proj-Xq7Lm2Rt9Vw4Zb8Nc3Hd6Jk1Pf5Gs0Ty)"),
        )),
        Some(Fault::ToolErrorStructured) => {
            let mut r = tool_error(name, &message);
            r["structuredContent"] = json!({"error": message});
            Answer::result(r)
        }
        _ => Answer::result(tool_error(name, &message)),
    }
    .log(log)
}

/// A protocol error the body raised: the JSON-RPC error, verbatim.
fn protocol_failed(name: &str, mut e: ErrorObject, fault: Option<Fault>) -> Answer {
    match fault {
        Some(Fault::ProtocolErrorRecoded) => {
            e.code = codes::INTERNAL_ERROR;
            Answer::error(e)
        }
        Some(Fault::ProtocolErrorNoData) => {
            e.data = None;
            Answer::error(e)
        }
        Some(Fault::ProtocolErrorAsResult) => Answer::result(tool_error(name, &e.message)),
        _ => Answer::error(e),
    }
}

/// A crash: an `isError` result that names the tool and hides the
/// exception's text, which goes to the log.
fn crashed(name: &str, chain: Vec<String>, fault: Option<Fault>) -> Answer {
    let mut text = format!("Error executing tool {name}");
    if fault == Some(Fault::CrashLeaksText) {
        text = format!("{text}: {}", chain.join("; "));
    }
    let mut result = json!({"content": [{"type": "text", "text": text}], "isError": true});
    match fault {
        Some(Fault::CrashNotError) => result["isError"] = false.into(),
        Some(Fault::CrashLeaksInMeta) => result["_meta"] = json!({"exception": chain.join("; ")}),
        _ => {}
    }
    let log = LogRecord::error(
        format!("Tool '{name}' raised an unexpected exception"),
        chain,
    );
    let answer = Answer::result(result).log(log);
    if fault == Some(Fault::ExitAfterCrash) {
        answer.then_exit()
    } else {
        answer
    }
}
