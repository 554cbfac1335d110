//! HTTP header values that mirror body fields (`Mcp-Name`, `Mcp-Method`,
//! and the `Mcp-Param-{Name}` of a tool parameter marked `x-mcp-header`).
//!
//! 2026-07-28 (SEP-2243): printable ASCII goes as is; a value with non-ASCII
//! or control characters, leading or trailing whitespace, or one that looks
//! like the sentinel itself travels as `=?base64?{standard Base64 of the
//! UTF-8 bytes}?=`, and whoever compares it decodes it first.

use base64::alphabet;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use base64::Engine as _;
use serde_json::Value;

const PREFIX: &str = "=?base64?";
const SUFFIX: &str = "?=";
/// Standard Base64; decoding is lenient about padding and trailing bits, as
/// a receiver should be with what peers send.
const BASE64: GeneralPurpose = GeneralPurpose::new(
    &alphabet::STANDARD,
    GeneralPurposeConfig::new()
        .with_decode_padding_mode(DecodePaddingMode::Indifferent)
        .with_decode_allow_trailing_bits(true),
);

fn needs_encoding(value: &str) -> bool {
    value.bytes().any(|b| !(0x20..=0x7e).contains(&b))
        || value.starts_with(' ')
        || value.ends_with(' ')
        || (value.starts_with(PREFIX) && value.ends_with(SUFFIX))
}

/// The header form of a body value.
pub fn encode_header_value(value: &str) -> String {
    if needs_encoding(value) {
        format!("{PREFIX}{}{SUFFIX}", BASE64.encode(value.as_bytes()))
    } else {
        value.to_string()
    }
}

/// The Base64 of `value`'s UTF-8, as the sentinel form carries it (a case
/// that sends an encoded header whatever the value).
pub fn base64_payload(value: &str) -> String {
    BASE64.encode(value.as_bytes())
}

/// The body value a header carries; `None` if the sentinel form is not valid
/// Base64 of UTF-8.
pub fn decode_header_value(header: &str) -> Option<String> {
    match header
        .strip_prefix(PREFIX)
        .and_then(|h| h.strip_suffix(SUFFIX))
    {
        Some(payload) => String::from_utf8(BASE64.decode(payload).ok()?).ok(),
        None => Some(header.to_string()),
    }
}

/// A tool parameter mirrored into a header: the chain of `properties` keys
/// that reaches it, and the name its `x-mcp-header` gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MirroredParam {
    /// The property path from the schema root (`["region"]`).
    pub path: Vec<String>,
    /// The `x-mcp-header` value: the header is `Mcp-Param-{name}`.
    pub name: String,
}

impl MirroredParam {
    /// The header's name, `Mcp-Param-{name}`.
    pub fn header(&self) -> String {
        format!("Mcp-Param-{}", self.name)
    }

    /// The argument this parameter mirrors, if the call has one.
    pub fn value<'a>(&self, arguments: Option<&'a Value>) -> Option<&'a Value> {
        self.path.iter().try_fold(arguments?, |v, key| v.get(key))
    }
}

/// The parameters an `inputSchema` mirrors into headers: every property with
/// an `x-mcp-header` string that is statically reachable from the root
/// through `properties` keys alone (basic/transports/streamable-http#schema-extension;
/// annotations under `items`, composition keywords or `$ref` do not count).
pub fn mirrored_params(input_schema: &Value) -> Vec<MirroredParam> {
    fn walk(schema: &Value, path: &mut Vec<String>, out: &mut Vec<MirroredParam>) {
        let Some(props) = schema.get("properties").and_then(Value::as_object) else {
            return;
        };
        for (key, sub) in props {
            path.push(key.clone());
            if let Some(name) = sub.get("x-mcp-header").and_then(Value::as_str) {
                out.push(MirroredParam {
                    path: path.clone(),
                    name: name.to_string(),
                });
            }
            walk(sub, path, out);
            path.pop();
        }
    }
    let mut out = Vec::new();
    walk(input_schema, &mut vec![], &mut out);
    out
}

/// The header form of an argument (#value-encoding): a string as is, an
/// integer in decimal, a boolean as `true` or `false`, then encoded; `None`
/// for anything else (null, a fraction, an object, an array), which no
/// header carries.
pub fn param_header_value(value: &Value) -> Option<String> {
    let text = match value {
        Value::String(s) => s.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) if n.is_i64() || n.is_u64() => n.to_string(),
        _ => return None,
    };
    Some(encode_header_value(&text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn mirrored_params_are_found_through_properties_only_and_rendered_by_type() {
        let schema = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "opts": {"type": "object", "properties": {"day": {"type": "integer", "x-mcp-header": "Day"}}},
            "tags": {"type": "array", "items": {"type": "string", "x-mcp-header": "Tag"}}}});
        let found = mirrored_params(&schema);
        let names: Vec<&str> = found.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["Region", "Day"]);
        assert_eq!(found[1].path, ["opts", "day"]);
        assert_eq!(found[1].header(), "Mcp-Param-Day");
        let args = json!({"region": "us-west1", "opts": {"day": 3}});
        assert_eq!(found[1].value(Some(&args)), Some(&json!(3)));
        assert_eq!(found[0].value(Some(&json!({}))), None);
        assert_eq!(param_header_value(&json!(-7)).as_deref(), Some("-7"));
        assert_eq!(param_header_value(&json!(true)).as_deref(), Some("true"));
        assert_eq!(
            param_header_value(&json!("Hello, 世界")).as_deref(),
            Some("=?base64?SGVsbG8sIOS4lueVjA==?=")
        );
        for none in [json!(null), json!(1.5), json!({}), json!([])] {
            assert_eq!(param_header_value(&none), None, "{none}");
        }
    }

    #[test]
    fn round_trips_and_plain_values() {
        assert_eq!(encode_header_value("get_author"), "get_author");
        assert_eq!(encode_header_value("books://Dune"), "books://Dune");
        assert_eq!(
            encode_header_value("get_author"),
            decode_header_value("get_author").unwrap()
        );
        assert_eq!(
            decode_header_value("=?base64?Z2V0X2F1dGhvcg==?=").unwrap(),
            "get_author"
        );
        // The spec's own example: a literal that looks like the sentinel is encoded.
        assert_eq!(
            encode_header_value("=?base64?literal?="),
            "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="
        );
        for v in ["ünïcødé", " padded ", "line\r\nbreak", "", "a", "ab", "abc"] {
            assert_eq!(decode_header_value(&encode_header_value(v)).unwrap(), v);
        }
        assert_eq!(decode_header_value("=?base64?!!?="), None);
    }
}
