//! Byte offsets → 1-based line and column, computed only when rendering.

pub struct LineIndex {
    starts: Vec<usize>,
    text_len: usize,
}

impl LineIndex {
    /// Lines end at `\n`, `\r\n`, or a lone `\r` (old Mac files; Python
    /// and Ruby read those as line breaks too).
    pub fn new(text: &str) -> Self {
        let bytes = text.as_bytes();
        let mut starts = vec![0];
        for (i, b) in bytes.iter().enumerate() {
            let lone_cr = *b == b'\r' && bytes.get(i + 1) != Some(&b'\n');
            if *b == b'\n' || lone_cr {
                starts.push(i + 1);
            }
        }
        LineIndex {
            starts,
            text_len: text.len(),
        }
    }

    /// 1-based line and 1-based byte column of `offset`.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text_len);
        let line = self.starts.partition_point(|&s| s <= offset);
        let start = self.starts[line.saturating_sub(1)];
        (line, offset - start + 1)
    }

    /// The byte offset where 1-based `line` starts.
    pub fn line_start(&self, line: usize) -> Option<usize> {
        self.starts.get(line.wrapping_sub(1)).copied()
    }

    /// The text of 1-based `line`, without its line break.
    pub fn line<'t>(&self, text: &'t str, line: usize) -> &'t str {
        let Some(&start) = self.starts.get(line.wrapping_sub(1)) else {
            return "";
        };
        let end = self.starts.get(line).copied().unwrap_or(self.text_len);
        text.get(start..end)
            .unwrap_or("")
            .trim_end_matches(['\n', '\r'])
    }
}

#[cfg(test)]
mod tests {
    use super::LineIndex;

    #[test]
    fn lines_and_columns() {
        let idx = LineIndex::new("ab\ncd\n");
        assert_eq!(idx.line_col(0), (1, 1));
        assert_eq!(idx.line_col(3), (2, 1));
        assert_eq!(idx.line_col(4), (2, 2));
        assert_eq!(idx.line_col(99), (3, 1));
        let cr = LineIndex::new("a\rb\r\nc");
        assert_eq!(cr.line_col(2), (2, 1));
        assert_eq!(cr.line_col(5), (3, 1));
        assert_eq!(cr.line("a\rb\r\nc", 2), "b");
        assert_eq!(cr.line("a\rb\r\nc", 3), "c");
        assert_eq!(cr.line("a\rb\r\nc", 4), "");
    }
}
