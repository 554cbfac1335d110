//! 2026-07-28's `Mcp-Param-{Name}` headers (basic/transports/streamable-http#server-behavior-for-custom-headers):
//! a tool parameter marked `x-mcp-header` travels in the body and in its
//! header, and a server that reads the body checks that the two agree. The
//! header is looked up case-insensitively, must hold only what #value-encoding
//! allows a field value (visible ASCII, space, tab; anything else goes
//! Base64-encoded), is decoded before it is
//! compared, and an integer compares numerically. A parameter that is null
//! or absent needs no header; one with a value needs it. A value no header
//! can carry (an object for a string parameter) is left to input
//! validation, whose -32602 says more. Imports `faults` and `bookshop`
//! (whose `branch_hours` has such parameters).

use mcperr_protocol::headers::{decode_header_value, mirrored_params, MirroredParam};
use serde_json::Value;

use crate::faults::Fault;

/// Why the call's `Mcp-Param-*` headers and its arguments disagree, if they do.
pub fn mismatch(
    input_schema: &Value,
    arguments: Option<&Value>,
    headers: &[(String, String)],
    fault: Option<Fault>,
) -> Option<String> {
    mirrored_params(input_schema)
        .iter()
        .find_map(|p| one(p, arguments, headers, fault))
}

/// Why a `tools/call`'s `Mcp-Param-*` headers disagree with its arguments,
/// for the Bookshop tool it names, if they do.
pub fn for_call(
    params: Option<&Value>,
    headers: &[(String, String)],
    fault: Option<Fault>,
) -> Option<String> {
    // The Bookshop's marked parameters, found once: every modern HTTP
    // tools/call asks (fuzzing sends thousands).
    static MIRRORED: std::sync::LazyLock<Vec<(&'static str, Vec<MirroredParam>)>> =
        std::sync::LazyLock::new(|| {
            crate::bookshop::tools()
                .into_iter()
                .map(|t| (t.name, mirrored_params(&t.input_schema)))
                .filter(|(_, m)| !m.is_empty())
                .collect()
        });
    let name = params?.get("name")?.as_str()?;
    let (_, marked) = MIRRORED.iter().find(|(n, _)| *n == name)?;
    let arguments = params?.get("arguments");
    marked
        .iter()
        .find_map(|p| one(p, arguments, headers, fault))
}

fn lookup<'a>(
    headers: &'a [(String, String)],
    name: &str,
    fault: Option<Fault>,
) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| {
            if fault == Some(Fault::ParamHeaderCaseSensitive) {
                k == name
            } else {
                k.eq_ignore_ascii_case(name)
            }
        })
        .map(|(_, v)| v.as_str())
}

