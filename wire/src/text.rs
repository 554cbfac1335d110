//! JSON text in and out, as every transport of mcperr reads and writes it
//! (stdio lines, HTTP bodies, SSE `data`, saved cases): decoding with the
//! lone-surrogate policy ([`decode`]), the names an `inputRequests` object
//! gives twice, which only the text shows ([`repeated_input_requests`]), and
//! the placeholder that carries a lone surrogate through a Rust string until
//! the line is written ([`LONE_SURROGATE`], [`line`]). Pure, and imports
//! nothing of the crate: the wire policies ([`crate::edges`]), the exchange
//! and the fuzz inputs build on it.

use serde_json::Value;

/// Stands for a lone UTF-16 surrogate (`\ud800`), which a JSON text can carry
/// as an escape but a Rust string cannot: spliced in when the line is written.
pub const LONE_SURROGATE: &str = "\u{e000}mcperr-lone-surrogate\u{e000}";

/// JSON text with the lone-surrogate placeholder written as the escape that
/// was sent (`\ud800`): what a finding prints, byte for byte as sent.
pub fn as_sent(json_text: &str) -> String {
    if json_text.contains(LONE_SURROGATE) {
        json_text.replace(LONE_SURROGATE, "\\ud800")
    } else {
        json_text.to_string()
    }
}

/// JSON text as [`as_sent`] wrote it, with each `\ud800` it spliced in
/// read back as the placeholder (a saved case's params).
pub fn as_placeholder(json_text: &str) -> String {
    if json_text.contains("\\ud800") {
        json_text.replace("\\ud800", "\\ue000mcperr-lone-surrogate\\ue000")
    } else {
        json_text.to_string()
    }
}

/// The bytes of one request line, lone surrogates spliced in.
pub fn line(msg: &Value) -> Vec<u8> {
    // `to_string` writes straight into bytes (Display goes through fmt, a
    // measurable share of a campaign); serializing a Value cannot fail.
    let text = serde_json::to_string(msg).unwrap_or_default();
    if text.contains(LONE_SURROGATE) {
        text.replace(LONE_SURROGATE, "\\ud800").into_bytes()
    } else {
        text.into_bytes()
    }
}

/// Decodes one JSON-RPC message the way every transport of mcperr does
/// (stdio lines, HTTP bodies, SSE `data`). JSON may carry a lone surrogate as
/// an escape (RFC 8259 §8.2: a server echoing one mcperr sent does nothing
/// wrong), which serde_json refuses: such a text is read again with every
/// surrogate escape as U+FFFD.
pub fn decode(bytes: &[u8]) -> Result<serde_json::Value, serde_json::Error> {
    match serde_json::from_slice(bytes) {
        Ok(v) => Ok(v),
        Err(e) => {
            let Ok(text) = std::str::from_utf8(bytes) else {
                return Err(e);
            };
            let lowered = text.to_ascii_lowercase();
            if ![
                "\\ud8", "\\ud9", "\\uda", "\\udb", "\\udc", "\\udd", "\\ude", "\\udf",
            ]
            .iter()
            .any(|p| lowered.contains(p))
            {
                return Err(e);
            }
            let mut out = String::with_capacity(text.len());
            let mut rest = text;
            while let Some(i) = rest.find("\\u") {
                let (head, tail) = rest.split_at(i);
                out.push_str(head);
                let hex = tail.get(2..6).unwrap_or_default();
                let surrogate =
                    u16::from_str_radix(hex, 16).is_ok_and(|c| (0xd800..=0xdfff).contains(&c));
                // An escaped backslash before it means it is not an escape.
                let escaped = head.chars().rev().take_while(|c| *c == '\\').count() % 2 == 1;
                // Six ASCII bytes for a surrogate escape; otherwise only the
                // two of `\u` are consumed (the rest may be any UTF-8).
                if surrogate && !escaped {
                    out.push_str("\\ufffd");
                    rest = &tail[6..];
                } else {
                    out.push_str(&tail[..2]);
                    rest = &tail[2..];
                }
            }
            out.push_str(rest);
            serde_json::from_str(&out).map_err(|_| e)
        }
    }
}

/// The names given more than once in an `inputRequests` object of the
/// message `bytes` holds, each with the JSON pointer of its object
/// (`/result/inputRequests`). Cheap for every other message: only text that
/// contains `"inputRequests"` is read again.
pub fn repeated_input_requests(bytes: &[u8]) -> Vec<(String, String)> {
    const NAME: &[u8] = b"\"inputRequests\"";
    if !bytes.windows(NAME.len()).any(|w| w == NAME) {
        return vec![];
    }
    let mut out = Vec::new();
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let scan = Scan {
        path: String::new(),
        out: &mut out,
    };
    if serde::de::DeserializeSeed::deserialize(scan, &mut de).is_err() {
        return vec![];
    }
    out.retain(|(path, _)| path.ends_with("/inputRequests"));
    out
}

/// Walks a JSON text, noting each name an object gives twice with the
/// pointer of that object.
struct Scan<'a> {
    path: String,
    out: &'a mut Vec<(String, String)>,
}

impl<'de> serde::de::DeserializeSeed<'de> for Scan<'_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Scan<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut i = 0;
        loop {
            let scan = Scan {
                path: format!("{}/{i}", self.path),
                out: &mut *self.out,
            };
            if seq.next_element_seed(scan)?.is_none() {
                return Ok(());
            }
            i += 1;
        }
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = std::collections::HashSet::new();
        while let Some(name) = map.next_key::<String>()? {
            if !seen.insert(name.clone()) {
                self.out.push((self.path.clone(), name.clone()));
            }
            let escaped = name.replace('~', "~0").replace('/', "~1");
            map.next_value_seed(Scan {
                path: format!("{}/{escaped}", self.path),
                out: &mut *self.out,
            })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lone_surrogate_escapes_decode() {
        let v = decode(br#"{"jsonrpc":"2.0","id":1,"result":{"t":"\ud800"}}"#).unwrap();
        assert_eq!(v["id"], 1);
    }

    #[test]
    fn a_name_given_twice_in_input_requests_is_found_from_the_text() {
        let twice = br#"{"id":1,"result":{"resultType":"input_required","inputRequests":{"confirm":{"method":"roots/list"},"confirm":{"method":"elicitation/create"}}}}"#;
        assert_eq!(
            repeated_input_requests(twice),
            [("/result/inputRequests".to_string(), "confirm".to_string())]
        );
        let once = br#"{"result":{"inputRequests":{"a":{"x":[1,{"y":2,"y":3}]},"b":{}}}}"#;
        // A name repeated deeper down is not inputRequests' own.
        assert!(repeated_input_requests(once).is_empty());
        let elsewhere = br#"{"result":{"content":[],"content":[]}}"#;
        assert!(repeated_input_requests(elsewhere).is_empty());
    }

    #[test]
    fn a_lone_surrogate_reaches_the_wire_as_an_escape() {
        let msg = json!({"x": format!("a{LONE_SURROGATE}")});
        assert_eq!(line(&msg), br#"{"x":"a\ud800"}"#.to_vec());
        // A finding prints (and reports) the escape that was sent.
        let shown = as_sent(&msg.to_string());
        assert_eq!(shown, r#"{"x":"a\ud800"}"#);
        assert!(decode(shown.as_bytes()).is_ok());
    }
}
