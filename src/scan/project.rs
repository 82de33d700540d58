//! What pass 1 tells pass 2 about the project: the in-house wrappers, the
//! constants other files import, and which files may call a wrapper.

use std::collections::{HashMap, HashSet};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;

use rayon::prelude::*;
use regex::bytes::Regex;

use super::pipeline::Pass;
use super::{Outcome, Scanned};
use crate::config::Settings;
use crate::discover::SourceFile;
use crate::lang;
use crate::lang::profile::profile;
use crate::lines::LineIndex;
use crate::outcome::{FileResult, SiteInfo};
use crate::prefilter::Prefilter;
use crate::sites;
use crate::sites::consts::{module_key, ProjectConsts, Wanted};
use crate::sites::wrapper::{self, Wrapper};
use crate::sites::writers::Writer;
use crate::sites::Class;

/// What pass 2 knows from pass 1.
#[derive(Default)]
pub(super) struct Context {
    pub wrappers: Vec<Wrapper>,
    pub consts: ProjectConsts,
    pub pass: Pass,
    /// The hash of `wrappers` and `consts`, part of the cache key from
    /// stage 1 on; `None` turns the cache off for the stage.
    pub fingerprint: Option<String>,
    /// Reparse from the thread's previous tree (an editor buffer).
    pub incremental: bool,
    /// Pass 1: the wrapper names the cache's last run found, looked for in
    /// every file while it is read (pattern index = position in the sorted list).
    pub known: Option<Prefilter>,
    /// Wrappers nothing else classes, classed by their callers.
    pub by_callers: Vec<CallerClass>,
    /// The project's dependency manifests, read for the library versions
    /// whose facts differ (`None`: the current versions).
    pub manifests: Option<std::sync::Arc<crate::manifest::Manifests>>,
    /// The round of the callers pass (wrappers over wrappers), part of the cache slot.
    pub round: u8,
    /// Functions whose bodies write, called from undecided sites of other files.
    pub writers: Vec<Writer>,
}

/// The class a wrapper's callers give it: the most severe among the
/// critical sections they run under it (correctness if any is; efficiency if
/// all are), for a wrapper whose own site nothing decides.
#[derive(Debug, Clone, serde::Serialize)]
pub(super) struct CallerClass {
    pub path: std::path::PathBuf,
    /// The line of the wrapper's own acquisition.
    pub line: usize,
    pub class: Class,
    pub evidence: String,
}

/// The classes `wrappers` get from their call sites in `results`, for the
/// wrappers whose own site is unclassified.
pub(super) fn caller_classes(wrappers: &[Wrapper], results: &[&FileResult]) -> Vec<CallerClass> {
    use std::collections::{HashMap, HashSet};
    // The unclassified sites of the wrappers' own files, by path and line.
    let homes: HashSet<&std::path::Path> = wrappers.iter().map(|w| w.path.as_path()).collect();
    let mut undecided: HashSet<(&str, usize)> = HashSet::new();
    for r in results
        .iter()
        .filter(|r| homes.contains(std::path::Path::new(&r.path)))
    {
        let index = LineIndex::new(&r.text);
        undecided.extend(
            r.sites
                .iter()
                .filter(|s| s.class == Class::Unclassified)
                .map(|s| (r.path.as_str(), index.line_col(s.span.start).0)),
        );
    }
    // Every wrapper call site, by the place of the wrapper it calls
    // (`runCronJob (cron/utils.ts:36)` -> `cron/utils.ts:36`).
    let mut callers: HashMap<&str, Vec<(&FileResult, &SiteInfo)>> = HashMap::new();
    for r in results {
        for s in &r.sites {
            let at = s
                .via
                .as_deref()
                .and_then(|v| v.rsplit_once(" ("))
                .map(|(_, at)| at);
            if let Some(at) = at.and_then(|at| at.strip_suffix(')')) {
                callers.entry(at).or_default().push((r, s));
            }
        }
    }
    let mut out = Vec::new();
    for w in wrappers {
        let path = w.path.display().to_string();
        if !undecided.contains(&(path.as_str(), w.line)) {
            continue;
        }
        let Some(callers) = callers.get(format!("{path}:{}", w.line).as_str()) else {
            continue;
        };
        let first = |class: Class| callers.iter().find(|(_, s)| s.class == class);
        let decided = match first(Class::Correctness) {
            Some(c) => Some((Class::Correctness, c)),
            None if callers.iter().all(|(_, s)| s.class == Class::Efficiency) => {
                first(Class::Efficiency).map(|c| (Class::Efficiency, c))
            }
            None => None,
        };
        let Some((class, (r, s))) = decided else {
            continue;
        };
        let line = LineIndex::new(&r.text).line_col(s.span.start).0;
        out.push(CallerClass {
            path: w.path.clone(),
            line: w.line,
            class,
            evidence: format!(
                "a wrapper its callers hold for {} work ({}:{line})",
                class.name(),
                r.rel
            ),
        });
    }
    out
}

