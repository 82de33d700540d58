//! lock-audit: a linter and static analyzer for distributed locks.
//!
//! The data flow, one module per stage:
//! `discover` → `prefilter` → `lang` (parse + lower into `model`) → `sites`
//! (catalog matches → lock sites) → `checks` → `report`. [`check`] runs it all
//! and is what the CLI, the tests and the benchmark call.

pub mod catalog;
pub mod checks;
pub mod cli;
pub mod discover;
pub mod error;
pub mod finding;
pub mod lang;
pub mod lines;
pub mod model;
pub mod prefilter;
pub mod report;
pub mod sites;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use rayon::prelude::*;

use catalog::Catalog;
use checks::Rule;
use discover::SourceFile;
use finding::Finding;
use prefilter::Prefilter;

/// What a scan runs with.
#[derive(Debug, Clone)]
pub struct Settings {
    pub rules: Vec<&'static Rule>,
    /// Files larger than this are skipped with a notice.
    pub max_file_size: u64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            rules: checks::REGISTRY.to_vec(),
            max_file_size: 5 * 1024 * 1024,
        }
    }
}

/// Why a file was not (fully) analysed.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum NoticeKind {
    /// Skipped on purpose: empty, binary, too large, unsupported.
    Skipped,
    /// Read, but the text or syntax was damaged; what could be analysed was.
    Degraded,
    /// Could not be read or parsed at all.
    Failed,
    /// lock-audit itself failed on this file (a bug): exit code 2.
    Internal,
}

#[derive(Debug, Clone)]
pub struct Notice {
    pub path: String,
    pub kind: NoticeKind,
    pub reason: String,
}

/// The findings of one file, with its text for rendering.
#[derive(Debug, Clone)]
pub struct FileResult {
    /// The path as walked (relative to the working directory when the root was).
    pub path: String,
    /// The path relative to its scan root.
    pub rel: String,
    pub language: model::Language,
    pub text: Arc<str>,
    pub findings: Vec<Finding>,
    /// Every lock site of the file, for the `audit` inventory.
    pub sites: Vec<SiteInfo>,
}

/// One lock site as the inventory shows it.
#[derive(Debug, Clone)]
pub struct SiteInfo {
    pub span: model::Span,
    pub backend: String,
    pub library: String,
    pub api: String,
    pub key: String,
    /// `30000 ms`, `none`, `renewed`, `session`, `default 10s`...
    pub ttl: String,
    pub ttl_ms: Option<i64>,
    /// `forever`, `none`, a bound, or `-` for non-blocking APIs.
    pub wait: String,
    pub class: sites::Class,
    pub evidence: Vec<String>,
    /// Where each release of this lock is, and whether it checks the owner.
    pub releases: Vec<(model::Span, bool)>,
    /// The codes of the findings that belong to this site.
    pub findings: Vec<&'static str>,
}

#[derive(Debug, Clone, Default)]
pub struct Summary {
    pub files_scanned: usize,
    pub files_parsed: usize,
    pub sites: usize,
    pub findings: usize,
    pub elapsed_ms: u128,
}

#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Files with at least one finding or lock site, sorted by path.
    pub files: Vec<FileResult>,
    pub notices: Vec<Notice>,
    pub summary: Summary,
}

impl Report {
    pub fn has_internal_errors(&self) -> bool {
        self.notices.iter().any(|n| n.kind == NoticeKind::Internal)
    }
}

enum Outcome {
    Unparsed,
    Parsed(Option<FileResult>),
}

/// Scans `paths` with `settings` against `catalog`.
pub fn check(paths: &[PathBuf], catalog: &Catalog, settings: &Settings) -> Report {
    let start = Instant::now();
    let (files, walk_errors) = discover::discover(paths);
    let prefilter = Prefilter::new(&catalog.triggers);
    let results: Vec<(Outcome, Vec<Notice>)> = files
        .par_iter()
        .map(|file| {
            let mut notices = Vec::new();
            let outcome = catch_unwind(AssertUnwindSafe(|| {
                scan_file(file, catalog, settings, &prefilter, &mut notices)
            }))
            .unwrap_or_else(|panic| {
                let msg = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "unknown panic".into());
                notices.push(Notice {
                    path: file.path.display().to_string(),
                    kind: NoticeKind::Internal,
                    reason: format!("internal error while analysing this file: {msg}"),
                });
                Outcome::Unparsed
            });
            (outcome, notices)
        })
        .collect();
    let mut report = Report::default();
    report
        .notices
        .extend(walk_errors.into_iter().map(|e| Notice {
            path: e.path,
            kind: NoticeKind::Failed,
            reason: e.reason,
        }));
    report.summary.files_scanned = files.len();
    for (outcome, notices) in results {
        report.notices.extend(notices);
        if let Outcome::Parsed(result) = outcome {
            report.summary.files_parsed += 1;
            if let Some(r) = result {
                report.summary.sites += r.sites.len();
                report.summary.findings += r.findings.len();
                if !r.findings.is_empty() || !r.sites.is_empty() {
                    report.files.push(r);
                }
            }
        }
    }
    report.summary.elapsed_ms = start.elapsed().as_millis();
    report
}

