//! Correctness or efficiency? Annotation > configuration > heuristics.
//!
//! Every decision records its evidence (`annotation at L12`, `key mentions
//! "billing"`, `critical section writes (sql-write) at L40`), shown in human
//! output, JSON and `audit`.

use super::effects::{self, Effect};
use super::writers::{split_name, Writer, Writers};
use super::{resolve, Class, FileAnalysis, LockSite};
use std::path::Path;

use globset::GlobMatcher;

use crate::catalog::raw::{ClassName, EffectKind, WordScope};
use crate::lang::profile::profile;
use crate::lines::LineIndex;

/// A class chosen by the user's configuration for a site, if any.
pub type ConfigClassifier<'a> = &'a dyn Fn(&LockSite, &FileAnalysis) -> Option<(Class, String)>;

/// `lock-audit: correctness [reason="..."]` on the acquisition line or in the
/// comment lines directly above it.
fn annotation(fa: &FileAnalysis, index: &LineIndex, site: &LockSite) -> Option<(Class, usize)> {
    let parse = |text: &str| {
        let rest = text.split("lock-audit:").nth(1)?.trim_start();
        if rest.starts_with("correctness") {
            Some(Class::Correctness)
        } else if rest.starts_with("efficiency") {
            Some(Class::Efficiency)
        } else {
            None
        }
    };
    let mut line = index.line_col(site.span.start).0;
    loop {
        let on_line = fa
            .model
            .comments
            .iter()
            .filter(|c| index.line_col(c.span.start).0 == line);
        if let Some(class) = on_line.filter_map(|c| parse(&c.text)).next() {
            return Some((class, line));
        }
        if line <= 1 {
            return None;
        }
        line -= 1;
        let above = index.line(fa.text, line).trim_start();
        let comment_only = profile(fa.model.language)
            .comment_starts
            .iter()
            .any(|p| above.starts_with(p));
        if !comment_only {
            return None;
        }
    }
}

/// Scores the words of `text`, found in `scope`, against the catalog
/// vocabularies; adds evidence lines. A word counts once per site, in the
/// first place it is `seen` (`runCronJob` in a `cron/` folder is one hint).
fn score_words(
    fa: &FileAnalysis,
    (what, scope): (&str, WordScope),
    text: &str,
    (c, e): (&mut i32, &mut i32),
    (seen, evidence): (&mut Vec<String>, &mut Vec<String>),
) {
    let counts = |word: Option<&(i32, Vec<WordScope>)>| {
        word.filter(|(_, scopes)| scopes.contains(&scope))
            .map(|(n, _)| *n)
    };
    for w in resolve::words(text) {
        if seen.contains(&w) {
            continue;
        }
        if let Some(n) = counts(fa.catalog.correctness_words.get(&w)) {
            *c += n;
            evidence.push(format!("{what} mentions \"{w}\" (correctness)"));
        } else if let Some(n) = counts(fa.catalog.efficiency_words.get(&w)) {
            *e += n;
            evidence.push(format!("{what} mentions \"{w}\" (efficiency)"));
        }
        seen.push(w);
    }
}

/// What the helper that builds the site's key returns, if one of this file does.
fn built_key<'a>(fa: &'a FileAnalysis, site: &'a LockSite) -> Option<&'a str> {
    resolve::helper_text(fa.model, site.key.as_ref()?, site.func)
}

/// A raw `SET NX` whose key records that something happened (a marker word,
/// no lock word): the evidence, or `None` for a lock. `built`: what the key's
/// helper returns ([`built_key`]).
fn marker(fa: &FileAnalysis, site: &LockSite, built: &str) -> Option<String> {
    if site.kind != super::SiteKind::Command || site.via.is_some() {
        return None;
    }
    let written = site.key.as_ref().map_or("", |k| k.text.as_str());
    let texts = [written, site.key_text.as_str(), built];
    if super::lock_words(fa.catalog, &texts).is_some() {
        return None;
    }
    if let Some(word) = super::first_word(&fa.catalog.marker_words, &texts) {
        return Some(format!(
            "key mentions \"{word}\": a de-duplication marker, not a lock"
        ));
    }
    window(fa, site, &texts).or_else(|| written_value(fa, site))
}

