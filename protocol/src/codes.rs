//! Named JSON-RPC and MCP error codes, so no module writes a magic number.

/// Invalid JSON was received.
pub const PARSE_ERROR: i64 = -32700;
/// The JSON sent is not a valid request object.
pub const INVALID_REQUEST: i64 = -32600;
/// The method does not exist or is not available.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// Invalid method parameters (unknown tool, unknown resource, missing argument).
pub const INVALID_PARAMS: i64 = -32602;
/// Internal error: a crash, or a failure that is not the caller's fault.
pub const INTERNAL_ERROR: i64 = -32603;
/// "Resource not found" as the 2025-11-25 spec text suggested (SHOULD); retired
/// in favour of -32602 with `data.uri`. Kept so the oracle can name it.
pub const RESOURCE_NOT_FOUND_RETIRED: i64 = -32002;
/// 2026-07-28 Streamable HTTP: a required header is missing or disagrees with the body.
pub const HEADER_MISMATCH: i64 = -32020;
/// 2026-07-28: the request needs a client capability the client did not declare.
pub const MISSING_CLIENT_CAPABILITY: i64 = -32021;
/// 2026-07-28: the requested protocol version is not supported by the server.
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
/// 2025-11-25 `URLElicitationRequiredError`: the request waits for URL-mode
/// elicitations the error lists (2026-07-28 forbids the code).
pub const URL_ELICITATION_REQUIRED: i64 = -32042;

/// A short name for a known code, for reports ("-32602 invalid params").
pub fn name(code: i64) -> Option<&'static str> {
    Some(match code {
        PARSE_ERROR => "parse error",
        INVALID_REQUEST => "invalid request",
        METHOD_NOT_FOUND => "method not found",
        INVALID_PARAMS => "invalid params",
        INTERNAL_ERROR => "internal error",
        RESOURCE_NOT_FOUND_RETIRED => "resource not found (retired)",
        HEADER_MISMATCH => "header mismatch",
        MISSING_CLIENT_CAPABILITY => "missing client capability",
        UNSUPPORTED_PROTOCOL_VERSION => "unsupported protocol version",
        _ => return None,
    })
}
