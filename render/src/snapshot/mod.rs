//! A case's transcript as an insta snapshot: what `mcperr run --snapshots`,
//! `mcperr matrix --snapshots`, the library's `cargo test` helpers and our
//! own snapshot package all write, so the same server gives the same files
//! whichever of them wrote them.
//!
//! A transcript holds the request as sent, the answer as received (keys
//! sorted: their order is the server's choice, not its behaviour), the HTTP
//! status and body where there is one, and the verdict with its deciding
//! rule; never the judge's prose or the timings, which change when mcperr
//! does. What legitimately changes from run to run is redacted
//! ([`Redactions::standard`]), and a user adds their own.

mod insta_file;
mod selector;

use std::path::PathBuf;

use mcperr_core::report::CaseResult;
use regex::Regex;
use serde_json::{json, Map, Value};

pub use insta_file::{insta_json, SnapFile};
pub use selector::{split_outside_quotes, Selector, SelectorError};

/// What `source:` says in the files mcperr writes (insta shows it in a
/// review; insta's own assertions write the test's file there instead).
pub const SOURCE: &str = "mcperr";

/// A case's transcript: the request as sent, the response as received (or,
/// over HTTP, the body that held none), the HTTP status where there is one,
/// and the verdict with its deciding rule. A numeric id of a request is
/// written `[id]`: it is mcperr's running counter, and one case more or less
/// (a `--cases`, a tool the server gained, `--jobs`) would renumber every
/// later snapshot; so is the response's id where it echoes it (so is the
/// numeric id of a step's answer shown without its request, in a skipped
/// case). A response id that is not the request's stays as it came: that
/// is a finding. String ids stay as they are.
pub fn transcript(r: &CaseResult) -> Value {
    let mut request = r.request.clone();
    let mut response = r.response.clone();
    let sent = request.as_ref().and_then(|q| q.get("id")).cloned();
    let echoed = response.as_ref().and_then(|a| a.get("id")).cloned();
    match (&sent, &echoed) {
        (Some(Value::Number(a)), Some(Value::Number(b))) if a == b => {
            for v in [request.as_mut(), response.as_mut()].into_iter().flatten() {
                v["id"] = json!("[id]");
            }
        }
        (Some(Value::Number(_)), _) => {
            if let Some(v) = request.as_mut() {
                v["id"] = json!("[id]");
            }
        }
        // A case skipped after a step: the step's answer, to a request the
        // transcript does not hold, numbered by the same running counter.
        (None, Some(Value::Number(_))) if request.is_none() => {
            if let Some(v) = response.as_mut() {
                v["id"] = json!("[id]");
            }
        }
        _ => {}
    }
    let mut t = json!({
        "case": r.id,
        "rule": r.rule,
        "verdict": r.verdict,
        "http_status": r.http_status,
        "request": request,
        "response": response,
    });
    if let Some(body) = &r.body {
        t["body"] = json!(body);
    }
    t
}