fn one(
    p: &MirroredParam,
    arguments: Option<&Value>,
    headers: &[(String, String)],
    fault: Option<Fault>,
) -> Option<String> {
    let name = p.header();
    let header = lookup(headers, &name, fault);
    let value = p.value(arguments).filter(|v| !v.is_null());
    let Some(value) = value else {
        if fault == Some(Fault::ParamNullExpected) && header.is_none() {
            return Some(format!("Header mismatch: {name} header is required"));
        }
        return header.map(|h| {
            format!("Header mismatch: {name} is {h:?} but the argument is absent or null")
        });
    };
    if !matches!(value, Value::String(_) | Value::Bool(_))
        && value.as_i64().is_none()
        && value.as_u64().is_none()
    {
        return None;
    }
    let Some(raw) = header else {
        return (fault != Some(Fault::ParamMissingAccepted)).then(|| {
            format!("Header mismatch: {name} header is required: the argument is {value}")
        });
    };
    let unchecked = matches!(
        fault,
        Some(Fault::ParamInvalidCharsAccepted | Fault::ParamLatin1Accepted)
    );
    if !unchecked
        && raw
            .bytes()
            .any(|b| !(0x20..=0x7e).contains(&b) && b != b'\t')
    {
        return Some(format!(
            "Header mismatch: {name} holds characters a header value may not carry unencoded: {raw:?}"
        ));
    }
    let decoded = if fault == Some(Fault::ParamNotDecoded) {
        raw.to_string()
    } else if fault == Some(Fault::ParamLatin1Accepted) && !raw.is_ascii() {
        // Each byte one character, as a stack that reads header bytes as
        // Latin-1 hands them on.
        raw.bytes().map(char::from).collect()
    } else {
        match decode_header_value(raw) {
            Some(d) => d,
            None => {
                return Some(format!(
                    "Header mismatch: {name} {raw:?} is not valid =?base64?…?= text"
                ))
            }
        }
    };
    let agrees = match value {
        Value::String(s) => decoded == *s,
        Value::Bool(b) => decoded == b.to_string(),
        // "compare the header value and the body value numerically rather
        // than as strings (e.g., `42.0` and `42` are considered equal)".
        n if fault == Some(Fault::ParamNumericAsString) => {
            let as_text = n.to_string();
            decoded == as_text
        }
        n => decoded
            .trim()
            .parse::<f64>()
            .is_ok_and(|h| n.as_f64() == Some(h)),
    };
    (!agrees && fault != Some(Fault::ParamMismatchAccepted))
        .then(|| format!("Header mismatch: {name} {raw:?} does not match the argument {value}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({"type": "object", "properties": {
            "branch": {"type": "string", "x-mcp-header": "Branch"},
            "day": {"type": "integer", "x-mcp-header": "Day"}}})
    }

    fn check(args: Value, headers: &[(&str, &str)], fault: Option<Fault>) -> Option<String> {
        let h: Vec<(String, String)> = headers
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        mismatch(&schema(), Some(&args), &h, fault)
    }

    #[test]
    fn agreeing_headers_pass_whatever_their_case_encoding_or_number_form() {
        let args = json!({"branch": "café", "day": 3});
        let h = [
            ("mcp-param-branch", "=?base64?Y2Fmw6k=?="),
            ("MCP-PARAM-DAY", "3.0"),
        ];
        assert_eq!(check(args.clone(), &h, None), None);
        assert!(check(args.clone(), &h, Some(Fault::ParamHeaderCaseSensitive)).is_some());
        assert!(check(args.clone(), &h, Some(Fault::ParamNotDecoded)).is_some());
        assert!(check(args, &h, Some(Fault::ParamNumericAsString)).is_some());
    }

    #[test]
    fn missing_mismatched_and_raw_non_ascii_values_are_refused() {
        let args = json!({"branch": "main"});
        assert!(check(args.clone(), &[], None).is_some());
        assert_eq!(
            check(args.clone(), &[], Some(Fault::ParamMissingAccepted)),
            None
        );
        assert!(check(args.clone(), &[("Mcp-Param-Branch", "other")], None).is_some());
        let cafe = json!({"branch": "café"});
        assert!(check(cafe.clone(), &[("Mcp-Param-Branch", "café")], None).is_some());
        assert_eq!(
            check(
                cafe,
                &[("Mcp-Param-Branch", "café")],
                Some(Fault::ParamInvalidCharsAccepted)
            ),
            None
        );
        // Read as Latin-1 and unchecked, café's bytes match the body "cafÃ©".
        let latin = json!({"branch": "cafÃ©"});
        let raw = [("Mcp-Param-Branch", "café")];
        assert!(check(latin.clone(), &raw, None).is_some());
        assert_eq!(check(latin, &raw, Some(Fault::ParamLatin1Accepted)), None);
        // A field value may hold a tab (#value-encoding quotes RFC 9110).
        let tab = json!({"branch": "ma\tin"});
        assert_eq!(check(tab, &[("Mcp-Param-Branch", "ma\tin")], None), None);
    }

    #[test]
    fn a_null_or_absent_argument_needs_no_header_and_an_object_is_left_to_validation() {
        assert_eq!(
            check(
                json!({"branch": "main", "day": null}),
                &[("Mcp-Param-Branch", "main")],
                None
            ),
            None
        );
        assert!(check(
            json!({"branch": "main"}),
            &[("Mcp-Param-Branch", "main")],
            Some(Fault::ParamNullExpected)
        )
        .is_some());
        assert_eq!(check(json!({"branch": {"x": 1}}), &[], None), None);
    }
}
