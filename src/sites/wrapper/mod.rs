//! In-house lock wrappers: `with distributed_lock("billing"):`,
//! `withLock(key, fn)`, `acquire_lock(ctx, key)`.
//!
//! The first pass summarises every function whose body acquires a lock and
//! that looks like a lock helper: named after a lock, running a callback or
//! yielding under the lock, or returning the lock / the try-acquire's result.
//! The second pass turns calls of those functions, anywhere in the tree,
//! into lock sites. A wrapper's own bugs (no TTL, blind DEL) stay reported
//! once, inside it; its callers carry their own key and class.

use std::path::{Path, PathBuf};

use std::collections::{HashMap, HashSet};

mod calls;
mod inherit;
mod objects;

use super::{resolve, FileAnalysis, LockObject, LockSite, ObjectMethods, Ttl, Wait};
use crate::catalog::Scope;
use crate::lang::profile::profile;
use crate::model::{
    mentions, Call, Conditional, Exit, Expr, FileModel, FuncId, Function, GuardKind, Language, Span,
};
use calls::calls_wrapper;
pub use calls::{distinctive, may_call, module_spellings};
pub use inherit::inherited;
use objects::{switched_off, taken, Taken};

/// A function that acquires a lock for its callers.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Wrapper {
    /// The function's own name (`distributed_lock`, `withLock`).
    pub name: String,
    pub language: Language,
    /// The file it is defined in, the module name callers use (`locks`) and
    /// its folder (Go package).
    pub path: PathBuf,
    pub stem: String,
    pub dir: PathBuf,
    /// The class, struct or module the function is a method of (`RunLocker`
    /// of `RunLocker.lock`), whose instances callers reach through fields.
    pub class: Option<String>,
    /// 1-based line of the acquisition inside it.
    pub line: usize,
    /// Which caller argument is the key, when the key is built from a parameter.
    pub key_param: Option<(usize, String)>,
    /// The caller's block / callback / `with` body runs under the lock.
    pub guard: bool,
    /// The function returns the lock or the try-acquire's result.
    pub returns: bool,
    /// The function returns a lock object untaken (`return r.lock(name)`):
    /// a caller takes it with one of these methods or a guard.
    #[serde(default)]
    pub object: Option<ObjectMethods>,
    /// A parameter whose literal value turns the lock off (`global_scope=False`
    /// takes a local lock instead): index, name, and the value that does.
    #[serde(default)]
    pub switch: Option<(usize, String, bool)>,
    /// A subclass's copy of its base class's wrapper (see [`inherited`]),
    /// called through the subclass's name from elsewhere.
    #[serde(default)]
    pub inherited: bool,
    /// The acquisition inside, as a template for the callers' sites: resolved
    /// in the wrapper's own file, with nothing that indexes its model.
    pub site: LockSite,
}

impl Wrapper {
    /// The class a subclass elsewhere may extend to inherit this wrapper:
    /// an inherited copy's class only passes it on to callers by name, so
    /// looking for files that name it (every `XMapper` of a project whose
    /// `BaseMapperX` locks) would re-read the project for nothing new.
    pub fn base_class(&self) -> Option<&String> {
        self.class.as_ref().filter(|_| !self.inherited)
    }

    /// The words a file that may use this wrapper holds: its name (a
    /// caller) or the class it is inherited from (a subclass).
    pub fn words(&self) -> impl Iterator<Item = &String> {
        std::iter::once(&self.name).chain(self.base_class())
    }
}

/// The parameters a caller passes (not `self` / `cls`).
fn params_without_self(f: &Function, language: Language) -> Vec<&str> {
    let own = profile(language).self_params;
    f.params
        .iter()
        .skip(usize::from(f.receiver))
        .map(|p| p.name.as_str())
        .filter(|n| !own.contains(n))
        .collect()
}

/// Methods that run a function value (`fn.call()`, `task.run()`,
/// `action.apply(x)`, Ruby `block.call`).
const INVOKE_METHODS: &[&str] = &["call", "run", "apply", "accept", "invoke", "execute"];

/// Words of parameter types that hold a function (`Supplier<T>`,
/// `Callable<T>`, `() => Promise<T>`, Go `func() error`, `Callback`).
const FUNCTION_TYPES: &[&str] = &[
    "Supplier",
    "Callable",
    "Runnable",
    "Function",
    "BiFunction",
    "Consumer",
    "BiConsumer",
    "Callback",
    "Action",
    "Fn",
    "FnOnce",
    "FnMut",
    "Proc",
    "func",
    "Func",
];

