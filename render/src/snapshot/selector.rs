//! insta's redaction selectors (`.**.serverInfo.version`,
//! `.params["io.modelcontextprotocol/clientInfo"].version`, `.items[]`,
//! `.items[1:3]`), parsed and applied to a JSON value, so that a user's own
//! redactions read the same in `--redact`, in `redactions.toml` and in an
//! insta `Settings::add_redaction` of their own tests.

use serde_json::Value;

/// One step of a selector's path.
#[derive(Debug, Clone, PartialEq)]
enum Segment {
    /// `.name` or `["name"]`: that key of an object.
    Key(String),
    /// `[3]`: that element of an array.
    Index(i64),
    /// `[]`, `[a:b]`, `[:b]`, `[a:]`: the elements in that range (a
    /// negative bound counts from the end).
    Range(Option<i64>, Option<i64>),
    /// `.*`: any one key or element.
    Any,
    /// `.**`: any number of keys and elements (see [`matches`]).
    Deep,
}

/// A parsed selector: one path, or several separated by commas.
#[derive(Debug, Clone, PartialEq)]
pub struct Selector {
    paths: Vec<Vec<Segment>>,
    text: String,
}

/// Why a selector did not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{selector:?} is not an insta selector: {why} (for example `.**.createdAt` or `.result[\"_meta\"].id`)")]
pub struct SelectorError {
    selector: String,
    why: String,
}

impl Selector {
    /// Parses insta's selector syntax.
    pub fn parse(text: &str) -> Result<Selector, SelectorError> {
        let fail = |why: &str| SelectorError {
            selector: text.to_string(),
            why: why.to_string(),
        };
        let mut paths = Vec::new();
        for part in split_outside_quotes(text, ',')
            .iter()
            .map(|p| p.trim())
            .filter(|p| !p.is_empty())
        {
            let path = parse_path(part).map_err(|w| fail(&w))?;
            if path.iter().filter(|s| **s == Segment::Deep).count() > 1 {
                return Err(fail("`.**` may appear once in a selector, as in insta"));
            }
            paths.push(path);
        }
        if paths.is_empty() {
            return Err(fail("it is empty"));
        }
        Ok(Selector {
            paths,
            text: text.to_string(),
        })
    }

    /// The selector as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Every value `value` holds at a path this selector matches.
    pub fn find(&self, value: &Value) -> Vec<Value> {
        let mut copy = value.clone();
        let mut found = Vec::new();
        let mut path = Vec::new();
        walk(&mut copy, &mut path, &mut |p, v| {
            let hit = self.paths.iter().any(|sel| matches(sel, p));
            if hit {
                found.push(v.clone());
            }
            hit
        });
        found
    }

    /// Replaces every value `value` holds at a path this selector matches
    /// with `with`; returns how many were replaced.
    pub fn redact(&self, value: &mut Value, with: &Value) -> usize {
        let mut path = Vec::new();
        walk(value, &mut path, &mut |p, v| {
            if self.paths.iter().any(|sel| matches(sel, p)) {
                *v = with.clone();
                true
            } else {
                false
            }
        })
    }
}

/// A step taken from the root to a value: a key, or an index with its
/// array's length (for negative indexes and ranges).
#[derive(Debug, Clone)]
enum Step {
    Key(String),
    Index(usize, usize),
}

/// Visits every value, parents first; a value `visit` replaced is not
/// descended into. Returns how many were replaced.
fn walk(
    value: &mut Value,
    path: &mut Vec<Step>,
    visit: &mut dyn FnMut(&[Step], &mut Value) -> bool,
) -> usize {
    if !path.is_empty() && visit(path, value) {
        return 1;
    }
    let mut n = 0;
    match value {
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                path.push(Step::Key(k.clone()));
                n += walk(v, path, visit);
                path.pop();
            }
        }
        Value::Array(items) => {
            let len = items.len();
            for (i, v) in items.iter_mut().enumerate() {
                path.push(Step::Index(i, len));
                n += walk(v, path, visit);
                path.pop();
            }
        }
        _ => {}
    }
    n
}

