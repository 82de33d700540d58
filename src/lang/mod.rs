//! Parsing: source text → [`FileModel`], one frontend per language.

pub mod python;
pub mod rust;
pub mod treesitter;

use std::cell::RefCell;
use std::path::Path;

use crate::model::{FileModel, Language};

/// The language of a file, from its extension or, for scripts without one, its shebang.
pub fn detect(path: &Path, head: &[u8]) -> Option<Language> {
    match path.extension().and_then(|e| e.to_str()) {
        Some("py" | "pyi") => Some(Language::Python),
        Some("rs") => Some(Language::Rust),
        Some(_) => None,
        None => {
            let first = head.split(|b| *b == b'\n').next().unwrap_or(&[]);
            let first = String::from_utf8_lossy(first);
            (first.starts_with("#!") && first.contains("python")).then_some(Language::Python)
        }
    }
}

thread_local! {
    /// One tree-sitter parser per thread, reused across files.
    static PARSER: RefCell<tree_sitter::Parser> = RefCell::new(tree_sitter::Parser::new());
}

/// Parses and lowers `text`. `Err` is a reason the file could not be analysed at all.
pub fn lower(language: Language, text: &str) -> Result<FileModel, String> {
    match language {
        Language::Rust => rust::lower(text),
        Language::Python => PARSER.with(|p| {
            let mut parser = p.borrow_mut();
            let table = &python::TABLE;
            let tree = treesitter::parse(&mut parser, table, text)?;
            Ok(treesitter::lower(table, &tree, text))
        }),
    }
}
