//! insta's snapshot file format, written and read without insta: a YAML
//! header between `---` lines, then the contents. The contents are JSON in
//! insta's own pretty style (two-space indent, `": "` after keys, a whole
//! float written with `.0`), so that a file `mcperr run --snapshots` writes
//! is the file `insta::assert_json_snapshot!` writes for the same value, and
//! `cargo insta review`, `accept` and `reject` work on either.

use std::fmt::Write as _;

use serde_json::Value;

/// A snapshot file: what its header says, and its contents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapFile {
    /// `source:`: what wrote it (insta shows it in a review).
    pub source: String,
    /// `description:`: the column and case, for the reviewer.
    pub description: String,
    /// The contents after the header, without the final line break.
    pub contents: String,
}

impl SnapFile {
    /// The file's text: insta's header (every value a double-quoted YAML
    /// scalar, which insta's reader takes), then the contents and one line
    /// break.
    pub fn to_text(&self) -> String {
        format!(
            "---\nsource: {}\ndescription: {}\n---\n{}\n",
            quoted(&self.source),
            quoted(&self.description),
            self.contents.trim_end()
        )
    }

    /// Reads a snapshot file's text; `None` if it has no insta header. The
    /// header's other fields (`expression`, `info`, `assertion_line`…) are
    /// insta's and ignored: a snapshot is compared by its contents alone,
    /// as insta compares it.
    pub fn parse(text: &str) -> Option<SnapFile> {
        let text = text.replace("\r\n", "\n");
        let mut lines = text.split_inclusive('\n');
        if lines.next()?.trim() != "---" {
            return None;
        }
        // The header ends at the next line that is `---` (trailing blanks
        // allowed, as insta's reader allows them; or at the end of the text).
        let mut header = String::new();
        let mut taken = text.find('\n').map_or(text.len(), |i| i + 1);
        for line in lines {
            taken += line.len();
            if line.trim() == "---" {
                break;
            }
            header.push_str(line);
        }
        let contents = &text[taken.min(text.len())..];
        let field = |name: &str| {
            header
                .lines()
                .find_map(|l| l.strip_prefix(name)?.strip_prefix(": "))
                .map(unquoted)
                .unwrap_or_default()
        };
        Some(SnapFile {
            source: field("source"),
            description: field("description"),
            contents: contents.trim_end().to_string(),
        })
    }
}

/// `s` as a YAML double-quoted scalar (JSON's string escapes are YAML's).
fn quoted(s: &str) -> String {
    Value::String(s.to_string()).to_string()
}

/// A header value as written: double-quoted (JSON escapes), single-quoted
/// (`''` for a quote) or plain.
fn unquoted(v: &str) -> String {
    let v = v.trim();
    if v.starts_with('"') {
        serde_json::from_str(v).unwrap_or_else(|_| v.to_string())
    } else if let Some(inner) = v.strip_prefix('\'').and_then(|x| x.strip_suffix('\'')) {
        inner.replace("''", "'")
    } else {
        v.to_string()
    }
}

/// `value` as insta's JSON serializer prints it in a file snapshot (keys in
/// the order the value holds them: sort first, as insta's `sort_maps` does).
pub fn insta_json(value: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, value, 0);
    out
}

fn write_value(out: &mut String, value: &Value, depth: usize) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => write_number(out, n),
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                separator(out, i == 0, depth + 1);
                write_value(out, item, depth + 1);
            }
            close(out, ']', items.is_empty(), depth);
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                separator(out, i == 0, depth + 1);
                write_string(out, key);
                out.push_str(": ");
                write_value(out, item, depth + 1);
            }
            close(out, '}', map.is_empty(), depth);
        }
    }
}

fn separator(out: &mut String, first: bool, depth: usize) {
    out.push_str(if first { "\n" } else { ",\n" });
    indent(out, depth);
}

fn close(out: &mut String, bracket: char, empty: bool, depth: usize) {
    if !empty {
        out.push('\n');
        indent(out, depth);
    }
    out.push(bracket);
}

fn indent(out: &mut String, depth: usize) {
    for _ in 0..depth {
        out.push_str("  ");
    }
}

/// Integers as they are; a float by Rust's `Display`, with `.0` when that
/// has no point (insta's round-trip rule: `1.0`, never `1`).
fn write_number(out: &mut String, n: &serde_json::Number) {
    if let Some(u) = n.as_u64() {
        let _ = write!(out, "{u}");
    } else if let Some(i) = n.as_i64() {
        let _ = write!(out, "{i}");
    } else if let Some(f) = n.as_f64().filter(|f| f.is_finite()) {
        let start = out.len();
        let _ = write!(out, "{f}");
        if !out[start..].contains('.') {
            out.push_str(".0");
        }
    } else {
        out.push_str("null");
    }
}

/// A JSON string with insta's escapes (serde_json's: the short forms for
/// `\b \t \n \f \r " \`, `\u00XX` for other control bytes, nothing else).
fn write_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '\u{8}' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\u{c}' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn insta_json_is_insta_s_pretty_style() {
        let v = json!({"a": [], "b": {}, "c": [1, -2, 1.5, 3.0], "d": "x\"\n\u{1}é", "e": null});
        assert_eq!(
            insta_json(&v),
            "{\n  \"a\": [],\n  \"b\": {},\n  \"c\": [\n    1,\n    -2,\n    1.5,\n    3.0\n  ],\n  \"d\": \"x\\\"\\n\\u0001é\",\n  \"e\": null\n}"
        );
    }

    #[test]
    fn a_file_reads_back_as_written_and_insta_s_own_header_reads_too() {
        let f = SnapFile {
            source: "mcperr run".into(),
            description: "stdio in 2026-07-28: tools/x \"y\"".into(),
            contents: "{\n  \"a\": 1\n}".into(),
        };
        assert_eq!(SnapFile::parse(&f.to_text()), Some(f));
        let insta = "---\nsource: snapshots/tests/transcripts.rs\nassertion_line: 3\ndescription: \"rmcp over http: x\"\nexpression: value\n---\n{}\n";
        let read = SnapFile::parse(insta).unwrap();
        assert_eq!(read.source, "snapshots/tests/transcripts.rs");
        assert_eq!(read.description, "rmcp over http: x");
        assert_eq!(read.contents, "{}");
        assert_eq!(SnapFile::parse("{}"), None);
    }
}
