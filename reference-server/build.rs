//! Gathers the fault catalogue: every `declare_faults! { … }` block in `src/`
//! becomes one `faults! { … }` invocation in `$OUT_DIR/faults.rs`, which
//! `src/faults/mod.rs` includes to define the `Fault` enum.
//!
//! Why: a fault is declared beside the behaviour it switches on (the file
//! that reads `Fault::X`), so adding one touches that file alone. The long
//! catalogue in `src/faults/mod.rs` comes first, the other files' blocks
//! after it in path order: `Fault::ALL` and `--list-faults` keep their order.

use std::path::{Path, PathBuf};

/// The macro a file declares its faults with (it expands to nothing).
const MARKER: &str = "declare_faults!";

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The body of the block whose `{` is at `open`: up to its matching `}`,
/// braces inside string, raw string and character literals and inside
/// comments not counted.
fn block_body(text: &str, open: usize) -> Option<&str> {
    let bytes = text.as_bytes();
    let (mut depth, mut i) = (0usize, open);
    while i < bytes.len() {
        let rest = &bytes[i..];
        match bytes[i] {
            b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'r' if raw_string_at(bytes, i) => {
                let hashes = rest[1..].iter().take_while(|b| **b == b'#').count();
                let close: Vec<u8> = std::iter::once(b'"')
                    .chain(std::iter::repeat_n(b'#', hashes))
                    .collect();
                let from = i + 2 + hashes;
                let end = text[from..].find(std::str::from_utf8(&close).ok()?)?;
                i = from + end + close.len() - 1;
            }
            b'\'' if rest.get(2) == Some(&b'\'') => i += 2,
            b'\'' if rest.get(1) == Some(&b'\\') && rest.get(3) == Some(&b'\'') => i += 3,
            b'/' if rest.starts_with(b"//") => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if rest.starts_with(b"/*") => {
                i += 2 + text[i + 2..].find("*/")? + 1;
            }
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(&text[open + 1..i]);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// Whether a raw string literal (`r"…"`, `r#"…"#`) starts at `i`: an `r`
/// that ends no identifier, then hashes, then a quote.
fn raw_string_at(bytes: &[u8], i: usize) -> bool {
    let starts_word = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
    let hashes = bytes[i + 1..].iter().take_while(|b| **b == b'#').count();
    starts_word && bytes.get(i + 1 + hashes) == Some(&b'"')
}

/// The bodies of the `declare_faults!` blocks of one file, in file order.
/// Only an invocation at the start of a line counts (not the macro's own
/// definition, nor a mention in a comment). A doc comment inside a block is
/// kept as a plain comment (the gathered `faults!` takes no attributes).
fn blocks(path: &Path, text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = text[from..].find(MARKER).map(|i| i + from) {
        let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
        let after = at + MARKER.len();
        let open = after + text[after..].len() - text[after..].trim_start().len();
        let prefix = text[line_start..at].trim();
        if (prefix.is_empty() || prefix == "crate::faults::") && text[open..].starts_with('{') {
            let body = block_body(text, open).unwrap_or_else(|| {
                panic!("{}: a declare_faults! block is not closed", path.display())
            });
            let body: Vec<String> = body
                .lines()
                .map(|l| match l.trim_start().strip_prefix("///") {
                    Some(doc) => format!("//{doc}"),
                    None => l.to_string(),
                })
                .collect();
            out.push(body.join("\n"));
        }
        from = after;
    }
    out
}

fn main() {
    // Read when the script runs, not baked in when it was compiled: a
    // target directory shared by two checkouts would otherwise read the
    // sources of the one that compiled the script.
    let manifest = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let src = Path::new(&manifest).join("src");
    println!("cargo:rerun-if-changed={}", src.display());
    let mut files = Vec::new();
    collect(&src, &mut files);
    files.sort();
    let catalogue = src.join("faults").join("mod.rs");
    files.sort_by_key(|f| *f != catalogue);
    let mut body = String::new();
    for file in &files {
        println!("cargo:rerun-if-changed={}", file.display());
        let text = std::fs::read_to_string(file).expect("a source file of the reference server");
        for block in blocks(file, &text) {
            body.push_str(&block);
            body.push('\n');
        }
    }
    assert!(
        !body.trim().is_empty(),
        "no declare_faults! block under {}",
        src.display()
    );
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR")).join("faults.rs");
    std::fs::write(out, format!("faults! {{\n{body}}}\n")).expect("writable OUT_DIR");
}