/// The names undecided sites call that their own files do not define, and
/// the modules those files reach ([`FileResult::neighbours`]).
pub(super) fn called_names(results: &[&FileResult]) -> (Vec<String>, Vec<String>) {
    let calling = results
        .iter()
        .filter(|r| r.sites.iter().any(|s| !s.outside.is_empty()));
    let mut names: Vec<String> = calling
        .clone()
        .flat_map(|r| &r.sites)
        .flat_map(|s| &s.outside)
        .cloned()
        .collect();
    let mut modules: Vec<String> = calling.flat_map(|r| r.neighbours.iter().cloned()).collect();
    for v in [&mut names, &mut modules] {
        v.sort();
        v.dedup();
    }
    (names, modules)
}

/// The writers among the functions named `names` that files pass 1 did not
/// parse define (a base class or a store with no lock in it), among the files
/// of the `neighbours` modules the calling files reach. Only names of
/// two words or more are looked for: a one-word name (`save`, `create`) is
/// followed only to this file's own functions, and would send most of the
/// project to the parser; and only files where one appears other than after
/// a `.` (where it is called, not defined) are parsed.
pub(super) fn writers_elsewhere(
    files: &[&SourceFile],
    (names, neighbours): (&[String], &[String]),
    catalog: &crate::catalog::Catalog,
) -> Vec<Writer> {
    // Only the files of modules the calling files import, extend or share.
    let files: Vec<&&SourceFile> = files
        .iter()
        .filter(|f| {
            let module = sites::module_name(&f.path, f.language);
            neighbours
                .binary_search(&sites::writers::module_key(&module))
                .is_ok()
        })
        .collect();
    let names: Vec<String> = names
        .iter()
        .filter(|n| sites::resolve::words(n).len() >= 2)
        .cloned()
        .collect();
    if names.is_empty() {
        return Vec::new();
    }
    let alternation: Vec<String> = names.iter().map(|n| regex::escape(n)).collect();
    let Ok(search) = Regex::new(&alternation.join("|")) else {
        return Vec::new();
    };
    files
        .par_iter()
        .flat_map_iter(|f| {
            let keyword = profile(f.language).definition_keyword;
            let found = std::fs::read(&f.path)
                .ok()
                .filter(|bytes| may_define(&search, bytes, keyword))
                .and_then(|bytes| String::from_utf8(bytes).ok())
                .map(|text| writers_of(f, &text, catalog))
                .unwrap_or_default();
            found
                .into_iter()
                .filter(|w| names.binary_search(&w.name).is_ok())
        })
        .collect()
}

/// Does `bytes` seem to define one of the names `search` finds: a whole
/// word after the line's `keyword` (`def`, `func`) where the language has
/// one, else at the start of a declaration (nothing before it on the line
/// but modifiers: no `.`, `=`, `(`, `@`, `return`, `await`, `new`) and before
/// `(`, `=` or `<`, and not capitalised (a class)?
/// A cheap test before parsing; the parse decides.
fn may_define(search: &Regex, bytes: &[u8], keyword: Option<&str>) -> bool {
    let ident = |b: &u8| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'$';
    search.find_iter(bytes).any(|m| {
        let line_start = bytes[..m.start()]
            .iter()
            .rposition(|b| *b == b'\n')
            .map_or(0, |i| i + 1);
        let before = &bytes[line_start..m.start()];
        let after = bytes[m.end()..].iter().find(|b| !b.is_ascii_whitespace());
        let whole = !before.last().is_some_and(ident) && !bytes.get(m.end()).is_some_and(ident);
        let declared = match keyword {
            Some(k) => before.split(|b| !ident(b)).any(|word| word == k.as_bytes()),
            // A capitalised name is a class (`new BadRequest(..)`, `@CaptureSpan()`).
            None => {
                !before.iter().any(|b| b"=(.,@".contains(b))
                    && !bytes[m.start()].is_ascii_uppercase()
                    && !before.split(|b| !ident(b)).any(|w| {
                        [&b"return"[..], b"await", b"new", b"throw", b"yield"].contains(&w)
                    })
                    && after.is_some_and(|b| b"(=<".contains(b))
            }
        };
        whole && declared
    })
}

