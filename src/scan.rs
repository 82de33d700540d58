//! The scan: discover → prefilter → parse → sites → checks, over every file in
//! parallel, in two passes.
//!
//! Pass 1 analyses every file whose bytes contain a catalog trigger and
//! collects the in-house wrappers it defines. Pass 2 re-analyses, with those
//! wrappers known, only the files that mention a wrapper's name: the callers
//! (which may not mention any lock library at all) and the wrappers' own
//! files. A file's pass-2 result replaces its pass-1 result.

use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use rayon::prelude::*;

use crate::catalog::Catalog;
use crate::discover::{self, SourceFile};
use crate::lines::LineIndex;
use crate::prefilter::Prefilter;
use crate::sites::wrapper::{self, Wrapper};
use crate::{checks, lang, model, sites, FileResult, Notice, NoticeKind, Report, Settings};

/// What scanning one file produced.
enum Outcome {
    /// Not parsed: no trigger, skipped, or unreadable.
    Unparsed,
    /// Parsed; `None` when parsing failed outright.
    Parsed(Option<FileResult>, Vec<Wrapper>),
}

struct Scanned {
    outcome: Outcome,
    notices: Vec<Notice>,
}

/// Scans `paths` with `settings` against `catalog`.
pub fn check(paths: &[PathBuf], catalog: &Catalog, settings: &Settings) -> Report {
    let start = Instant::now();
    let (files, walk_errors) = discover::discover(paths);
    let prefilter = Prefilter::new(&catalog.triggers);
    let first: Vec<Scanned> = files
        .par_iter()
        .map(|f| guarded(f, || scan_file(f, catalog, settings, &prefilter, &[])))
        .collect();

    // Pass 2: the wrappers found, and the files that may call them.
    let wrappers: Vec<Wrapper> = first
        .iter()
        .flat_map(|s| match &s.outcome {
            Outcome::Parsed(_, w) => w.clone(),
            Outcome::Unparsed => Vec::new(),
        })
        .collect();
    let mut second: HashMap<usize, Scanned> = HashMap::new();
    if !wrappers.is_empty() {
        let mut names: Vec<String> = wrappers.iter().map(|w| w.name.clone()).collect();
        names.sort();
        names.dedup();
        let callers = Prefilter::exact(&names);
        second = files
            .par_iter()
            .enumerate()
            .filter_map(|(i, f)| {
                let bytes = std::fs::read(&f.path).ok()?;
                callers.matches(&bytes).then(|| {
                    let both = Prefilter::either(&prefilter, &callers);
                    (
                        i,
                        guarded(f, || scan_file(f, catalog, settings, &both, &wrappers)),
                    )
                })
            })
            .collect();
    }

    let mut report = Report::default();
    report
        .notices
        .extend(walk_errors.into_iter().map(|e| Notice {
            path: e.path,
            kind: NoticeKind::Failed,
            reason: e.reason,
        }));
    report.summary.files_scanned = files.len();
    for (i, scanned) in first.into_iter().enumerate() {
        let Scanned { outcome, notices } = second.remove(&i).unwrap_or(scanned);
        report.notices.extend(notices);
        if let Outcome::Parsed(result, _) = outcome {
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

/// Runs `scan` with a panic caught and reported as an internal error for `file`.
fn guarded(file: &SourceFile, scan: impl FnOnce() -> (Outcome, Vec<Notice>)) -> Scanned {
    match catch_unwind(AssertUnwindSafe(scan)) {
        Ok((outcome, notices)) => Scanned { outcome, notices },
        Err(panic) => {
            let msg = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            let notice = Notice {
                path: file.path.display().to_string(),
                kind: NoticeKind::Internal,
                reason: format!("internal error while analysing this file: {msg}"),
            };
            Scanned {
                outcome: Outcome::Unparsed,
                notices: vec![notice],
            }
        }
    }
}

/// Reads, decodes and parses one file; notices say why anything was skipped.
fn read_text(
    file: &SourceFile,
    settings: &Settings,
    prefilter: &Prefilter,
    notices: &mut Vec<Notice>,
) -> Option<Arc<str>> {
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
        notice(
            NoticeKind::Skipped,
            format!(
                "skipped: {size} bytes is over the {} byte limit",
                settings.max_file_size
            ),
        );
        return None;
    }
    let bytes = match std::fs::read(&file.path) {
        Ok(b) => b,
        Err(e) => {
            notice(NoticeKind::Failed, format!("cannot read: {e}"));
            return None;
        }
    };
    if bytes.is_empty() {
        notice(NoticeKind::Skipped, "skipped: empty file".into());
        return None;
    }
    if bytes[..bytes.len().min(8192)].contains(&0) {
        notice(
            NoticeKind::Skipped,
            "skipped: binary file (contains NUL bytes)".into(),
        );
        return None;
    }
    if !prefilter.matches(&bytes) {
        return None;
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
    Some(match text.strip_prefix('\u{feff}') {
        Some(rest) => rest.into(),
        None => text,
    })
}

fn scan_file(
    file: &SourceFile,
    catalog: &Catalog,
    settings: &Settings,
    prefilter: &Prefilter,
    wrappers: &[Wrapper],
) -> (Outcome, Vec<Notice>) {
    let mut notices = Vec::new();
    let Some(text) = read_text(file, settings, prefilter, &mut notices) else {
        return (Outcome::Unparsed, notices);
    };
    let path = file.path.display().to_string();
    let tsx = file.path.extension().is_some_and(|e| e == "tsx");
    let model = match lang::lower(file.language, &text, tsx) {
        Ok(m) => m,
        Err(reason) => {
            notices.push(Notice {
                path,
                kind: NoticeKind::Failed,
                reason: format!("cannot parse: {reason}"),
            });
            return (Outcome::Parsed(None, Vec::new()), notices);
        }
    };
    let index = LineIndex::new(&text);
    if let Some(err) = model.syntax_errors.first() {
        let (line, col) = index.line_col(err.start);
        let reason =
            format!("syntax error at line {line}, column {col}; analysed the parts that parse");
        notices.push(Notice {
            path,
            kind: NoticeKind::Degraded,
            reason,
        });
    }
    let analysis = sites::analyze(&model, &text, catalog, &file.path, wrappers);
    let defined = wrapper::summarize(&analysis, &file.path, |at| index.line_col(at).0);
    let mut findings = checks::run(&analysis, &settings.rules);
    findings.sort_by_key(|f| (f.span.start, f.rule.code));
    let codes: Vec<(Option<model::Span>, &'static str)> = findings
        .iter()
        .map(|f| (f.site_span, f.rule.code))
        .collect();
    let result = FileResult {
        path: file.path.display().to_string(),
        rel: file.rel.clone(),
        language: file.language,
        text: text.clone(),
        findings,
        sites: crate::site_infos(&analysis, &codes),
    };
    (Outcome::Parsed(Some(result), defined), notices)
}
