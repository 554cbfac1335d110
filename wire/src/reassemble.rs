//! Reading stdout lines as messages, with the two deviations that still let
//! a message be read: bytes that are not UTF-8 (J1 `utf8`: read with U+FFFD
//! for each bad sequence) and one message written over several lines (J5
//! `no-embedded-newlines`: pretty-printed JSON, read by joining the lines).
//! Pure: the stdio client feeds it each line of an exchange.

use serde_json::Value;

use crate::exchange::Stray;
use crate::text::decode;

/// The most lines one split message is looked for over.
const MAX_PARTS: usize = 256;

/// The most bytes held while a split message is looked for.
const MAX_HELD: usize = 1 << 20;

/// How much of a deviant message a stray shows.
const PREVIEW: usize = 120;

/// What one line turned out to be.
#[derive(Debug, PartialEq)]
pub enum Read {
    /// A message (a JSON object), with the strays that reading it made: the
    /// way it deviated, or fragments held before it that joined into nothing.
    Message(Value, Vec<Stray>),
    /// No message: strays (the line, or held fragments given up on).
    Strays(Vec<Stray>),
    /// Held: it may be the start or middle of a message split over lines.
    Held,
}

/// Joins lines that are no message alone into the message they make.
#[derive(Debug, Default)]
pub struct Reassembler {
    held: Vec<Vec<u8>>,
    held_bytes: usize,
}

fn preview(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes)
        .chars()
        .take(PREVIEW)
        .collect()
}

impl Reassembler {
    /// Reads one non-blank line.
    pub fn feed(&mut self, line: &[u8]) -> Read {
        if let Ok(v @ Value::Object(_)) = decode(line) {
            let mut strays = self.flush();
            strays.extend(Stray::repeated_names(line, &v));
            return Read::Message(v, strays);
        }
        if std::str::from_utf8(line).is_err() {
            let text = String::from_utf8_lossy(line);
            if let Ok(v @ Value::Object(_)) = decode(text.as_bytes()) {
                let mut strays = self.flush();
                strays.push(Stray::NotUtf8(preview(line)));
                return Read::Message(v, strays);
            }
        }
        let opens = line.trim_ascii_start().first() == Some(&b'{');
        if self.held.is_empty() && !opens {
            return Read::Strays(vec![Stray::NotJson(preview_all(line))]);
        }
        self.held_bytes += line.len();
        self.held.push(line.to_vec());
        if let Ok(v @ Value::Object(_)) = decode(&self.held.join(&b'\n')) {
            let lines = self.held.len();
            let start = preview(&self.held[0]);
            self.held.clear();
            self.held_bytes = 0;
            return Read::Message(v, vec![Stray::Split(lines, start)]);
        }
        if self.held.len() >= MAX_PARTS || self.held_bytes >= MAX_HELD {
            return Read::Strays(self.flush());
        }
        Read::Held
    }

    /// The lines held and never joined into a message, as the strays they
    /// are (at the end of an exchange, or before a message that came whole).
    pub fn flush(&mut self) -> Vec<Stray> {
        self.held_bytes = 0;
        self.held
            .drain(..)
            .map(|l| Stray::NotJson(preview_all(&l)))
            .collect()
    }
}

/// A line that is no message, whole (as J5 has always shown it).
fn preview_all(line: &[u8]) -> String {
    String::from_utf8_lossy(line).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn lines(text: &str) -> Vec<Vec<u8>> {
        text.split('\n').map(|l| l.as_bytes().to_vec()).collect()
    }

    #[test]
    fn a_pretty_printed_message_is_read_by_joining_its_lines_and_named_split() {
        let mut r = Reassembler::default();
        let mut reads: Vec<Read> =
            lines("{\n  \"jsonrpc\": \"2.0\",\n  \"id\": 1,\n  \"result\": {}\n}")
                .into_iter()
                .map(|l| r.feed(&l))
                .collect();
        let last = reads.pop().unwrap();
        assert!(reads.iter().all(|r| *r == Read::Held));
        assert_eq!(
            last,
            Read::Message(
                json!({"jsonrpc": "2.0", "id": 1, "result": {}}),
                vec![Stray::Split(5, "{".into())]
            )
        );
    }

    #[test]
    fn a_fragment_that_joins_nothing_is_a_stray_when_a_whole_message_follows() {
        let mut r = Reassembler::default();
        assert_eq!(r.feed(b"{not json"), Read::Held);
        let whole = br#"{"jsonrpc":"2.0","id":2,"result":{}}"#;
        assert_eq!(
            r.feed(whole),
            Read::Message(
                json!({"jsonrpc": "2.0", "id": 2, "result": {}}),
                vec![Stray::NotJson("{not json".into())]
            )
        );
        assert_eq!(
            r.feed(b"Starting server"),
            Read::Strays(vec![Stray::NotJson("Starting server".into())])
        );
    }

    #[test]
    fn latin1_bytes_are_read_as_replacement_characters_and_named() {
        let mut r = Reassembler::default();
        let mut line = br#"{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"M"#.to_vec();
        line.push(0xE9); // é in Latin-1
        line.extend_from_slice(br#"thode inconnue"}}"#);
        let Read::Message(v, strays) = r.feed(&line) else {
            panic!("read as a message")
        };
        assert_eq!(v["error"]["message"], "M\u{FFFD}thode inconnue");
        assert!(matches!(strays.as_slice(), [Stray::NotUtf8(_)]));
    }
}