/// A `SET NX EX interval` whose key or TTL names a window (`window-words`), no
/// lock word in either: a throttle that lets one caller through per window.
fn window(fa: &FileAnalysis, site: &LockSite, keys: &[&str]) -> Option<String> {
    let ttl = match &site.ttl {
        super::Ttl::Given(Some(e)) => e.text.as_str(),
        _ => return None,
    };
    if super::lock_words(fa.catalog, &[ttl]).is_some() {
        return None;
    }
    let texts: Vec<&str> = keys.iter().copied().chain([ttl]).collect();
    let word = super::first_word(&fa.catalog.window_words, &texts)?;
    Some(format!(
        "key or TTL mentions \"{word}\": a throttle window left to expire, not a lock"
    ))
}

/// Is `site` a cache entry or a counter's start value written if absent
/// (`value-words` in its key or its function's qualified name, no lock word
/// in either)? Then it is no lock at all: not even LA101 applies.
pub fn written_value(fa: &FileAnalysis, site: &LockSite) -> Option<String> {
    if site.kind != super::SiteKind::Command || site.via.is_some() {
        return None;
    }
    let written = site.key.as_ref().map_or("", |k| k.text.as_str());
    let func = site
        .func
        .map_or("", |f| fa.model.functions[f].name.as_str());
    let texts = [written, site.key_text.as_str(), func];
    if super::lock_words(fa.catalog, &texts).is_some() {
        return None;
    }
    let word = super::first_word(&fa.catalog.value_words, &texts)?;
    Some(format!(
        "\"{word}\" in the key or function: a value written if absent, not a lock"
    ))
}

/// Classifies `site`, returning its class, the evidence, and its section's effects.
pub fn classify(
    fa: &FileAnalysis,
    index: &LineIndex,
    site: &LockSite,
    config: Option<ConfigClassifier>,
    (path, writers): (&Path, &Writers),
) -> (Class, Vec<String>, Vec<Effect>) {
    let effects = effects::of_section(fa, site, writers);
    if let Some((class, line)) = annotation(fa, index, site) {
        return (class, vec![format!("annotation at L{line}")], effects);
    }
    // A wrapper annotated at its definition passes its class to its callers.
    if site.via.is_some() && site.class != Class::Unclassified {
        if let Some(ev) = site
            .class_evidence
            .iter()
            .find(|e| e.starts_with("annotation"))
        {
            return (site.class, vec![format!("{ev} of the wrapper")], effects);
        }
    }
    if let Some((class, why)) = config.and_then(|f| f(site, fa)) {
        return (class, vec![why], effects);
    }
    let built = built_key(fa, site);
    if let Some(why) = marker(fa, site, built.unwrap_or("")) {
        return (Class::Marker, vec![why], effects);
    }
    let (mut c, mut e) = (0, 0);
    let mut evidence = Vec::new();
    let key_words = match built {
        Some(b) => format!("{} {b}", site.key_text),
        None => site.key_text.clone(),
    };
    let mut seen = Vec::new();
    let mut score = |place, text: &str| {
        score_words(
            fa,
            place,
            text,
            (&mut c, &mut e),
            (&mut seen, &mut evidence),
        )
    };
    score(("key", WordScope::Key), &key_words);
    if let Some(f) = site.func {
        // The function's own name and, apart, its class: `PaymentsService.render_tiles`
        // is about tiles unless a word is scoped to classes too.
        let (own, class) = split_name(fa.model, f);
        score(("function name", WordScope::Function), own);
        score(("class name", WordScope::Class), class.unwrap_or(""));
    }
    if let Some(w) = site.api.strip_prefix("wrapper ") {
        score(("wrapper name", WordScope::Wrapper), w);
    }
    let folders = path.with_extension("").to_string_lossy().into_owned();
    score(("path", WordScope::Path), &folders);
    for eff in &effects {
        let line = index.line_col(eff.span.start).0;
        match eff.class {
            Some(ClassName::Correctness) => {
                c += eff.weight;
                evidence.push(format!(
                    "critical section {} at L{line} (correctness)",
                    describe(eff)
                ));
            }
            Some(ClassName::Efficiency) => {
                e += eff.weight;
                evidence.push(format!(
                    "critical section {} at L{line} (efficiency)",
                    describe(eff)
                ));
            }
            _ => {}
        }
    }
    let t = fa.catalog.threshold.max(1);
    let class = if c >= t && c > e {
        Class::Correctness
    } else if e >= t && e > c {
        Class::Efficiency
    } else if let Some(usual) = &site.usual {
        // Nothing at the site decides: the kind of lock does.
        evidence.push(format!("{} (what this kind of lock is for)", usual.because));
        match usual.class {
            ClassName::Correctness => Class::Correctness,
            ClassName::Efficiency => Class::Efficiency,
        }
    } else if let Some((place, word)) = scheduled(fa, site, &folders) {
        evidence.push(format!(
            "{place} mentions \"{word}\": a scheduled job's overlap guard (what this kind of lock is for)"
        ));
        Class::Efficiency
    } else {
        Class::Unclassified
    };
    (class, evidence, effects)
}

