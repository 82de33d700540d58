//! The languages lock-audit reads, by their catalog and fixture names.

use serde::Serialize;

/// The languages lock-audit reads.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    Python,
    Rust,
    Go,
    Java,
    /// JavaScript, JSX, `.mjs`, `.cjs`.
    JavaScript,
    /// TypeScript and TSX; shares the `javascript` catalog entries.
    TypeScript,
    Ruby,
    /// SQL files: migrations, schema dumps, PL/pgSQL functions.
    Sql,
}

impl Language {
    pub const ALL: [Language; 8] = [
        Language::Python,
        Language::Rust,
        Language::Go,
        Language::Java,
        Language::JavaScript,
        Language::TypeScript,
        Language::Ruby,
        Language::Sql,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Language::Python => "python",
            Language::Rust => "rust",
            Language::Go => "go",
            Language::Java => "java",
            Language::JavaScript => "javascript",
            Language::TypeScript => "typescript",
            Language::Ruby => "ruby",
            Language::Sql => "sql",
        }
    }

    /// The language whose catalog entries apply (TypeScript uses JavaScript's).
    pub fn catalog_language(self) -> Language {
        match self {
            Language::TypeScript => Language::JavaScript,
            other => other,
        }
    }

    /// The fixture folder / display name for a `name()`.
    pub fn from_name(name: &str) -> Option<Self> {
        Language::ALL.into_iter().find(|l| l.name() == name)
    }
}
