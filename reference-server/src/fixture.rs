//! The types a fixture is made of: tool, resource-template and prompt
//! definitions, the ways their bodies fail, and the mutable state they share.
//!
//! This module depends on nothing else in the crate. The concrete fixture
//! ([`crate::bookshop`]) fills these types in; the rule modules
//! ([`crate::tools`], [`crate::resources`], [`crate::prompts`]) run them.
//! Keeping the types here is what lets both sides meet without a cycle.

use std::sync::atomic::{AtomicU64, Ordering};

use mcperr_protocol::ErrorObject;
use serde_json::{json, Map, Value};

/// Mutable fixture state, shared by every connection: how often `limited`'s
/// body ran (T4 evidence).
#[derive(Debug, Default)]
pub struct FixtureState {
    limited_runs: AtomicU64,
}

impl FixtureState {
    /// How often `limited`'s body has run.
    pub fn limited_runs(&self) -> u64 {
        self.limited_runs.load(Ordering::SeqCst)
    }

    /// Counts one run of `limited`'s body.
    pub(crate) fn count_limited_run(&self) {
        self.limited_runs.fetch_add(1, Ordering::SeqCst);
    }
}

/// What a tool body produced on success.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolOutput {
    /// The `content` blocks.
    pub content: Vec<Value>,
    /// `structuredContent`, for tools with an `outputSchema`.
    pub structured: Option<Value>,
    /// Steps of work (each [`crate::work::STEP`] long) before the result is
    /// sent, with a progress notification after each, when the call asked
    /// for progress (else it is answered at once); 0 for a tool that always
    /// answers at once.
    pub steps: u32,
}

impl ToolOutput {
    /// One text block.
    pub fn text(text: impl Into<String>) -> Self {
        ToolOutput {
            content: vec![json!({"type": "text", "text": text.into()})],
            structured: None,
            steps: 0,
        }
    }

    /// Text sent after `steps` steps of work.
    pub fn after_steps(text: impl Into<String>, steps: u32) -> Self {
        ToolOutput {
            steps,
            ..ToolOutput::text(text)
        }
    }

    /// Structured output, mirrored as JSON text for clients that read only `content`.
    pub fn structured(value: Value) -> Self {
        ToolOutput {
            content: vec![json!({"type": "text", "text": value.to_string()})],
            structured: Some(value),
            steps: 0,
        }
    }
}

/// The three ways a tool body fails, as in the source documents.
#[derive(Clone, Debug, PartialEq)]
pub enum ToolFailure {
    /// An execution failure the model can fix (Python `ToolError`): T1.
    Tool(String),
    /// A protocol error, forwarded verbatim (Python `MCPError`): T2.
    Protocol(ErrorObject),
    /// Anything else, with its failure chain for the log only: T3.
    Crash(Vec<String>),
}

/// A tool body: arguments already validated against the `inputSchema`.
pub type ToolBody = fn(&FixtureState, &Map<String, Value>) -> Result<ToolOutput, ToolFailure>;

/// A tool's definition: what `tools/list` shows and the body to run.
pub struct ToolDef {
    /// The tool's name.
    pub name: &'static str,
    /// Its description.
    pub description: &'static str,
    /// Its `inputSchema` (JSON Schema 2020-12).
    pub input_schema: Value,
    /// Its `outputSchema`, if it returns structured content.
    pub output_schema: Option<Value>,
    /// Annotated `readOnlyHint: true`: calling it changes nothing, so a
    /// harness may call it with sample arguments.
    pub read_only: bool,
    /// Whether it may, or must, be called as a task (2025-11-25 tasks).
    pub task_support: TaskSupport,
    /// The body.
    pub body: ToolBody,
}

/// How a tool may be called: its `execution.taskSupport` (2025-11-25
/// basic/utilities/tasks#tool-level-negotiation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TaskSupport {
    /// Never as a task (the default when the field is absent).
    #[default]
    Forbidden,
    /// Either way.
    Optional,
    /// Only as a task.
    Required,
}

impl TaskSupport {
    /// The value of `execution.taskSupport`, when the tool states one.
    pub fn declared(self) -> Option<&'static str> {
        match self {
            TaskSupport::Forbidden => None,
            TaskSupport::Optional => Some("optional"),
            TaskSupport::Required => Some("required"),
        }
    }
}

/// How a resource read fails, as in the source documents.
#[derive(Clone, Debug, PartialEq)]
pub enum ResourceFailure {
    /// The template matched but the item does not exist (`ResourceNotFoundError`): R1.
    NotFound(String),
    /// A failure that is not "not found" (`ResourceError`): R3.
    Failed(String),
    /// A protocol error, forwarded verbatim (`MCPError`): R5.
    Protocol(ErrorObject),
    /// Anything else, with its failure chain for the log only: R4.
    Crash(Vec<String>),
}

/// Reads the item a template parameter names.
pub type ResourceRead = fn(&FixtureState, &str) -> Result<String, ResourceFailure>;

/// A resource template: `scheme://{param}` and the function that reads it.
pub struct TemplateDef {
    /// The RFC 6570 template, one trailing `{param}`.
    pub uri_template: &'static str,
    /// A short name.
    pub name: &'static str,
    /// Its description.
    pub description: &'static str,
    /// The reader.
    pub read: ResourceRead,
}

/// The files behind the Bookshop's `file:///bookshop/{name}` resources, and
/// one outside its directory that no read may reach (a stand-in for the
/// host's own files).
pub const FILES: &[(&str, &str)] = &[
    (
        "/bookshop/prices.csv",
        "title,price\nDune,9.99\nEmma,4.50\n",
    ),
    ("/etc/passwd", "root:x:0:0:root:/root:/bin/sh\n"),
];

/// The text of the file at absolute `path`, if there is one.
pub fn file(path: &str) -> Option<&'static str> {
    FILES
        .iter()
        .find(|(p, _)| *p == path)
        .map(|(_, text)| *text)
}

/// `s` with its `%XX` escapes decoded (a malformed one is kept as it is).
pub fn percent_decoded(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Absolute `path` with its `.` and `..` segments resolved.
pub fn normalized(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    format!("/{}", parts.join("/"))
}

impl TemplateDef {
    /// The template parameter if `uri` matches: the text after the fixed
    /// prefix, non-empty and without `/` (the SDK's `[^/]+`).
    pub(crate) fn matches<'u>(&self, uri: &'u str) -> Option<&'u str> {
        let prefix = &self.uri_template[..self
            .uri_template
            .find('{')
            .unwrap_or(self.uri_template.len())];
        let rest = uri.strip_prefix(prefix)?;
        (!rest.is_empty() && !rest.contains('/')).then_some(rest)
    }
}

/// Renders a prompt's text from its (string) arguments; `Err` is a crash chain.
pub type PromptRender = fn(&Map<String, Value>) -> Result<String, Vec<String>>;

/// A prompt: its required string arguments and its renderer.
pub struct PromptDef {
    /// The prompt's name.
    pub name: &'static str,
    /// Its description.
    pub description: &'static str,
    /// Required arguments: name and description.
    pub arguments: &'static [(&'static str, &'static str)],
    /// The renderer.
    pub render: PromptRender,
}
