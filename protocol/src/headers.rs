//! HTTP header values that mirror body fields (`Mcp-Name`, `Mcp-Method`).
//!
//! 2026-07-28 (SEP-2243): printable ASCII goes as is; a value with non-ASCII
//! or control characters, leading or trailing whitespace, or one that looks
//! like the sentinel itself travels as `=?base64?{standard Base64 of the
//! UTF-8 bytes}?=`, and whoever compares it decodes it first.

use base64::alphabet;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use base64::Engine as _;

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

#[cfg(test)]
mod tests {
    use super::*;

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
