//! JSON-RPC 2.0 messages, parsed from bytes or values and built back to values.
//!
//! An [`Id`] keeps its JSON type: `"7"` and `7` are different ids and each is
//! answered with itself. Parsing classifies a message without judging its
//! params; that is the handler's job.

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use std::fmt;

use crate::codes::{self, Code};

/// A request id, string or number, echoed back with its exact type and value.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Id {
    /// A string id: `"7"` is answered `"7"`.
    Str(String),
    /// A numeric id, kept as written (`7` is answered `7`, never `7.0`).
    Num(serde_json::Number),
}

impl Id {
    /// Reads an id from a JSON value; `None` for null, booleans, arrays, objects.
    pub fn from_value(v: &Value) -> Option<Id> {
        match v {
            Value::String(s) => Some(Id::Str(s.clone())),
            Value::Number(n) => Some(Id::Num(n.clone())),
            _ => None,
        }
    }

    /// The id as a JSON value.
    pub fn to_value(&self) -> Value {
        match self {
            Id::Str(s) => Value::String(s.clone()),
            Id::Num(n) => Value::Number(n.clone()),
        }
    }
}

impl From<i64> for Id {
    fn from(n: i64) -> Self {
        Id::Num(n.into())
    }
}

impl From<&str> for Id {
    fn from(s: &str) -> Self {
        Id::Str(s.to_string())
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Id::Str(s) => write!(f, "{s:?}"),
            Id::Num(n) => write!(f, "{n}"),
        }
    }
}

/// A JSON-RPC error object: `code`, `message` and optional `data`, kept verbatim.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// The error code (an integer on the wire).
    pub code: Code,
    /// A short human-readable description.
    pub message: String,
    /// Anything the sender attached; absent is different from `null`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl ErrorObject {
    /// An error without `data`.
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        ErrorObject {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// An error with `data`.
    pub fn with_data(code: Code, message: impl Into<String>, data: Value) -> Self {
        ErrorObject {
            code,
            message: message.into(),
            data: Some(data),
        }
    }

    /// The error as a JSON object.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).expect("error objects always serialize")
    }
}

/// A request: a method call that expects exactly one response.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    /// The id to echo.
    pub id: Id,
    /// The method name.
    pub method: String,
    /// The params, when present (an object or an array).
    pub params: Option<Value>,
}

impl Request {
    /// The params as an object, if they are one.
    pub fn params_object(&self) -> Option<&Map<String, Value>> {
        self.params.as_ref().and_then(Value::as_object)
    }
}

/// One JSON-RPC message as classified by [`Message::parse`].
#[derive(Clone, Debug, PartialEq)]
pub enum Message {
    /// A method call with an id.
    Request(Request),
    /// A method call without an id: never answered.
    Notification {
        /// The method name.
        method: String,
        /// The params, when present.
        params: Option<Value>,
    },
    /// A response (a `result` or an `error` with an id).
    Response {
        /// The id it answers (`None` for `null`).
        id: Option<Id>,
        /// `Ok(result)` or `Err(error)`.
        outcome: Result<Value, ErrorObject>,
    },
}

/// Why bytes are not one JSON-RPC message.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ParseError {
    /// Not JSON at all (or not UTF-8): JSON-RPC −32700.
    #[error("parse error: {0}")]
    NotJson(String),
    /// JSON, but not a JSON-RPC message: JSON-RPC −32600. `id` is the request's
    /// id when one could be read, so the error can still be addressed.
    #[error("invalid request: {reason}")]
    Invalid {
        /// What is wrong with it.
        reason: String,
        /// The id, when it was readable.
        id: Option<Id>,
    },
}

impl ParseError {
    /// The JSON-RPC error code for this parse failure.
    pub fn code(&self) -> Code {
        match self {
            ParseError::NotJson(_) => codes::PARSE_ERROR,
            ParseError::Invalid { .. } => codes::INVALID_REQUEST,
        }
    }

    /// The error response for this failure (id `null` unless it was readable).
    pub fn to_response(&self) -> Value {
        let id = match self {
            ParseError::Invalid { id: Some(id), .. } => id.to_value(),
            _ => Value::Null,
        };
        let message = match self {
            ParseError::NotJson(_) => "Parse error".to_string(),
            ParseError::Invalid { reason, .. } => format!("Invalid request: {reason}"),
        };
        json!({"jsonrpc": "2.0", "id": id, "error": {"code": self.code(), "message": message}})
    }
}