/// The first `scheduler-words` word naming `site`'s wrapper, function,
/// class or file (`folders`: its path without the extension), and where:
/// the lock keeps a scheduled job's runs apart.
fn scheduled(fa: &FileAnalysis, site: &LockSite, folders: &str) -> Option<(&'static str, String)> {
    let name = site
        .func
        .map_or("", |f| fa.model.functions[f].name.as_str());
    let places = [
        (
            "wrapper name",
            site.api.strip_prefix("wrapper ").unwrap_or(""),
        ),
        ("function or class name", name),
        ("path", folders),
    ];
    for (place, text) in places {
        if let Some(word) = super::first_word(&fa.catalog.scheduler_words, &[text]) {
            return Some((place, word));
        }
    }
    None
}

fn describe(e: &Effect) -> String {
    match e.kind {
        EffectKind::SqlWrite => "writes SQL".into(),
        EffectKind::OrmWrite => format!("saves through the ORM (`{}`)", e.text),
        EffectKind::StoreWrite => format!("writes to a data store (`{}`)", e.text),
        EffectKind::Payment => format!("calls a payment API (`{}`)", e.text),
        EffectKind::ObjectStorePut => format!("writes to an object store (`{}`)", e.text),
        EffectKind::CacheSet => format!("only sets a cache (`{}`)", e.text),
        other => format!("{} (`{}`)", other.name(), e.text),
    }
}

/// The config's `classify:` entries, the file's path relative to the
/// project root that their `path` globs are matched against, and
/// `assume-class` for the locks nothing decides.
pub struct UserClasses<'a> {
    pub rules: &'a [ClassifyRule],
    pub path: &'a Path,
    pub assume: Option<Class>,
    /// Wrappers of this file classed by their callers: the line of the
    /// wrapper's acquisition, the class, the evidence.
    pub by_callers: &'a [(usize, Class, String)],
    /// Functions of other files whose bodies write, reached from this
    /// file's critical sections ([`super::writers`]).
    pub writers: &'a [Writer],
}

impl UserClasses<'_> {
    /// No entries.
    pub fn none() -> UserClasses<'static> {
        UserClasses {
            rules: &[],
            path: Path::new(""),
            assume: None,
            by_callers: &[],
            writers: &[],
        }
    }

    /// `class` as decided; when nothing decided it, the class the callers of
    /// a wrapper acquiring at `line` give it, else the assumed class.
    pub fn settle(&self, class: Class, line: usize, evidence: &mut Vec<String>) -> Class {
        let callers = self.by_callers.iter().find(|(l, ..)| *l == line);
        match (class, callers, self.assume) {
            (Class::Unclassified, Some((_, by_callers, why)), _) => {
                evidence.push(why.clone());
                *by_callers
            }
            (Class::Unclassified, None, Some(assumed)) => {
                evidence.push(format!(
                    "nothing decides the class: `assume-class: {}` in lock-audit.yaml",
                    assumed.name()
                ));
                assumed
            }
            _ => class,
        }
    }
}

/// One compiled `classify:` entry.
#[derive(Debug, Clone)]
pub struct ClassifyRule {
    pub class: Class,
    pub key: Option<GlobMatcher>,
    pub path: Option<GlobMatcher>,
    pub function: Option<GlobMatcher>,
    /// Shown as the evidence: `lock-audit.yaml classify #2: key lock:billing:*`.
    pub why: String,
}

impl ClassifyRule {
    /// Does this entry decide the site with `key`, in `path`, inside `function`?
    pub fn matches(&self, key: &str, path: &Path, function: Option<&str>) -> bool {
        let key = key
            .trim_matches(['"', '\'', '`'])
            .trim_start_matches(['f', 'b'])
            .trim_matches(['"', '\'']);
        self.key.as_ref().is_none_or(|g| g.is_match(key))
            && self.path.as_ref().is_none_or(|g| g.is_match(path))
            && self
                .function
                .as_ref()
                .is_none_or(|g| function.is_some_and(|f| g.is_match(f)))
    }
}
