//! SARIF 2.1.0, for GitHub code scanning and other SARIF viewers: rule
//! metadata with help text, one result per finding, and a stable
//! `partialFingerprints` value that survives unrelated edits.

use serde_json::{json, Value};

use super::position;
use crate::checks::Severity;
use crate::checks::REGISTRY;
use crate::lines::LineIndex;
use crate::outcome::Report;

fn level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

/// FNV-1a: a small, stable hash (the same on every platform and release).
fn fnv(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Rule + path + the finding's source line (trimmed) + its occurrence among
/// identical lines: stable when other lines move.
pub fn fingerprint(code: &str, path: &str, line_text: &str, occurrence: usize) -> String {
    format!(
        "{:016x}",
        fnv(&format!(
            "{code}\0{path}\0{}\0{occurrence}",
            line_text.trim()
        ))
    )
}

pub fn render(report: &Report) -> String {
    let rules: Vec<Value> = REGISTRY
        .iter()
        .map(|r| {
            json!({
                "id": r.code,
                "name": r.name,
                "shortDescription": {"text": r.summary},
                "fullDescription": {"text": r.summary},
                "help": {"text": r.documentation(), "markdown": r.documentation()},
                "defaultConfiguration": {"level": level(r.severity)},
            })
        })
        .collect();
    let mut results = Vec::new();
    for file in &report.files {
        let index = LineIndex::new(&file.text);
        let lines: Vec<&str> = file.text.lines().collect();
        let mut seen: Vec<(String, String)> = Vec::new();
        for f in &file.findings {
            let p = position(&index, f);
            let text = lines
                .get(p.line - 1)
                .copied()
                .unwrap_or("")
                .trim()
                .to_string();
            let occurrence = seen
                .iter()
                .filter(|(c, t)| c == f.rule.code && *t == text)
                .count();
            seen.push((f.rule.code.to_string(), text.clone()));
            let rule_index = REGISTRY
                .iter()
                .position(|r| r.code == f.rule.code)
                .unwrap_or(0);
            results.push(json!({
                "ruleId": f.rule.code,
                "ruleIndex": rule_index,
                "level": level(f.severity),
                "message": {"text": format!("{} ({})", f.message, f.help)},
                "locations": [{
                    "physicalLocation": {
                        "artifactLocation": {"uri": file.rel, "uriBaseId": "%SRCROOT%"},
                        "region": {
                            "startLine": p.line,
                            "startColumn": p.column,
                            "endLine": p.end_line,
                            "endColumn": p.end_column,
                        }
                    }
                }],
                "partialFingerprints": {"lockAudit/v1": fingerprint(f.rule.code, &file.rel, &text, occurrence)},
                "properties": {"class": f.class.name(), "evidence": f.evidence},
            }));
        }
    }
    let out = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "lock-audit",
                "version": env!("CARGO_PKG_VERSION"),
                "informationUri": "https://github.com/lock-audit/lock-audit",
                "rules": rules,
            }},
            "originalUriBaseIds": {"%SRCROOT%": {"uri": root_uri(report)}},
            "results": results,
        }],
    });
    serde_json::to_string_pretty(&out).unwrap_or_default() + "\n"
}

/// The project root as a `file://` URI ending in `/`, for `%SRCROOT%`.
fn root_uri(report: &Report) -> String {
    let root = report.root.to_string_lossy().replace('\\', "/");
    let root = root.trim_end_matches('/');
    let lead = if root.starts_with('/') { "" } else { "/" };
    format!("file://{lead}{root}/")
}