/// The writers `text` (of `file`) defines; none when it does not parse.
fn writers_of(file: &SourceFile, text: &str, catalog: &crate::catalog::Catalog) -> Vec<Writer> {
    let tsx = file.path.extension().is_some_and(|e| e == "tsx");
    let lowered = catch_unwind(AssertUnwindSafe(|| lang::lower(file.language, text, tsx)));
    let Ok(Ok(model)) = lowered else {
        return Vec::new();
    };
    let fa = sites::FileAnalysis {
        model: &model,
        catalog,
        text,
        sites: Vec::new(),
        releases: Vec::new(),
        objects: Vec::new(),
    };
    let index = LineIndex::new(text);
    sites::writers::summarize(&fa, &file.path, |at| index.line_col(at).0)
}

/// The writers that undecided sites of other files call by name (`called`,
/// sorted: [`called_names`]), of the analysed files and `more` (see [`sites::writers::Writers::reached`], which
/// decides per call), and the paths of the files holding such a site: pass 3
/// classifies those again.
pub(super) fn writers_called(
    results: &[&FileResult],
    called: &[String],
    more: Vec<Writer>,
) -> (Vec<Writer>, Vec<std::path::PathBuf>) {
    use std::collections::HashSet;
    let mut writers: Vec<Writer> = results
        .iter()
        .flat_map(|r| &r.writers)
        .filter(|w| called.binary_search(&w.name).is_ok())
        .cloned()
        .chain(more)
        .collect();
    writers.sort_by(|a, b| (&a.path, a.line, &a.name).cmp(&(&b.path, b.line, &b.name)));
    writers.dedup();
    let names: HashSet<&str> = writers.iter().map(|w| w.name.as_str()).collect();
    let files = results
        .iter()
        .filter(|r| {
            r.sites
                .iter()
                .any(|s| s.outside.iter().any(|n| names.contains(n.as_str())))
        })
        .map(|r| std::path::PathBuf::from(&r.path))
        .collect();
    (writers, files)
}

impl Context {
    /// The cache slot of this context's analyses: the pass and, for the
    /// callers pass, its round.
    pub fn slot(&self) -> u8 {
        (self.pass as u8) << 4 | self.round
    }

    /// Fixes the context for `pass`: a stable order, and its fingerprint
    /// when a cache is in use.
    pub fn seal(&mut self, pass: Pass, settings: &Settings) {
        self.pass = pass;
        self.wrappers
            .sort_by(|a, b| (&a.path, a.line, &a.name).cmp(&(&b.path, b.line, &b.name)));
        self.fingerprint = settings.cache.as_ref().and_then(|_| {
            let wrappers = serde_json::to_vec(&self.wrappers).ok()?;
            let by_callers = serde_json::to_vec(&self.by_callers).ok()?;
            let writers = serde_json::to_vec(&self.writers).ok()?;
            Some(crate::digest::hash(&[
                &wrappers,
                &self.consts.fingerprint()?,
                &by_callers,
                &writers,
            ]))
        });
    }
}

/// The files among `redone` that want a field's type `consts` does not
/// provide yet (one another file of their Go package declares), with
/// `consts` extended by the declarations of the parsed files (`results`,
/// which `redone` is among, listed only when some want is unmet): the files
/// whose wants are now met, to analyse again. Nothing is parsed for it; a
/// want is looked for once a scan (`asked`).
pub(super) fn newly_provided<'r>(
    (ids, redone): (&[usize], &[&Scanned]),
    results: impl FnOnce() -> Vec<&'r FileResult>,
    consts: &mut ProjectConsts,
    asked: &mut HashSet<Wanted>,
) -> HashSet<usize> {
    let asking: Vec<(usize, Vec<&Wanted>)> = (ids.iter().zip(redone))
        .filter_map(|(i, s)| match &s.outcome {
            Outcome::Parsed(_, _, wanted) => Some((*i, wanted)),
            _ => None,
        })
        .map(|(i, wanted)| {
            let unmet = (wanted.iter())
                .filter(|w| w.field && !consts.provides(w) && !asked.contains(*w))
                .collect();
            (i, unmet)
        })
        .filter(|(_, w): &(usize, Vec<&Wanted>)| !w.is_empty())
        .collect();
    let all: Vec<&Wanted> = asking.iter().flat_map(|(_, w)| w.iter().copied()).collect();
    if all.is_empty() {
        return HashSet::new();
    }
    asked.extend(all.iter().map(|w| (*w).clone()));
    let dirs: HashSet<&std::path::Path> = all.iter().filter_map(|w| w.dir.as_deref()).collect();
    for r in results() {
        if let Some(dir) = std::path::Path::new(&r.path)
            .parent()
            .filter(|d| dirs.contains(d))
        {
            consts.add_fields(dir, &r.fields, &all);
        }
    }
    asking
        .into_iter()
        .filter(|(_, w)| w.iter().any(|w| consts.provides(w)))
        .map(|(i, _)| i)
        .collect()
}

