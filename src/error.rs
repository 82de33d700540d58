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
        YamlError::at(path, src, offset, with_suggestion(message), CATALOG_HELP)
    }

    /// The same error with another help line.
    pub fn help(self, text: &str) -> Self {
        match self {
            YamlError::Invalid {
                path,
                line,
                message,
                src,
                span,
                ..
            } => YamlError::Invalid {
                path,
                line,
                message,
                help: text.to_string(),
                src,
                span,
            },
            io => io,
        }
    }

    /// An error about a value: points at its first occurrence in the file.
    pub fn about(path: &str, src: &str, needle: &str, message: String) -> Self {
        let offset = src.find(needle).unwrap_or(0);
        YamlError::at(path, src, offset, message, CATALOG_HELP)
    }
}

/// Where the installed binary documents the catalog's and the config's keys.
pub const CATALOG_HELP: &str = "`lock-audit explain catalog` prints every key of rules/*.yaml";
pub const CONFIG_HELP: &str =
    "`lock-audit explain config` prints every key of lock-audit.yaml, with examples";

/// serde's "unknown field `exlude`, expected one of `a`, `b`" (or variant)
/// with "; did you mean `exclude`?" when one expected name is close.
pub fn with_suggestion(message: String) -> String {
    let Some(rest) = message
        .split_once("unknown field `")
        .or_else(|| message.split_once("unknown variant `"))
        .map(|(_, r)| r)
    else {
        return message;
    };
    let Some((given, expected)) = rest.split_once('`') else {
        return message;
    };
    let candidates = expected.split('`').skip(1).step_by(2);
    match closest(given, candidates) {
        Some(best) => format!("{message}; did you mean `{best}`?"),
        None => message,
    }
}

/// The candidate nearest to `given` by edit distance, if it is near enough
/// to be a typo.
pub fn closest<'c>(given: &str, candidates: impl IntoIterator<Item = &'c str>) -> Option<&'c str> {
    candidates
        .into_iter()
        .map(|c| {
            (
                strsim::damerau_levenshtein(&given.to_ascii_lowercase(), &c.to_ascii_lowercase()),
                c,
            )
        })
        .filter(|(d, c)| *d <= 2.max(c.len() / 4) && *d < c.len())
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}
