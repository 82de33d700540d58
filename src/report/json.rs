//! The stable JSON output (`version: 1`, see docs in README "Output formats").

use serde::Serialize;

use super::position;
use crate::lines::LineIndex;
use crate::outcome::Report;

#[derive(Serialize)]
struct Output<'a> {
    version: u32,
    findings: Vec<JsonFinding<'a>>,
    notices: Vec<JsonNotice<'a>>,
    summary: JsonSummary,
}

#[derive(Serialize)]
struct JsonFinding<'a> {
    code: &'static str,
    name: &'static str,
    severity: &'static str,
    path: &'a str,
    line: usize,
    column: usize,
    end_line: usize,
    end_column: usize,
    message: &'a str,
    help: &'a str,
    class: &'static str,
    site_line: usize,
    /// Why the call was taken for a lock (receiver evidence, lock words).
    evidence: &'a [String],
}

#[derive(Serialize)]
struct JsonNotice<'a> {
    path: &'a str,
    kind: &'static str,
    reason: &'a str,
}

#[derive(Serialize)]
struct JsonSummary {
    files_scanned: usize,
    files_parsed: usize,
    sites: usize,
    findings: usize,
    /// Findings in test code, not shown (`--include-tests` shows them).
    hidden_in_tests: usize,
    /// Test files naming a lock library, not analysed (`--include-tests` analyses them).
    test_files_skipped: usize,
    elapsed_ms: u128,
}

pub fn render(report: &Report) -> String {
    let mut findings = Vec::new();
    for file in &report.files {
        let index = LineIndex::new(&file.text);
        for f in &file.findings {
            let p = position(&index, f);
            findings.push(JsonFinding {
                code: f.rule.code,
                name: f.rule.name,
                severity: f.severity.name(),
                path: &file.rel,
                line: p.line,
                column: p.column,
                end_line: p.end_line,
                end_column: p.end_column,
                message: &f.message,
                help: &f.help,
                class: f.class.name(),
                site_line: p.site_line,
                evidence: &f.evidence,
            });
        }
    }
    let notices = report
        .notices
        .iter()
        .map(|n| JsonNotice {
            path: &n.path,
            kind: match n.kind {
                crate::outcome::NoticeKind::Skipped => "skipped",
                crate::outcome::NoticeKind::Degraded => "degraded",
                crate::outcome::NoticeKind::Failed => "failed",
                crate::outcome::NoticeKind::Internal => "internal",
            },
            reason: &n.reason,
        })
        .collect();
    let s = &report.summary;
    let out = Output {
        version: 1,
        findings,
        notices,
        summary: JsonSummary {
            files_scanned: s.files_scanned,
            files_parsed: s.files_parsed,
            sites: s.sites,
            findings: s.findings,
            hidden_in_tests: s.hidden_in_tests,
            test_files_skipped: s.test_files_skipped,
            elapsed_ms: s.elapsed_ms,
        },
    };
    // Serialising plain structs of strings and numbers cannot fail.
    serde_json::to_string_pretty(&out).unwrap_or_default() + "\n"
}
