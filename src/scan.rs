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

use crate::cache::Stored;
use crate::catalog::Catalog;
use crate::config::Settings;
use crate::discover::{self, SourceFile};
use crate::lines::LineIndex;
use crate::model::Language;
use crate::outcome::{FileResult, Notice, NoticeKind, Report};
use crate::prefilter::Prefilter;
use crate::sites::consts::{self, ProjectConsts, Wanted};
use crate::sites::wrapper::{self, Wrapper};
use crate::{checks, lang, model, sites};

/// What scanning one file produced.
enum Outcome {
    /// Not parsed: no trigger, skipped, or unreadable.
    Unparsed,
    /// Parsed; `None` when parsing failed outright. With the wrappers the
    /// file defines and the constants it imports but could not resolve.
    Parsed(Option<FileResult>, Vec<Wrapper>, Vec<Wanted>),
}

struct Scanned {
    outcome: Outcome,
    notices: Vec<Notice>,
}

/// Stack for the analysis threads: `syn` parses recursively, and generated
/// code can nest deeply.
const STACK_SIZE: usize = 64 * 1024 * 1024;

/// Scans `paths` with `settings` against `catalog`.
pub fn check(paths: &[PathBuf], catalog: &Catalog, settings: &Settings) -> Report {
    match rayon::ThreadPoolBuilder::new()
        .stack_size(STACK_SIZE)
        .build()
    {
        Ok(pool) => pool.install(|| check_in_pool(paths, catalog, settings)),
        Err(_) => check_in_pool(paths, catalog, settings),
    }
}

fn check_in_pool(paths: &[PathBuf], catalog: &Catalog, settings: &Settings) -> Report {
    let start = Instant::now();
    let (files, walk_errors) = discover::discover(paths, &settings.paths);
    trace(format_args!(
        "walk: {:?}, {} files",
        start.elapsed(),
        files.len()
    ));
    let prefilter = Prefilter::new(&catalog.triggers);
    let none = Context::default();
    let first: Vec<Scanned> = files
        .par_iter()
        .map(|f| guarded(f, || scan_file(f, catalog, settings, &prefilter, &none)))
        .collect();

    // Pass 2: the wrappers and wanted constants found, and the files to redo.
    let mut cx = Context::default();
    let mut wanted_by: Vec<Vec<Wanted>> = Vec::with_capacity(first.len());
    for scanned in &first {
        match &scanned.outcome {
            Outcome::Parsed(_, w, wanted) => {
                cx.wrappers.extend(w.iter().cloned());
                wanted_by.push(wanted.clone());
            }
            Outcome::Unparsed => wanted_by.push(Vec::new()),
        }
    }
    let all_wanted: Vec<Wanted> = wanted_by.iter().flatten().cloned().collect();
    trace(format_args!(
        "pass 1: {:?}, {} wrappers, {} wanted constants",
        start.elapsed(),
        cx.wrappers.len(),
        all_wanted.len()
    ));
    let mut second: HashMap<usize, Scanned> = HashMap::new();
    if !all_wanted.is_empty() {
        cx.consts = read_constants(&files, &all_wanted);
    }
    trace(format_args!("constants: {:?}", start.elapsed()));
    // Files that import constants first: the wrappers they define then carry
    // resolved TTLs into pass 2.
    if !cx.consts.is_empty() {
        cx.seal(1, settings);
        second = files
            .par_iter()
            .enumerate()
            .filter(|(i, _)| wanted_by[*i].iter().any(|w| cx.consts.provides(w)))
            .map(|(i, f)| {
                (
                    i,
                    guarded(f, || scan_file(f, catalog, settings, &prefilter, &cx)),
                )
            })
            .collect();
        for (i, scanned) in &second {
            if let Outcome::Parsed(_, w, _) = &scanned.outcome {
                let path = &files[*i].path;
                cx.wrappers.retain(|old| &old.path != path);
                cx.wrappers.extend(w.iter().cloned());
            }
        }
    }
    if !cx.wrappers.is_empty() {
        cx.seal(2, settings);
        let callers = Callers::new(&cx.wrappers);
        let both = Prefilter::either(&prefilter, &callers.names);
        let redone: Vec<(usize, Scanned)> = files
            .par_iter()
            .enumerate()
            .filter(|(_, f)| match (&settings.cache, &cx.fingerprint) {
                (Some(cache), Some(fp)) => {
                    cache.decide(&f.path, fp, || callers.may_call(f, &cx.wrappers))
                }
                _ => callers.may_call(f, &cx.wrappers),
            })
            .map(|(i, f)| {
                (
                    i,
                    guarded(f, || scan_file(f, catalog, settings, &both, &cx)),
                )
            })
            .collect();
        second.extend(redone);
    }

    trace(format_args!(
        "pass 2: {:?}, {} files redone",
        start.elapsed(),
        second.len()
    ));
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
        if let Outcome::Parsed(result, ..) = outcome {
            report.summary.files_parsed += 1;
            if let Some(r) = result {
                report.summary.sites += r.sites.len();
                report.summary.findings += r.findings.len();
                report.summary.hidden_in_tests += r.hidden_in_tests;
                if !r.findings.is_empty() || !r.sites.is_empty() {
                    report.files.push(r);
                }
            }
        }
    }
    if let Some(cache) = &settings.cache {
        let (hits, misses) = cache.counts();
        trace(format_args!("cache: {hits} hits, {misses} misses"));
        if let Err(e) = cache.save() {
            report.notices.push(Notice {
                path: cache.path().display().to_string(),
                kind: NoticeKind::Failed,
                reason: format!("cannot write the cache (results are unaffected): {e}"),
            });
        }
    }
    report.summary.elapsed_ms = start.elapsed().as_millis();
    report
}

