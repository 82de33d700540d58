//! Correctness or efficiency? Annotation > configuration > heuristics.
//!
//! Every decision records its evidence (`annotation at L12`, `key mentions
//! "billing"`, `critical section writes (sql-write) at L40`), shown in human
//! output, JSON and `audit`.

use std::collections::HashMap;
use std::path::Path;

use super::effects::{self, Effect};
use super::writers::{split_name, Writer, Writers};
use super::{resolve, Class, FileAnalysis, LockSite};

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

/// One reason for a class: what says it, how strongly, and where (`None`:
/// the file's path).
struct Reason {
    class: ClassName,
    weight: i32,
    line: Option<usize>,
    text: String,
    /// Said by a name (a word), not by what the critical section does.
    named: bool,
}

impl Reason {
    fn show(&self) -> String {
        let class = match self.class {
            ClassName::Correctness => "correctness",
            ClassName::Efficiency => "efficiency",
        };
        match self.line {
            Some(line) => format!("{} at L{line} ({class})", self.text),
            None => format!("{} ({class})", self.text),
        }
    }
}

/// The words of `text`, found in `scope` at `line`, that the catalog
/// vocabularies weigh. A word counts once per site, in the first place it
/// is `seen` (`runCronJob` in a `cron/` folder is one hint).
fn score_words(
    fa: &FileAnalysis,
    (what, scope, line): (&str, WordScope, Option<usize>),
    text: &str,
    seen: &mut Vec<String>,
    reasons: &mut Vec<Reason>,
) {
    let counts = |word: Option<&(i32, Vec<WordScope>)>| {
        word.filter(|(_, scopes)| scopes.contains(&scope))
            .map(|(n, _)| *n)
    };
    for w in resolve::words(text) {
        if seen.contains(&w) {
            continue;
        }
        let found = counts(fa.catalog.correctness_words.get(&w))
            .map(|n| (ClassName::Correctness, n))
            .or_else(|| {
                counts(fa.catalog.efficiency_words.get(&w)).map(|n| (ClassName::Efficiency, n))
            });
        if let Some((class, weight)) = found {
            reasons.push(Reason {
                class,
                weight,
                line,
                text: format!("{what} mentions \"{w}\""),
                named: true,
            });
        }
        seen.push(w);
    }
}

