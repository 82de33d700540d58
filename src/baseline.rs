//! Baselines: record today's findings (`--write-baseline FILE`) and report
//! only new ones afterwards (`--baseline FILE`). A finding is identified by
//! its rule, its path and the text of its line (not the line number), with
//! an occurrence count for identical lines: unrelated edits that shift lines
//! keep it matched. Paths are relative to the project root, so a baseline
//! matches whatever folder or files are scanned; entries of files the scan did
//! not cover are kept (by `--write-baseline`) and never called stale.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::lines::LineIndex;
use crate::outcome::Report;
use crate::report::sarif::fingerprint;

#[derive(Debug, Serialize, Deserialize)]
struct Entry {
    code: String,
    path: String,
    fingerprint: String,
    /// For people reading the file; not used to match.
    message: String,
}

#[derive(Debug, Serialize, Deserialize)]
struct BaselineFile {
    version: u32,
    findings: Vec<Entry>,
}

/// Fingerprints of every finding of `report`, in report order.
fn fingerprints(report: &Report) -> Vec<Vec<String>> {
    report
        .files
        .iter()
        .map(|file| {
            let index = LineIndex::new(&file.text);
            let lines: Vec<&str> = file.text.lines().collect();
            let mut seen: Vec<(&str, &str)> = Vec::new();
            file.findings
                .iter()
                .map(|f| {
                    let line = index.line_col(f.span.start).0;
                    let text = lines.get(line - 1).copied().unwrap_or("").trim();
                    let occurrence = seen
                        .iter()
                        .filter(|(c, t)| *c == f.rule.code && *t == text)
                        .count();
                    seen.push((f.rule.code, text));
                    fingerprint(f.rule.code, &file.rel, text, occurrence)
                })
                .collect()
        })
        .collect()
}

/// Writes every finding of `report` to `path`, keeping the entries an
/// existing baseline there has for files this scan did not cover.
pub fn write(report: &Report, path: &Path) -> std::io::Result<()> {
    let prints = fingerprints(report);
    let scanned: HashSet<&str> = report.scanned.iter().map(String::as_str).collect();
    let mut findings: Vec<Entry> = read(path)
        .map(|old| old.findings)
        .unwrap_or_default()
        .into_iter()
        .filter(|e| !scanned.contains(e.path.as_str()))
        .collect();
    for (file, prints) in report.files.iter().zip(prints) {
        for (f, fingerprint) in file.findings.iter().zip(prints) {
            findings.push(Entry {
                code: f.rule.code.into(),
                path: file.rel.clone(),
                fingerprint,
                message: f.message.clone(),
            });
        }
    }
    findings.sort_by(|a, b| (&a.path, &a.code).cmp(&(&b.path, &b.code)));
    let text = serde_json::to_string_pretty(&BaselineFile {
        version: 1,
        findings,
    })
    .unwrap_or_default();
    std::fs::write(path, text + "\n")
}

/// Drops the findings recorded in the baseline at `path`; returns how many
/// were dropped and how many baseline entries matched nothing (stale).
pub fn apply(report: &mut Report, path: &Path) -> Result<(usize, usize), String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read baseline {}: {e}", path.display()))?;
    let base: BaselineFile = serde_json::from_str(&text)
        .map_err(|e| format!("invalid baseline {}: {e}", path.display()))?;
    // Entries of files outside this scan are neither matched nor stale.
    let scanned: HashSet<&str> = report.scanned.iter().map(String::as_str).collect();
    let mut remaining: HashMap<(String, String, String), usize> = HashMap::new();
    for e in base
        .findings
        .into_iter()
        .filter(|e| scanned.contains(e.path.as_str()))
    {
        *remaining
            .entry((e.code, e.path, e.fingerprint))
            .or_default() += 1;
    }
    let prints = fingerprints(report);
    let mut dropped = 0;
    for (file, prints) in report.files.iter_mut().zip(prints) {
        let mut keep = prints.into_iter();
        file.findings.retain(|f| {
            let print = keep.next().unwrap_or_default();
            let key = (f.rule.code.to_string(), file.rel.clone(), print);
            match remaining.get_mut(&key) {
                Some(n) if *n > 0 => {
                    *n -= 1;
                    dropped += 1;
                    false
                }
                _ => true,
            }
        });
    }
    report.summary.findings -= dropped;
    let stale = remaining.values().sum();
    Ok((dropped, stale))
}

/// The baseline at `path`, if there is a readable one.
fn read(path: &Path) -> Option<BaselineFile> {
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}
