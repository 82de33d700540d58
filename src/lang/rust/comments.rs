//! Comments, which syn drops.

use crate::model::{Comment, Span};

/// The comments of a Rust source, found by a small lexer that knows strings,
/// raw strings, char literals and lifetimes.
pub fn comments(src: &str) -> Vec<Comment> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                let end = src[i..].find('\n').map_or(b.len(), |n| i + n);
                let text = src[i..end]
                    .trim_start_matches('/')
                    .trim_start_matches('!')
                    .trim();
                out.push(Comment {
                    text: text.to_string(),
                    span: Span::new(i, end),
                });
                i = end;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let (mut depth, mut j) = (1, i + 2);
                while j < b.len() && depth > 0 {
                    if b[j] == b'/' && b.get(j + 1) == Some(&b'*') {
                        depth += 1;
                        j += 2;
                    } else if b[j] == b'*' && b.get(j + 1) == Some(&b'/') {
                        depth -= 1;
                        j += 2;
                    } else {
                        j += 1;
                    }
                }
                let inner = src.get(i + 2..j.saturating_sub(2).max(i + 2)).unwrap_or("");
                out.push(Comment {
                    text: inner.trim().to_string(),
                    span: Span::new(i, j),
                });
                i = j;
            }
            b'r' if matches!(b.get(i + 1), Some(b'#') | Some(b'"'))
                && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')) =>
            {
                let hashes = b[i + 1..].iter().take_while(|c| **c == b'#').count();
                if b.get(i + 1 + hashes) != Some(&b'"') {
                    i += 1;
                    continue;
                }
                let close = format!("\"{}", "#".repeat(hashes));
                let start = i + 2 + hashes;
                i = src[start..]
                    .find(&close)
                    .map_or(b.len(), |n| start + n + close.len());
            }
            b'"' => {
                let mut j = i + 1;
                while j < b.len() && b[j] != b'"' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                i = j + 1;
            }
            b'\'' => {
                // 'x' or '\n' is a char literal; 'a (no closing quote) a lifetime.
                if b.get(i + 1) == Some(&b'\\') {
                    i = src[i + 2..].find('\'').map_or(b.len(), |n| i + 2 + n + 1);
                } else {
                    let ch_len = src[i + 1..].chars().next().map_or(1, char::len_utf8);
                    i += if b.get(i + 1 + ch_len) == Some(&b'\'') {
                        ch_len + 2
                    } else {
                        1
                    };
                }
            }
            _ => i += 1,
        }
    }
    out
}
