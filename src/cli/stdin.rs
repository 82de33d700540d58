//! `check - --stdin-filename PATH`: an editor's buffer piped on stdin,
//! analysed as the file PATH of its project (language, config, wrappers
//! defined elsewhere in the project).

use std::io::Read;
use std::path::Path;

use crate::catalog::Catalog;
use crate::config::Settings;
use crate::discover::SourceFile;
use crate::outcome::Report;
use crate::{lang, scan};

/// The report of the text on stdin standing for `path`.
pub(super) fn check(path: &Path, catalog: &Catalog, settings: &Settings) -> Result<Report, String> {
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .map_err(|e| format!("cannot read stdin: {e}"))?;
    let language = lang::detect(path, text.as_bytes()).ok_or_else(|| {
        format!(
            "{}: not a supported source file (no known extension or shebang)",
            path.display()
        )
    })?;
    let file = SourceFile {
        path: path.to_path_buf(),
        rel: settings.paths.rel(path),
        language,
    };
    let wrappers = scan::workspace_wrappers(
        std::slice::from_ref(&settings.paths.root),
        catalog,
        settings,
    );
    let found = scan::analyse_source(&file, text.into(), catalog, settings, &wrappers);
    let mut report = Report {
        root: crate::discover::absolute(&settings.paths.root),
        scanned: vec![file.rel.clone()],
        notices: found.notices,
        ..Report::default()
    };
    report.summary.files_scanned = 1;
    if let Some(result) = found.result {
        report.summary.files_parsed = 1;
        report.summary.sites = result.sites.len();
        report.summary.findings = result.findings.len();
        report.summary.hidden_in_tests = result.hidden_in_tests;
        if !result.findings.is_empty() || !result.sites.is_empty() {
            report.files.push(result);
        }
    }
    Ok(report)
}
