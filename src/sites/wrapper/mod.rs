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

mod callbacks;
mod calls;
mod classes;
mod connection;
mod decorators;
mod inherit;
mod objects;
mod releases;
mod shape;

use super::lock_durations::null_parameter;
use super::{resolve, FileAnalysis, LockObject, LockSite, ObjectMethods, Ttl, Wait};
use crate::catalog::{Catalog, Scope};
use crate::lang::profile::profile;
use crate::model::{
    mentions, CallId, Expr, ExprKind, FileModel, FuncId, Function, GuardKind, Language, Span,
};
pub(crate) use calls::related;
use calls::{calls_wrapper, class_import};
pub use calls::{distinctive, may_call, module_spellings};
use classes::{constructed_as, forwards_arguments, released_by_another_method};
pub use inherit::inherited;
use objects::{switched_off, taken, Taken};
pub use releases::paired_releases;
use releases::{held_section, releases_receiver};
use shape::{params_without_self, passed_params, Shape};

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
    /// The options entry callers pass the callback in (`run: evaluate`).
    #[serde(default)]
    pub callback_entry: Option<String>,
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
    /// The switch's parameter defaults to the value that turns the lock off
    /// (`shared_task=True` handed on as `shared=shared_task`): only a call
    /// that passes the other value takes it.
    #[serde(default)]
    pub off_by_default: bool,
    /// Which caller argument is the connection the locking statement runs
    /// on (`db` of `db.QueryRow(ctx, lockRow, id)`), when it is a parameter.
    #[serde(default)]
    pub conn_param: Option<usize>,
    /// The bases of `class` declared in the project (an interface, an
    /// abstract class), as which callers may hold an instance of it.
    #[serde(default)]
    pub bases: Vec<String>,
    /// A subclass's copy of its base class's wrapper (see [`inherited`]),
    /// called through the subclass's name from elsewhere.
    #[serde(default)]
    pub inherited: bool,
    /// How many arguments a call passes, where the language fixes it (Rust,
    /// Go; no variadic parameter): a call passing another number
    /// (`nodes.lock()` beside `lock(resource, val, ttl)`) is not it.
    #[serde(default)]
    pub arity: Option<usize>,
    /// The parameter the wait bound is passed in (index among those a caller
    /// passes, name) when it defaults to null (`timeout=None`): a call that
    /// leaves it out waits as the library does with no bound.
    #[serde(default)]
    pub wait_param: Option<(usize, String)>,
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

    /// Is `other` this same method (file, class and name)? `Node::lock` and
    /// `Quorum::lock` of one file are two wrappers.
    pub fn same_as(&self, other: &Wrapper) -> bool {
        self.path == other.path && self.name == other.name && self.class == other.class
    }

    /// The words a file that may use this wrapper holds: its name (a
    /// caller) or the class it is inherited from (a subclass).
    pub fn words(&self) -> impl Iterator<Item = &String> {
        std::iter::once(&self.name).chain(self.base_class())
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
    // One wrapper per method: `Node::lock` and `Quorum::lock` are two.
    let mut named: HashSet<(Option<&str>, String)> = HashSet::new();
    let mut shapes: HashMap<FuncId, Shape> = HashMap::new();
    for site in &fa.sites {
        let Some(func) = site.func else { continue };
        let f = &fa.model.functions[func];
        // `@exclusive(LOCK)` puts the decorated function under the lock its
        // factory's inner function takes: the factory is the helper.
        let factory = decorators::factory(fa.model, f, site);
        let f = factory.unwrap_or(f);
        let shape = shapes.entry(f.id).or_insert_with(|| Shape::new(fa, f));
        let default_switch = shape.default_switch(site);
        if shape.on_request(fa, site) && default_switch.is_none() {
            continue;
        }
        let (helper, guard, returns, kept) = shape.helper(fa, site);
        let (helper, guard) = (helper || factory.is_some(), guard || factory.is_some());
        // Above a wrapper call, only a lock-named function, one declared to
        // return a lock, one running a callback under the lock, one that
        // keeps the lock in its object, or one of the same name that hands the call on (a repository's
        // `PollJobs` returning its queries' `PollJobs`) is a helper: a
        // handler that returns a helper's result is the helper's caller, not
        // a helper itself.
        let delegates = site.via.is_some()
            && (fa.model.calls.get(site.call)).is_some_and(|c| c.name == simple_name(&f.name));
        let helper = helper
            && (site.via.is_none()
                || shape.named
                || shape.returns_lock
                || guard
                || kept
                || delegates);
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
        // A constructor that returns with its lock held hands it to the object
        // it builds: building the class (`TaskManager(..)`, `new Lease(..)`,
        // `Lease.new(..)`) takes the lock, and the caller holds it.
        let built = constructed_as(fa.model.language, f)
            .filter(|_| held && released_by_another_method(fa, f));
        let (built, name) = match built {
            Some(class) => (true, class),
            None => (false, simple_name(&f.name).to_string()),
        };
        let refusal = held && shape.answers(fa, site);
        let (helper, returns) = (helper || built || refusal, returns || built || refusal);
        let adds = guard || returns || keyed || held;
        if !helper || !adds || !named.insert((class_of(&f.name), name.clone())) {
            continue;
        }
        let handed_on = shape.handed_on(site);
        let mut w = Wrapper {
            name,
            guard: guard || site.guarded && !returns,
            returns,
            // A switch handed on by name belongs to the helper's parameter or
            // to none; a forwarded one (`*args`) keeps the wrapper's own.
            switch: (shape.switch(site).or(default_switch))
                .or_else(|| handed_on.as_ref().map(|(switch, _)| switch.clone()))
                .or_else(|| {
                    let call = fa.model.calls.get(site.call)?;
                    site.switch.clone().filter(|_| forwards_arguments(call))
                }),
            off_by_default: handed_on.is_some_and(|(_, off)| off),
            callback_entry: shape.callback_entry.filter(|_| guard).map(str::to_string),
            ..wrapper(fa, path, f, site, line_of(site.span.start))
        };
        // Released before it returns (`await_for_lock`: acquire, release, return
        // whether it was free): what it returns grants nothing to test. A
        // constructor hands back the object, not whether the lock was granted.
        w.site.try_acquire &= !released_here && !built;
        out.push(w);
    }
    // Factories: every function that returns a lock object untaken.
    for LockObject { site, methods } in &fa.objects {
        let Some(func) = site.func else { continue };
        let f = &fa.model.functions[func];
        if named.insert((class_of(&f.name), simple_name(&f.name).to_string())) {
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
        bases: project_bases(fa.model, path, class_of(&f.name)),
        line,
        key_param: key_param(f, fa.model.language, site),
        conn_param: connection::param(f, fa.model, site),
        guard: false,
        callback_entry: None,
        returns: false,
        object: None,
        switch: None,
        off_by_default: false,
        inherited: false,
        arity: arity(f, fa.model.language),
        wait_param: wait_param(f, fa.model.language, site),
        site: template(site, fa.model),
    }
}

/// The number of arguments every call of `f` passes, if its language fixes
/// it and it has no variadic parameter (Go's `args ...string`).
pub(super) fn arity(f: &Function, language: Language) -> Option<usize> {
    let params: Vec<_> = passed_params(f, language).collect();
    let variadic = (params.iter()).any(|p| p.ty.as_deref().is_some_and(|t| t.contains("...")));
    (profile(language).exact_arity && !variadic).then_some(params.len())
}

/// The bases of `class` declared in the project, which callers may hold an
/// instance as (`MySemaphore sem = factory.create(..)` for `class
/// MyCuratorSemaphore extends MySemaphore`): not imported (the same package),
/// imported relatively, or from a package whose folders hold `path`. A
/// library's base (`java.util.concurrent.locks.Lock`) is every lock's. None
/// where nothing declares a type (Ruby: every `< BaseService` file would be
/// read for callers no receiver can show).
fn project_bases(model: &FileModel, path: &Path, class: Option<&str>) -> Vec<String> {
    let typed = profile(model.language).declared_types;
    let Some(bases) = class.and_then(|c| model.supers.get(c)).filter(|_| typed) else {
        return Vec::new();
    };
    let dir = path
        .parent()
        .map(|d| d.to_string_lossy().replace('\\', "/"))
        .unwrap_or_default();
    let declared_here = |base: &String| {
        class_import(model, base).is_none_or(|i| {
            let folder = i.path.replace("::", "/").replace('.', "/");
            let folder = folder.rsplit_once('/').map_or("", |(f, _)| f);
            i.path.starts_with('.') || (!folder.is_empty() && dir.contains(folder))
        })
    };
    bases.iter().filter(|b| declared_here(b)).cloned().collect()
}

/// The parameter of `f` (index among those a caller passes, name) that
/// `site`'s wait bound is, when it defaults to null.
fn wait_param(f: &Function, language: Language, site: &LockSite) -> Option<(usize, String)> {
    let name = site.wait_param.as_deref()?;
    passed_params(f, language)
        .enumerate()
        .find(|(_, p)| p.name == name)
        .map(|(i, p)| (i, p.name.clone()))
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
/// describe this file's text, are dropped, and so is a wait decided at this
/// call (`wait_at_call`: a retry loop here is this call's LA105, not its
/// callers'). `call`/`result_call`/`span`/`func` are set by each call site.
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
    t.wait_at_call = false;
    t.effects = Vec::new();
    t.class_evidence = Vec::new();
    t
}

/// How many folders apart two files are.
fn distance(a: &Path, b: &Path) -> usize {
    let shared = a
        .components()
        .zip(b.components())
        .take_while(|(x, y)| x == y)
        .count();
    a.components().count() + b.components().count() - 2 * shared
}

/// The last segment of a qualified name: `lock` of `Billing.lock`.
pub(super) fn simple_name(qualified: &str) -> &str {
    qualified.rsplit(['.', ':']).next().unwrap_or(qualified)
}

/// The class a qualified method name belongs to: `Billing` of `Billing.run`,
/// `ResourceLocker` of `ResourceLocker::lock_resource`.
pub(super) fn class_of(qualified: &str) -> Option<&str> {
    let mut parts = qualified.rsplit(['.', ':']).filter(|p| !p.is_empty());
    parts.next()?;
    parts.next()
}

/// How a file calls a wrapper: written as a call, passed by reference, or
/// named by a callback registration.
#[derive(Clone, Copy)]
enum Written {
    Call,
    Reference,
    Registration,
}

/// Lock sites for the calls of wrappers in one file; the calls of factory
/// wrappers that are returned untaken go to `objects`.
pub fn sites_for_calls(
    model: &FileModel,
    (path, text): (&Path, &str),
    (wrappers, catalog): (&[Wrapper], &Catalog),
    sites: &mut Vec<LockSite>,
    objects: &mut Vec<LockObject>,
) {
    let wrappers = calls::visible(path, model, text, wrappers);
    // The calls already sites of their own (a library's), looked up per call.
    let mut known: HashSet<CallId> = sites.iter().map(|s| s.call).collect();
    let next = objects::Successors::new();
    let registered = callbacks::registered(model, &catalog.callback_registrations);
    let names: HashSet<&str> = (wrappers.iter())
        .filter(|w| calls::distinctive(w))
        .map(|w| w.name.as_str())
        .collect();
    let referenced = callbacks::referenced(model, &names);
    let calls = (model.calls.iter().map(|c| (c, Written::Call)))
        .chain(referenced.iter().map(|c| (c, Written::Reference)))
        .chain(registered.iter().map(|c| (c, Written::Registration)));
    for (call, written) in calls {
        let matches = |w: &Wrapper| match written {
            Written::Call => calls_wrapper(model, path, call, w),
            // `self.lock` may be a field as well as a method: only a method
            // whose name says more than one word is taken for one.
            Written::Reference => {
                calls_wrapper(model, path, call, w).filter(|_| calls::distinctive(w))
            }
            Written::Registration => callbacks::registers(model, path, call, w),
        };
        let Some((_, w)) = wrappers
            .iter()
            .filter_map(|w| Some((matches(w)?, w)))
            // Equally strong: the nearest file (`admin/` calls `admin/`'s `BaseController`).
            .min_by_key(|(strength, w)| (std::cmp::Reverse(*strength), distance(path, &w.path)))
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
        if connection::holds_nothing(model, call, w) || switched_off(call, w) {
            continue;
        }
        let use_ = match &w.object {
            Some(methods) => match taken(model, &next, call, methods) {
                Some(t) => Some(t),
                None => continue,
            },
            None => None,
        };
        let key = match &w.key_param {
            Some((i, name)) => (call.keyword(name).or_else(|| call.positional(*i)))
                .map(|k| callbacks::options_entry(k, name, &w.site.key_text))
                .cloned(),
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
        // An options entry the wrapper runs (`run: async () => ..`) is the section.
        let entry = callbacks::callback_entry(call, w);
        let within = entry.map_or(call.span, |e| e.span);
        let body = model
            .blocks
            .iter()
            .find(|b| {
                (b.kind == GuardKind::Closure && within.contains(b.span))
                    || (b.kind == GuardKind::With
                        && b.span.start >= call.span.end
                        && b.parent == Some(call.block))
            })
            .map(|b| b.span);
        let mut site = w.site.clone();
        // The wrapper's wait bound, a parameter defaulting to null: this
        // call bounds the wait, leaves that to its own caller, or leaves it out.
        site.wait_param = None;
        if let Some((i, name)) = &w.wait_param {
            let given = call.keyword(name).or_else(|| call.positional(*i));
            let value = given.map(|g| resolve::resolve(model, g, call.func));
            let handed_on = value
                .filter(|v| null_parameter(model, call, v))
                .and_then(|v| v.peel().as_name());
            match (value, handed_on) {
                (_, Some(param)) => site.wait_param = Some(param.to_string()),
                (Some(v), None) if !matches!(v.peel().kind, ExprKind::Null) => {
                    site.wait = Wait::Given(v.clone());
                }
                _ => {
                    site.wait_at_call = true;
                    site.evidence.push(format!(
                        "leaves out `{name}` of `{}`, which then waits with no bound",
                        w.name
                    ));
                }
            }
        }
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
        site.returns_result = w.returns;
        site.via = Some(format!("{}:{}", w.path.display(), w.line));
        site.handed = false;
        // `TaskManager(context, *args, **kwargs)`: the enclosing function's
        // callers pass what turns the wrapper off.
        // `shared=shared_task`: a parameter of the caller's decides; the
        // enclosing helper maps it to its own (`Shape::handed_on`).
        site.switch = w.switch.clone().and_then(|(i, name, on)| {
            if forwards_arguments(call) {
                return Some((i, name, on));
            }
            let arg = call
                .keyword(&name)
                .or_else(|| call.positional(i))?
                .as_name()?;
            let param_around =
                (model.functions_around(call.span)).any(|f| f.params.iter().any(|p| p.name == arg));
            param_around.then(|| (i, arg.to_string(), on))
        });
        // `@exclusive(LOCK)` above `def cleanup`: the decorated function runs
        // under it; so does a function of this file passed by name as the
        // callback (`runCronJob('cleanup', cleanup)`).
        site.held_over = model.decorated_by(call.span).or_else(|| {
            body.is_none()
                .then(|| callbacks::named_callback(model, call, w, entry))
                .flatten()
        });
        site.section = (body.or(site.held_over.map(|f| model.functions[f].span)))
            .unwrap_or_else(|| held_section(model, call));
        // `around_action :lock_order, only: [:update]`: the actions run inside.
        site.runs_around = match written {
            Written::Registration => callbacks::actions(model, catalog, model.call(call.id)),
            _ => Vec::new(),
        };
        site.expects_release = false;
        match (use_, &w.object) {
            (Some(Taken::Guard), _) => site.guarded = true,
            // Already a site of its own (a typed lock object: `mutex.Lock()` on a
            // `*concurrency.Mutex`, `lock.tryLock(..)` on an `RLock` the factory
            // returned): the factory's call gives it the key it could not see.
            (Some(Taken::By(c)), _) if known.contains(&c.id) => {
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
                if !methods.statement {
                    site.command = c.name.clone();
                }
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
            // A call the catalog already knows (redsync's own `mutex.Lock()`
            // beside its `Mutex.Lock` method) is that site, not a second one.
            _ if known.contains(&site.call) => continue,
            _ => {}
        }
        known.insert(site.call);
        sites.push(site);
    }
}
