//! The Bookshop fixture (described in the README): the tools, resource templates and
//! prompts every cooperative case relies on, with their exact texts.
//!
//! Bodies are ordinary functions. Their error side mirrors the three kinds of
//! the source documents: a tool error the model reads, a protocol error
//! forwarded verbatim, and anything else (an `Err` crash or a real panic),
//! which the dispatch layer turns into a crash that hides its text.
//!
//! Built from [`crate::fixture`]'s types alone: the rule modules never import
//! this one; [`crate::handler`] hands them these definitions.

use mcperr_protocol::ErrorObject;
use serde_json::{json, Map, Value};

use crate::fixture::{
    FixtureState, PromptDef, ResourceFailure, TaskSupport, TemplateDef, ToolDef, ToolFailure,
    ToolOutput,
};

/// The catalog both `get_author` and `books://{title}` read.
pub const CATALOG: &[(&str, &str)] =
    &[("Dune", "Frank Herbert"), ("Neuromancer", "William Gibson")];

fn author(title: &str) -> Option<&'static str> {
    CATALOG.iter().find(|(t, _)| *t == title).map(|(_, a)| *a)
}

/// Python's `repr()` of a string, as the SDK docs' `{title!r}` produces:
/// single quotes unless the text holds a single quote and no double quote.
pub fn py_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

fn not_in_catalog(title: &str) -> String {
    format!("No book titled {} in the catalog.", py_repr(title))
}

fn str_arg<'a>(args: &'a Map<String, Value>, key: &str) -> &'a str {
    // Arguments were validated against the inputSchema before the body runs.
    args.get(key).and_then(Value::as_str).unwrap_or_default()
}

fn get_author(_: &FixtureState, args: &Map<String, Value>) -> Result<ToolOutput, ToolFailure> {
    let title = str_arg(args, "title");
    match author(title) {
        Some(a) => Ok(ToolOutput::text(a)),
        None => Err(ToolFailure::Tool(not_in_catalog(title))),
    }
}

fn raise_protocol_error(
    _: &FixtureState,
    args: &Map<String, Value>,
) -> Result<ToolOutput, ToolFailure> {
    Err(ToolFailure::Protocol(ErrorObject {
        code: mcperr_protocol::codes::Code(
            args.get("code").and_then(Value::as_i64).unwrap_or_default(),
        ),
        message: str_arg(args, "message").to_string(),
        data: args.get("data").cloned(),
    }))
}

fn crash(_: &FixtureState, args: &Map<String, Value>) -> Result<ToolOutput, ToolFailure> {
    // A real panic: the dispatch layer must survive it and hide its text.
    let secret = str_arg(args, "secret");
    panic!("vault lookup failed: connection postgres://admin:{secret}@db.internal/vault refused")
}

fn limited(shop: &FixtureState, args: &Map<String, Value>) -> Result<ToolOutput, ToolFailure> {
    shop.count_limited_run();
    let limit = args.get("limit").cloned().unwrap_or(Value::Null);
    Ok(ToolOutput::text(format!("ok {limit}")))
}

fn limited_calls(shop: &FixtureState, _: &Map<String, Value>) -> Result<ToolOutput, ToolFailure> {
    Ok(ToolOutput::structured(
        json!({"count": shop.limited_runs()}),
    ))
}

/// Most steps `slow` takes: half a second of work in all.
pub const SLOW_MAX_STEPS: u32 = 50;

fn slow(_: &FixtureState, args: &Map<String, Value>) -> Result<ToolOutput, ToolFailure> {
    // The schema bounds steps to 1..=SLOW_MAX_STEPS; the edge paces them.
    let steps = args.get("steps").and_then(Value::as_u64).unwrap_or(1) as u32;
    Ok(ToolOutput::after_steps(format!("done {steps}"), steps))
}

/// The tool that may only be called as a task (2025-11-25).
pub const TASK_ONLY: &str = "reindex";

/// The shelves `reindex` knows.
pub const SHELVES: &[&str] = &["fiction", "poetry"];

fn reindex(_: &FixtureState, args: &Map<String, Value>) -> Result<ToolOutput, ToolFailure> {
    let shelf = str_arg(args, "shelf");
    if SHELVES.contains(&shelf) {
        Ok(ToolOutput::after_steps(format!("reindexed {shelf}"), 2))
    } else {
        Err(ToolFailure::Tool(format!(
            "No shelf named {}.",
            py_repr(shelf)
        )))
    }
}

/// The tool that needs the client's elicitation capability.
pub const NEEDS_ELICITATION: &str = "confirm_purchase";

