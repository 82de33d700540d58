//! Errors in the user's configuration and catalog files, rendered by miette
//! with a snippet pointing at the offending line. One of two places (with
//! `report/human.rs`) that know about miette.

use miette::{Diagnostic, NamedSource, SourceSpan};
use thiserror::Error;

/// A problem with a YAML file the user (or the built-in catalog) supplied.
#[derive(Debug, Error, Diagnostic)]
pub enum YamlError {
    #[error("cannot read {path}: {reason}")]
    #[diagnostic(code(lock_audit::io))]
    Io { path: String, reason: String },

    #[error("{path}:{line}: {message}")]
    #[diagnostic(code(lock_audit::invalid_yaml), help("{help}"))]
    Invalid {
        path: String,
        line: usize,
        message: String,
        help: String,
        #[source_code]
        src: NamedSource<String>,
        #[label("here")]
        span: SourceSpan,
    },
}

impl YamlError {
    /// An error at byte `offset` of `src` (the file `path`).
    pub fn at(path: &str, src: &str, offset: usize, message: String, help: &str) -> Self {
        let offset = offset.min(src.len());
        let line = src[..offset].matches('\n').count() + 1;
        let end = src[offset..].find('\n').map_or(src.len(), |n| offset + n);
        YamlError::Invalid {
            path: path.to_string(),
            line,
            message,
            help: help.to_string(),
            src: NamedSource::new(path, src.to_string()),
            span: (offset, end.saturating_sub(offset).max(1)).into(),
        }
    }

    /// A serde_yaml error, located where the parser says it is.
    pub fn from_serde(path: &str, src: &str, err: &serde_yaml::Error) -> Self {
        let offset = err.location().map_or(0, |l| l.index());
        // serde_yaml prefixes the location to its message; keep only the reason.
        let message = err.to_string();
        let message = message
            .split(" at line ")
            .next()
            .unwrap_or(&message)
            .to_string();
        YamlError::at(
            path,
            src,
            offset,
            message,
            "see rules/README.md for the schema",
        )
    }

    /// An error about a value: points at its first occurrence in the file.
    pub fn about(path: &str, src: &str, needle: &str, message: String) -> Self {
        let offset = src.find(needle).unwrap_or(0);
        YamlError::at(
            path,
            src,
            offset,
            message,
            "see rules/README.md for the schema",
        )
    }
}
