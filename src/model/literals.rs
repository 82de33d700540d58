//! Literal spellings, for text the model keeps unparsed (a parameter's
//! default, a condition).

pub const TRUE_WORDS: &[&str] = &["True", "true"];
pub const NULL_WORDS: &[&str] = &["None", "nil", "null", "undefined"];

/// Is `text` a literal that counts as false: `False` / `false` or a null?
pub fn falsy(text: &str) -> bool {
    ["False", "false"].contains(&text) || NULL_WORDS.contains(&text)
}