fn confirm_purchase(
    _: &FixtureState,
    args: &Map<String, Value>,
) -> Result<ToolOutput, ToolFailure> {
    // Reached only where the client's capability is not asked for
    // (2025-11-25, which has no -32021): there is no one to ask.
    let title = str_arg(args, "title");
    Err(ToolFailure::Tool(format!(
        "Cannot confirm the purchase of {}: the client offers no way to ask the user.",
        py_repr(title)
    )))
}

/// The tool whose success updates the subscribers of a book's URI.
pub const RESTOCK: &str = "restock";

/// The tool whose success ends every subscription.
pub const CLOSE_SHOP: &str = "close_shop";

/// The resource URI of a book (the `books://{title}` template's).
pub fn book_uri(title: &str) -> String {
    format!("books://{title}")
}

fn shelve_book(_: &FixtureState, args: &Map<String, Value>) -> Result<ToolOutput, ToolFailure> {
    let slot = args.get("slot").cloned().unwrap_or(Value::Null);
    Ok(ToolOutput::text(format!(
        "Shelved {} at {} {}.",
        str_arg(args, "title"),
        slot[0].as_str().unwrap_or_default(),
        slot[1]
    )))
}

fn import_catalog(_: &FixtureState, _: &Map<String, Value>) -> Result<ToolOutput, ToolFailure> {
    // Reached only under ref-permissive: the schema cannot be resolved.
    Ok(ToolOutput::text("Imported."))
}

fn restock(_: &FixtureState, args: &Map<String, Value>) -> Result<ToolOutput, ToolFailure> {
    let title = str_arg(args, "title");
    match author(title) {
        Some(_) => Ok(ToolOutput::text(format!("Restocked {title}."))),
        None => Err(ToolFailure::Tool(not_in_catalog(title))),
    }
}

fn close_shop(_: &FixtureState, _: &Map<String, Value>) -> Result<ToolOutput, ToolFailure> {
    Ok(ToolOutput::text("Closed for the day."))
}

fn branch_hours(_: &FixtureState, args: &Map<String, Value>) -> Result<ToolOutput, ToolFailure> {
    let day = args.get("day").and_then(Value::as_u64).unwrap_or(1);
    let opens = if day == 7 { 11 } else { 9 };
    Ok(ToolOutput::text(format!(
        "{} opens at {opens}:00 on day {day}",
        str_arg(args, "branch")
    )))
}

fn bad_output(_: &FixtureState, _: &Map<String, Value>) -> Result<ToolOutput, ToolFailure> {
    Ok(ToolOutput::structured(json!({"temperature": "hot"})))
}