/// Where a case's snapshot lives under the snapshots folder, and its name
/// (the case id's last segment): `[<server>/]<transport>-<era>/<the case
/// id's folders>`, so `tools/crash-hides-text` over stdio in 2026-07-28 is
/// `stdio-2026-07-28/tools/crash-hides-text.snap`. Characters a file name
/// should not hold (a generated case's id carries its URI template,
/// `books://{title}`) become `_`, and so does every dot of a segment made
/// of dots only (`..` in a server's URI must not climb out of the folder);
/// empty segments go.
pub fn place(server: Option<&str>, transport: &str, era: &str, case: &str) -> (PathBuf, String) {
    let clean = |s: &str| -> String {
        let dots_only = s.chars().all(|c| c == '.');
        s.chars()
            .map(|c| {
                if (c.is_ascii_alphanumeric() || "._-".contains(c)) && !dots_only {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    let mut segments: Vec<String> = case
        .split('/')
        .filter(|s| !s.is_empty())
        .map(clean)
        .collect();
    let name = segments.pop().unwrap_or_else(|| "case".into());
    let mut dir = PathBuf::new();
    if let Some(server) = server.filter(|s| !s.is_empty()) {
        dir.push(clean(server));
    }
    dir.push(format!("{transport}-{era}"));
    for s in segments {
        dir.push(s);
    }
    (dir, name)
}

/// What a snapshot replaces before it is compared: values at insta
/// selectors, then text matching regexes (in the contents as written, as
/// insta's filters do), each in the order added.
#[derive(Debug, Clone, Default)]
pub struct Redactions {
    selectors: Vec<(Selector, Value)>,
    minted: Vec<(Selector, String)>,
    filters: Vec<(Regex, String)>,
}

/// A timestamp in RFC 3339 form, as the spec's task and log times are.
const TIMESTAMP: &str = r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})";
/// A UUID, the usual shape of a server-minted id (a session, a task).
const UUID: &str =
    r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b";

impl Redactions {
    /// No redactions at all.
    pub fn new() -> Redactions {
        Redactions::default()
    }

    /// What changes in every run of an unchanged server, each for its
    /// reason: the server's and mcperr's versions (a release is not a
    /// change of behaviour); a multi-round-trip `requestState` and a
    /// `taskId` (the server's own opaque strings, new in every run); the
    /// canary mcperr planted in crash inputs (drawn per run: a leak shows
    /// where it went, not what it was); RFC 3339 timestamps; UUIDs; and
    /// the endpoint's host and port (a loopback server's port is the
    /// kernel's choice).
    pub fn standard(canary: &str, endpoint: Option<&str>) -> Redactions {
        let mut r = Redactions::new();
        for (selector, with) in [
            (".**.serverInfo.version", "[version]"),
            (
                ".**[\"io.modelcontextprotocol/serverInfo\"].version",
                "[version]",
            ),
            (
                ".request.params._meta[\"io.modelcontextprotocol/clientInfo\"].version",
                "[version]",
            ),
            (".**.requestState", "[state]"),
        ] {
            r.redact(
                Selector::parse(selector).expect("a valid selector"),
                json!(with),
            );
        }
        // A task's id is minted by the server in an earlier step's answer,
        // and a later request carries it back (its answer may only quote
        // it): every taskId the transcript holds is replaced wherever it
        // appears. (mcperr's own made-up id for an unknown task goes too:
        // it is the case file's, and the case's id says what it was.)
        r.mint(
            Selector::parse(".**.taskId").expect("a valid selector"),
            "[task-id]",
        );
        if !canary.is_empty() {
            r.filter(
                Regex::new(&regex::escape(canary)).expect("escaped"),
                mcperr_oracle::secrets::CANARY_MARKER,
            );
        }
        r.filter(Regex::new(TIMESTAMP).expect("valid"), "[timestamp]");
        r.filter(Regex::new(UUID).expect("valid"), "[uuid]");
        if let Some(endpoint) = endpoint.filter(|e| !e.is_empty()) {
            r.filter(
                Regex::new(&regex::escape(endpoint)).expect("escaped"),
                "[endpoint]",
            );
        }
        r
    }

    /// Replaces the value at `selector` with `with`.
    pub fn redact(&mut self, selector: Selector, with: Value) {
        self.selectors.push((selector, with));
    }

    /// Replaces each string the transcript holds at `selector` with `with`
    /// wherever it appears in the text: an id the server minted, echoed
    /// by a later request or quoted in a message.
    pub fn mint(&mut self, selector: Selector, with: &str) {
        self.minted.push((selector, with.to_string()));
    }

    /// Replaces text matching `pattern` with `with` (`$1` names a group).
    pub fn filter(&mut self, pattern: Regex, with: &str) {
        self.filters.push((pattern, with.to_string()));
    }

    /// `self`'s redactions, then `other`'s: a user's own go first, so that
    /// a pattern written for a raw value still meets it.
    pub fn then(mut self, other: Redactions) -> Redactions {
        self.selectors.extend(other.selectors);
        self.minted.extend(other.minted);
        self.filters.extend(other.filters);
        self
    }

    /// How many redactions there are, selectors and filters.
    pub fn len(&self) -> usize {
        self.selectors.len() + self.minted.len() + self.filters.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A transcript's snapshot contents: keys sorted, selectors applied,
    /// written in insta's JSON style, then minted ids and the filters over
    /// the text.
    pub fn contents(&self, transcript: &Value) -> String {
        let mut value = sorted(transcript);
        let mut minted = Vec::new();
        for (selector, with) in &self.minted {
            for found in selector.find(&value) {
                if let Some(s) = found.as_str().filter(|s| !s.is_empty()) {
                    let quoted = insta_json(&json!(s));
                    minted.push((quoted[1..quoted.len() - 1].to_string(), with));
                }
            }
        }
        for (selector, with) in &self.selectors {
            selector.redact(&mut value, with);
        }
        let mut text = insta_json(&value);
        // The longest first: one id that begins another does not cut it.
        minted.sort_by_key(|(s, _)| std::cmp::Reverse(s.len()));
        for (raw, with) in minted {
            text = replace_minted(&text, &raw, with);
        }
        for (pattern, with) in &self.filters {
            if let std::borrow::Cow::Owned(replaced) = pattern.replace_all(&text, with.as_str()) {
                text = replaced;
            }
        }
        text
    }
}

/// `text` with `id` replaced where it stands alone: not inside a longer
/// word (an id `t1` must not cut `t10` or a date), and, shorter than four
/// characters, only as a whole JSON string.
fn replace_minted(text: &str, id: &str, with: &str) -> String {
    if id.chars().count() < 4 {
        let quoted = |s: &str| format!("\"{s}\"");
        return text.replace(&quoted(id), &quoted(with));
    }
    let part_of_word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || "_-".contains(c));
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(id) {
        out.push_str(&rest[..at]);
        let before = out.chars().next_back();
        let after = rest[at + id.len()..].chars().next();
        if part_of_word(before) || part_of_word(after) {
            out.push_str(id);
        } else {
            out.push_str(with);
        }
        rest = &rest[at + id.len()..];
    }
    out.push_str(rest);
    out
}

/// `value` with every object's keys in order, as insta's `sort_maps` does.
pub fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), sorted(&map[k])))
                    .collect::<Map<String, Value>>(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

/// One case's snapshot in one column, ready to compare or write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// Its column's folder under the snapshots folder
    /// (`[<server>/]<transport>-<era>`).
    pub column: PathBuf,
    /// Its folder under the snapshots folder ([`place`]).
    pub dir: PathBuf,
    /// Its name: the file is `<name>.snap`.
    pub name: String,
    /// The file, header and contents.
    pub file: SnapFile,
}

