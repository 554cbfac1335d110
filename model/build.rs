//! Embeds fixtures/cases, fixtures/profiles, fixtures/schemas, fixtures/requirements and fixtures/rules.toml into the binary, so `mcperr`
//! works from any directory (read through the `model/fixtures` link, which packaging follows).

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

/// `kebab-case` → `KebabCase`, for generated variant names.
fn camel(s: &str) -> String {
    s.split(['-', '_'])
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// The rule and aspect ids of the table as enums, so a misspelt id in code
/// is a compile error. An aspect is named by any era; `main` is each rule's
/// central sentence.
fn ids(table: &str) -> String {
    let table: toml::Value = toml::from_str(table).expect("fixtures/rules.toml parses");
    let rules = table["rule"].as_array().expect("[[rule]] entries");
    let mut rule_ids = Vec::new();
    let mut aspects: Vec<(String, String)> = Vec::new();
    for r in rules {
        let id = r["id"].as_str().expect("rule id").to_string();
        let mut names = vec!["main".to_string()];
        if let Some(eras) = r.get("era").and_then(toml::Value::as_table) {
            for text in eras.values() {
                for a in text
                    .get("aspects")
                    .and_then(toml::Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let name = a["id"].as_str().expect("aspect id").to_string();
                    if !names.contains(&name) {
                        names.push(name);
                    }
                }
            }
        }
        aspects.extend(names.into_iter().map(|n| (id.clone(), n)));
        rule_ids.push(id);
    }
    let mut s = String::new();
    s.push_str("/// A rule of the table (fixtures/rules.toml), generated at build time.\n");
    s.push_str(
        "#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]\npub enum RuleId {\n",
    );
    for r in &rule_ids {
        writeln!(s, "    /// Rule {r}.\n    {r},").unwrap();
    }
    s.push_str("}\n\nimpl RuleId {\n    /// Every rule, in table order.\n    pub const ALL: &'static [RuleId] = &[");
    for r in &rule_ids {
        write!(s, "RuleId::{r}, ").unwrap();
    }
    s.push_str("];\n\n    /// The id as the table writes it.\n    pub fn as_str(self) -> &'static str {\n        match self {\n");
    for r in &rule_ids {
        writeln!(s, "            RuleId::{r} => {r:?},").unwrap();
    }
    s.push_str("        }\n    }\n\n    /// The rule's central sentence, as an aspect.\n    pub fn main(self) -> AspectId {\n        match self {\n");
    for r in &rule_ids {
        writeln!(s, "            RuleId::{r} => AspectId::{r}Main,").unwrap();
    }
    s.push_str("        }\n    }\n}\n\n");
    s.push_str("/// One requirement of a rule: its central sentence (`main`) or one of its\n/// aspects in the table, generated at build time.\n");
    s.push_str("#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]\npub enum AspectId {\n");
    for (r, a) in &aspects {
        writeln!(s, "    /// {r}.{a}\n    {r}{},", camel(a)).unwrap();
    }
    s.push_str("}\n\nimpl AspectId {\n    /// Every aspect, in table order.\n    pub const ALL: &'static [AspectId] = &[");
    for (r, a) in &aspects {
        write!(s, "AspectId::{r}{}, ", camel(a)).unwrap();
    }
    s.push_str("];\n\n    /// The rule it belongs to.\n    pub fn rule(self) -> RuleId {\n        match self {\n");
    for (r, a) in &aspects {
        writeln!(s, "            AspectId::{r}{} => RuleId::{r},", camel(a)).unwrap();
    }
    s.push_str("        }\n    }\n\n    /// Its id within the rule, as the table writes it (`main` for the central sentence).\n    pub fn name(self) -> &'static str {\n        match self {\n");
    for (r, a) in &aspects {
        writeln!(s, "            AspectId::{r}{} => {a:?},", camel(a)).unwrap();
    }
    s.push_str("        }\n    }\n}\n");
    s
}

fn main() {
    // `model/fixtures` is a link to the repository's `fixtures/`: cargo
    // follows it when it packages this crate, so the files embedded here
    // travel inside the package (the `include` list in Cargo.toml names
    // which) and `cargo install mcperr` builds from the tarball alone.
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let fixtures = manifest.join("fixtures");
    let mut out = table("BUILTIN_CASES", &fixtures.join("cases"), "toml");
    out.push_str(&table(
        "BUILTIN_PROFILES",
        &fixtures.join("profiles"),
        "toml",
    ));
    out.push_str(&table("BUILTIN_SCHEMAS", &fixtures.join("schemas"), "json"));
    out.push_str(&table(
        "BUILTIN_REQUIREMENTS",
        &fixtures.join("requirements"),
        "toml",
    ));
    let rules = fixtures.join("rules.toml");
    println!("cargo:rerun-if-changed={}", rules.display());
    let mut rules_rs = String::new();
    writeln!(
        rules_rs,
        "/// The rule table (fixtures/rules.toml).\npub static BUILTIN_RULES: &str = include_str!({:?});",
        rules.display().to_string()
    )
    .unwrap();
    rules_rs.push_str(&ids(&std::fs::read_to_string(&rules).unwrap()));
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    std::fs::write(out_dir.join("fixtures.rs"), out).unwrap();
    std::fs::write(out_dir.join("rules.rs"), rules_rs).unwrap();
}