/// The Bookshop's tools, in `tools/list` order.
///
/// Long by design: a table (each tool's name, schemas, annotations and
/// body), read top to bottom as DESIGN.md's fixture contract lists them.
pub fn tools() -> Vec<ToolDef> {
    let string_arg = |name: &str, desc: &str| {
        json!({"type": "object", "properties": {name: {"type": "string", "description": desc}},
               "required": [name], "additionalProperties": false})
    };
    vec![
        ToolDef {
            name: "get_author",
            description: "Look up the author of a book in the catalog.",
            input_schema: string_arg("title", "The book's title."),
            output_schema: None,
            read_only: true,
            task_support: TaskSupport::Forbidden,
            body: get_author,
        },
        ToolDef {
            name: "raise_protocol_error",
            description: "Fail the request with exactly the given JSON-RPC error.",
            input_schema: json!({"type": "object", "properties": {
                    "code": {"type": "integer"}, "message": {"type": "string"}, "data": {}},
                "required": ["code", "message"], "additionalProperties": false}),
            output_schema: None,
            read_only: false,
            // 2025-11-25: a task whose call ends in this JSON-RPC error is
            // what tasks/result must return verbatim (K1 result-same-error).
            task_support: TaskSupport::Optional,
            body: raise_protocol_error,
        },
        ToolDef {
            name: "crash",
            description: "Fail unexpectedly; the failure's text contains the secret.",
            input_schema: string_arg("secret", "Text the crash must never reveal."),
            output_schema: None,
            read_only: false,
            task_support: TaskSupport::Forbidden,
            body: crash,
        },
        ToolDef {
            name: "limited",
            description: "Echo a limit between 1 and 50; counts how often it ran.",
            input_schema: json!({"type": "object", "properties": {
                    "limit": {"type": "integer", "minimum": 1, "maximum": 50}},
                "required": ["limit"], "additionalProperties": false}),
            output_schema: None,
            read_only: false,
            task_support: TaskSupport::Forbidden,
            body: limited,
        },
        ToolDef {
            name: "limited_calls",
            description: "How often the body of `limited` has run.",
            input_schema: json!({"type": "object", "properties": {}, "additionalProperties": false}),
            output_schema: Some(
                json!({"type": "object", "properties": {"count": {"type": "integer"}},
                "required": ["count"]}),
            ),
            read_only: true,
            task_support: TaskSupport::Forbidden,
            body: limited_calls,
        },
        ToolDef {
            name: "bad_output",
            description: "Produce output that fails its own outputSchema.",
            input_schema: json!({"type": "object", "properties": {}, "additionalProperties": false}),
            output_schema: Some(
                json!({"type": "object", "properties": {"temperature": {"type": "number"}},
                "required": ["temperature"]}),
            ),
            read_only: true,
            task_support: TaskSupport::Forbidden,
            body: bad_output,
        },
        ToolDef {
            name: NEEDS_ELICITATION,
            description: "Ask the user to confirm buying a book; needs the client's elicitation capability (2026-07-28: without it, -32021).",
            input_schema: string_arg("title", "The book's title."),
            output_schema: None,
            read_only: false,
            // 2025-11-25 over stdio: as a task it waits (input_required) for
            // the elicitation it sends with the task's related-task _meta.
            task_support: TaskSupport::Optional,
            body: confirm_purchase,
        },
        ToolDef {
            name: "slow",
            description: "With a progressToken, work for `steps` steps of 10 ms, reporting progress after each; without one, answer at once. A cancelled call stops and is not answered.",
            input_schema: json!({"type": "object", "properties": {
                    "steps": {"type": "integer", "minimum": 1, "maximum": SLOW_MAX_STEPS}},
                "required": ["steps"], "additionalProperties": false}),
            output_schema: None,
            read_only: true,
            task_support: TaskSupport::Optional,
            body: slow,
        },
        ToolDef {
            name: "branch_hours",
            description: "When a branch of the shop opens. Over HTTP (2026-07-28) branch and day are mirrored into the Mcp-Param-Branch and Mcp-Param-Day headers (x-mcp-header).",
            input_schema: json!({"type": "object", "properties": {
                    "branch": {"type": "string", "description": "The branch, any name.", "x-mcp-header": "Branch"},
                    "day": {"type": "integer", "minimum": 1, "maximum": 7,
                        "description": "The day of the week, 1 to 7; Monday when left out.", "x-mcp-header": "Day"}},
                "required": ["branch"], "additionalProperties": false}),
            output_schema: None,
            read_only: true,
            task_support: TaskSupport::Forbidden,
            body: branch_hours,
        },
        ToolDef {
            name: "shelve_book",
            description: "Put a book on a shelf slot: slot is [shelf, position], read as JSON Schema 2020-12 (prefixItems, and items: false for nothing more).",
            input_schema: json!({"type": "object", "properties": {
                    "title": {"type": "string"},
                    "slot": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer", "minimum": 1}],
                        "items": false, "minItems": 2}},
                "required": ["title", "slot"], "additionalProperties": false}),
            output_schema: None,
            read_only: false,
            task_support: TaskSupport::Forbidden,
            body: shelve_book,
        },
        ToolDef {
            name: "import_catalog",
            description: "Import a catalog; its source's schema is an external $ref no one can resolve, so every call is refused.",
            input_schema: json!({"type": "object", "properties": {
                    "source": {"$ref": "https://schemas.bookshop.invalid/catalog-source.json"}},
                "required": ["source"]}),
            output_schema: None,
            read_only: false,
            task_support: TaskSupport::Forbidden,
            body: import_catalog,
        },
        ToolDef {
            name: RESTOCK,
            description: "Restock a book of the catalog. 2026-07-28 over stdio: every subscriptions/listen that lists its books://{title} URI gets a notifications/resources/updated.",
            input_schema: string_arg("title", "The book's title."),
            output_schema: None,
            read_only: false,
            task_support: TaskSupport::Forbidden,
            body: restock,
        },
        ToolDef {
            name: CLOSE_SHOP,
            description: "Close the shop for the day. 2026-07-28 over stdio: the server ends every open subscriptions/listen, as it would at shutdown.",
            input_schema: json!({"type": "object", "properties": {}, "additionalProperties": false}),
            output_schema: None,
            read_only: false,
            task_support: TaskSupport::Forbidden,
            body: close_shop,
        },
        ToolDef {
            name: TASK_ONLY,
            description: "Rebuild a shelf's index (2025-11-25: only as a task, taskSupport \"required\"); two steps of work. An unknown shelf fails the task.",
            input_schema: string_arg("shelf", "The shelf: fiction or poetry."),
            output_schema: None,
            read_only: false,
            task_support: TaskSupport::Required,
            body: reindex,
        },
    ]
}

fn read_book(_: &FixtureState, title: &str) -> Result<String, ResourceFailure> {
    match author(title) {
        Some(a) => Ok(format!("{title} by {a}")),
        None => Err(ResourceFailure::NotFound(not_in_catalog(title))),
    }
}

