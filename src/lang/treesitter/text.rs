//! Names and texts as the model spells them.

use crate::model::{Expr, ExprKind, Span};

/// Longer expression texts are abbreviated; keys and TTLs are short.
pub const MAX_TEXT: usize = 240;

/// A keyword's name as written: `nx:` → `nx`, `"PX"` → `PX`.
pub(super) fn key_name(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Str(s) => s.clone(),
        _ => e
            .text
            .trim_end_matches(':')
            .trim_matches(['"', '\''])
            .to_string(),
    }
}

/// `a.b.c` → (`c`, `a.b.c`, receiver `a.b`); `f().g` → (`g`, .., receiver `f()`).
pub(super) fn split_callee(callee: Expr) -> (String, String, Option<Box<Expr>>, Span) {
    let name_span = callee.span;
    match callee.kind {
        ExprKind::Name(path) => match path.rfind('.') {
            Some(dot) => {
                let recv_text = path[..dot].to_string();
                let recv = Expr {
                    kind: ExprKind::Name(recv_text.clone()),
                    text: recv_text,
                    span: Span::new(callee.span.start, callee.span.start + dot),
                };
                (
                    path[dot + 1..].to_string(),
                    path,
                    Some(Box::new(recv)),
                    name_span,
                )
            }
            None => (path.clone(), path, None, name_span),
        },
        ExprKind::Member { object, name } => {
            let callee_text = format!("{}.{name}", object.text);
            (name, callee_text, Some(object), name_span)
        }
        _ => (String::new(), callee.text, None, name_span),
    }
}

pub(super) fn is_expression_like(kind: &str) -> bool {
    !kind.ends_with("statement")
        && !kind.ends_with("definition")
        && !kind.ends_with("declaration")
        && kind != "block"
}

pub(super) fn parse_int(s: &str) -> Option<i64> {
    let lower = s.to_ascii_lowercase();
    if let Some(hex) = lower.strip_prefix("0x") {
        return i64::from_str_radix(hex, 16).ok();
    }
    lower.trim_end_matches(['l', 'u', 'n']).parse().ok()
}

/// Collapses whitespace runs so `a . b` and `a.b` compare equal.
pub fn collapse_ws(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut space = false;
    for c in s.chars() {
        if c.is_whitespace() {
            space = true;
        } else {
            if space && !out.is_empty() && needs_space(out.chars().last(), c) {
                out.push(' ');
            }
            space = false;
            out.push(c);
        }
    }
    out
}

fn needs_space(prev: Option<char>, next: char) -> bool {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    prev.is_some_and(word) && word(next)
}

pub fn abbreviate(s: &str) -> String {
    if s.len() <= MAX_TEXT {
        return s.to_string();
    }
    let mut cut = MAX_TEXT;
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}…", &s[..cut])
}