/// Does `recv.method(..)` run parameter `recv` of `f` as a callback? A
/// method that invokes a function value, or any method of a parameter typed
/// as one (`supplier.get()`); `order.getId()` on a data parameter does not.
fn runs_callback(f: &Function, recv: &str, method: &str) -> bool {
    let Some(param) = f.params.iter().find(|p| p.name == recv) else {
        return false;
    };
    INVOKE_METHODS.contains(&method)
        || param.ty.as_deref().is_some_and(|t| {
            t.contains("=>")
                || t.split(|c: char| !c.is_alphanumeric())
                    .any(|w| FUNCTION_TYPES.contains(&w))
        })
}

/// What a function does that makes its locks a helper's: computed once per
/// function with a lock site, so that a file of many sites stays linear.
struct Shape<'f> {
    params: Vec<&'f str>,
    /// The last call of a parameter (a callback run under the lock).
    last_param_call: Option<usize>,
    /// The last `yield` (Python, Ruby, JavaScript generators).
    last_yield: Option<usize>,
    exits: Vec<&'f Exit>,
    conditionals: Vec<&'f Conditional>,
    named: bool,
}

impl<'f> Shape<'f> {
    fn new(fa: &'f FileAnalysis, f: &'f Function) -> Shape<'f> {
        let model = fa.model;
        let params = params_without_self(f, model.language);
        let last_param_call = model
            .calls_in(Some(f.id))
            .filter(|c| {
                params.contains(&c.callee.as_str())
                    || c.receiver
                        .as_deref()
                        .and_then(|r| r.as_name())
                        .is_some_and(|r| runs_callback(f, r, &c.name))
            })
            .map(|c| c.span.start)
            .max();
        let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        let last_yield = fa.text.get(f.span.start..f.span.end).and_then(|t| {
            t.match_indices("yield")
                .filter(|(i, w)| {
                    !word(t[..*i].chars().next_back()) && !word(t[i + w.len()..].chars().next())
                })
                .map(|(i, _)| f.span.start + i)
                // "writers yield instead of waiting" in a comment yields nothing.
                .filter(|&at| {
                    let i = model.comments.partition_point(|c| c.span.end <= at);
                    model.comments.get(i).is_none_or(|c| c.span.start > at)
                })
                .last()
        });
        // The method's own name: every method of a `LeaseManager` is not a lock helper.
        // A row-lock helper says so (`FindForUpdate`, `get_for_share`): its lock
        // outlives it in the caller's transaction.
        let words = resolve::words(simple_name(&f.name));
        let named = words.iter().any(|w| {
            fa.catalog.lock_words.contains(w)
                || matches!(
                    w.as_str(),
                    "acquire" | "lock" | "locked" | "locking" | "reserve"
                )
        }) || words
            .windows(2)
            .any(|w| w[0] == "for" && matches!(w[1].as_str(), "update" | "share"));
        Shape {
            params,
            last_param_call,
            last_yield,
            exits: model.exits_in(Some(f.id)).collect(),
            conditionals: model.conditionals_in(Some(f.id)).collect(),
            named,
        }
    }

    /// Does the function look like a lock helper for `site`, beyond merely
    /// containing a lock? (helper, runs a callback / yields under it, returns
    /// the handle or result).
    fn helper(&self, fa: &FileAnalysis, site: &LockSite) -> (bool, bool, bool) {
        let calls_param = self.last_param_call.is_some_and(|at| at > site.span.start);
        // A Ruby block is part of its call: `with_advisory_lock!(k) do yield end`.
        let yields = self.last_yield.is_some_and(|at| at > site.span.start);
        let guard = calls_param || yields;
        let result = fa.model.call(site.result_call).usage.bound_names();
        let returns = self.exits.iter().any(|e| {
            e.span.contains(site.span)
                || result
                    .iter()
                    .copied()
                    .chain(site.handle.as_deref())
                    .any(|n| mentions(&e.value, n))
        });
        (self.named || guard || returns, guard, returns)
    }

    /// A parameter that turns the lock off before it is taken (`if not
    /// global_scope: return local_lock(..)`): its index among the caller's
    /// arguments, its name, and whether a true value (else a false one) skips.
    fn switch(&self, site: &LockSite) -> Option<(usize, String, bool)> {
        self.conditionals.iter().find_map(|c| {
            let before = c.stmt.end <= site.span.start;
            let leaves = self
                .exits
                .iter()
                .any(|e| e.kind == crate::model::ExitKind::Return && c.stmt.contains(e.span));
            if !before || !leaves {
                return None;
            }
            let cond = c
                .text
                .trim()
                .trim_start_matches('(')
                .trim_end_matches(')')
                .trim();
            let (name, on) = match cond.strip_prefix("not ").or(cond.strip_prefix('!')) {
                Some(name) => (name.trim(), false),
                None => (cond, true),
            };
            let i = self.params.iter().position(|p| *p == name)?;
            Some((i, name.to_string(), on))
        })
    }

    /// Is the acquisition taken only when a parameter says so
    /// (`if for_update: q = q.with_for_update()`)? Then a call locks nothing
    /// unless its caller asks, which the call's arguments decide, not the helper.
    fn on_request(&self, site: &LockSite) -> bool {
        self.conditionals.iter().any(|c| {
            c.stmt.contains(site.span)
                && !c.cond.contains(site.span)
                && self.params.iter().any(|p| mentions(&c.text, p))
        })
    }
}

