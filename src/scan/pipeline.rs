//! One file through the stages: read, parse and lower, lock sites, checks,
//! policy, suppressions; served from the cache when nothing it depends on
//! changed.

use std::sync::Arc;
use std::time::Instant;

use super::embeds::Embeds;
use super::project::Context;
use super::{policy, source, trace, Outcome, Scanned};
use crate::cache::Stored;
use crate::catalog::Catalog;
use crate::config::Settings;
use crate::discover::SourceFile;
use crate::lines::LineIndex;
use crate::manifest::Versions;
use crate::outcome::{FileResult, NearMiss, Notice, NoticeKind};
use crate::prefilter::Prefilter;
use crate::sites::classify::UserClasses;
use crate::sites::consts;
use crate::sites::wrapper::{self, Wrapper};
use crate::{checks, lang, model, sites};

/// Which pass an analysis belongs to: each has its own cache slot.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) enum Pass {
    /// Every file, alone.
    #[default]
    First,
    /// Files importing constants another file defines, again with those known.
    Constants,
    /// Files that may call a wrapper defined in another file.
    Callers,
    /// Files defining a wrapper whose class its callers decide.
    Classes,
}

/// Scans one file for `cx`'s pass.
pub(super) fn scan_file(
    file: &SourceFile,
    catalog: &Catalog,
    settings: &Settings,
    prefilter: &Prefilter,
    cx: &Context,
) -> Scanned {
    let mut notices = Vec::new();
    let mut named = Vec::new();
    // Test hook (debug builds only): panic on a named file, to prove isolation.
    if cfg!(debug_assertions)
        && std::env::var("LOCK_AUDIT_PANIC_ON").is_ok_and(|n| file.rel.ends_with(&n))
    {
        panic!("LOCK_AUDIT_PANIC_ON asked for a panic");
    }
    let known = cx.known.as_ref();
    let first = cx.pass == Pass::First;
    let read = source::read_text(
        file,
        settings,
        prefilter,
        first,
        known,
        &mut named,
        &mut notices,
    );
    let (text, embeds) = match read {
        source::Read::Text(text, embeds) => (text, embeds),
        other => {
            let outcome = match other {
                source::Read::Test => Outcome::Test,
                _ => Outcome::Unparsed,
            };
            return Scanned {
                outcome,
                notices,
                named,
            };
        }
    };
    // Pass 1 depends on the file alone (and the library versions its
    // manifests give); later stages also on the context.
    let versions = cx
        .manifests
        .as_ref()
        .map(|m| m.for_file(&file.path, file.language))
        .unwrap_or_default();
    let fingerprint = if cx.pass == Pass::First {
        Some(String::new())
    } else {
        cx.fingerprint.clone()
    }
    .map(|fp| match versions.0.is_empty() {
        true => fp,
        false => format!("{fp}|{}", versions.fingerprint()),
    })
    .map(|fp| {
        let embedded = embeds.fingerprint();
        match embedded.is_empty() {
            true => fp,
            false => format!("{fp}|embeds:{embedded}"),
        }
    });
    let cached = settings
        .cache
        .as_deref()
        .zip(fingerprint)
        .and_then(|(c, fp)| Some((c, c.key(&file.path, &fp)?)));
    if let Some((cache, key)) = &cached {
        if let Some(stored) = cache.get(&file.path, cx.slot(), key) {
            // Stored notices are this file's; its project path may differ now.
            notices.extend(stored.notices.into_iter().map(|n| Notice {
                path: file.rel.clone(),
                ..n
            }));
            let result = stored.result.map(|r| {
                Box::new(FileResult {
                    path: file.path.display().to_string(),
                    rel: file.rel.clone(),
                    text,
                    ..r
                })
            });
            return Scanned {
                outcome: Outcome::Parsed(result, stored.wrappers, stored.wanted),
                notices,
                named,
            };
        }
    }
    let started = Instant::now();
    let mut analysed = Vec::new();
    let outcome = analyse_text(
        file,
        (text, &embeds),
        catalog,
        (settings, &versions),
        cx,
        &mut analysed,
    );
    trace(format_args!("  {:?} {}", started.elapsed(), file.rel));
    if let (Some((cache, key)), Outcome::Parsed(result, wrappers, wanted)) = (cached, &outcome) {
        let stored = Stored {
            result: result.as_deref().cloned(),
            wrappers: wrappers.clone(),
            wanted: wanted.clone(),
            notices: analysed.clone(),
        };
        cache.put(&file.path, cx.slot(), key, stored);
    }
    notices.extend(analysed);
    Scanned {
        outcome,
        notices,
        named,
    }
}