/// The two strongest of `reasons` for `class` (any class when `None`), the
/// strongest first, as shown.
fn strongest(reasons: &[Reason], class: Option<ClassName>) -> Vec<String> {
    let mut picked: Vec<&Reason> = reasons
        .iter()
        .filter(|r| class.is_none_or(|c| r.class == c))
        .collect();
    // At equal weight what the code does says more than what it is named.
    picked.sort_by_key(|r| (std::cmp::Reverse(r.weight), r.named));
    picked.iter().take(2).map(|r| r.show()).collect()
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
    // Given back by its holder, who checks it still holds it (trigger.dev's
    // debounce claim, deleted by compare-and-delete once its run exists): a
    // claim held until then, not a window left to expire. A window cleared
    // early by anyone (`del(key)` when a check fails) stays a window.
    let owned = |&r: &usize| fa.releases.get(r).is_some_and(|r| r.owner_checked);
    if site.releases.iter().any(owned) {
        return None;
    }
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
/// in either)? Then it is no lock at all: not even LA101 applies. A
/// constant this file deletes again (`cache.set(job.singleton_cache_key, 1,
/// ..)` .. `cache.delete(..)`) is a flag held and given back, not a value.
pub fn written_value(fa: &FileAnalysis, site: &LockSite) -> Option<String> {
    if site.kind != super::SiteKind::Command || site.via.is_some() {
        return None;
    }
    let constant = (site.owner.as_ref())
        .is_some_and(|o| super::resolve::resolve(fa.model, o, site.func).is_literal());
    if constant && !site.releases.is_empty() {
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

/// The evidence of a class a kind of lock decides: `why`, then the
/// strongest reason agreeing with it.
fn decided_by(why: String, reasons: &[Reason], class: ClassName) -> Vec<String> {
    let mut evidence = vec![why];
    evidence.extend(strongest(reasons, Some(class)).into_iter().take(1));
    evidence
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
    let mut reasons = Vec::new();
    let key_words = match built {
        Some(b) => format!("{} {b}", site.key_text),
        None => site.key_text.clone(),
    };
    let site_line = Some(index.line_col(site.span.start).0);
    let mut seen = Vec::new();
    let mut score = |place, text: &str| score_words(fa, place, text, &mut seen, &mut reasons);
    score(("key", WordScope::Key, site_line), &key_words);
    if let Some(f) = site.func {
        // The function's own name and, apart, its class: `PaymentsService.render_tiles`
        // is about tiles unless a word is scoped to classes too.
        let (own, class) = split_name(fa.model, f);
        let line = Some(index.line_col(fa.model.functions[f].span.start).0);
        score(("function name", WordScope::Function, line), own);
        score(("class name", WordScope::Class, line), class.unwrap_or(""));
    }
    if let Some(w) = site.wrapper_name() {
        score(("wrapper name", WordScope::Wrapper, site_line), w);
    }
    let folders = path.with_extension("").to_string_lossy().into_owned();
    score(("path", WordScope::Path, None), &folders);
    // One reason per kind of effect: ten saves say no more than one.
    let mut kinds = Vec::new();
    for eff in &effects {
        if let Some(class) = eff.class {
            if kinds.contains(&(eff.kind, class)) {
                continue;
            }
            kinds.push((eff.kind, class));
            reasons.push(Reason {
                class,
                weight: eff.weight,
                line: Some(index.line_col(eff.span.start).0),
                text: format!("critical section {}", describe(eff)),
                named: false,
            });
        }
    }
    let total = |class| {
        reasons
            .iter()
            .filter(|r| r.class == class)
            .map(|r| r.weight)
            .sum::<i32>()
    };
    let (c, e) = (total(ClassName::Correctness), total(ClassName::Efficiency));
    let t = fa.catalog.threshold.max(1);
    // The evidence: the two strongest reasons for the class chosen; for a
    // kind of lock's usual class, that first and the strongest agreeing one.
    let (class, evidence) = if c >= t && c > e {
        (
            Class::Correctness,
            strongest(&reasons, Some(ClassName::Correctness)),
        )
    } else if e >= t && e > c {
        (
            Class::Efficiency,
            strongest(&reasons, Some(ClassName::Efficiency)),
        )
    } else if let Some(usual) = &site.usual {
        // Nothing at the site decides: the kind of lock does.
        let why = format!("{} (what this kind of lock is for)", usual.because);
        let evidence = decided_by(why, &reasons, usual.class);
        let class = match usual.class {
            ClassName::Correctness => Class::Correctness,
            ClassName::Efficiency => Class::Efficiency,
        };
        (class, evidence)
    } else if let Some((place, word)) = scheduled(fa, site, &folders) {
        let why = format!(
            "{place} mentions \"{word}\": a scheduled job's overlap guard (what this kind of lock is for)"
        );
        let evidence = decided_by(why, &reasons, ClassName::Efficiency);
        (Class::Efficiency, evidence)
    } else {
        (Class::Unclassified, strongest(&reasons, None))
    };
    (class, evidence, effects)
}

/// What names a lock helper's call for [`by_same_lock`]: the helper and the key
/// the caller passes, as written. A raw client call has none: its key text
/// (`lock_id`, `key`) is as often a parameter of unrelated functions.
fn lock_name(site: &LockSite) -> Option<(&str, &str)> {
    // Resolved (`lock_id` bound to `f"digest:{user_id}"` in one caller and to
    // `f"receipt:{user_id}"` in another is two locks).
    let key = match site.key.as_ref() {
        _ if !site.key_text.is_empty() => site.key_text.as_str(),
        Some(k) => k.peel().text.as_str(),
        None => "",
    };
    (site.via.is_some() && !key.is_empty()).then_some((site.api.as_str(), key))
}

/// For each site from `first` on that `decided` leaves undecided, the class
/// the other calls of its lock in the file agree on ([`same_lock_evidence`]).
pub fn by_same_lock(
    fa: &FileAnalysis,
    first: usize,
    decided: &[Class],
    line_of: impl Fn(&LockSite) -> usize,
) -> Vec<Option<(Class, String)>> {
    let earlier = (fa.sites[..first].iter())
        .filter(|s| !s.classed_by_callers)
        .map(|s| (s, s.class));
    let now = fa.sites[first..].iter().zip(decided.iter().copied());
    // Each lock's first class and line, or `None` once its calls disagree:
    // one pass, then one lookup per site (linear in the file's sites).
    let mut agreed: HashMap<(&str, &str), Option<(Class, usize)>> = HashMap::new();
    for (s, c) in
        (earlier.chain(now)).filter(|(_, c)| matches!(c, Class::Correctness | Class::Efficiency))
    {
        let Some(name) = lock_name(s) else { continue };
        agreed
            .entry(name)
            .and_modify(|a| {
                if a.is_some_and(|(first, _)| first != c) {
                    *a = None;
                }
            })
            .or_insert(Some((c, line_of(s))));
    }
    (fa.sites[first..].iter().zip(decided))
        .map(|(s, d)| {
            let name = lock_name(s).filter(|_| *d == Class::Unclassified)?;
            let (class, line) = (*agreed.get(&name)?)?;
            Some((class, same_lock_evidence(name, class, line)))
        })
        .collect()
}

/// Why an undecided call takes its lock's class: a lock helper called with
/// the same key elsewhere in the file guards the same resource, and a double
/// grant between any two of its sections is as bad as the worst of them
/// (trigger.dev's `runLock.lock("..", [runId], ..)`: one section only nacks a
/// queue message, the others rewrite the run).
fn same_lock_evidence((helper, key): (&str, &str), class: Class, line: usize) -> String {
    format!(
        "the same lock (`{}` keyed `{key}`) guards {} work at L{line}",
        helper.trim_start_matches("wrapper "),
        class.name()
    )
}

/// The first `scheduler-words` word naming `site`'s wrapper, function,
/// class or file (`folders`: its path without the extension), and where:
/// the lock keeps a scheduled job's runs apart.
fn scheduled(fa: &FileAnalysis, site: &LockSite, folders: &str) -> Option<(&'static str, String)> {
    let name = site
        .func
        .map_or("", |f| fa.model.functions[f].name.as_str());
    let places = [
        ("wrapper name", site.wrapper_name().unwrap_or("")),
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
        EffectKind::ServiceCall => format!("calls a service named for a change (`{}`)", e.text),
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
            // The callers decide: what left the site undecided says nothing more.
            (Class::Unclassified, Some((_, by_callers, why)), _) => {
                *evidence = vec![why.clone()];
                *by_callers
            }
            // The policy decides, and the strongest undecided reason says why nothing else did.
            (Class::Unclassified, None, Some(assumed)) => {
                evidence.truncate(1);
                evidence.insert(
                    0,
                    format!(
                        "nothing decides the class: `assume-class: {}` in lock-audit.yaml",
                        assumed.name()
                    ),
                );
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
