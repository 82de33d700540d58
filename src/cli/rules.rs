//! `lock-audit rules` and `lock-audit libraries`: what the tool knows.

use std::path::PathBuf;
use std::process::ExitCode;

use super::{emit, load_catalog};
use crate::checks;

pub(super) fn run() -> ExitCode {
    // Columns as wide as their longest entry.
    let name = checks::REGISTRY
        .iter()
        .map(|r| r.name.len())
        .max()
        .unwrap_or(4);
    let row = |code: &str, n: &str, sev: &str, summary: &str| {
        format!("{code:<6} {n:<name$} {sev:<8} {summary}\n")
    };
    let mut out = row("code", "name", "severity", "fires when");
    for r in checks::REGISTRY {
        out.push_str(&row(r.code, r.name, r.severity.name(), r.summary));
    }
    emit(&out);
    ExitCode::SUCCESS
}

/// Every library of the catalog (markdown), the prefilter's trigger
/// literals, or its whole table.
pub(super) fn libraries(rules_dirs: &[PathBuf], triggers: bool, prefilter: bool) -> ExitCode {
    match load_catalog(rules_dirs) {
        Some(c) if triggers => {
            emit(&format!("{}\n", c.triggers.join("\n")));
            ExitCode::SUCCESS
        }
        Some(c) if prefilter => {
            emit(&c.prefilter_table());
            ExitCode::SUCCESS
        }
        Some(c) => {
            emit(&c.libraries_markdown());
            ExitCode::SUCCESS
        }
        None => ExitCode::from(2),
    }
}