/// Parses and analyses one file's text.
pub(super) fn analyse_text(
    file: &SourceFile,
    (text, embeds): (Arc<str>, &Embeds),
    catalog: &Catalog,
    (settings, versions): (&Settings, &Versions),
    cx: &Context,
    notices: &mut Vec<Notice>,
) -> Outcome {
    let path = file.rel.clone();
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
    embeds.bind(&mut model, &catalog.file_reads);
    let by_callers: Vec<(usize, sites::Class, String)> = cx
        .by_callers
        .iter()
        .filter(|c| c.path == file.path)
        .map(|c| (c.line, c.class, c.evidence.clone()))
        .collect();
    let user = UserClasses {
        rules: &settings.classify,
        path: std::path::Path::new(&file.rel),
        assume: settings.assume_class,
        by_callers: &by_callers,
        writers: &cx.writers,
    };
    let mut analysis = sites::analyze(
        &model,
        &text,
        catalog,
        &file.path,
        &cx.wrappers,
        &user,
        versions,
    );
    let mut defined = wrapper::summarize(&analysis, &file.path, |at| index.line_col(at).0);
    // Calls of this file's own wrappers, without waiting for pass 2, and the
    // wrappers over them in this file (`with_lock` over `synchronize`).
    let mut own: Vec<Wrapper> = defined
        .iter()
        .filter(|w| !cx.wrappers.iter().any(|c| c.path == w.path))
        .cloned()
        .collect();
    for _ in 0..super::WRAPPER_DEPTH {
        if own.is_empty() {
            break;
        }
        sites::add_wrapper_calls(&mut analysis, &file.path, &own, &user);
        let again = wrapper::summarize(&analysis, &file.path, |at| index.line_col(at).0);
        own = again
            .iter()
            .filter(|w| !defined.iter().any(|d| d.same_as(w)))
            .cloned()
            .collect();
        defined = again;
    }
    defined.extend(wrapper::inherited(&model, &file.path, &cx.wrappers, |at| {
        index.line_col(at).0
    }));
    let wanted = consts::wanted(&analysis, &file.path);
    let mut findings = checks::run(&analysis, &settings.rules);
    policy::severities(&mut findings, &file.rel, settings);
    crate::suppress::apply(
        &model.comments,
        &text,
        &mut findings,
        &settings.rules,
        settings.require_reason,
    );
    findings.sort_by_key(|f| (f.span.start, f.rule.code));
    let whole_file = settings.test_paths.is_match(&file.rel);
    let in_tests = |span| policy::in_tests(span, whole_file, &model, settings);
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
        writers: sites::writers::summarize(&analysis, &file.path, |at| index.line_col(at).0),
        neighbours: sites::writers::neighbours(&model, &file.path),
        fields: sites::consts::package_fields(&model),
        near_misses: sites::near_miss::find(&analysis)
            .into_iter()
            .filter(|(span, _)| !in_tests(*span))
            .map(|(span, why)| NearMiss {
                line: index.line_col(span.start).0,
                why,
            })
            .collect(),
    };
    drop(analysis);
    free_aside(model, text.len());
    Outcome::Parsed(Some(Box::new(result)), defined, wanted)
}

/// A large file's model is millions of small allocations; another thread
/// frees them while this one goes on (a generated 2 MB file: 80 ms).
fn free_aside(model: model::FileModel, text_len: usize) {
    const LARGE: usize = 256 * 1024;
    if text_len >= LARGE {
        rayon::spawn(move || drop(model));
    }
}