/// The calls after `call` in its function that release what it took through
/// the same object (`this.countLock.acquire()` ... `this.countLock.release()`,
/// `storage.lockFragment()` ... `storage.releaseFragment()`).
fn receiver_releases<'m>(model: &'m FileModel, call: &'m Call) -> impl Iterator<Item = &'m Call> {
    let recv = call.receiver.as_deref();
    model.calls_in(call.func).filter(move |c| {
        c.span.start > call.span.end
            && recv.is_some_and(|recv| c.receiver.as_deref().is_some_and(|r| r.text == recv.text))
            && resolve::words(&c.name)
                .iter()
                .any(|w| matches!(w.as_str(), "release" | "unlock"))
    })
}

/// Does `f` release what a wrapper call `site` took through the same object?
/// Wrapper call sites pair no release of their own.
fn releases_receiver(model: &FileModel, f: &Function, site: &LockSite) -> bool {
    let call = model.call(site.call);
    site.via.is_some() && call.func == Some(f.id) && receiver_releases(model, call).next().is_some()
}

/// The section a wrapper call holds its lock over when no body runs under
/// it: up to the release through the same object, else to the end of the
/// caller (`a.service.Lock(); defer a.service.Unlock(); ...`: a deferred
/// release runs when the function returns).
fn held_section(model: &FileModel, call: &Call) -> Span {
    let release =
        receiver_releases(model, call).find(|c| !model.inside(c.span, &[GuardKind::Defer]));
    let end = match (release, call.func) {
        (Some(release), _) => release.span.end,
        (None, Some(f)) => model.functions[f].span.end,
        (None, None) => call.span.end,
    };
    Span {
        start: call.span.start,
        end: end.max(call.span.end),
    }
}

/// Is `site` a transaction-scoped lock taken inside a transaction block that
/// `f` itself runs (so it ends before `f` returns)?
fn ends_inside(fa: &FileAnalysis, f: &Function, site: &LockSite) -> bool {
    matches!(site.ttl, Ttl::Scoped(Scope::Transaction))
        && fa.model.calls_in(Some(f.id)).any(|c| {
            c.id != site.call
                && c.span.contains(site.span)
                && fa.catalog.transaction_methods.contains(&c.name)
        })
}