/// Timings on stderr when `LOCK_AUDIT_TRACE` is set (for profiling, not a format).
fn trace(what: std::fmt::Arguments) {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    if *ON.get_or_init(|| std::env::var_os("LOCK_AUDIT_TRACE").is_some()) {
        eprintln!("{what}");
    }
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
    if let Some(cache) = &settings.cache {
        cache.note(&file.path, &bytes);
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
    if !settings.include_minified && file.language.catalog_language() == Language::JavaScript {
        if let Some(avg) = minified(&bytes) {
            notice(
                NoticeKind::Skipped,
                format!(
                    "skipped: minified (average line {avg} bytes); --include-minified analyses it"
                ),
            );
            return None;
        }
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

/// Finds the files that may call a wrapper defined in another file: pass 2
/// re-parses only those (a file's own wrappers were applied in pass 1).
struct Callers {
    /// Wrapper names, as whole words.
    names: Prefilter,
    name_list: Vec<String>,
    /// The wrappers' module names (import paths, receivers).
    modules: Prefilter,
    module_list: Vec<String>,
}

impl Callers {
    fn new(wrappers: &[Wrapper]) -> Self {
        let sorted = |mut v: Vec<String>| {
            v.sort();
            v.dedup();
            v
        };
        let name_list = sorted(wrappers.iter().map(|w| w.name.clone()).collect());
        let module_list = sorted(
            wrappers
                .iter()
                .flat_map(wrapper::module_spellings)
                .map(|m| m.to_ascii_lowercase())
                .filter(|m| !m.is_empty())
                .collect(),
        );
        Callers {
            names: Prefilter::exact(&name_list),
            modules: Prefilter::new(&module_list),
            name_list,
            module_list,
        }
    }

    fn may_call(&self, f: &SourceFile, wrappers: &[Wrapper]) -> bool {
        let language = f.language.catalog_language();
        if !wrappers.iter().any(|w| w.language == language) {
            return false;
        }
        let Ok(bytes) = std::fs::read(&f.path) else {
            return false;
        };
        let named = self.names.words_in(&bytes);
        if named.is_empty() {
            return false;
        }
        let modules = std::cell::OnceCell::new();
        let names_module = |w: &Wrapper| {
            let found = modules.get_or_init(|| self.modules.words_in(&bytes));
            wrapper::module_spellings(w).iter().any(|m| {
                self.module_list
                    .binary_search(&m.to_ascii_lowercase())
                    .is_ok_and(|i| found.contains(&i))
            })
        };
        wrappers.iter().any(|w| {
            self.name_list
                .binary_search(&w.name)
                .is_ok_and(|i| named.contains(&i))
                && wrapper::may_call(&f.path, f.language, w, || names_module(w))
        })
    }
}

/// A minified bundle: at least 16 KiB with 90 % of its bytes on lines over
/// 1,000 bytes. Its findings could not be acted on (the source it was built
/// from is what to fix) and parsing it costs as much as a thousand files.
/// Returns the average line length.
fn minified(bytes: &[u8]) -> Option<usize> {
    if bytes.len() < 16 * 1024 {
        return None;
    }
    let (mut lines, mut long) = (0usize, 0usize);
    for line in bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
        lines += 1;
        if line.len() > 1000 {
            long += line.len();
        }
    }
    (long * 10 >= bytes.len() * 9).then(|| bytes.len() / lines)
}

/// What pass 2 knows from pass 1.
#[derive(Default)]
struct Context {
    wrappers: Vec<Wrapper>,
    consts: ProjectConsts,
    /// 0 for pass 1, 1 for files importing constants, 2 for wrapper callers.
    stage: u8,
    /// The hash of `wrappers` and `consts`, part of the cache key from
    /// stage 1 on; `None` turns the cache off for the stage.
    fingerprint: Option<String>,
    /// Reparse from the thread's previous tree (an editor buffer).
    incremental: bool,
}

impl Context {
    /// Fixes the context for `stage`: a stable order, and its fingerprint
    /// when a cache is in use.
    fn seal(&mut self, stage: u8, settings: &Settings) {
        self.stage = stage;
        self.wrappers
            .sort_by(|a, b| (&a.path, a.line, &a.name).cmp(&(&b.path, b.line, &b.name)));
        self.fingerprint = settings.cache.as_ref().and_then(|_| {
            let wrappers = serde_json::to_vec(&self.wrappers).ok()?;
            Some(crate::digest::hash(&[
                &wrappers,
                &self.consts.fingerprint()?,
            ]))
        });
    }
}

/// The module-level constants that files define for the names others want:
/// only files of the right module that mention a wanted name are parsed.
fn read_constants(files: &[SourceFile], wanted: &[Wanted]) -> ProjectConsts {
    let stems: Vec<String> = wanted
        .iter()
        .filter_map(|w| w.stem.clone())
        .map(|s| s.to_ascii_lowercase())
        .collect();
    let dirs: Vec<&std::path::Path> = wanted.iter().filter_map(|w| w.dir.as_deref()).collect();
    let mut names: Vec<String> = wanted
        .iter()
        .map(|w| {
            w.name
                .rsplit(['.', ':'])
                .next()
                .unwrap_or(&w.name)
                .to_string()
        })
        .collect();
    names.sort();
    names.dedup();
    let mentions = Prefilter::exact(&names);
    let found: Vec<ProjectConsts> = files
        .par_iter()
        .filter(|f| {
            let module = sites::module_name(&f.path, f.language).to_ascii_lowercase();
            stems.contains(&module) || f.path.parent().is_some_and(|d| dirs.contains(&d))
        })
        .filter_map(|f| {
            let bytes = std::fs::read(&f.path).ok()?;
            if mentions.words_in(&bytes).is_empty() {
                return None;
            }
            let text = String::from_utf8(bytes).ok()?;
            let tsx = f.path.extension().is_some_and(|e| e == "tsx");
            let lowered = catch_unwind(AssertUnwindSafe(|| lang::lower(f.language, &text, tsx)));
            let Ok(Ok(model)) = lowered else { return None };
            let mut consts = ProjectConsts::default();
            consts.collect(&model, &f.path, wanted);
            Some(consts)
        })
        .collect();
    let mut consts = ProjectConsts::default();
    for c in found {
        consts.extend(c);
    }
    consts
}

fn scan_file(
    file: &SourceFile,
    catalog: &Catalog,
    settings: &Settings,
    prefilter: &Prefilter,
    cx: &Context,
) -> (Outcome, Vec<Notice>) {
    let mut notices = Vec::new();
    // Test hook (debug builds only): panic on a named file, to prove isolation.
    if cfg!(debug_assertions)
        && std::env::var("LOCK_AUDIT_PANIC_ON").is_ok_and(|n| file.rel.ends_with(&n))
    {
        panic!("LOCK_AUDIT_PANIC_ON asked for a panic");
    }
    let Some(text) = read_text(file, settings, prefilter, &mut notices) else {
        return (Outcome::Unparsed, notices);
    };
    // Pass 1 depends on the file alone; later stages also on the context.
    let fingerprint = if cx.stage == 0 {
        Some("")
    } else {
        cx.fingerprint.as_deref()
    };
    let cached = settings
        .cache
        .as_deref()
        .zip(fingerprint)
        .and_then(|(c, fp)| Some((c, c.key(&file.path, fp)?)));
    if let Some((cache, key)) = &cached {
        if let Some(stored) = cache.get(&file.path, cx.stage, key) {
            notices.extend(stored.notices);
            let result = stored.result.map(|r| FileResult {
                path: file.path.display().to_string(),
                rel: file.rel.clone(),
                text,
                ..r
            });
            return (
                Outcome::Parsed(result, stored.wrappers, stored.wanted),
                notices,
            );
        }
    }
    let started = Instant::now();
    let mut analysed = Vec::new();
    let outcome = analyse_text(file, text, catalog, settings, cx, &mut analysed);
    trace(format_args!("  {:?} {}", started.elapsed(), file.rel));
    if let (Some((cache, key)), Outcome::Parsed(result, wrappers, wanted)) = (cached, &outcome) {
        let stored = Stored {
            result: result.clone(),
            wrappers: wrappers.clone(),
            wanted: wanted.clone(),
            notices: analysed.clone(),
        };
        cache.put(&file.path, cx.stage, key, stored);
    }
    notices.extend(analysed);
    (outcome, notices)
}

/// One file's text as the editor holds it: its findings and sites, with the
/// wrappers defined elsewhere in the workspace applied (`lock-audit lsp`).
pub fn analyse_source(
    file: &SourceFile,
    text: Arc<str>,
    catalog: &Catalog,
    settings: &Settings,
    wrappers: &[Wrapper],
) -> SourceAnalysis {
    // This file's own wrappers come from `text`, not from an older copy.
    let cx = Context {
        wrappers: wrappers
            .iter()
            .filter(|w| w.path != file.path)
            .cloned()
            .collect(),
        // Not a pass-1 context: never served from or written to a cache.
        stage: 2,
        incremental: true,
        ..Context::default()
    };
    let mut notices = Vec::new();
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        analyse_text(file, text, catalog, settings, &cx, &mut notices)
    }));
    let (result, wrappers) = match outcome {
        Ok(Outcome::Parsed(r, w, _)) => (r, w),
        Ok(Outcome::Unparsed) => (None, Vec::new()),
        Err(_) => {
            notices.push(Notice {
                path: file.path.display().to_string(),
                kind: NoticeKind::Internal,
                reason: "internal error while analysing this file".into(),
            });
            (None, Vec::new())
        }
    };
    SourceAnalysis {
        result,
        wrappers,
        notices,
    }
}