impl Message {
    /// Parses one message from bytes (one stdio line or one HTTP body).
    pub fn parse(bytes: &[u8]) -> Result<Message, ParseError> {
        let value: Value =
            serde_json::from_slice(bytes).map_err(|e| ParseError::NotJson(e.to_string()))?;
        Message::from_value(value)
    }

    /// Classifies a JSON value as a request, notification or response.
    pub fn from_value(value: Value) -> Result<Message, ParseError> {
        let invalid = |reason: &str, id: Option<Id>| ParseError::Invalid {
            reason: reason.to_string(),
            id,
        };
        let mut obj = match value {
            Value::Object(obj) => obj,
            Value::Array(_) => return Err(invalid("batches are not supported", None)),
            _ => return Err(invalid("a message must be a JSON object", None)),
        };
        let id_value = obj.get("id").cloned();
        let id = id_value.as_ref().and_then(Id::from_value);
        if obj.get("jsonrpc") != Some(&Value::String("2.0".into())) {
            return Err(invalid("\"jsonrpc\" must be \"2.0\"", id));
        }
        if let Some(method) = obj.remove("method") {
            let Value::String(method) = method else {
                return Err(invalid("\"method\" must be a string", id));
            };
            let params = obj.remove("params");
            if let Some(p) = &params {
                if !p.is_object() && !p.is_array() {
                    return Err(invalid("\"params\" must be an object or an array", id));
                }
            }
            return match (id_value, id) {
                (None, _) => Ok(Message::Notification { method, params }),
                (Some(_), Some(id)) => Ok(Message::Request(Request { id, method, params })),
                (Some(_), None) => Err(invalid("\"id\" must be a string or a number", None)),
            };
        }
        let result = obj.remove("result");
        let error = obj.remove("error");
        match (result, error) {
            (Some(result), None) => Ok(Message::Response {
                id,
                outcome: Ok(result),
            }),
            (None, Some(error)) => match serde_json::from_value::<ErrorObject>(error) {
                Ok(e) => Ok(Message::Response { id, outcome: Err(e) }),
                Err(_) => Err(invalid("malformed error object", id)),
            },
            _ => Err(invalid(
                "neither a request (no \"method\") nor a response (exactly one of \"result\"/\"error\")",
                id,
            )),
        }
    }
}

/// A success response carrying `result`.
pub fn success(id: &Id, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id.to_value(), "result": result})
}

/// An error response carrying `error`.
pub fn failure(id: &Id, error: &ErrorObject) -> Value {
    json!({"jsonrpc": "2.0", "id": id.to_value(), "error": error.to_value()})
}

/// A request message, for clients (the harness) and tests.
pub fn request(id: &Id, method: &str, params: Option<Value>) -> Value {
    let mut m = Map::new();
    m.insert("jsonrpc".into(), "2.0".into());
    m.insert("id".into(), id.to_value());
    m.insert("method".into(), method.into());
    if let Some(p) = params {
        m.insert("params".into(), p);
    }
    Value::Object(m)
}

/// A notification message.
pub fn notification(method: &str, params: Option<Value>) -> Value {
    let mut m = Map::new();
    m.insert("jsonrpc".into(), "2.0".into());
    m.insert("method".into(), method.into());
    if let Some(p) = params {
        m.insert("params".into(), p);
    }
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_keep_their_type() {
        let Message::Request(r) =
            Message::parse(br#"{"jsonrpc":"2.0","id":"7","method":"ping"}"#).unwrap()
        else {
            panic!("not a request")
        };
        assert_eq!(r.id, Id::Str("7".into()));
        assert_eq!(success(&r.id, json!({}))["id"], json!("7"));
        let Message::Request(r) =
            Message::parse(br#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#).unwrap()
        else {
            panic!("not a request")
        };
        assert_eq!(success(&r.id, json!({}))["id"], json!(7));
    }

    #[test]
    fn classification() {
        assert!(matches!(
            Message::parse(b"{not json"),
            Err(ParseError::NotJson(_))
        ));
        assert!(matches!(
            Message::parse(b"[1]"),
            Err(ParseError::Invalid { .. })
        ));
        assert!(matches!(
            Message::parse(br#"{"jsonrpc":"2.0","method":"x"}"#),
            Ok(Message::Notification { .. })
        ));
        assert!(matches!(
            Message::parse(br#"{"jsonrpc":"2.0","id":null,"method":"x"}"#),
            Err(ParseError::Invalid { id: None, .. })
        ));
        let e = Message::parse(br#"{"jsonrpc":"1.0","id":3,"method":"x"}"#).unwrap_err();
        assert_eq!(e.to_response()["id"], json!(3));
        assert_eq!(e.code(), codes::INVALID_REQUEST);
    }
}
