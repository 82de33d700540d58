//! GitHub Actions workflow commands: each finding becomes an annotation on the
//! pull request (`::error file=..,line=..::message`).

use super::position;
use crate::checks::Severity;
use crate::lines::LineIndex;
use crate::outcome::Report;

/// Workflow-command values escape `%`, `\r`, `\n` (and `,` `:` in properties).
fn escape(s: &str, property: bool) -> String {
    let s = s
        .replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A");
    if property {
        s.replace(':', "%3A").replace(',', "%2C")
    } else {
        s
    }
}

/// Annotations attach to the diff by the path from the repository's top (the
/// project root may be a folder of it); no `./`.
pub fn render(report: &Report) -> String {
    let mut out = String::new();
    let top = crate::discover::git_top(&report.root);
    for file in &report.files {
        let path = match &top {
            Some(top) => crate::discover::rel_to(top, &report.root.join(&file.rel)),
            None => file.rel.clone(),
        };
        let index = LineIndex::new(&file.text);
        for f in &file.findings {
            let p = position(&index, f);
            let kind = match f.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
                Severity::Info => "notice",
            };
            out.push_str(&format!(
                "::{kind} file={},line={},col={},endLine={},endColumn={},title={}::{}\n",
                escape(&path, true),
                p.line,
                p.column,
                p.end_line,
                p.end_column,
                escape(&format!("{} {}", f.rule.code, f.rule.name), true),
                escape(&format!("{} — {}", f.message, f.help), false),
            ));
        }
    }
    out
}
