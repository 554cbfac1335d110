//! The house rules of the source tree (issue 33), checked on every test run
//! so that they stay true: no two files of a crate import each other,
//! directly or around a loop, no module is over ~500 lines unless
//! [`LONG_MODULES`] says why, no function is over ~120 lines unless its doc
//! comment says why ("Long by design"), and each engine crate names only
//! the crates before it in [`FLOW`] and opens with its layout note.
//!
//! An import is a path a file names outside comments and its
//! `#[cfg(test)]` section: `crate::a::b`, `super::x`, `self::x` (and the
//! items of a `{…}` group after one), resolved to the longest module path
//! that is a file of the crate. The crate root is not an import, nor are a
//! directory module's `mod` children and the items it reaches by their
//! relative name (`send::step`): it is their entry point, and they may name
//! its types (`super::Client`) without making a loop.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The crates whose `src/` the rules cover.
const CRATES: [&str; 9] = [
    "model",
    "wire",
    "cases",
    "oracle",
    "core",
    "render",
    "harness",
    "reference-server",
    "protocol",
];

/// The most lines a module has without a stated reason.
const MAX_LINES: usize = 520;

/// Modules over [`MAX_LINES`], each with why.
const LONG_MODULES: &[(&str, &str)] = &[];

/// The most lines a function (signature to closing brace) has without a
/// stated reason: its doc comment then says "Long by design" and why.
const MAX_FUNCTION_LINES: usize = 120;

type Module = Vec<String>;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every `.rs` file under `src`, by module path (`mod.rs`, `lib.rs` and
/// `main.rs` name their directory's module).
fn modules(src: &Path) -> BTreeMap<Module, PathBuf> {
    let mut out = BTreeMap::new();
    let mut dirs = vec![src.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel = path.strip_prefix(src).unwrap().with_extension("");
            let mut m: Module = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if matches!(m.last().map(String::as_str), Some("mod" | "lib" | "main")) {
                m.pop();
            }
            out.insert(m, path);
        }
    }
    out
}

