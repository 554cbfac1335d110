//! HTTP header values that mirror body fields (`Mcp-Name`, `Mcp-Method`).
//!
//! 2026-07-28 (SEP-2243): printable ASCII goes as is; a value with non-ASCII
//! or control characters, leading or trailing whitespace, or one that looks
//! like the sentinel itself travels as `=?base64?{standard Base64 of the
//! UTF-8 bytes}?=`, and whoever compares it decodes it first.

const PREFIX: &str = "=?base64?";
const SUFFIX: &str = "?=";
const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

fn needs_encoding(value: &str) -> bool {
    value.bytes().any(|b| !(0x20..=0x7e).contains(&b))
        || value.starts_with(' ')
        || value.ends_with(' ')
        || (value.starts_with(PREFIX) && value.ends_with(SUFFIX))
}

fn base64(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn unbase64(text: &str) -> Option<Vec<u8>> {
    let text = text.trim_end_matches('=');
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in text.bytes() {
        let v = ALPHABET.iter().position(|&a| a == c)? as u32;
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// The header form of a body value.
pub fn encode_header_value(value: &str) -> String {
    if needs_encoding(value) {
        format!("{PREFIX}{}{SUFFIX}", base64(value.as_bytes()))
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
        Some(payload) => String::from_utf8(unbase64(payload)?).ok(),
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