/// The wrappers a file defines.
pub fn summarize(fa: &FileAnalysis, path: &Path, line_of: impl Fn(usize) -> usize) -> Vec<Wrapper> {
    let mut out = Vec::new();
    let mut named: HashSet<&str> = HashSet::new();
    let mut shapes: HashMap<FuncId, Shape> = HashMap::new();
    for site in &fa.sites {
        let Some(func) = site.func else { continue };
        let f = &fa.model.functions[func];
        let shape = shapes.entry(func).or_insert_with(|| Shape::new(fa, f));
        if shape.on_request(site) {
            continue;
        }
        let (helper, guard, returns) = shape.helper(fa, site);
        // Above a wrapper call, only a lock-named function or one running a
        // callback under the lock is a helper: a handler that returns a
        // helper's result is the helper's caller, not a helper itself.
        let helper = helper && (site.via.is_none() || shape.named || guard);
        // `return sequelize.transaction(async t => { ..findOne({lock: true}).. })`:
        // the row lock ends with the transaction, inside; callers hold nothing.
        if !shape.named && !guard && ends_inside(fa, f, site) {
            continue;
        }
        let keyed = key_param(f, fa.model.language, site).is_some();
        // A call site must add something the wrapper's own site lacks: the
        // caller's key, the caller's code under the lock, the handle or
        // result, or a lock still held when the wrapper returns. A job that
        // takes and drops a fixed lock inside is reported there, once.
        let released_here = site
            .releases
            .iter()
            .any(|&r| fa.releases.get(r).is_some_and(|r| f.span.contains(r.span)));
        let held = !site.guarded && !released_here && !releases_receiver(fa.model, f, site);
        let adds = guard || returns || keyed || held;
        if !helper || !adds || !named.insert(simple_name(&f.name)) {
            continue;
        }
        let mut w = Wrapper {
            guard: guard || site.guarded && !returns,
            returns,
            switch: shape.switch(site),
            ..wrapper(fa, path, f, site, line_of(site.span.start))
        };
        // Released before it returns (`await_for_lock`: acquire, release, return
        // whether it was free): what it returns grants nothing to test.
        w.site.try_acquire &= !released_here;
        out.push(w);
    }
    // Factories: every function that returns a lock object untaken.
    for LockObject { site, methods } in &fa.objects {
        let Some(func) = site.func else { continue };
        let f = &fa.model.functions[func];
        if named.insert(simple_name(&f.name)) {
            let shape = shapes.entry(func).or_insert_with(|| Shape::new(fa, f));
            out.push(Wrapper {
                returns: true,
                object: Some(methods.clone()),
                switch: shape.switch(site),
                ..wrapper(fa, path, f, site, line_of(site.span.start))
            });
        }
    }
    out
}

/// The wrapper `f` of `path` is for its lock `site` (at `line`), as neither
/// a guard nor returning anything.
fn wrapper(fa: &FileAnalysis, path: &Path, f: &Function, site: &LockSite, line: usize) -> Wrapper {
    Wrapper {
        name: simple_name(&f.name).to_string(),
        language: fa.model.language.catalog_language(),
        path: path.to_path_buf(),
        stem: super::module_name(path, fa.model.language),
        dir: path.parent().map(Path::to_path_buf).unwrap_or_default(),
        class: class_of(&f.name).map(str::to_string),
        line,
        key_param: key_param(f, fa.model.language, site),
        guard: false,
        returns: false,
        object: None,
        switch: None,
        inherited: false,
        site: template(site, fa.model),
    }
}

/// Which of `f`'s parameters (index among those a caller passes, name) the
/// key of `site` is built from.
fn key_param(f: &Function, language: Language, site: &LockSite) -> Option<(usize, String)> {
    params_without_self(f, language)
        .iter()
        .enumerate()
        .find(|(_, p)| {
            mentions(&site.key_text, p) || site.key.as_ref().is_some_and(|k| mentions(&k.text, p))
        })
        .map(|(i, p)| (i, p.to_string()))
}

/// `site` as a template for calls in any file. Its expressions are resolved
/// here and detached (a call id or a local name of this file would be looked
/// up in the caller's model); spans, handles, releases and effects, which
/// describe this file's text, are dropped. `call`/`result_call`/`span`/`func`
/// are set by each call site.
fn template(site: &LockSite, model: &FileModel) -> LockSite {
    let here = |e: &Expr| resolve::resolve(model, e, site.func).detached(Span::default());
    let mut t = site.clone();
    t.key = site.key.as_ref().map(here);
    t.owner = None;
    t.ttl = match &site.ttl {
        Ttl::Given(e) => Ttl::Given(e.as_ref().map(here)),
        other => other.clone(),
    };
    t.wait = match &site.wait {
        Wait::Given(e) => Wait::Given(here(e)),
        other => other.clone(),
    };
    t.span = Span::default();
    t.section = Span::default();
    t.func = None;
    t.separate_expire = None;
    t.releases = Vec::new();
    t.handle = None;
    t.effects = Vec::new();
    t.class_evidence = Vec::new();
    t
}

/// The last segment of a qualified name: `lock` of `Billing.lock`.
fn simple_name(qualified: &str) -> &str {
    qualified.rsplit(['.', ':']).next().unwrap_or(qualified)
}

/// The class a qualified method name belongs to: `Billing` of `Billing.run`,
/// `ResourceLocker` of `ResourceLocker::lock_resource`.
pub(super) fn class_of(qualified: &str) -> Option<&str> {
    let mut parts = qualified.rsplit(['.', ':']).filter(|p| !p.is_empty());
    parts.next()?;
    parts.next()
}

