//! Splitting a server's stdout into lines (the stdio transport's framing),
//! with a cap on a line's length so a server that never writes a newline
//! cannot grow mcperr's memory. Pure: the stdio transport feeds it what the
//! pipe gives, and the `stdio_line` fuzz target feeds it arbitrary bytes.

/// Something that came out of the server's stdout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StdoutEvent {
    /// One line, without its newline (and without a `\r` before it).
    Line(Vec<u8>),
    /// A line longer than the cap (its length so far); its bytes are dropped.
    TooLong(usize),
    /// stdout closed.
    Eof,
}

/// Incremental line splitter with a length cap.
#[derive(Debug, Clone)]
pub struct LineDecoder {
    max_line: usize,
    line: Vec<u8>,
    overflow: usize,
}

impl LineDecoder {
    /// A decoder that reports lines longer than `max_line` as [`StdoutEvent::TooLong`].
    pub fn new(max_line: usize) -> LineDecoder {
        LineDecoder {
            max_line,
            line: Vec::new(),
            overflow: 0,
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
        if self.overflow == 0 && self.line.len() + chunk.len() <= self.max_line {
            self.line.extend_from_slice(chunk);
        } else {
            self.overflow += self.line.len() + chunk.len();
            // Freed, not cleared: a cleared Vec keeps its capacity, up to
            // the cap, for as long as the connection lives.
            self.line = Vec::new();
        }
        let consumed = found.unwrap_or(buf.len());
        if found.is_none() {
            return (consumed, None);
        }
        let event = if self.overflow > 0 {
            StdoutEvent::TooLong(std::mem::take(&mut self.overflow))
        } else {
            let mut l = std::mem::take(&mut self.line);
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
            Some(StdoutEvent::TooLong(std::mem::take(&mut self.overflow)))
        } else if !self.line.is_empty() {
            Some(StdoutEvent::Line(std::mem::take(&mut self.line)))
        } else {
            None
        }
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
                StdoutEvent::TooLong(7),
                StdoutEvent::Line(b"xy".to_vec()),
                StdoutEvent::Eof,
            ]
        );
    }
}
