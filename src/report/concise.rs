//! `path:line:col: CODE message`, one finding per line: for editors and grep.

use super::{notice_lines, position, summary_line, RenderOptions};
use crate::lines::LineIndex;
use crate::outcome::Report;

pub fn render(report: &Report, opts: RenderOptions) -> String {
    let mut out = String::new();
    for file in &report.files {
        let index = LineIndex::new(&file.text);
        for f in &file.findings {
            let p = position(&index, f);
            out.push_str(&format!(
                "{}:{}:{}: {} [{}] {}\n",
                file.path,
                p.line,
                p.column,
                f.rule.code,
                f.severity.name(),
                f.message
            ));
        }
    }
    for line in notice_lines(report, opts.verbose) {
        out.push_str(&line);
        out.push('\n');
    }
    out.push_str(&summary_line(report));
    out.push('\n');
    out
}
