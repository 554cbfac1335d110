//! What mcperr knows of the Bookshop fixture contract (DESIGN.md section 3),
//! in one place: generic code asks here instead of naming fixture tools.
//! A server with both counting tools lets mcperr prove that invalid
//! arguments never ran a tool body (T4 `validate-inputs`).

use serde_json::{json, Value};

/// The tool whose body runs are counted.
pub const COUNTED_TOOL: &str = "limited";

/// The tool that reports how often [`COUNTED_TOOL`]'s body ran.
pub const COUNT_TOOL: &str = "limited_calls";

/// The tool that fails its call with exactly the protocol error it is asked
/// for (T2): a valid call answered with any code, −32601 included, is it
/// doing its job, not a refusal to parse.
pub const RAISES_REQUESTED_ERROR: &str = "raise_protocol_error";

/// Whether a server offering `has(name)` tools can count body runs.
pub fn can_count(has: impl Fn(&str) -> bool) -> bool {
    has(COUNTED_TOOL) && has(COUNT_TOOL)
}

/// Whether a request of `method` to `target` is a call of the counted tool.
pub fn is_counted_call(method: &str, target: &str) -> bool {
    method == "tools/call" && target == COUNTED_TOOL
}

/// The `tools/call` params that read the count.
pub fn count_params() -> Value {
    json!({"name": COUNT_TOOL, "arguments": {}})
}

/// The `needs` of a case that counts body runs.
pub fn counting_needs() -> Vec<String> {
    vec![format!("tool:{COUNTED_TOOL}"), format!("tool:{COUNT_TOOL}")]
}
