//! Embeds fixtures/cases, fixtures/profiles, fixtures/schemas and fixtures/rules.toml into the binary, so `mcperr`
//! works from any directory.

use std::fmt::Write;
use std::path::{Path, PathBuf};

fn collect(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, ext, out);
        } else if path.extension().is_some_and(|e| e == ext) {
            out.push(path);
        }
    }
}

fn table(name: &str, root: &Path, ext: &str) -> String {
    println!("cargo:rerun-if-changed={}", root.display());
    let mut files = Vec::new();
    collect(root, ext, &mut files);
    files.sort();
    let mut s = format!("/// Built-in files: (path relative to fixtures/, contents).\npub static {name}: &[(&str, &str)] = &[\n");
    for f in files {
        if let Some(parent) = f.parent() {
            println!("cargo:rerun-if-changed={}", parent.display());
        }
        println!("cargo:rerun-if-changed={}", f.display());
        let rel = f
            .strip_prefix(root.parent().unwrap())
            .unwrap()
            .display()
            .to_string();
        writeln!(
            s,
            "    ({rel:?}, include_str!({:?})),",
            f.display().to_string()
        )
        .unwrap();
    }
    s.push_str("];\n");
    s
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let fixtures = manifest.parent().unwrap().join("fixtures");
    let mut out = table("BUILTIN_CASES", &fixtures.join("cases"), "toml");
    out.push_str(&table(
        "BUILTIN_PROFILES",
        &fixtures.join("profiles"),
        "toml",
    ));
    out.push_str(&table("BUILTIN_SCHEMAS", &fixtures.join("schemas"), "json"));
    let rules = fixtures.join("rules.toml");
    println!("cargo:rerun-if-changed={}", rules.display());
    let mut rules_rs = String::new();
    writeln!(
        rules_rs,
        "/// The rule table (fixtures/rules.toml).\npub static BUILTIN_RULES: &str = include_str!({:?});",
        rules.display().to_string()
    )
    .unwrap();
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    std::fs::write(out_dir.join("fixtures.rs"), out).unwrap();
    std::fs::write(out_dir.join("rules.rs"), rules_rs).unwrap();
}