/// insta's rule: without `.**` the path has the selector's length and each
/// step matches; with it, the path is longer than the part before `.**`,
/// which matches its start, and the part after matches its end (so `.**`
/// covers none or more steps before later segments, and at least one at
/// the end: `.result.**` selects what `result` holds, not `result`).
fn matches(selector: &[Segment], path: &[Step]) -> bool {
    match selector.iter().position(|s| *s == Segment::Deep) {
        None => selector.len() == path.len() && selector.iter().zip(path).all(|(s, p)| one(s, p)),
        Some(at) => {
            let (before, after) = (&selector[..at], &selector[at + 1..]);
            path.len() > at
                && before.iter().zip(path).all(|(s, p)| one(s, p))
                && after
                    .iter()
                    .rev()
                    .zip(path.iter().rev())
                    .all(|(s, p)| one(s, p))
        }
    }
}

fn one(segment: &Segment, step: &Step) -> bool {
    let from_end = |i: i64, len: usize| {
        if i < 0 {
            (len as i64 + i).max(0)
        } else {
            i
        }
    };
    match (segment, step) {
        (Segment::Any | Segment::Deep, _) => true,
        (Segment::Key(k), Step::Key(s)) => k == s,
        (Segment::Index(i), Step::Index(at, _)) => *i == *at as i64,
        (Segment::Range(a, b), Step::Index(at, len)) => {
            let at = *at as i64;
            a.is_none_or(|a| at >= from_end(a, *len)) && b.is_none_or(|b| at < from_end(b, *len))
        }
        _ => false,
    }
}

/// One comma-free selector: `.` alone, or segments from the root.
fn parse_path(text: &str) -> Result<Vec<Segment>, String> {
    if text == "." {
        return Err("`.` alone would replace the whole transcript".into());
    }
    let mut rest = text;
    let mut out = Vec::new();
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix(".**") {
            out.push(Segment::Deep);
            rest = r;
        } else if let Some(r) = rest.strip_prefix(".*") {
            out.push(Segment::Any);
            rest = r;
        } else if let Some(r) = rest.strip_prefix('.').filter(|r| r.starts_with('[')) {
            // `.["key"]`: the subscript of the value itself.
            rest = r;
        } else if let Some(r) = rest.strip_prefix('.') {
            let end = r
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
                .unwrap_or(r.len());
            if end == 0 || r.starts_with(|c: char| c.is_ascii_digit()) {
                return Err(format!("a key is expected after `.` at {rest:?}"));
            }
            out.push(Segment::Key(r[..end].to_string()));
            rest = &r[end..];
        } else if let Some(r) = rest.strip_prefix('[') {
            let end = bracket_end(r).ok_or_else(|| format!("`[` is not closed at {rest:?}"))?;
            out.push(subscript(r[..end].trim())?);
            rest = &r[end + 1..];
        } else {
            return Err(format!("expected `.` or `[` at {rest:?}"));
        }
    }
    Ok(out)
}

/// Where the subscript opened before `r` closes: after its string, if it
/// is one (a key may hold `]`).
fn bracket_end(r: &str) -> Option<usize> {
    if let Some(s) = r.trim_start().strip_prefix('"') {
        let offset = r.len() - s.len();
        let close = s
            .char_indices()
            .scan(false, |escaped, (i, c)| {
                let end = c == '"' && !*escaped;
                *escaped = c == '\\' && !*escaped;
                Some((i, end))
            })
            .find(|(_, end)| *end)?
            .0;
        return r[offset + close..].find(']').map(|e| offset + close + e);
    }
    r.find(']')
}

fn subscript(inner: &str) -> Result<Segment, String> {
    let int = |s: &str| {
        s.trim()
            .parse::<i64>()
            .map_err(|_| format!("{s:?} is not an index"))
    };
    if inner.is_empty() {
        return Ok(Segment::Range(None, None));
    }
    if let Some(key) = inner.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
        // insta's unescaping: a backslash keeps the character after it.
        let mut out = String::new();
        let mut escaped = false;
        for c in key.chars() {
            if c == '\\' && !escaped {
                escaped = true;
                continue;
            }
            escaped = false;
            out.push(c);
        }
        return Ok(Segment::Key(out));
    }
    if let Some((a, b)) = inner.split_once(':') {
        let a = (!a.trim().is_empty()).then(|| int(a)).transpose()?;
        let b = (!b.trim().is_empty()).then(|| int(b)).transpose()?;
        return Ok(Segment::Range(a, b));
    }
    match int(inner)? {
        i if i < 0 => Err(format!(
            "[{i}]: an index counts from 0 (a range may count from the end: [{i}:])"
        )),
        i => Ok(Segment::Index(i)),
    }
}