/// The module-level constants that files define for the names others want:
/// only files of the right module that mention a wanted name are parsed.
pub(super) fn read_constants(files: &[SourceFile], wanted: &[Wanted]) -> ProjectConsts {
    // A field's type comes from the files the scan parses ([`newly_provided`]).
    let wanted: Vec<Wanted> = wanted.iter().filter(|w| !w.field).cloned().collect();
    let wanted = &wanted[..];
    let stems: Vec<String> = wanted
        .iter()
        .filter_map(|w| w.stem.as_deref())
        .map(module_key)
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
            let module = module_key(&sites::module_name(&f.path, f.language));
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

/// Each profile's subclass header with the wrappers' classes in place,
/// compiled the first time a file of that profile asks (a run whose
/// wrappers are all TypeScript compiles none).
struct Subclasses {
    alternation: Option<String>,
    compiled: HashMap<&'static str, OnceLock<Option<Regex>>>,
}

impl Subclasses {
    fn new(classes: &[String]) -> Self {
        let alternation = (!classes.is_empty()).then(|| {
            let escaped: Vec<String> = classes.iter().map(|c| regex::escape(c)).collect();
            escaped.join("|")
        });
        let compiled = lang::profile::subclass_headers()
            .into_iter()
            .map(|h| (h, OnceLock::new()))
            .collect();
        Subclasses {
            alternation,
            compiled,
        }
    }

    /// Does `bytes` (of a file with `header`) declare a subclass of a wrapper's class?
    fn declared(&self, header: Option<&'static str>, bytes: &[u8]) -> bool {
        let (Some(header), Some(alternation)) = (header, &self.alternation) else {
            return false;
        };
        self.compiled.get(header).is_some_and(|slot| {
            slot.get_or_init(|| Regex::new(&header.replace("CLASSES", alternation)).ok())
                .as_ref()
                .is_some_and(|r| r.is_match(bytes))
        })
    }
}

/// Finds the files that may call a wrapper defined in another file: pass 2
/// re-parses only those (a file's own wrappers were applied in pass 1).
pub(super) struct Callers {
    /// Wrapper names, as whole words.
    names: Prefilter,
    /// Wrapper names and classes, as whole words: what makes a file worth
    /// parsing in a callers' round (a caller, or a subclass inheriting one).
    pub gate: Prefilter,
    name_list: Vec<String>,
    /// The wrappers' module names (import paths, receivers).
    modules: Prefilter,
    module_list: Vec<String>,
    /// A class header extending a wrapper's class, by profile pattern
    /// ([`Profile::subclass_header`](crate::lang::profile::Profile)): such a
    /// file inherits the wrapper (see [`wrapper::inherited`]).
    subclasses: Subclasses,
}

impl Callers {
    pub fn new(wrappers: &[Wrapper]) -> Self {
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
        let class_list = sorted(
            wrappers
                .iter()
                .filter_map(|w| w.base_class().cloned())
                .collect(),
        );
        let gate = Prefilter::exact(&sorted(
            wrappers.iter().flat_map(Wrapper::words).cloned().collect(),
        ));
        Callers {
            names: Prefilter::exact(&name_list),
            gate,
            modules: Prefilter::new(&module_list),
            subclasses: Subclasses::new(&class_list),
            name_list,
            module_list,
        }
    }

    pub fn may_call(&self, f: &SourceFile, wrappers: &[Wrapper]) -> bool {
        let language = f.language.catalog_language();
        if !wrappers.iter().any(|w| w.language == language) {
            return false;
        }
        let Ok(bytes) = std::fs::read(&f.path) else {
            return false;
        };
        let named = self.names.words_in(&bytes);
        if named.is_empty() {
            // `class LockService < BaseLockService`: its methods are the base's.
            return self
                .subclasses
                .declared(profile(f.language).subclass_header, &bytes);
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
                && wrapper::may_call(&f.path, f.language, w, || {
                    wrapper::distinctive(w) || names_module(w)
                })
        })
    }
}
