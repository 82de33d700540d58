//! Text a source file takes from another file when it is built (Rust
//! `include_str!("update_metadata.sql")`): SQL and Lua kept in files of their
//! own are read where they run. Each embedded file is read once, beside the
//! file that embeds it; its digest joins that file's cache key, so an edit to
//! the `.sql` file alone re-analyses the file that runs it.

use std::path::Path;

use crate::lang::profile::profile;
use crate::model::{Expr, ExprKind, FileModel, Language};
use crate::prefilter::Prefilter;

/// Embedded files larger than this are not read (a data file, not a statement).
const MAX_EMBED: u64 = 256 * 1024;

/// The embedded texts of one file: (the path as written, its text).
#[derive(Debug, Default)]
pub struct Embeds {
    texts: Vec<(String, String)>,
    /// The file names an embedded file (read or not): the prefilter's "no
    /// lock here" is then not final, as the embedded file may change alone.
    declared: bool,
    /// Why a named file was not read (too large, missing, not UTF-8).
    unread: Vec<String>,
}

impl Embeds {
    /// Finds the embedding macros in `bytes` (the file at `path`) and reads
    /// the files they name. A file that cannot be read embeds nothing.
    pub fn read(path: &Path, language: Language, bytes: &[u8]) -> Embeds {
        let Some(mac) = profile(language).embed_macro else {
            return Embeds::default();
        };
        let dir = path.parent().unwrap_or(Path::new(""));
        let mut out = Embeds::default();
        let starts = bytes
            .windows(mac.len())
            .enumerate()
            .filter(|(_, w)| *w == mac.as_bytes())
            .map(|(at, _)| at + mac.len());
        for start in starts {
            let rest = String::from_utf8_lossy(&bytes[start..bytes.len().min(start + 512)]);
            let Some(name) = literal_arg(&rest) else {
                continue;
            };
            out.declared = true;
            if out.texts.iter().any(|(n, _)| n == name) {
                continue;
            }
            let file = dir.join(name);
            let read = match std::fs::metadata(&file) {
                Ok(m) if m.len() > MAX_EMBED => Err(format!(
                    "{} bytes is over the {MAX_EMBED} byte limit",
                    m.len()
                )),
                Ok(_) => std::fs::read_to_string(&file).map_err(|e| e.to_string()),
                Err(e) => Err(e.to_string()),
            };
            match read {
                Ok(content) => out.texts.push((name.to_string(), content)),
                Err(why) => out.unread.push(format!(
                    "{mac}(\"{name}\") not read ({why}): its text is not analysed"
                )),
            }
        }
        out
    }

    /// Why named files were not read, one reason each.
    pub fn unread(&self) -> &[String] {
        &self.unread
    }

    /// Does the file name an embedded file?
    pub fn declared(&self) -> bool {
        self.declared
    }

    /// Does an embedded text pass the prefilter for the embedding file's language?
    pub fn matches(&self, prefilter: &Prefilter, language: Language) -> bool {
        self.texts
            .iter()
            .any(|(_, text)| prefilter.matches(text.as_bytes(), language))
    }

    /// A digest of the embedded texts, for the embedding file's cache key
    /// (empty when it embeds nothing).
    pub fn fingerprint(&self) -> String {
        if self.texts.is_empty() {
            return String::new();
        }
        let mut hasher = blake3::Hasher::new();
        for (name, text) in &self.texts {
            hasher.update(name.as_bytes());
            hasher.update(&[0]);
            hasher.update(text.as_bytes());
            hasher.update(&[0]);
        }
        hasher.finalize().to_hex().to_string()
    }

    /// Gives every embedding expression of `model` the text it embeds.
    pub fn bind(&self, model: &mut FileModel) {
        let Some(mac) = profile(model.language)
            .embed_macro
            .filter(|_| !self.texts.is_empty())
        else {
            return;
        };
        for call in &mut model.calls {
            for arg in &mut call.args {
                fill(&mut arg.value, mac, &self.texts);
            }
        }
        for assign in &mut model.assigns {
            fill(&mut assign.value, mac, &self.texts);
        }
    }
}

/// `("name.sql")` after the macro's name: the literal path.
fn literal_arg(rest: &str) -> Option<&str> {
    let rest = rest
        .trim_start()
        .strip_prefix(['(', '[', '{'])?
        .trim_start();
    let rest = rest.strip_prefix('"')?;
    let end = rest.find('"')?;
    let name = &rest[..end];
    let close = rest[end + 1..].trim_start();
    (close.starts_with([')', ']', '}']) && !name.contains('\\')).then_some(name)
}

/// Replaces `e` (or the expression it wraps) when it is `mac("name")`.
fn fill(e: &mut Expr, mac: &str, texts: &[(String, String)]) {
    if let ExprKind::Wrapped(inner) = &mut e.kind {
        return fill(inner, mac, texts);
    }
    if !matches!(e.kind, ExprKind::Other) {
        return;
    }
    let name = e.text.strip_prefix(mac).and_then(literal_arg);
    if let Some((_, text)) = name.and_then(|n| texts.iter().find(|(t, _)| t == n)) {
        e.kind = ExprKind::Str(text.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::literal_arg;

    #[test]
    fn reads_the_literal_path() {
        assert_eq!(literal_arg("(\"q.sql\")"), Some("q.sql"));
        assert_eq!(literal_arg(" ( \"sql/q.sql\" ) ;"), Some("sql/q.sql"));
        assert_eq!(literal_arg("(concat!(\"a\", \"b\"))"), None);
        assert_eq!(literal_arg("(\"a\\\"b\")"), None);
    }
}