fn scan_file(
    file: &SourceFile,
    catalog: &Catalog,
    settings: &Settings,
    prefilter: &Prefilter,
    notices: &mut Vec<Notice>,
) -> Outcome {
    let path = file.path.display().to_string();
    let mut notice = |kind, reason: String| {
        notices.push(Notice {
            path: path.clone(),
            kind,
            reason,
        })
    };
    let size = std::fs::metadata(&file.path).map(|m| m.len()).unwrap_or(0);
    if size > settings.max_file_size {
        let reason = format!(
            "skipped: {size} bytes is over the {} byte limit",
            settings.max_file_size
        );
        notice(NoticeKind::Skipped, reason);
        return Outcome::Unparsed;
    }
    let bytes = match std::fs::read(&file.path) {
        Ok(b) => b,
        Err(e) => {
            notice(NoticeKind::Failed, format!("cannot read: {e}"));
            return Outcome::Unparsed;
        }
    };
    if bytes.is_empty() {
        notice(NoticeKind::Skipped, "skipped: empty file".into());
        return Outcome::Unparsed;
    }
    if bytes[..bytes.len().min(8192)].contains(&0) {
        notice(
            NoticeKind::Skipped,
            "skipped: binary file (contains NUL bytes)".into(),
        );
        return Outcome::Unparsed;
    }
    if !prefilter.matches(&bytes) {
        return Outcome::Unparsed;
    }
    let text: Arc<str> = match String::from_utf8(bytes) {
        Ok(s) => s.into(),
        Err(e) => {
            let at = e.utf8_error().valid_up_to();
            notice(
                NoticeKind::Degraded,
                format!("not valid UTF-8 (first bad byte at offset {at}); analysed with replacement characters"),
            );
            String::from_utf8_lossy(e.as_bytes()).into_owned().into()
        }
    };
    // A BOM is not code: drop it, and render from the same text so spans agree.
    let text: Arc<str> = match text.strip_prefix('\u{feff}') {
        Some(rest) => rest.into(),
        None => text,
    };
    let tsx = file.path.extension().is_some_and(|e| e == "tsx");
    let model = match lang::lower(file.language, &text, tsx) {
        Ok(m) => m,
        Err(reason) => {
            notice(NoticeKind::Failed, format!("cannot parse: {reason}"));
            return Outcome::Parsed(None);
        }
    };
    if let Some(err) = model.syntax_errors.first() {
        let (line, col) = lines::LineIndex::new(&text).line_col(err.start);
        notice(
            NoticeKind::Degraded,
            format!("syntax error at line {line}, column {col}; analysed the parts that parse"),
        );
    }
    let analysis = sites::analyze(&model, &text, catalog);
    let mut findings = checks::run(&analysis, &settings.rules);
    findings.sort_by_key(|f| (f.span.start, f.rule.code));
    let findings_for_sites: Vec<(Option<model::Span>, &'static str)> = findings
        .iter()
        .map(|f| (f.site_span, f.rule.code))
        .collect();
    Outcome::Parsed(Some(FileResult {
        path: file.path.display().to_string(),
        rel: file.rel.clone(),
        language: file.language,
        text: text.clone(),
        findings,
        sites: site_infos(&analysis, &findings_for_sites),
    }))
}

fn site_infos(
    analysis: &sites::FileAnalysis,
    findings: &[(Option<model::Span>, &'static str)],
) -> Vec<SiteInfo> {
    analysis
        .sites
        .iter()
        .map(|s| SiteInfo {
            span: s.span,
            backend: s.backend.clone(),
            library: s.library.clone(),
            api: s.api.clone(),
            key: s
                .key
                .as_ref()
                .map(|k| k.peel().text.clone())
                .unwrap_or_default(),
            ttl: s.ttl.describe(s.ttl_ms),
            ttl_ms: s.ttl_ms,
            wait: s.wait.describe(),
            class: s.class,
            evidence: s.evidence.clone(),
            releases: s
                .releases
                .iter()
                .map(|&i| {
                    (
                        analysis.releases[i].span,
                        analysis.releases[i].owner_checked,
                    )
                })
                .collect(),
            findings: findings
                .iter()
                .filter(|(sp, _)| *sp == Some(s.span))
                .map(|(_, c)| *c)
                .collect(),
        })
        .collect()
}
