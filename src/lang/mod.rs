//! Parsing: source text → [`FileModel`], one frontend per language.
//!
//! Rust goes through `syn` (`rust.rs`); every other language is a node table
//! (`python.rs`, `go.rs`...) over the generic tree-sitter lowering.

pub mod go;
pub mod java;
pub mod javascript;
pub mod profile;
pub mod python;
mod reparse;
pub mod ruby;
pub mod rust;
pub mod sql;
pub mod treesitter;

use std::cell::RefCell;
use std::path::Path;

use tree_sitter::Node;

use crate::model::{FileModel, Import, Language, Param, Span};

/// The language of a file, from its extension or, for scripts without one, its shebang.
pub fn detect(path: &Path, head: &[u8]) -> Option<Language> {
    let ext = path.extension().and_then(|e| e.to_str());
    match ext {
        Some("py" | "pyi") => Some(Language::Python),
        Some("rs") => Some(Language::Rust),
        Some("go") => Some(Language::Go),
        Some("java") => Some(Language::Java),
        Some("js" | "jsx" | "mjs" | "cjs") => Some(Language::JavaScript),
        Some("ts" | "tsx" | "mts" | "cts") => Some(Language::TypeScript),
        Some("rb" | "rake") => Some(Language::Ruby),
        Some("sql") => Some(Language::Sql),
        Some(_) => None,
        None => {
            if path
                .file_name()
                .is_some_and(|n| n == "Rakefile" || n == "Gemfile")
            {
                return Some(Language::Ruby);
            }
            let first = head.split(|b| *b == b'\n').next().unwrap_or(&[]);
            let first = String::from_utf8_lossy(first);
            if !first.starts_with("#!") {
                return None;
            }
            [
                ("python", Language::Python),
                ("ruby", Language::Ruby),
                ("node", Language::JavaScript),
            ]
            .into_iter()
            .find(|(word, _)| first.contains(word))
            .map(|(_, l)| l)
        }
    }
}

thread_local! {
    /// One tree-sitter parser per thread, reused across files.
    static PARSER: RefCell<tree_sitter::Parser> = RefCell::new(tree_sitter::Parser::new());
}

/// Parses and lowers `text`. `Err` is a reason the file could not be analysed at all.
/// `tsx` picks the TSX grammar for TypeScript.
pub fn lower(language: Language, text: &str, tsx: bool) -> Result<FileModel, String> {
    lower_with(language, text, tsx, false)
}

/// [`lower`] for an editor buffer: the tree-sitter languages reparse from the
/// previous text's tree on this thread (see `reparse`).
pub fn lower_incremental(language: Language, text: &str, tsx: bool) -> Result<FileModel, String> {
    lower_with(language, text, tsx, true)
}

fn lower_with(
    language: Language,
    text: &str,
    tsx: bool,
    incremental: bool,
) -> Result<FileModel, String> {
    let table = match language {
        Language::Rust => return rust::lower(text),
        Language::Sql => return Ok(sql::lower(text)),
        Language::Python => &python::TABLE,
        Language::Go => &go::TABLE,
        Language::Java => &java::TABLE,
        Language::JavaScript => &javascript::JAVASCRIPT,
        Language::TypeScript if tsx => &javascript::TSX,
        Language::TypeScript => &javascript::TYPESCRIPT,
        Language::Ruby => &ruby::TABLE,
    };
    let mended = table.mend.and_then(|mend| mend(text));
    let text = mended.as_deref().unwrap_or(text);
    PARSER.with(|p| {
        let mut parser = p.borrow_mut();
        let grammar = std::ptr::from_ref(table) as usize;
        let old = incremental
            .then(|| reparse::previous(grammar, text))
            .flatten();
        let tree = treesitter::parse(&mut parser, table, text, old.as_ref())?;
        if incremental {
            reparse::remember(grammar, text, &tree);
        }
        let mut model = treesitter::lower(table, &tree, text);
        if language == Language::Go {
            go::implemented_interfaces(&mut model);
        }
        Ok(model)
    })
}

/// The source text of a node.
pub(crate) fn node_text<'s>(node: Node, src: &'s str) -> &'s str {
    &src[node.byte_range()]
}

pub(crate) fn push_import(out: &mut Vec<Import>, node: Node, path: String, alias: Option<String>) {
    out.push(Import {
        path,
        alias,
        span: Span::new(node.start_byte(), node.end_byte()),
    });
}

