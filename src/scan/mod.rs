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

mod embeds;
mod pipeline;
mod policy;
mod project;
mod source;

use pipeline::{analyse_text, scan_file, Pass};
use project::{read_constants, Callers, Context};

use crate::catalog::Catalog;
use crate::config::Settings;
use crate::discover::{self, SourceFile};
use crate::manifest::Manifests;
use crate::outcome::{FileResult, Notice, NoticeKind, Report};
use crate::prefilter::Prefilter;
use crate::sites::consts::Wanted;
use crate::sites::wrapper::Wrapper;

/// What scanning one file produced.
pub(super) enum Outcome {
    /// Not parsed: no trigger, skipped, or unreadable.
    Unparsed,
    /// Test code naming a lock library, not parsed ([`Settings::skips_test`]).
    Test,
    /// Parsed; `None` when parsing failed outright. With the wrappers the
    /// file defines and the constants it imports but could not resolve.
    Parsed(Option<Box<FileResult>>, Vec<Wrapper>, Vec<Wanted>),
}

pub(super) struct Scanned {
    pub(super) outcome: Outcome,
    notices: Vec<Notice>,
    /// Which of the last run's wrapper names ([`Context::known`]) the file holds.
    named: Vec<usize>,
}

/// How many rounds of wrappers over wrappers the scan follows.
pub(super) const WRAPPER_DEPTH: usize = 4;

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
    let prefilter = Prefilter::catalog(&catalog.gates);
    let known: &[String] = settings.cache.as_ref().map_or(&[], |c| c.known_names());
    let manifests = Arc::new(Manifests::new(
        &settings.paths.root,
        catalog.versioned_packages(),
    ));
    let first_cx = Context {
        known: (!known.is_empty()).then(|| Prefilter::exact(known)),
        manifests: Some(manifests.clone()),
        ..Context::default()
    };
    // Pass 1 starts on the first files the walk finds: the walk waits on the
    // file system, and a core would idle through it.
    let (tx, rx) = std::sync::mpsc::channel();
    let (mut both, walk_errors) = std::thread::scope(|s| {
        let walker = s.spawn(move || {
            discover::discover_each(paths, &settings.paths, |f| {
                // The receiver outlives the walk: a send cannot fail.
                let _ = tx.send(f);
            })
        });
        let both: Vec<(SourceFile, Scanned)> = rx
            .into_iter()
            .par_bridge()
            .map(|f| {
                let scanned = guarded(&f, || {
                    scan_file(&f, catalog, settings, &prefilter, &first_cx)
                });
                (f, scanned)
            })
            .collect();
        let errors = walker.join().unwrap_or_else(|_| {
            vec![discover::WalkError {
                path: settings.paths.root.display().to_string(),
                reason: "internal error while walking: some files were not scanned".into(),
            }]
        });
        (both, errors)
    });
    discover::sort_files(&mut both, |(f, _)| f);
    let (files, first): (Vec<SourceFile>, Vec<Scanned>) = both.into_iter().unzip();
    trace(format_args!(
        "walk and pass 1: {:?}, {} files",
        start.elapsed(),
        files.len()
    ));

    // Pass 2: the wrappers and wanted constants found, and the files to redo.
    let mut cx = Context {
        manifests: Some(manifests),
        ..Context::default()
    };
    let mut wanted_by: Vec<Vec<Wanted>> = Vec::with_capacity(first.len());
    for scanned in &first {
        match &scanned.outcome {
            Outcome::Parsed(_, w, wanted) => {
                cx.wrappers.extend(w.iter().cloned());
                wanted_by.push(wanted.clone());
            }
            Outcome::Unparsed | Outcome::Test => wanted_by.push(Vec::new()),
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
        cx.seal(Pass::Constants, settings);
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
    // Rounds: a file that calls a wrapper may define a wrapper of its own
    // (`runCronJob` over `lockUntilOrThrow`); each round redoes the callers
    // of the wrappers the previous one found, up to a fixed depth.
    let mut fresh = cx.wrappers.clone();
    // Files to redo because the files parsed so far declare the field types
    // they want (from pass 1 on: a file may be read in no callers round).
    let mut asked: std::collections::HashSet<Wanted> = Default::default();
    let mut typed = {
        let ids: Vec<usize> = (0..first.len()).collect();
        let scanned: Vec<&Scanned> = ids
            .iter()
            .map(|i| second.get(i).unwrap_or(&first[*i]))
            .collect();
        let results = || parsed_results(&first, &second);
        project::newly_provided((&ids, &scanned), results, &mut cx.consts, &mut asked)
    };
    for round in 0..WRAPPER_DEPTH + 1 {
        if fresh.is_empty() && typed.is_empty() {
            break;
        }
        cx.seal(Pass::Callers, settings);
        // Each round has its own cache slot: a file redone in two rounds
        // keeps both analyses instead of overwriting one with the other.
        cx.round = round as u8;
        let callers = Callers::new(&fresh);
        let both = Prefilter::either(&prefilter, &Callers::new(&cx.wrappers).gate);
        // When pass 1 looked for every fresh name and class, only the files
        // holding one are read again.
        let looked_for: Option<Vec<usize>> = fresh
            .iter()
            .flat_map(Wrapper::words)
            .map(|n| known.binary_search(n).ok())
            .collect();
        let redone: Vec<(usize, Scanned)> = files
            .par_iter()
            .enumerate()
            .filter(|(i, f)| {
                let named = &first[*i].named;
                typed.contains(i)
                    || looked_for
                        .as_ref()
                        .is_none_or(|wanted| named.iter().any(|n| wanted.contains(n)))
                        && !settings.skips_test(&f.rel)
                        && callers.may_call(f, &fresh)
            })
            .map(|(i, f)| {
                (
                    i,
                    guarded(f, || scan_file(f, catalog, settings, &both, &cx)),
                )
            })
            .collect();
        fresh = Vec::new();
        for (i, scanned) in &redone {
            let Outcome::Parsed(_, defined, _) = &scanned.outcome else {
                continue;
            };
            let known = |w: &Wrapper| cx.wrappers.iter().any(|k| k.same_as(w));
            fresh.extend(defined.iter().filter(|w| !known(w)).cloned());
            let path = &files[*i].path;
            cx.wrappers.retain(|old| &old.path != path);
            cx.wrappers.extend(defined.iter().cloned());
        }
        trace(format_args!(
            "callers round {round}: {:?}, {} files redone",
            start.elapsed(),
            redone.len()
        ));
        let ids: Vec<usize> = redone.iter().map(|(i, _)| *i).collect();
        second.extend(redone);
        let results = || parsed_results(&first, &second);
        let redone: Vec<&Scanned> = ids.iter().filter_map(|i| second.get(i)).collect();
        typed = project::newly_provided((&ids, &redone), results, &mut cx.consts, &mut asked);
    }

    // Pass 3: the files of wrappers whose own site nothing classes, again
    // with the class their callers give them, and the files whose undecided
    // sites call a writer of another file.
    let results = parsed_results(&first, &second);
    cx.by_callers = project::caller_classes(&cx.wrappers, &results);
    // Writers in files pass 1 did not parse, in the languages of the sites
    // that call them.
    let (names, neighbours) = project::called_names(&results);
    let languages: Vec<_> = results
        .iter()
        .map(|r| r.language.catalog_language())
        .collect();
    let unparsed: Vec<&SourceFile> = first
        .iter()
        .enumerate()
        .filter(|(i, f)| {
            matches!(f.outcome, Outcome::Unparsed)
                && !second.contains_key(i)
                && !settings.skips_test(&files[*i].rel)
                && languages.contains(&files[*i].language.catalog_language())
        })
        .map(|(i, _)| &files[i])
        .collect();
    let more = project::writers_elsewhere(&unparsed, (&names, &neighbours), catalog);
    trace(format_args!(
        "writers: {:?}, {} names called, {} writers in unparsed files",
        start.elapsed(),
        names.len(),
        more.len()
    ));
    let (writers, reached) = project::writers_called(&results, &names, more);
    drop(results);
    cx.writers = writers;
    let mut redo: std::collections::HashSet<PathBuf> = reached.into_iter().collect();
    redo.extend(cx.by_callers.iter().map(|c| c.path.clone()));
    // Rounds: a caller that a writer classes only now classes the wrapper
    // it calls (`createObject` writes through `_putObject` under
    // `s.Lock()`), and that wrapper the one it calls in turn.
    for round in 0..WRAPPER_DEPTH {
        if redo.is_empty() {
            break;
        }
        cx.round = round as u8;
        cx.seal(Pass::Classes, settings);
        let both = Prefilter::either(&prefilter, &Callers::new(&cx.wrappers).gate);
        let redone: Vec<(usize, Scanned)> = files
            .par_iter()
            .enumerate()
            .filter(|(_, f)| redo.contains(&f.path))
            .map(|(i, f)| {
                (
                    i,
                    guarded(f, || scan_file(f, catalog, settings, &both, &cx)),
                )
            })
            .collect();
        second.extend(redone);
        let results = parsed_results(&first, &second);
        let fresh: Vec<_> = project::caller_classes(&cx.wrappers, &results)
            .into_iter()
            .filter(|c| {
                !cx.by_callers
                    .iter()
                    .any(|o| o.path == c.path && o.line == c.line)
            })
            .collect();
        redo = fresh.iter().map(|c| c.path.clone()).collect();
        cx.by_callers.extend(fresh);
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
    report.root = crate::discover::absolute(&settings.paths.root);
    report.scanned = files.iter().map(|f| f.rel.clone()).collect();
    for (i, scanned) in first.into_iter().enumerate() {
        let Scanned {
            outcome, notices, ..
        } = second.remove(&i).unwrap_or(scanned);
        report.notices.extend(notices);
        if let Outcome::Test = outcome {
            report.summary.test_files_skipped += 1;
        }
        if let Outcome::Parsed(result, ..) = outcome {
            report.summary.files_parsed += 1;
            if let Some(r) = result {
                let misses = r.near_misses.iter().map(|m| (r.path.clone(), m.clone()));
                report.near_misses.extend(misses);
                report.summary.sites += r.sites.len();
                report.summary.findings += r.findings.len();
                report.summary.hidden_in_tests += r.hidden_in_tests;
                if !r.findings.is_empty() || !r.sites.is_empty() {
                    report.files.push(*r);
                }
            }
        }
    }
    if let Some(cache) = &settings.cache {
        // Names and classes: a subclass file names only the class.
        cache.set_names(
            cx.wrappers
                .iter()
                .flat_map(Wrapper::words)
                .cloned()
                .collect(),
        );
        let (hits, misses, unread) = cache.counts();
        trace(format_args!(
            "cache: {hits} hits, {misses} misses, {unread} unchanged files not read"
        ));
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
/// The analyses of the files that parsed, the latest pass's where a file was redone.
fn parsed_results<'a>(
    first: &'a [Scanned],
    second: &'a HashMap<usize, Scanned>,
) -> Vec<&'a FileResult> {
    first
        .iter()
        .enumerate()
        .filter_map(|(i, f)| match &second.get(&i).unwrap_or(f).outcome {
            Outcome::Parsed(Some(r), ..) => Some(r.as_ref()),
            _ => None,
        })
        .collect()
}

fn trace(what: std::fmt::Arguments) {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    if *ON.get_or_init(|| std::env::var_os("LOCK_AUDIT_TRACE").is_some()) {
        eprintln!("{what}");
    }
}

/// Runs `scan` with a panic caught and reported as an internal error for `file`.
fn guarded(file: &SourceFile, scan: impl FnOnce() -> Scanned) -> Scanned {
    match catch_unwind(AssertUnwindSafe(scan)) {
        Ok(scanned) => scanned,
        Err(panic) => {
            let msg = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            let notice = Notice {
                path: file.rel.clone(),
                kind: NoticeKind::Internal,
                reason: format!("internal error while analysing this file: {msg}"),
            };
            Scanned {
                outcome: Outcome::Unparsed,
                notices: vec![notice],
                named: Vec::new(),
            }
        }
    }
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
        // Not a pass-1 context (and analyse_text never uses the cache).
        pass: Pass::Callers,
        incremental: true,
        ..Context::default()
    };
    let mut notices = Vec::new();
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let versions = Manifests::new(&settings.paths.root, catalog.versioned_packages())
            .for_file(&file.path, file.language);
        let embeds = embeds::Embeds::read(&file.path, file.language, text.as_bytes());
        analyse_text(
            file,
            (text, &embeds),
            catalog,
            (settings, &versions),
            &cx,
            &mut notices,
        )
    }));
    let (result, wrappers) = match outcome {
        Ok(Outcome::Parsed(r, w, _)) => (r.map(|r| *r), w),
        Ok(Outcome::Unparsed | Outcome::Test) => (None, Vec::new()),
        Err(_) => {
            notices.push(Notice {
                path: file.rel.clone(),
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
    let prefilter = Prefilter::catalog(&catalog.gates);
    let none = Context::default();
    files
        .par_iter()
        .map(|f| guarded(f, || scan_file(f, catalog, settings, &prefilter, &none)))
        .flat_map_iter(|s| match s.outcome {
            Outcome::Parsed(_, w, _) => w,
            Outcome::Unparsed | Outcome::Test => Vec::new(),
        })
        .collect()
}
