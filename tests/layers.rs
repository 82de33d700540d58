//! The layers of `src/`, read from `ARCHITECTURE.md`: a module may use only
//! modules of lower layers. Fails on any `crate::` path that points up or
//! sideways, and on a top-level module the layer table does not list.

use std::collections::BTreeSet;
use std::path::Path;

/// The layer table: the fenced `layers` block of ARCHITECTURE.md, one layer
/// per line, lowest first.
fn layers(architecture: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in architecture.lines() {
        let t = line.trim();
        if t == "```layers" {
            inside = true;
        } else if inside && t.starts_with("```") {
            break;
        } else if inside && !t.is_empty() {
            let names = t.split('#').next().unwrap_or("");
            out.push(names.split_whitespace().map(str::to_string).collect());
        }
    }
    out
}

/// The top-level modules named by `crate::` paths in a source text, with
/// `use crate::{a, b::c}` groups expanded. Comments are skipped.
fn uses(source: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in source.lines() {
        let code = line.trim_start();
        if code.starts_with("//") {
            continue;
        }
        let mut rest = code;
        while let Some(i) = rest.find("crate::") {
            let before = rest[..i].chars().last();
            rest = &rest[i + "crate::".len()..];
            if matches!(before, Some(c) if c.is_alphanumeric() || c == '_') {
                continue;
            }
            if let Some(group) = rest.strip_prefix('{') {
                let end = group.find('}').unwrap_or(group.len());
                for item in group[..end].split(',') {
                    let name: String = item
                        .trim()
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    if !name.is_empty() && name != "self" {
                        out.insert(name);
                    }
                }
            } else {
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    out.insert(name);
                }
            }
        }
    }
    out
}

/// Every edge that does not point to a lower layer: `(file, from, to)`.
fn violations(table: &[Vec<String>], files: &[(String, String)]) -> Vec<String> {
    let layer_of = |m: &str| table.iter().position(|l| l.iter().any(|n| n == m));
    let mut out = Vec::new();
    for (path, source) in files {
        let top = path
            .split('/')
            .next()
            .unwrap_or("")
            .trim_end_matches(".rs")
            .to_string();
        let Some(from) = layer_of(&top) else {
            out.push(format!("{path}: module `{top}` is not in the layer table"));
            continue;
        };
        for used in uses(source) {
            if used == top {
                continue;
            }
            match layer_of(&used) {
                Some(to) if to < from => {}
                Some(_) => out.push(format!("{path}: `{top}` uses `{used}` (not a lower layer)")),
                None => out.push(format!(
                    "{path}: `crate::{used}` is not a module in the layer table"
                )),
            }
        }
    }
    out
}

fn sources(dir: &Path, root: &Path, out: &mut Vec<(String, String)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            sources(&path, root, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let rel = path
                .strip_prefix(root)
                .unwrap_or(&path)
                .to_string_lossy()
                .replace('\\', "/");
            // The crate roots declare the modules; they are above every layer.
            if rel == "lib.rs" || rel == "main.rs" || rel.starts_with("bin/") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            out.push((rel, text));
        }
    }
}

#[test]
fn no_module_uses_a_higher_layer() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let architecture =
        std::fs::read_to_string(root.join("ARCHITECTURE.md")).expect("ARCHITECTURE.md exists");
    let table = layers(&architecture);
    assert!(table.len() > 5, "ARCHITECTURE.md has a ```layers block");
    let mut files = Vec::new();
    sources(&root.join("src"), &root.join("src"), &mut files);
    assert!(files.len() > 50, "found the sources");
    let bad = violations(&table, &files);
    assert!(
        bad.is_empty(),
        "upward or unknown edges:\n{}",
        bad.join("\n")
    );
}

#[test]
fn an_upward_edge_is_caught() {
    let table = layers("```layers\nmodel\nsites   # lock sites\ncli\n```\n");
    assert_eq!(table, vec![vec!["model"], vec!["sites"], vec!["cli"]]);
    let files = vec![
        (
            "sites/mod.rs".to_string(),
            "use crate::{model::Span, cli};\n".to_string(),
        ),
        (
            "model.rs".to_string(),
            "// crate::sites in a comment\nfn f() { crate::model::x(); }".to_string(),
        ),
        (
            "cli.rs".to_string(),
            "use crate::sites; use crate::model;".to_string(),
        ),
        ("extra.rs".to_string(), String::new()),
    ];
    let bad = violations(&table, &files);
    assert_eq!(
        bad,
        vec![
            "sites/mod.rs: `sites` uses `cli` (not a lower layer)".to_string(),
            "extra.rs: module `extra` is not in the layer table".to_string(),
        ]
    );
}

fn all_sources() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&root, &root, &mut files);
    assert!(files.len() > 50, "found the sources");
    files
}

/// One job per module: no source file over 600 lines.
#[test]
fn no_source_file_is_over_600_lines() {
    let long: Vec<String> = all_sources()
        .iter()
        .map(|(path, text)| (path, text.lines().count()))
        .filter(|(_, n)| *n > 600)
        .map(|(path, n)| format!("{path}: {n} lines"))
        .collect();
    assert!(long.is_empty(), "split these:\n{}", long.join("\n"));
}

/// Checks read facts from the model and the lock sites, never source text;
/// and only `lang/` (with the model that names the languages and the
/// catalog's display of them) branches on a language.
#[test]
fn language_knowledge_stays_in_lang() {
    let mut bad = Vec::new();
    for (path, text) in all_sources() {
        for (i, line) in text.lines().enumerate() {
            let code = line.trim_start();
            if code.starts_with("//") {
                continue;
            }
            if path.starts_with("checks/") && code.contains("fa.text") {
                bad.push(format!("{path}:{}: a check reads source text", i + 1));
            }
            let outside = !path.starts_with("lang/")
                && !path.starts_with("model")
                && !path.starts_with("catalog/");
            let variant = [
                "Python",
                "Rust",
                "Go",
                "Java",
                "JavaScript",
                "TypeScript",
                "Ruby",
            ]
            .iter()
            .any(|v| code.contains(&format!("Language::{v}")));
            if outside && variant {
                bad.push(format!(
                    "{path}:{}: branches on a language (ask lang::profile)",
                    i + 1
                ));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