/// What [`analyse_source`] found in one text.
pub struct SourceAnalysis {
    /// `None` when the text does not parse at all.
    pub result: Option<FileResult>,
    /// The in-house wrappers the text defines.
    pub wrappers: Vec<Wrapper>,
    pub notices: Vec<Notice>,
}

/// The wrappers every file under `paths` defines (pass 1 only), for analysing
/// single files against the workspace.
pub fn workspace_wrappers(
    paths: &[PathBuf],
    catalog: &Catalog,
    settings: &Settings,
) -> Vec<Wrapper> {
    let (files, _) = discover::discover(paths, &settings.paths);
    let prefilter = Prefilter::new(&catalog.triggers);
    let none = Context::default();
    files
        .par_iter()
        .map(|f| guarded(f, || scan_file(f, catalog, settings, &prefilter, &none)))
        .flat_map_iter(|s| match s.outcome {
            Outcome::Parsed(_, w, _) => w,
            Outcome::Unparsed => Vec::new(),
        })
        .collect()
}

/// Parses and analyses one file's text.
fn analyse_text(
    file: &SourceFile,
    text: Arc<str>,
    catalog: &Catalog,
    settings: &Settings,
    cx: &Context,
    notices: &mut Vec<Notice>,
) -> Outcome {
    let path = file.path.display().to_string();
    let tsx = file.path.extension().is_some_and(|e| e == "tsx");
    let lower = if cx.incremental {
        lang::lower_incremental
    } else {
        lang::lower
    };
    let mut model = match lower(file.language, &text, tsx) {
        Ok(m) => m,
        Err(reason) => {
            notices.push(Notice {
                path,
                kind: NoticeKind::Failed,
                reason: format!("cannot parse: {reason}"),
            });
            return Outcome::Parsed(None, Vec::new(), Vec::new());
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
    cx.consts.bind(&mut model, &file.path);
    let mut analysis = sites::analyze(
        &model,
        &text,
        catalog,
        &file.path,
        &cx.wrappers,
        &settings.classify,
    );
    let defined = wrapper::summarize(&analysis, &file.path, |at| index.line_col(at).0);
    // Calls of this file's own wrappers, without waiting for pass 2.
    let own: Vec<Wrapper> = defined
        .iter()
        .filter(|w| !cx.wrappers.iter().any(|c| c.path == w.path))
        .cloned()
        .collect();
    if !own.is_empty() {
        sites::add_wrapper_calls(&mut analysis, &file.path, &own, &settings.classify);
    }
    let wanted = consts::wanted(&analysis, &file.path);
    let mut findings = checks::run(&analysis, &settings.rules);
    // Severity overrides, then per-path overrides (which may also drop rules).
    let here: Vec<&crate::config::Override> = settings
        .overrides
        .iter()
        .filter(|o| o.path.is_match(&file.path))
        .collect();
    findings.retain(|f| !here.iter().any(|o| o.ignore.contains(&f.rule.code)));
    for f in &mut findings {
        let specific = here
            .iter()
            .rev()
            .find_map(|o| o.severity.iter().find(|(c, _)| *c == f.rule.code));
        if let Some((_, s)) =
            specific.or_else(|| settings.severity.iter().find(|(c, _)| *c == f.rule.code))
        {
            f.severity = *s;
        }
    }
    crate::suppress::apply(
        &model.comments,
        &text,
        &mut findings,
        &settings.rules,
        settings.require_reason,
    );
    findings.sort_by_key(|f| (f.span.start, f.rule.code));
    // Test code: counted, not shown (its wrappers and constants still count).
    let whole_file = settings.test_paths.is_match(&file.path);
    let in_tests = |span: model::Span| {
        !settings.include_tests
            && (whole_file || model.test_regions.iter().any(|r| r.contains(span)))
    };
    let before = findings.len();
    findings.retain(|f| !in_tests(f.site_span.unwrap_or(f.span)));
    let hidden_in_tests = before - findings.len();
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
        sites: crate::outcome::site_infos(&analysis, &codes)
            .into_iter()
            .filter(|s| !in_tests(s.span))
            .collect(),
        hidden_in_tests,
    };
    Outcome::Parsed(Some(result), defined, wanted)
}