/// `text` cut at each `sep` that is outside a double-quoted key (commas
/// between selectors, the `=` of `--redact SELECTOR=TEXT`).
pub fn split_outside_quotes(text: &str, sep: char) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut start, mut quoted, mut escaped) = (0, false, false);
    for (i, c) in text.char_indices() {
        match c {
            '\\' if quoted && !escaped => {
                escaped = true;
                continue;
            }
            '"' if !escaped => quoted = !quoted,
            c if c == sep && !quoted => {
                parts.push(&text[start..i]);
                start = i + c.len_utf8();
            }
            _ => {}
        }
        escaped = false;
    }
    parts.push(&text[start..]);
    parts
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn redacted(selector: &str, mut v: Value) -> Value {
        Selector::parse(selector)
            .unwrap()
            .redact(&mut v, &json!("[r]"));
        v
    }

    #[test]
    fn a_deep_wildcard_finds_the_key_at_any_depth() {
        let v = json!({"serverInfo": {"version": "1"}, "a": {"b": {"serverInfo": {"version": "2", "name": "n"}}}});
        assert_eq!(
            redacted(".**.serverInfo.version", v),
            json!({"serverInfo": {"version": "[r]"}, "a": {"b": {"serverInfo": {"version": "[r]", "name": "n"}}}})
        );
    }

    #[test]
    fn a_quoted_key_may_hold_dots_slashes_and_brackets() {
        let v = json!({"request": {"params": {"_meta": {"io.x/clientInfo": {"version": "1"}, "a]b": 2}}}});
        let v = redacted(
            ".request.params._meta[\"io.x/clientInfo\"].version, .request.params._meta[\"a]b\"]",
            v,
        );
        assert_eq!(
            v,
            json!({"request": {"params": {"_meta": {"io.x/clientInfo": {"version": "[r]"}, "a]b": "[r]"}}}})
        );
    }

    #[test]
    fn indexes_ranges_and_wildcards_select_elements() {
        let v = json!({"items": [1, 2, 3, 4]});
        assert_eq!(
            redacted(".items[-1:]", v.clone()),
            json!({"items": [1, 2, 3, "[r]"]})
        );
        assert_eq!(
            redacted(".items[1:3]", v.clone()),
            json!({"items": [1, "[r]", "[r]", 4]})
        );
        assert_eq!(
            redacted(".items[]", v.clone()),
            json!({"items": ["[r]", "[r]", "[r]", "[r]"]})
        );
        assert_eq!(redacted(".*", v.clone()), json!({"items": "[r]"}));
        assert_eq!(redacted(".items[0]", v), json!({"items": ["[r]", 2, 3, 4]}));
    }

    #[test]
    fn a_deep_wildcard_at_the_end_selects_below_never_the_key_itself() {
        let v = json!({"result": {"a": 1, "b": {"c": 2}}});
        assert_eq!(
            redacted(".result.**", v),
            json!({"result": {"a": "[r]", "b": "[r]"}})
        );
    }

    #[test]
    fn quoted_keys_may_hold_commas_and_escaped_quotes() {
        let v = json!({"a,b": 1, "q\"x": 2, "c": 3});
        assert_eq!(
            redacted(".[\"a,b\"], .[\"q\\\"x\"]", v),
            json!({"a,b": "[r]", "q\"x": "[r]", "c": 3})
        );
    }

    #[test]
    fn a_selector_that_is_not_one_says_what_to_write() {
        for bad in [
            "",
            "serverInfo",
            ".a[",
            ".a[x]",
            ". b",
            ".9",
            ".a[-1]",
            ".**.a.**",
        ] {
            let e = Selector::parse(bad).unwrap_err().to_string();
            assert!(e.contains("is not an insta selector"), "{bad}: {e}");
        }
    }
}
