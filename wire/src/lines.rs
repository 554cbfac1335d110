//! Splitting a server's stdout into lines (the stdio transport's framing),
//! with a cap on a line's length so a server that never writes a newline
//! cannot grow mcperr's memory. Pure: the stdio transport feeds it what the
//! pipe gives, and the `stdio_line` fuzz target feeds it arbitrary bytes.

/// Something that came out of the server's stdout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StdoutEvent {
    /// One line, without its newline (and without a `\r` before it).
    Line(Vec<u8>),
    /// A line longer than the cap (its length); its bytes are dropped but
    /// for its two ends, from which the id of the response it was is read
    /// ([`OverLong::id`]), so the request it answers ends at once.
    TooLong(OverLong),
    /// stdout closed.
    Eof,
}

/// What is kept of a line over the cap: its length and its two ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OverLong {
    /// The line's length in bytes.
    pub len: usize,
    head: Vec<u8>,
    tail: Vec<u8>,
}

/// The size a piece of a line that spans reads grows to before the next.
const PIECE: usize = 64 * 1024;

/// How many bytes of each end of an over-long line are kept.
const END: usize = 512;

impl OverLong {
    /// A line of `len` bytes of which nothing is known (tests).
    pub fn unread(len: usize) -> OverLong {
        OverLong {
            len,
            head: Vec::new(),
            tail: Vec::new(),
        }
    }

    /// The id of the JSON-RPC response the line was, where one of its ends
    /// shows it: a top-level `"id"` member near the start (most SDKs write
    /// it before the result) or last before the closing brace (the
    /// TypeScript SDK writes it after). `None` when neither end shows one.
    pub fn id(&self) -> Option<serde_json::Value> {
        // A request of the server's own (`method` at the top) answers nothing.
        if top_level_value(&self.head, b"\"method\"").is_some() {
            return None;
        }
        id_in_head(&self.head).or_else(|| id_in_tail(&self.tail))
    }
}

/// What follows the colon of the top-level member `key` (quoted) within the
/// first bytes of a line, found by a scan that keeps track of strings and
/// nesting (a value equal to `key` is followed by no colon, and is skipped).
fn top_level_value<'a>(head: &'a [u8], key: &[u8]) -> Option<&'a [u8]> {
    let mut depth = 0usize;
    let mut i = 0;
    while i < head.len() {
        match head[i] {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.checked_sub(1)?,
            b'"' => {
                let end = string_end(head, i)?;
                let value = head[end..].trim_ascii_start().strip_prefix(b":");
                if let (1, true, Some(rest)) = (depth, &head[i..end] == key, value) {
                    return Some(rest);
                }
                i = end;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// A top-level `"id": <number or string>` member in the first bytes of an
/// object.
fn id_in_head(head: &[u8]) -> Option<serde_json::Value> {
    top_level_value(head, b"\"id\"").and_then(scalar_prefix)
}

/// The index just past the string that starts at `start` (a `"`).
fn string_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// The number or string at the start of `bytes`, if it is followed by a
/// delimiter (`,` or `}`), so a cut value is never taken for a whole one.
fn scalar_prefix(bytes: &[u8]) -> Option<serde_json::Value> {
    let bytes = bytes.trim_ascii_start();
    let len = match bytes.first()? {
        b'"' => string_end(bytes, 0)?,
        b'-' | b'0'..=b'9' => bytes
            .iter()
            .position(|b| !(b.is_ascii_digit() || b"-+.eE".contains(b)))?,
        _ => return None,
    };
    let after = bytes[len..].trim_ascii_start();
    if !matches!(after.first(), Some(b',' | b'}')) {
        return None;
    }
    let v: serde_json::Value = serde_json::from_slice(&bytes[..len]).ok()?;
    (v.is_number() || v.is_string()).then_some(v)
}

/// `"id": <number or string>` as the last member before the line's final
/// `}` (at the top level, since nothing follows it).
fn id_in_tail(tail: &[u8]) -> Option<serde_json::Value> {
    let body = tail.trim_ascii_end().strip_suffix(b"}")?.trim_ascii_end();
    let at = body.windows(4).rposition(|w| w == b"\"id\"")?;
    let value = body[at + 4..].trim_ascii_start().strip_prefix(b":")?;
    let v: serde_json::Value = serde_json::from_slice(value).ok()?;
    (v.is_number() || v.is_string()).then_some(v)
}

/// Incremental line splitter with a length cap.
#[derive(Debug, Clone)]
pub struct LineDecoder {
    max_line: usize,
    /// The pieces of the line so far (one per read it spans) and their total.
    parts: Vec<Vec<u8>>,
    held: usize,
    overflow: usize,
    head: Vec<u8>,
    tail: Vec<u8>,
}

impl LineDecoder {
    /// A decoder that reports lines longer than `max_line` as [`StdoutEvent::TooLong`].
    pub fn new(max_line: usize) -> LineDecoder {
        LineDecoder {
            max_line,
            parts: Vec::new(),
            held: 0,
            overflow: 0,
            head: Vec::new(),
            tail: Vec::new(),
        }
    }

    /// Takes bytes from the front of `buf` up to and including the first
    /// newline (or all of it). Returns how many bytes were taken and the
    /// event a newline completed, if any.
    pub fn push(&mut self, buf: &[u8]) -> (usize, Option<StdoutEvent>) {
        let (chunk, found) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], Some(i + 1)),
            None => (buf, None),
        };
        if self.overflow == 0 && self.held + chunk.len() <= self.max_line {
            // A line that spans reads is kept as its pieces: a Vec grown to
            // the cap by doubling would hold every smaller size it passed
            // through until the allocator gives them back.
            if found.is_none() || !self.parts.is_empty() {
                // Small reads fill the last piece up to PIECE first: one
                // piece per read would cost a header and an allocation per
                // byte of a server that writes a byte at a time.
                match self.parts.last_mut() {
                    Some(last) if last.len() + chunk.len() <= PIECE => {
                        last.extend_from_slice(chunk)
                    }
                    _ => self.parts.push(chunk.to_vec()),
                }
            }
            self.held += chunk.len();
        } else {
            if self.overflow == 0 {
                self.head = self
                    .parts
                    .iter()
                    .flatten()
                    .chain(chunk)
                    .take(END)
                    .copied()
                    .collect();
            }
            for part in &self.parts {
                keep_tail(&mut self.tail, part);
            }
            keep_tail(&mut self.tail, chunk);
            self.overflow += self.held + chunk.len();
            // Freed at once, not kept until the line ends.
            self.parts = Vec::new();
            self.held = 0;
        }
        let consumed = found.unwrap_or(buf.len());
        if found.is_none() {
            return (consumed, None);
        }
        let event = if self.overflow > 0 {
            self.over_long()
        } else {
            let mut l = if self.parts.is_empty() {
                chunk.to_vec()
            } else {
                std::mem::take(&mut self.parts).concat()
            };
            self.held = 0;
            if l.last() == Some(&b'\r') {
                l.pop();
            }
            StdoutEvent::Line(l)
        };
        (consumed, Some(event))
    }

    /// At end of stream: the unterminated last line (or its overflow), if any.
    pub fn finish(&mut self) -> Option<StdoutEvent> {
        if self.overflow > 0 {
            Some(self.over_long())
        } else if self.held > 0 {
            self.held = 0;
            Some(StdoutEvent::Line(std::mem::take(&mut self.parts).concat()))
        } else {
            None
        }
    }

    fn over_long(&mut self) -> StdoutEvent {
        StdoutEvent::TooLong(OverLong {
            len: std::mem::take(&mut self.overflow),
            head: std::mem::take(&mut self.head),
            tail: std::mem::take(&mut self.tail),
        })
    }

    /// Every event of `bytes` followed by end of stream (tests, fuzzing).
    pub fn decode_all(max_line: usize, bytes: &[u8]) -> Vec<StdoutEvent> {
        let mut d = LineDecoder::new(max_line);
        let mut out = Vec::new();
        let mut rest = bytes;
        while !rest.is_empty() {
            let (n, e) = d.push(rest);
            out.extend(e);
            rest = &rest[n..];
        }
        out.extend(d.finish());
        out.push(StdoutEvent::Eof);
        out
    }
}

