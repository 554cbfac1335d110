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
const MARKER: &str = "declare_faults! {";

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
/// braces inside string literals and comments not counted.
fn block_body(text: &str, open: usize) -> Option<&str> {
    let bytes = text.as_bytes();
    let (mut depth, mut i) = (0usize, open);
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
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

/// The bodies of the `declare_faults!` blocks of one file, in file order.
/// Only a block at the start of a line counts (not the macro's own
/// definition, nor a mention in a comment).
fn blocks(path: &Path, text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = text[from..].find(MARKER).map(|i| i + from) {
        let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
        let open = at + MARKER.len() - 1;
        let prefix = &text[line_start..at];
        if prefix.trim().is_empty() || prefix.trim() == "crate::faults::" {
            let body = block_body(text, open).unwrap_or_else(|| {
                panic!("{}: a declare_faults! block is not closed", path.display())
            });
            out.push(body.to_string());
        }
        from = open + 1;
    }
    out
}

fn main() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
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
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR")).join("faults.rs");
    std::fs::write(out, format!("faults! {{\n{body}}}\n")).expect("writable OUT_DIR");
}
