//! `path:line:col: CODE message`, one finding per line: for editors and grep.

use super::{position, summary_line};
use crate::lines::LineIndex;
use crate::outcome::Report;

pub fn render(report: &Report) -> String {
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
    out.push_str(&summary_line(report));
    out.push('\n');
    out
}
