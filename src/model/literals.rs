//! Literal spellings, for text the model keeps unparsed (a parameter's
//! default, a condition).

pub const TRUE_WORDS: &[&str] = &["True", "true"];
pub const NULL_WORDS: &[&str] = &["None", "nil", "null", "undefined"];

/// Is `text` a literal that counts as false: `False` / `false` or a null?
pub fn falsy(text: &str) -> bool {
    ["False", "false"].contains(&text) || NULL_WORDS.contains(&text)
}

/// Is `e` an empty value: `""`, a null, or an empty string's bytes
/// (`"".getBytes()`, `"".encode()`, `b""`)?
pub fn empty_value(e: &super::Expr) -> bool {
    let e = e.peel();
    match &e.kind {
        super::ExprKind::Str(s) => s.is_empty(),
        super::ExprKind::Null => true,
        _ => {
            let text = e.text.trim();
            let base = text.split_once('.').map_or(text, |(base, _)| base);
            ["\"\"", "''", "b\"\"", "b''"].contains(&base)
        }
    }
}