/// Parameters of the common shape: each named child has `name`/`pattern` and `type` fields.
pub(crate) fn simple_params(node: Node, src: &str) -> Vec<Param> {
    let mut out = Vec::new();
    let mut cursor = node.walk();
    for p in node.named_children(&mut cursor) {
        let name = match p.kind() {
            "identifier" => Some(p),
            _ => p
                .child_by_field_name("name")
                .or_else(|| p.child_by_field_name("pattern")),
        };
        let Some(name) = name else { continue };
        let ty = p
            .child_by_field_name("type")
            .map(|t| node_text(t, src).to_string());
        let default = p
            .child_by_field_name("value")
            .map(|v| node_text(v, src).to_string());
        // Go: `a, b string` declares two names of one type.
        let mut c = p.walk();
        let names: Vec<Node> = p.children_by_field_name("name", &mut c).collect();
        if names.len() > 1 {
            out.extend(names.iter().map(|n| Param {
                name: node_text(*n, src).to_string(),
                ty: ty.clone(),
                default: None,
            }));
        } else {
            out.push(Param {
                name: node_text(name, src).to_string(),
                ty,
                default,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::lower;
    use crate::model::Language;

    /// A class's declared bases, by last name, type arguments left out.
    #[test]
    fn class_bases() {
        let cases = [
            (
                Language::Ruby,
                "class DigestJob < ApplicationJob\n  def perform; end\nend\n",
                "DigestJob",
                vec!["ApplicationJob"],
            ),
            (
                Language::Python,
                "class ActualLock(lock.Lock, metaclass=Meta):\n    pass\n",
                "ActualLock",
                vec!["Lock", "Meta"],
            ),
            (
                Language::Java,
                "class Jobs extends Base<Job> implements Runnable, Closeable { }\n",
                "Jobs",
                vec!["Base", "Runnable", "Closeable"],
            ),
            (
                Language::TypeScript,
                "class Runner extends BaseRunner<T> implements Job {}\n",
                "Runner",
                vec!["BaseRunner", "Job"],
            ),
            (
                Language::TypeScript,
                "export abstract class Runner extends PeriodicRunner {}\n",
                "Runner",
                vec!["PeriodicRunner"],
            ),
        ];
        for (language, src, class, want) in cases {
            let model = lower(language, src, false).expect("parses");
            assert_eq!(
                model.supers.get(class),
                Some(&want.iter().map(|s| s.to_string()).collect()),
                "{src}"
            );
        }
        let plain = lower(Language::Ruby, "class Plain\nend\n", false).expect("parses");
        assert!(plain.supers.is_empty());
        // The comment above a module's first class is no base of the module.
        let src = "module Jobs\n  # Lock manager class\n  class Smith\n  end\nend\n";
        let commented = lower(Language::Ruby, src, false).expect("parses");
        assert!(commented.supers.is_empty(), "{:?}", commented.supers);
    }

    /// A function returns a call's result only when it returns the value
    /// itself, directly or through the name it is bound to.
    #[test]
    fn returned_results() {
        let cases = [
            (Language::Python, "def f(n):\n    return r.lock(n)\n", true),
            (
                Language::Python,
                "def f(n):\n    l = r.lock(n)\n    return l\n",
                true,
            ),
            (
                Language::Python,
                "def f(n):\n    l = r.lock(n)\n    return l.locked()\n",
                false,
            ),
            (
                Language::Python,
                "def f(n):\n    return r.lock(n).locked()\n",
                false,
            ),
            (
                Language::Python,
                "def f(n):\n    return describe(r.lock(n))\n",
                false,
            ),
            (
                Language::Python,
                "def f(ns):\n    return [r.lock(n) for n in ns]\n",
                false,
            ),
            (
                Language::TypeScript,
                "function f(n) {\n  return new Mutex(r, n);\n}\n",
                true,
            ),
            (
                Language::Go,
                "func f(n string) (*M, error) {\n\tm, err := c.NewMutex(n)\n\treturn m, err\n}\n",
                true,
            ),
        ];
        for (language, src, want) in cases {
            let model = lower(language, src, false).expect("parses");
            let call = model
                .calls
                .iter()
                .find(|c| matches!(c.name.as_str(), "lock" | "Mutex" | "NewMutex"))
                .expect("the lock call");
            assert_eq!(model.is_returned(call), want, "{src}");
        }
    }
}