impl Snapshot {
    /// `result`'s snapshot in the column `[server ]transport era`.
    pub fn of(
        server: Option<&str>,
        transport: &str,
        era: &str,
        result: &CaseResult,
        redactions: &Redactions,
    ) -> Snapshot {
        let (dir, name) = place(server, transport, era, &result.id);
        let (column, _) = place(server, transport, era, "");
        let described = match server.filter(|s| !s.is_empty()) {
            Some(s) => format!("{s} over {transport} in {era}"),
            None => format!("{transport} in {era}"),
        };
        Snapshot {
            column,
            dir,
            name,
            file: SnapFile {
                source: SOURCE.into(),
                description: format!("{described}: {}", result.id),
                contents: redactions.contents(&transcript(result)),
            },
        }
    }

    /// The snapshot's path under the snapshots folder.
    pub fn path(&self) -> PathBuf {
        self.dir.join(format!("{}.snap", self.name))
    }
}

/// Gives each of `snaps` a file of its own: cases whose ids clean to the
/// same path (`books://{title}` and `books:/{title}`, tools `a b` and
/// `a_b`) get their id's stable hash after the name. Returns how many were
/// renamed.
pub fn disambiguate(snaps: &mut [Snapshot]) -> usize {
    let mut seen = std::collections::BTreeMap::<PathBuf, usize>::new();
    for s in snaps.iter() {
        *seen.entry(s.path()).or_default() += 1;
    }
    let mut renamed = 0;
    for s in snaps.iter_mut() {
        if seen[&s.path()] > 1 {
            let case = s.file.description.rsplit(": ").next().unwrap_or_default();
            s.name = format!("{}-{:08x}", s.name, stable_hash(case) as u32);
            renamed += 1;
        }
    }
    renamed
}

/// FNV-1a: a hash that is the same on every machine and release, for file
/// names made from text that cannot be one.
pub fn stable_hash(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_minted_id_is_replaced_where_it_stands_alone() {
        let t = r#"{"taskId": "t1", "m": "task t1 of 2025-11-25, t10"}"#;
        assert_eq!(
            replace_minted(t, "t1", "[task-id]"),
            r#"{"taskId": "[task-id]", "m": "task t1 of 2025-11-25, t10"}"#
        );
        let t = "task abcd1234 failed; abcd12345 did not";
        assert_eq!(
            replace_minted(t, "abcd1234", "[id]"),
            "task [id] failed; abcd12345 did not"
        );
    }

    #[test]
    fn no_segment_climbs_out_of_the_folder() {
        let (dir, name) = place(
            None,
            "stdio",
            "2026-07-28",
            "generated/resources/file:///srv/../x/..",
        );
        assert!(dir.components().all(|c| c.as_os_str() != ".."), "{dir:?}");
        assert_eq!(name, "__");
    }
}
