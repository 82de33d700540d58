//! Incremental reparsing for the editor. The last tree parsed on this thread
//! is kept with its text and grammar; a new text that differs from it in one
//! region is parsed from that tree, edited to match, so tree-sitter reuses
//! every unchanged subtree. Only `lock-audit lsp` asks for it: in a batch scan
//! consecutive files are unrelated.

use std::cell::RefCell;

use tree_sitter::{InputEdit, Point, Tree};

struct Last {
    grammar: usize,
    text: String,
    tree: Tree,
}

thread_local! {
    static LAST: RefCell<Option<Last>> = const { RefCell::new(None) };
}

/// The previous tree, edited to match `text`, when the last parse on this
/// thread used the same `grammar` and most of the text is unchanged.
pub fn previous(grammar: usize, text: &str) -> Option<Tree> {
    LAST.with(|last| {
        let last = last.borrow_mut().take()?;
        if last.grammar != grammar {
            return None;
        }
        let edit = edit_between(&last.text, text)?;
        let mut tree = last.tree;
        tree.edit(&edit);
        Some(tree)
    })
}

/// Keeps `tree` (parsed from `text`) for the next [`previous`].
pub fn remember(grammar: usize, text: &str, tree: &Tree) {
    LAST.with(|last| {
        *last.borrow_mut() = Some(Last {
            grammar,
            text: text.to_string(),
            tree: tree.clone(),
        });
    });
}

/// The one edit that turns `old` into `new` (between their common prefix and
/// suffix), or `None` when more than half of `new` changed: then a fresh parse
/// is as cheap and there is nothing to get wrong.
fn edit_between(old: &str, new: &str) -> Option<InputEdit> {
    let mut prefix = old
        .bytes()
        .zip(new.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    while !new.is_char_boundary(prefix) {
        prefix -= 1;
    }
    let room = old.len().min(new.len()) - prefix;
    let mut suffix = old
        .bytes()
        .rev()
        .zip(new.bytes().rev())
        .take(room)
        .take_while(|(a, b)| a == b)
        .count();
    while !new.is_char_boundary(new.len() - suffix) || !old.is_char_boundary(old.len() - suffix) {
        suffix -= 1;
    }
    let (old_end, new_end) = (old.len() - suffix, new.len() - suffix);
    if (new_end - prefix) * 2 > new.len() {
        return None;
    }
    Some(InputEdit {
        start_byte: prefix,
        old_end_byte: old_end,
        new_end_byte: new_end,
        start_position: point(new, prefix),
        old_end_position: point(old, old_end),
        new_end_position: point(new, new_end),
    })
}

/// Row and byte column of `byte` in `text`, as tree-sitter counts them.
fn point(text: &str, byte: usize) -> Point {
    let before = &text.as_bytes()[..byte];
    let row = before.iter().filter(|b| **b == b'\n').count();
    let column = byte
        - before
            .iter()
            .rposition(|b| *b == b'\n')
            .map_or(0, |i| i + 1);
    Point { row, column }
}

#[cfg(test)]
mod tests {
    use super::edit_between;

    #[test]
    fn one_edit_between_common_prefix_and_suffix() {
        let e = edit_between("a = 1\nb = 2\n", "a = 1\nb = 23\n").unwrap();
        assert_eq!((e.start_byte, e.old_end_byte, e.new_end_byte), (11, 11, 12));
        assert_eq!((e.start_position.row, e.start_position.column), (1, 5));
        // Repeated characters: the suffix never overlaps the prefix.
        let e = edit_between("aaaa", "aaaaaa").unwrap();
        assert!(e.start_byte <= e.old_end_byte && e.old_end_byte <= 4 && e.new_end_byte <= 6);
        // Multi-byte characters are not split.
        let e = edit_between("x = 'é'\n", "x = 'è'\n").unwrap();
        assert_eq!((e.start_byte, e.old_end_byte, e.new_end_byte), (5, 7, 7));
        // Unrelated texts: no edit.
        assert!(edit_between("import redis\n", "package main\n").is_none());
    }
}

#[cfg(test)]
mod equivalence {
    use crate::lang::{lower, lower_incremental};
    use crate::model::Language;

    /// Every edit, reparsed from the previous tree, lowers exactly as a fresh parse.
    #[test]
    fn incremental_reparse_lowers_like_a_fresh_parse() {
        let python = "import redis\nr = redis.Redis()\n\ndef f(k):\n    if r.set(k, 'x', nx=True):\n        r.delete(k)\n";
        let ruby = "require 'redis'\nr = Redis.new\nr.eval(<<~LUA, keys: ['lock:a'])\n  return 1\nLUA\nr.set('lock:a', 1, nx: true)\n";
        let js = "const Redis = require('ioredis');\nconst r = new Redis();\nawait r.set('lock:a', 't', 'NX');\n";
        for (language, base) in [
            (Language::Python, python),
            (Language::Ruby, ruby),
            (Language::JavaScript, js),
        ] {
            let edits = [
                base.to_string(),
                base.replacen("lock:", "lock:é:", 1),
                base.replacen('\n', "\n\n# comment\n", 2),
                base.replacen("r.", "rr.", 1),
                format!("{base}x = (\n"),
                base.to_string(),
            ];
            for text in &edits {
                let fresh = format!("{:?}", lower(language, text, false));
                let reused = format!("{:?}", lower_incremental(language, text, false));
                assert_eq!(fresh, reused, "{language:?} after editing to:\n{text}");
            }
        }
    }
}