/// Keeps the last [`END`] bytes of what `tail` held followed by `more`.
fn keep_tail(tail: &mut Vec<u8>, more: &[u8]) {
    if more.len() >= END {
        tail.clear();
        tail.extend_from_slice(&more[more.len() - END..]);
    } else {
        tail.extend_from_slice(more);
        let cut = tail.len().saturating_sub(END);
        tail.drain(..cut);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_crlf_an_unterminated_tail_and_an_over_long_line() {
        let events = LineDecoder::decode_all(4, b"ab\r\n\nabcdefg\nxy");
        assert_eq!(
            events,
            vec![
                StdoutEvent::Line(b"ab".to_vec()),
                StdoutEvent::Line(vec![]),
                StdoutEvent::TooLong(OverLong {
                    len: 7,
                    head: b"abcdefg".to_vec(),
                    tail: b"abcdefg".to_vec(),
                }),
                StdoutEvent::Line(b"xy".to_vec()),
                StdoutEvent::Eof,
            ]
        );
    }

    #[test]
    fn an_over_long_answer_shows_its_id_at_either_end() {
        let text = "x".repeat(10_000);
        let id_of = |line: String| match &LineDecoder::decode_all(64, line.as_bytes())[0] {
            StdoutEvent::TooLong(o) => o.id(),
            other => panic!("{other:?}"),
        };
        // Python's SDK: the id first; the TypeScript SDK: the id last.
        let first = format!(r#"{{"jsonrpc":"2.0","id":7,"result":{{"text":"{text}"}}}}"#);
        assert_eq!(id_of(first), Some(serde_json::json!(7)));
        let last = format!(r#"{{"result":{{"text":"{text}"}},"jsonrpc":"2.0","id":"a\"b"}}"#);
        assert_eq!(id_of(last), Some(serde_json::json!("a\"b")));
        // A value "id" is no key; an "id" inside the result is not the response's.
        let value_first = format!(r#"{{"jsonrpc":"id","id":8,"result":{{"text":"{text}"}}}}"#);
        assert_eq!(id_of(value_first), Some(serde_json::json!(8)));
        let nested = format!(r#"{{"result":{{"id":3,"text":"{text}"}}}}"#);
        assert_eq!(id_of(nested), None);
        let nested_last = format!(r#"{{"jsonrpc":"2.0","result":{{"text":"{text}","id":4}}}}"#);
        assert_eq!(id_of(nested_last), None);
        assert_eq!(id_of(text.clone()), None);
        // A request of the server's own is no answer, whatever its id.
        let request = format!(
            r#"{{"jsonrpc":"2.0","id":3,"method":"sampling/createMessage","params":{{"text":"{text}"}}}}"#
        );
        assert_eq!(id_of(request), None);
        let request_id_last = format!(
            r#"{{"method":"sampling/createMessage","params":{{"text":"{text}"}},"jsonrpc":"2.0","id":3}}"#
        );
        assert_eq!(id_of(request_id_last), None);
    }
}
