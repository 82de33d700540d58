//! Byte offsets and LSP positions.

use lsp_types::{Position, Range};

use crate::lines::LineIndex;

/// Byte offsets <-> LSP positions: the lines of [`LineIndex`] (`\n`, `\r\n`
/// and lone `\r`, as LSP counts them), columns in UTF-16 units.
pub(super) struct Lines<'t> {
    text: &'t str,
    index: LineIndex,
}

impl<'t> Lines<'t> {
    pub(super) fn new(text: &'t str) -> Self {
        Lines {
            text,
            index: LineIndex::new(text),
        }
    }

    /// The byte offset where 0-based `line` starts.
    pub(super) fn start(&self, line: u32) -> Option<usize> {
        self.index.line_start(line as usize + 1)
    }

    pub(super) fn position(&self, offset: usize) -> Position {
        let offset = offset.min(self.text.len());
        let (line, col) = self.index.line_col(offset);
        let start = offset - (col - 1);
        let units = self
            .text
            .get(start..offset)
            .map_or(0, |s| s.encode_utf16().count());
        Position::new(line as u32 - 1, units as u32)
    }

    pub(super) fn range(&self, start: usize, end: usize) -> Range {
        Range::new(self.position(start), self.position(end))
    }

    pub(super) fn offset(&self, p: Position) -> usize {
        let Some(start) = self.start(p.line) else {
            return self.text.len();
        };
        let mut units = 0;
        for (i, c) in self.text[start..].char_indices() {
            if units >= p.character as usize || c == '\n' || c == '\r' {
                return start + i;
            }
            units += c.len_utf16();
        }
        self.text.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_count_utf16_units() {
        let lines = Lines::new("ab\n\u{1F512}x = 1\n");
        assert_eq!(lines.position(3 + 4), Position::new(1, 2));
        assert_eq!(lines.offset(Position::new(1, 2)), 7);
        assert_eq!(lines.offset(Position::new(9, 0)), lines.text.len());
        // A lone CR ends a line for LSP clients too.
        let cr = Lines::new("a\rb\r\nc");
        assert_eq!(cr.position(2), Position::new(1, 0));
        assert_eq!(cr.offset(Position::new(2, 0)), 5);
    }
}
