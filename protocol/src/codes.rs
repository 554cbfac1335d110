//! JSON-RPC error codes as one type, [`Code`], with a named constant for
//! each code JSON-RPC and MCP define (as h2's `Reason`), so no module
//! compares or writes a magic number. The module-level constants are the
//! same codes under their old names.

use serde::{Deserialize, Serialize};

/// A JSON-RPC error code: an integer on the wire (written as one in JSON).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Code(pub i64);

impl Code {
    /// Invalid JSON was received.
    pub const PARSE_ERROR: Code = Code(-32700);
    /// The JSON sent is not a valid request object.
    pub const INVALID_REQUEST: Code = Code(-32600);
    /// The method does not exist or is not available.
    pub const METHOD_NOT_FOUND: Code = Code(-32601);
    /// Invalid method parameters (unknown tool, unknown resource, missing argument).
    pub const INVALID_PARAMS: Code = Code(-32602);
    /// Internal error: a crash, or a failure that is not the caller's fault.
    pub const INTERNAL_ERROR: Code = Code(-32603);
    /// "Resource not found" as the 2025-11-25 spec text suggested (SHOULD);
    /// retired in favour of -32602 with `data.uri`. Kept so the oracle can name it.
    pub const RESOURCE_NOT_FOUND_RETIRED: Code = Code(-32002);
    /// 2026-07-28 Streamable HTTP: a required header is missing or disagrees with the body.
    pub const HEADER_MISMATCH: Code = Code(-32020);
    /// 2026-07-28: the request needs a client capability the client did not declare.
    pub const MISSING_CLIENT_CAPABILITY: Code = Code(-32021);
    /// 2026-07-28: the requested protocol version is not supported by the server.
    pub const UNSUPPORTED_PROTOCOL_VERSION: Code = Code(-32022);
    /// 2025-11-25 `URLElicitationRequiredError`: the request waits for URL-mode
    /// elicitations the error lists (2026-07-28 forbids the code).
    pub const URL_ELICITATION_REQUIRED: Code = Code(-32042);
    /// A request the client cancelled (the MCP SDKs' `-32800`).
    pub const REQUEST_CANCELLED: Code = Code(-32800);

    /// The code of an error object's `code` member, when it is an integer.
    pub fn of(value: &serde_json::Value) -> Option<Code> {
        value.as_i64().map(Code)
    }
}

/// As the integer it is.
impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&self.0, f)
    }
}

/// A code is the integer it holds (`error.code == -32602` in tests).
impl PartialEq<i64> for Code {
    fn eq(&self, other: &i64) -> bool {
        self.0 == *other
    }
}

/// A JSON value is a code when it is that integer (`answer["error"]["code"] == Code::INVALID_PARAMS`).
impl PartialEq<Code> for serde_json::Value {
    fn eq(&self, code: &Code) -> bool {
        self.as_i64() == Some(code.0)
    }
}

/// Invalid JSON was received.
pub const PARSE_ERROR: Code = Code::PARSE_ERROR;
/// The JSON sent is not a valid request object.
pub const INVALID_REQUEST: Code = Code::INVALID_REQUEST;
/// The method does not exist or is not available.
pub const METHOD_NOT_FOUND: Code = Code::METHOD_NOT_FOUND;
/// Invalid method parameters (unknown tool, unknown resource, missing argument).
pub const INVALID_PARAMS: Code = Code::INVALID_PARAMS;
/// Internal error: a crash, or a failure that is not the caller's fault.
pub const INTERNAL_ERROR: Code = Code::INTERNAL_ERROR;
/// The retired 2025-11-25 "resource not found".
pub const RESOURCE_NOT_FOUND_RETIRED: Code = Code::RESOURCE_NOT_FOUND_RETIRED;
/// 2026-07-28 Streamable HTTP: a header missing or disagreeing with the body.
pub const HEADER_MISMATCH: Code = Code::HEADER_MISMATCH;
/// 2026-07-28: a client capability the client did not declare.
pub const MISSING_CLIENT_CAPABILITY: Code = Code::MISSING_CLIENT_CAPABILITY;
/// 2026-07-28: the requested protocol version is not supported.
pub const UNSUPPORTED_PROTOCOL_VERSION: Code = Code::UNSUPPORTED_PROTOCOL_VERSION;
/// 2025-11-25 `URLElicitationRequiredError`.
pub const URL_ELICITATION_REQUIRED: Code = Code::URL_ELICITATION_REQUIRED;