/// The text a file's imports are read from: no comments, no test section.
fn code(text: &str) -> String {
    let text = text.split("#[cfg(test)]").next().unwrap_or_default();
    text.lines()
        .map(|l| l.split("//").next().unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The module paths `text` (the code of module `at`) names.
fn named_paths(text: &str, at: &Module) -> Vec<Module> {
    let mut out = Vec::new();
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    for base in ["crate::", "super::", "self::"] {
        let mut from = 0;
        while let Some(i) = text[from..].find(base).map(|i| from + i) {
            from = i + base.len();
            if text[..i].chars().next_back().is_some_and(ident) {
                continue; // `my_crate::`, not `crate::`
            }
            let mut start: Module = match base {
                "crate::" => vec![],
                "self::" => at.clone(),
                _ => at[..at.len().saturating_sub(1)].to_vec(),
            };
            let rest = &text[from..];
            let end = rest
                .find(|c: char| !(ident(c) || c == ':'))
                .unwrap_or(rest.len());
            let segments: Vec<&str> = rest[..end].split("::").filter(|s| !s.is_empty()).collect();
            start.extend(segments.iter().map(|s| s.to_string()));
            if rest[end..].starts_with('{') {
                let group = &rest[end + 1..rest[end..].find('}').map_or(rest.len(), |j| end + j)];
                for item in group.split(',') {
                    let item = item.split(" as ").next().unwrap_or_default().trim();
                    if item.is_empty() || item == "self" {
                        continue;
                    }
                    let mut p = start.clone();
                    p.extend(item.split("::").map(|s| s.trim().to_string()));
                    out.push(p);
                }
            }
            out.push(start);
        }
    }
    out
}

/// The file-level import graph of one crate.
fn graph(src: &Path) -> BTreeMap<Module, BTreeSet<Module>> {
    let files = modules(src);
    let mut g: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for (m, path) in &files {
        let text = code(&std::fs::read_to_string(path).unwrap());
        let edges = g.entry(m.clone()).or_default();
        for p in named_paths(&text, m) {
            let target = (1..=p.len())
                .rev()
                .map(|k| p[..k].to_vec())
                .find(|k| files.contains_key(k));
            if let Some(t) = target.filter(|t| t != m && !t.is_empty()) {
                edges.insert(t);
            }
        }
    }
    g
}

/// The loops of `g`: its strongly connected components of more than one
/// module (Tarjan's algorithm, iterative over a small graph).
fn loops(g: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<Module>> {
    struct State<'a> {
        g: &'a BTreeMap<Module, BTreeSet<Module>>,
        index: BTreeMap<&'a Module, usize>,
        low: BTreeMap<&'a Module, usize>,
        stack: Vec<&'a Module>,
        out: Vec<Vec<Module>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a Module) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        for w in s.g.get(v).into_iter().flatten() {
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if s.stack.contains(&w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut comp = vec![];
            while let Some(w) = s.stack.pop() {
                comp.push(w.clone());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                s.out.push(comp);
            }
        }
    }
    let mut s = State {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: vec![],
        out: vec![],
    };
    for v in g.keys() {
        if !s.index.contains_key(v) {
            visit(&mut s, v);
        }
    }
    s.out
}

#[test]
fn no_two_files_of_a_crate_import_each_other_even_around_a_loop() {
    let mut found = Vec::new();
    for krate in CRATES {
        for comp in loops(&graph(&root().join(krate).join("src"))) {
            let names: Vec<String> = comp.iter().map(|m| m.join("/")).collect();
            found.push(format!("{krate}/src: {}", names.join(" ↔ ")));
        }
    }
    assert!(found.is_empty(), "import loops:\n{}", found.join("\n"));
}

#[test]
fn the_loop_finder_finds_a_loop() {
    // The check above must be able to fail: a → b → c → a is one loop.
    let m = |s: &str| vec![s.to_string()];
    let mut g = BTreeMap::new();
    g.insert(m("a"), BTreeSet::from([m("b")]));
    g.insert(m("b"), BTreeSet::from([m("c")]));
    g.insert(m("c"), BTreeSet::from([m("a")]));
    g.insert(m("d"), BTreeSet::from([m("a")]));
    assert_eq!(loops(&g).len(), 1);
    assert_eq!(loops(&g)[0].len(), 3);
    let paths = named_paths(
        "use crate::x::{y, z::w as v};\nsuper::q::f();",
        &vec!["p".into(), "r".into()],
    );
    assert!(paths.contains(&vec!["x".to_string(), "y".to_string()]));
    assert!(paths.contains(&vec!["x".to_string(), "z".to_string(), "w".to_string()]));
    assert!(paths.contains(&vec!["p".to_string(), "q".to_string(), "f".to_string()]));
}

#[test]
fn no_module_is_over_about_500_lines_without_a_reason() {
    let mut long = Vec::new();
    for krate in CRATES {
        for path in modules(&root().join(krate).join("src")).values() {
            let lines = std::fs::read_to_string(path).unwrap().lines().count();
            let name = path
                .strip_prefix(root())
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let excused = LONG_MODULES.iter().any(|(n, _)| *n == name);
            if lines > MAX_LINES && !excused {
                long.push(format!("{name}: {lines} lines"));
            }
        }
    }
    assert!(
        long.is_empty(),
        "modules over {MAX_LINES} lines (split one by concern, or say why in LONG_MODULES):\n{}",
        long.join("\n")
    );
}

/// The functions of `text` (before its `#[cfg(test)] mod`, the test
/// section; a `#[cfg(test)]` on a statement elsewhere does not end it)
/// longer than [`MAX_FUNCTION_LINES`] whose doc comment gives no reason,
/// as `name: lines`. A function ends at the first line that closes its
/// signature's indentation (rustfmt's layout).
fn long_functions(text: &str) -> Vec<String> {
    let text = text.split("#[cfg(test)]\nmod ").next().unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let body = line.trim_start();
        let indent = &line[..line.len() - body.len()];
        let signature = [
            "pub(crate) ",
            "pub(super) ",
            "pub ",
            "async ",
            "const ",
            "unsafe ",
        ]
        .iter()
        .fold(body, |b, p| b.strip_prefix(p).unwrap_or(b));
        let signature = signature.strip_prefix("async ").unwrap_or(signature);
        let Some(rest) = signature.strip_prefix("fn ") else {
            continue;
        };
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let close = format!("{indent}}}");
        let Some(end) = lines[i + 1..].iter().position(|l| *l == close) else {
            continue;
        };
        let length = end + 2;
        let doc = lines[..i]
            .iter()
            .rev()
            .take_while(|l| l.trim_start().starts_with("///") || l.trim_start().starts_with("#["))
            .any(|l| l.contains("Long by design"));
        if length > MAX_FUNCTION_LINES && !doc {
            out.push(format!("{name}: {length} lines"));
        }
    }
    out
}

#[test]
fn the_function_length_check_measures_signature_to_closing_brace() {
    let body = "    x();\n".repeat(MAX_FUNCTION_LINES - 2);
    let at_limit = format!("fn ok() {{\n{body}}}\n");
    assert!(long_functions(&at_limit).is_empty());
    let over = format!("pub async fn long() {{\n{body}    y();\n}}\n");
    assert_eq!(
        long_functions(&over),
        vec![format!("long: {} lines", MAX_FUNCTION_LINES + 1)]
    );
    let excused = format!("/// Long by design: a table.\n{over}");
    assert!(long_functions(&excused).is_empty());
    let in_tests = format!("#[cfg(test)]\nmod tests {{\n{over}}}\n");
    assert!(long_functions(&in_tests).is_empty());
    // A test-only statement inside a function is not the test section.
    let gated = format!("fn short() {{\n    #[cfg(test)]\n    x();\n}}\n{over}");
    assert_eq!(long_functions(&gated).len(), 1);
}

#[test]
fn no_function_is_over_about_120_lines_without_a_reason() {
    let mut long = Vec::new();
    for krate in CRATES {
        for path in modules(&root().join(krate).join("src")).values() {
            let text = std::fs::read_to_string(path).unwrap();
            let name = path.strip_prefix(root()).unwrap().display().to_string();
            long.extend(
                long_functions(&text)
                    .into_iter()
                    .map(|f| format!("{name}: {f}")),
            );
        }
    }
    assert!(
        long.is_empty(),
        "functions over {MAX_FUNCTION_LINES} lines (split them into the steps they name, or say \"Long by design\" and why in the doc comment):\n{}",
        long.join("\n")
    );
}

/// The engine's crates in the order the data flows (docs/architecture.md):
/// each may depend on those before it, never on one after.
const FLOW: [&str; 7] = [
    "protocol", "model", "wire", "cases", "oracle", "core", "render",
];

/// The workspace crates a manifest's `[dependencies]` names (`mcperr-x`), as
/// directory names (`x`; `mcperr-reference` is `reference-server`).
fn engine_dependencies(manifest: &str) -> Vec<String> {
    let doc: toml::Table = toml::from_str(manifest).unwrap();
    doc.get("dependencies")
        .and_then(toml::Value::as_table)
        .map(|t| {
            t.keys()
                .filter_map(|k| k.strip_prefix("mcperr-"))
                .map(|k| {
                    if k == "reference" {
                        "reference-server"
                    } else {
                        k
                    }
                })
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn each_engine_crate_depends_only_on_those_before_it_and_opens_with_its_layout_note() {
    for (i, krate) in FLOW.iter().enumerate() {
        let manifest = std::fs::read_to_string(root().join(krate).join("Cargo.toml")).unwrap();
        for dep in engine_dependencies(&manifest) {
            let at = FLOW.iter().position(|k| *k == dep);
            assert!(
                at.is_some_and(|at| at < i),
                "{krate} depends on mcperr-{dep}, which is not before it in {FLOW:?}"
            );
        }
        let lib = std::fs::read_to_string(root().join(krate).join("src/lib.rs")).unwrap();
        let note: Vec<&str> = lib.lines().take_while(|l| l.starts_with("//!")).collect();
        assert!(
            note.len() >= 5,
            "{krate}/src/lib.rs opens with no layout note (its job, where it sits, its modules)"
        );
    }
    // The check can fail: a model that named the oracle would be refused.
    let backwards = "[dependencies]\nmcperr-oracle.workspace = true\n";
    assert_eq!(engine_dependencies(backwards), ["oracle"]);
}

/// CI builds only mcperr-model (and mcperr-protocol) from their tarballs
/// (scripts/test.sh): the other crates must not read files outside their
/// own `src/` at build time, or their tarballs could miss one unseen. No
/// build script but model's reads outside its crate's `src/` (the
/// reference's gathers its faults from its own `src/`, which its tarball
/// holds), and every `include_str!`/`include_bytes!` path stays inside the
/// including file's crate `src/`.
#[test]
fn only_mcperr_model_reads_files_outside_its_src_when_it_builds() {
    for krate in CRATES.iter().filter(|c| **c != "model") {
        let dir = root().join(krate);
        if let Ok(script) = std::fs::read_to_string(dir.join("build.rs")) {
            let src_only = script.contains(".join(\"src\")")
                && !script.contains("\"..")
                && !script.contains("fixtures");
            assert!(
                src_only,
                "{krate}/build.rs reads outside {krate}/src: verify the crate from its tarball in scripts/test.sh"
            );
        }
        let src = dir.join("src");
        for path in modules(&src).values() {
            let text = std::fs::read_to_string(path).unwrap();
            for macro_name in ["include_str!(", "include_bytes!("] {
                for (at, _) in text.match_indices(macro_name) {
                    let arg = &text[at + macro_name.len()..];
                    let file = arg.split('"').nth(1).unwrap_or_default();
                    let target = path.parent().unwrap().join(file);
                    let inside = std::fs::canonicalize(&target)
                        .is_ok_and(|t| t.starts_with(std::fs::canonicalize(&src).unwrap()));
                    assert!(
                        inside,
                        "{}: {macro_name}\"{file}\") reads outside {krate}/src: verify the crate from its tarball in scripts/test.sh",
                        path.display()
                    );
                }
            }
        }
    }
}

/// The README's main job is `cargo run --release -- run` from the
/// repository's root: cargo picks the binary to run only when the
/// workspace has exactly one (a second one, the peers' script reader, once
/// made it refuse). Helpers for scripts are examples.
#[test]
fn the_workspace_has_one_binary_so_the_readme_s_cargo_run_needs_no_bin() {
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let members: toml::Table = toml::from_str(&manifest).unwrap();
    let members = members["workspace"]["members"].as_array().unwrap();
    let mut binaries = Vec::new();
    for member in members.iter().filter_map(|m| m.as_str()) {
        let dir = root().join(member);
        let text = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        let declared = text.matches("[[bin]]").count();
        let implied = usize::from(declared == 0 && dir.join("src/main.rs").exists());
        binaries.extend(std::iter::repeat_n(member.to_string(), declared + implied));
        let bin_dir = dir.join("src/bin");
        if bin_dir.is_dir() {
            binaries.extend(
                std::fs::read_dir(bin_dir)
                    .unwrap()
                    .map(|_| member.to_string()),
            );
        }
    }
    assert_eq!(binaries, ["harness"], "binaries by member");
}