/// Does `call` run a transaction-scoped lock on a connection pool
/// (`q.ClaimJobs(ctx, r.pool)`)? Each statement then commits alone: the row
/// lock ends with the statement inside the wrapper, and the caller holds
/// nothing.
fn on_pool(call: &Call, site: &LockSite) -> bool {
    matches!(site.ttl, Ttl::Scoped(Scope::Transaction))
        && call.args.iter().any(|a| {
            let last = a.value.text.rsplit(['.', ':']).next().unwrap_or_default();
            last.to_ascii_lowercase().ends_with("pool")
        })
}

/// Lock sites for the calls of wrappers in one file; the calls of factory
/// wrappers that are returned untaken go to `objects`.
pub fn sites_for_calls(
    model: &FileModel,
    path: &Path,
    wrappers: &[Wrapper],
    sites: &mut Vec<LockSite>,
    objects: &mut Vec<LockObject>,
) {
    for call in &model.calls {
        let Some((_, w)) = wrappers
            .iter()
            .filter_map(|w| Some((calls_wrapper(model, path, call, w)?, w)))
            .min_by_key(|(strength, _)| std::cmp::Reverse(*strength))
        else {
            continue;
        };
        // The wrapper's own body is not a call of itself.
        if path == w.path
            && call
                .func
                .is_some_and(|f| simple_name(&model.functions[f].name) == w.name)
        {
            continue;
        }
        if on_pool(call, &w.site) || switched_off(call, w) {
            continue;
        }
        let use_ = match &w.object {
            Some(methods) => match taken(model, call, methods) {
                Some(t) => Some(t),
                None => continue,
            },
            None => None,
        };
        let key = match &w.key_param {
            Some((i, name)) => call.keyword(name).or_else(|| call.positional(*i)).cloned(),
            // Fixed inside the wrapper (already detached): shown at the call.
            None => w.site.key.as_ref().map(|k| Expr {
                span: call.span,
                ..k.clone()
            }),
        };
        let key_text = key
            .as_ref()
            .map(|k| resolve::key_text(model, k, call.func))
            .unwrap_or_default();
        let body = model
            .blocks
            .iter()
            .find(|b| {
                (b.kind == GuardKind::Closure && call.span.contains(b.span))
                    || (b.kind == GuardKind::With
                        && b.span.start >= call.span.end
                        && b.parent == Some(call.block))
            })
            .map(|b| b.span);
        let mut site = w.site.clone();
        site.evidence.insert(
            0,
            format!(
                "calls `{}`, which acquires a {} lock at {}:{}",
                w.name,
                w.site.library,
                w.path.display(),
                w.line
            ),
        );
        site.api = format!("wrapper {}", w.name);
        site.call = call.id;
        site.result_call = call.id;
        site.span = call.span;
        site.func = call.func;
        site.key = key;
        site.key_text = key_text;
        site.guarded = w.guard;
        site.try_acquire = w.returns && w.site.try_acquire;
        site.via = Some(format!("{}:{}", w.path.display(), w.line));
        site.section = body.unwrap_or_else(|| held_section(model, call));
        site.separate_expire = None;
        site.releases = Vec::new();
        site.expects_release = false;
        site.handle = None;
        site.owner = None;
        match (use_, &w.object) {
            (Some(Taken::Guard), _) => site.guarded = true,
            // Already a site of its own (a typed lock object: `mutex.Lock()` on a
            // `*concurrency.Mutex`, `lock.tryLock(..)` on an `RLock` the factory
            // returned): the factory's call gives it the key it could not see.
            (Some(Taken::By(c)), _) if sites.iter().any(|s| s.call == c.id) => {
                for own in sites
                    .iter_mut()
                    .filter(|s| s.call == c.id && s.key.is_none())
                {
                    own.key = site.key.clone();
                    own.key_text = site.key_text.clone();
                    own.via = site.via.clone();
                    own.api = site.api.clone();
                    own.section = held_section(model, c);
                    own.evidence.insert(0, site.evidence[0].clone());
                }
                continue;
            }
            (Some(Taken::By(c)), Some(methods)) => {
                site.call = c.id;
                site.result_call = c.id;
                site.span = c.span;
                site.command = c.name.clone();
                site.try_acquire = w.site.try_acquire || methods.trying.contains(&c.name);
                site.section = held_section(model, c);
            }
            (Some(Taken::Returned), Some(methods)) => {
                objects.push(LockObject {
                    site,
                    methods: methods.clone(),
                });
                continue;
            }
            _ => {}
        }
        sites.push(site);
    }
}
