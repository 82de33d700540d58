//! GitLab code quality report (a JSON array of issues with fingerprints).

use serde_json::json;

use super::position;
use crate::checks::Severity;
use crate::lines::LineIndex;
use crate::outcome::Report;
use crate::report::sarif::fingerprint;

pub fn render(report: &Report) -> String {
    let mut issues = Vec::new();
    for file in &report.files {
        let index = LineIndex::new(&file.text);
        let lines: Vec<&str> = file.text.lines().collect();
        for (i, f) in file.findings.iter().enumerate() {
            let p = position(&index, f);
            let text = lines.get(p.line - 1).copied().unwrap_or("").trim();
            let occurrence = file.findings[..i]
                .iter()
                .filter(|g| g.rule.code == f.rule.code && index.line_col(g.span.start).0 == p.line)
                .count();
            issues.push(json!({
                "description": format!("{}: {}", f.rule.code, f.message),
                "check_name": f.rule.name,
                "fingerprint": fingerprint(f.rule.code, &file.rel, text, occurrence),
                "severity": match f.severity {
                    Severity::Error => "major",
                    Severity::Warning => "minor",
                    Severity::Info => "info",
                },
                "location": {"path": file.rel, "lines": {"begin": p.line}},
            }));
        }
    }
    serde_json::to_string_pretty(&issues).unwrap_or_default() + "\n"
}