fn read_fail(_: &FixtureState, name: &str) -> Result<String, ResourceFailure> {
    Err(ResourceFailure::Failed(format!(
        "Backend unavailable for {name}"
    )))
}

fn read_crash(_: &FixtureState, secret: &str) -> Result<String, ResourceFailure> {
    let inner = format!("open /var/lib/bookshop/{secret}.db: permission denied");
    Err(ResourceFailure::Crash(vec![
        "storage backend error: could not load the catalog".to_string(),
        format!("caused by: {inner}"),
    ]))
}

fn read_mcperror(_: &FixtureState, code: &str) -> Result<String, ResourceFailure> {
    match code.parse::<i64>() {
        Ok(n) => Err(ResourceFailure::Protocol(ErrorObject::with_data(
            mcperr_protocol::codes::Code(n),
            format!("Resource protocol error {code}"),
            json!({"code": code}),
        ))),
        // Like Python's int("abc"): a crash, not a protocol error.
        Err(e) => Err(ResourceFailure::Crash(vec![format!(
            "invalid integer {code:?}: {e}"
        )])),
    }
}

/// A file of the back office: `name` is one file name, percent-decoded
/// first, so that an encoded `..%2F` cannot climb out of the directory
/// (server/resources#security-considerations).
fn read_back_office(_: &FixtureState, name: &str) -> Result<String, ResourceFailure> {
    let name = crate::fixture::percent_decoded(name);
    let plain = !name.is_empty() && !name.starts_with('.') && !name.contains(['/', '\\']);
    match plain
        .then(|| crate::fixture::file(&format!("/bookshop/{name}")))
        .flatten()
    {
        Some(text) => Ok(text.to_string()),
        None => Err(ResourceFailure::NotFound(format!(
            "No file named {} in the back office.",
            py_repr(&name)
        ))),
    }
}

/// The Bookshop's resource templates, in `resources/templates/list` order.
pub fn templates() -> Vec<TemplateDef> {
    vec![
        TemplateDef {
            uri_template: "books://{title}",
            name: "book",
            description: "The catalog entry for one book.",
            read: read_book,
        },
        TemplateDef {
            uri_template: "fail://{name}",
            name: "fail",
            description: "A backend that is down (ResourceError).",
            read: read_fail,
        },
        TemplateDef {
            uri_template: "crash://{secret}",
            name: "crash",
            description: "A resource that crashes; its text contains the secret.",
            read: read_crash,
        },
        TemplateDef {
            uri_template: "mcperror://{code}",
            name: "mcperror",
            description: "A resource that raises a protocol error with the given code.",
            read: read_mcperror,
        },
        TemplateDef {
            uri_template: "file:///bookshop/{name}",
            name: "back-office",
            description: "A file of the shop's back office, by its file name.",
            read: read_back_office,
        },
    ]
}

fn greet(args: &Map<String, Value>) -> Result<String, Vec<String>> {
    Ok(format!("Hello, {}!", str_arg(args, "name")))
}

fn crash_prompt(args: &Map<String, Value>) -> Result<String, Vec<String>> {
    let secret = str_arg(args, "secret");
    panic!("template engine failed on secret {secret}")
}

/// Completion suggestions: catalog titles for `books://{title}`, nothing
/// for any other argument.
pub fn suggest(target: &str, name: &str, value: &str) -> Result<Vec<String>, String> {
    // crash_prompt's secret: the lookup behind its suggestions fails, and
    // its error names what it looked up (U4 internal-error).
    if (target, name) == ("crash_prompt", "secret") {
        return Err(format!(
            "secret store lookup failed for prefix {value:?}: connection refused"
        ));
    }
    if (target, name) != ("books://{title}", "title") {
        return Ok(Vec::new());
    }
    Ok(CATALOG
        .iter()
        .filter(|(t, _)| t.starts_with(value))
        .map(|(t, _)| t.to_string())
        .collect())
}

/// The Bookshop's prompts, in `prompts/list` order.
pub fn prompts() -> Vec<PromptDef> {
    vec![
        PromptDef {
            name: "greet",
            description: "Greet someone by name.",
            arguments: &[("name", "Who to greet.")],
            render: greet,
        },
        PromptDef {
            name: "crash_prompt",
            description: "A prompt that crashes; its text contains the secret.",
            arguments: &[("secret", "Text the crash must never reveal.")],
            render: crash_prompt,
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::py_repr;

    #[test]
    fn repr_matches_python() {
        assert_eq!(py_repr("Nothing"), "'Nothing'");
        assert_eq!(py_repr("O'Brien"), "\"O'Brien\"");
        assert_eq!(py_repr("a'b\"c"), "'a\\'b\"c'");
        assert_eq!(py_repr("x\ny\\"), "'x\\ny\\\\'");
    }
}
