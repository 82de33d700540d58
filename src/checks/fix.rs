//! Fixes: source edits a rule attaches to its finding. The editor offers every
//! fix as a quick fix; `check --fix` applies the safe ones and `--diff` shows
//! them. Templates come from the catalog (`fixes:` in `rules/*.yaml`).

use serde::{Deserialize, Serialize};

use crate::catalog::Catalog;
use crate::model::{Expr, Span};

/// The redis.io compare-and-delete release, the `{script}` of a template.
pub const COMPARE_AND_DELETE: &str = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";

/// What a placeholder is replaced with when the value is not known: the
/// user fills it in, so the fix is not safe to apply unattended.
pub const OWNER_PLACEHOLDER: &str = "token";

/// One replacement of a span of the file's text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Edit {
    pub span: Span,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fix {
    /// What the fix does, imperative: "Add a 30 s expiry to the acquisition".
    pub title: String,
    pub edits: Vec<Edit>,
    /// Applied by `check --fix`. An unsafe fix (a placeholder to fill in) is
    /// only offered in the editor.
    pub safe: bool,
}

impl Fix {
    /// One edit replacing `span`.
    pub fn replace(title: impl Into<String>, span: Span, text: String, safe: bool) -> Fix {
        Fix {
            title: title.into(),
            edits: vec![Edit { span, text }],
            safe,
        }
    }
}

/// `template` with each `{name}` of `values` replaced; any other braces
/// (a JavaScript options object) are kept as written.
pub fn fill(template: &str, values: &[(&str, &str)]) -> String {
    let mut out = template.to_string();
    for (name, value) in values {
        out = out.replace(&format!("{{{name}}}"), value);
    }
    out
}

/// Can this owner value be written again at the release as it was at the
/// acquisition? A name or a field path can; a call (`uuid4()`) or a literal
/// would not be the same value (or not be a token at all).
pub fn repeatable(owner: &Expr) -> bool {
    let t = &owner.peel().text;
    !t.is_empty()
        && t.chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | '@' | '$'))
        && !t.starts_with(|c: char| c.is_ascii_digit())
}

/// Does the key name a lock (`lock:job:1`, `JOB_LOCK`)? A rewrite is applied
/// unattended only then: a `SET NX` marker or counter taken for a lock must
/// not be given an expiry behind its owner's back.
pub fn names_a_lock(catalog: &Catalog, key: &Expr, resolved: &str) -> bool {
    crate::sites::lock_words(catalog, &[&key.text, resolved]).is_some()
}

/// Applies `fixes` to `text`, in order of position; a fix overlapping one
/// already taken is left for the next run. Returns the new text and how many
/// fixes were applied.
pub fn apply(text: &str, fixes: &[&Fix]) -> (String, usize) {
    let mut chosen: Vec<&Fix> = Vec::new();
    let mut sorted: Vec<&Fix> = fixes.to_vec();
    sorted.sort_by_key(|f| f.edits.iter().map(|e| e.span.start).min());
    let mut taken: Vec<Span> = Vec::new();
    for fix in sorted {
        let fits = fix.edits.iter().all(|e| {
            e.span.start <= e.span.end
                && e.span.end <= text.len()
                && text.is_char_boundary(e.span.start)
                && text.is_char_boundary(e.span.end)
                && !taken
                    .iter()
                    .any(|t| e.span.start < t.end && t.start < e.span.end)
        });
        if fits {
            taken.extend(fix.edits.iter().map(|e| e.span));
            chosen.push(fix);
        }
    }
    let mut edits: Vec<&Edit> = chosen.iter().flat_map(|f| &f.edits).collect();
    edits.sort_by_key(|e| std::cmp::Reverse(e.span.start));
    let mut out = text.to_string();
    for e in edits {
        out.replace_range(e.span.start..e.span.end, &e.text);
    }
    (out, chosen.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(start: usize, end: usize) -> Span {
        Span { start, end }
    }

    #[test]
    fn templates_keep_foreign_braces() {
        let t = "{receiver}.set({key}, {value}, {NX: true, PX: 30000})";
        assert_eq!(
            fill(t, &[("receiver", "client"), ("key", "k"), ("value", "v")]),
            "client.set(k, v, {NX: true, PX: 30000})"
        );
    }

    #[test]
    fn overlapping_fixes_wait_for_the_next_run() {
        let text = "abcdef";
        let a = Fix::replace("a", span(0, 2), "XY".into(), true);
        let b = Fix::replace("b", span(1, 3), "Z".into(), true);
        let c = Fix::replace("c", span(4, 6), "W".into(), true);
        let (out, n) = apply(text, &[&c, &b, &a]);
        assert_eq!((out.as_str(), n), ("XYcdW", 2));
        // Out of range or inside a character: never applied.
        let bad = Fix::replace("bad", span(3, 99), String::new(), true);
        assert_eq!(apply(text, &[&bad]), (text.to_string(), 0));
        let e = Fix::replace("mid", span(1, 2), String::new(), true);
        assert_eq!(apply("é", &[&e]), ("é".to_string(), 0));
    }
}
