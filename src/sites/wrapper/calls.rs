//! Which calls are calls of a wrapper: a receiver's name, declared type or
//! constructor against the wrapper's class, imports, mixins and Go packages.

use std::path::Path;

use super::{class_of, resolve, simple_name, Wrapper};
use crate::lang::profile::profile;
use crate::model::{Assign, Call, ExitKind, Expr, FileModel, Import, Language, Span};

/// Shortest name part that may stand for a whole class name (`store` would
/// match every `*Store`).
const MIN_STEM: usize = 5;

/// Could a file at `path` in `language` call `w`, given that its text names
/// `w` as a word? The byte-level side of [`calls_wrapper`], so that pass 2
/// re-parses only such files: outside the wrapper's own file a call needs the
/// same language and either the same Go package or the wrapper's module named
/// in the text (an import path or a receiver), which `names_module` answers.
pub fn may_call(
    path: &Path,
    language: Language,
    w: &Wrapper,
    names_module: impl FnOnce() -> bool,
) -> bool {
    path != w.path
        && language.catalog_language() == w.language
        && ((profile(language).package_scope && path.parent() == Some(w.dir.as_path()))
            || names_module())
}

/// The wrappers a file may call, by the rule the scan uses to pick the files
/// to re-read ([`may_call`]): its own, or one whose name says what it does, or
/// whose module or class the file names as a whole word, in its text or in a
/// type its package declares elsewhere (a Go field of another file). The same
/// file gets the same wrapper calls whichever pass re-reads it.
pub(super) fn visible<'w>(
    path: &Path,
    model: &FileModel,
    text: &str,
    wrappers: &'w [Wrapper],
) -> Vec<&'w Wrapper> {
    let language = model.language;
    let words = std::cell::OnceCell::new();
    let words = || {
        words.get_or_init(|| {
            // Declarations bound from other files of the package have no
            // place in this file's text.
            let types = (model.assigns.iter())
                .filter(|a| a.span == Span::default())
                .filter_map(|a| a.ty.as_deref());
            std::iter::once(text)
                .chain(types)
                .flat_map(|t| t.split(|c: char| !(c.is_alphanumeric() || c == '_')))
                .filter(|w| !w.is_empty())
                .map(str::to_ascii_lowercase)
                .collect::<std::collections::HashSet<String>>()
        })
    };
    wrappers
        .iter()
        .filter(|w| {
            path == w.path
                || may_call(path, language, w, || {
                    distinctive(w)
                        || module_spellings(w)
                            .iter()
                            .any(|m| words().contains(&m.to_ascii_lowercase()))
                })
        })
        .collect()
}

/// The spellings of `w`'s module and class that [`calls_wrapper`] accepts
/// (whole words, matched case-insensitively): `rate_limit` is also the
/// receiver `RateLimit`; a `RunLocker` is reached as `runLock` or `runLocker`.
pub fn module_spellings(w: &Wrapper) -> Vec<String> {
    let mut out = vec![w.stem.clone(), w.stem.replace('_', "")];
    out.extend(w.bases.iter().cloned());
    if let Some(class) = &w.class {
        out.push(class.clone());
        let stem = type_stem(class);
        if let Some(agent) = stem.strip_suffix("er").filter(|s| s.len() >= MIN_STEM) {
            out.push(agent.to_string());
        }
        out.push(stem);
    }
    out
}

/// May a file that names `w` but none of its module's spellings still call
/// it? Only a method whose name says what it does (`lockFragment`,
/// `upgrade_lock`, `FindForUpdate`): a bare `lock` / `Lock` / `acquire` is
/// every mutex's, so its callers must name the wrapper's module or class.
/// A method running the statement its class handed the base (`executeSql`)
/// is named for running statements: its base calls it.
pub fn distinctive(w: &Wrapper) -> bool {
    w.class.is_some() && resolve::words(&w.name).len() >= 2 && !w.site.handed
}

/// Is `w` the one function of its file named so whose arity `call` has
/// (`c.lock(resource, val, ttl)` beside `Mutex::lock()` and a two-argument
/// `LockManager::lock`)? A call passing nothing is every mutex's.
fn only_of_arity(model: &FileModel, call: &Call, w: &Wrapper) -> bool {
    let n = call.args.len();
    n > 0
        && w.arity.is_some()
        && model
            .functions
            .iter()
            .filter(|f| simple_name(&f.name) == w.name)
            .filter(|f| super::arity(f, model.language).is_none_or(|a| a == n))
            .count()
            == 1
}

/// A type or variable name reduced for comparison: `IMetaStorage` ->
/// `metastorage`, `run_locker` -> `runlocker`, `RedisLockImpl` -> `redislock`.
fn type_stem(name: &str) -> String {
    let name = name.trim_start_matches(['@', '$', '*', '&', '_']);
    let b = name.as_bytes();
    // Interface spelling `IFoo` (not `IOHandler`, not `Item`).
    let name =
        if b.len() > 2 && b[0] == b'I' && b[1].is_ascii_uppercase() && b[2].is_ascii_lowercase() {
            &name[1..]
        } else {
            name
        };
    let lower: String = name
        .chars()
        .filter(|c| *c != '_')
        .collect::<String>()
        .to_ascii_lowercase();
    match lower.strip_suffix("impl") {
        Some(base) if base.len() >= MIN_STEM => base.to_string(),
        _ => lower,
    }
}

/// The package an import names by default: its path's last segment.
fn package_of(i: &crate::model::Import) -> Option<&str> {
    i.path.rsplit(['/', '.', ':']).next()
}

/// Where a receiver's declared type comes from, seen from a wrapper.
#[derive(Clone, Copy)]
enum Place {
    /// Unqualified, or the wrapper's own package.
    Home,
    /// A package whose folder holds the wrapper's (`store.SpaceStore` for `store/database`).
    Near,
    /// Any other package.
    Foreign,
}

/// Do a receiver's name or type and a wrapper's class name the same thing?
/// Equal once reduced (2: `spaceStore` / `SpaceStore`), or one a long
/// enough prefix or suffix of the other (1: `runLock` / `RunLocker`,
/// `IMetaStorage` / `ETCDMetaStorage`).
pub(crate) fn related(name: &str, class: &str) -> Option<u8> {
    let (a, b) = (type_stem(name), type_stem(class));
    let (short, long) = if a.len() <= b.len() {
        (&a, &b)
    } else {
        (&b, &a)
    };
    if short.is_empty() {
        None
    } else if a == b {
        Some(2)
    } else {
        (short.len() >= MIN_STEM
            && (long.starts_with(short.as_str()) || long.ends_with(short.as_str())))
        .then_some(1)
    }
}

/// The assignments that bind `name` where `call` is made: a local, or a
/// field declared at class level or assigned through `self.x` / `this.x`.
fn bindings<'m>(model: &'m FileModel, call: &Call, name: &'m str) -> Vec<&'m Assign> {
    let fields = model.assigns.iter().filter(|a| {
        (a.func.is_none() || a.target.contains('.'))
            && a.target.rsplit(['.', ':']).next() == Some(name)
    });
    (model.lookup(name, call.func, call.span.start).into_iter())
        .chain(fields)
        .collect()
}

/// The types `name` is declared with where `call` is made (a local, a
/// field, a parameter).
fn declared_types<'m>(model: &'m FileModel, call: &Call, name: &'m str) -> Vec<&'m str> {
    let param = model.function_param(call.func, name);
    (bindings(model, call, name).into_iter())
        .filter_map(|a| a.ty.as_deref())
        .chain(param.and_then(|p| p.ty.as_deref()))
        .collect()
}

/// The type names a declared type spells (`Map<String, lock.Mutex>`), each
/// with where its qualifier places it.
fn type_names<'m>(ty: &'m str, home: &dyn Fn(&str) -> Place) -> Vec<(&'m str, Place)> {
    ty.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.' || c == ':'))
        .filter_map(|name| {
            let mut parts = name.rsplit(['.', ':']).filter(|p| !p.is_empty());
            let last = parts.next()?;
            Some((last, parts.next().map_or(Place::Home, home)))
        })
        .collect()
}

/// The names a receiver goes by in `model`: its last segment, the types it
/// is declared with (`declared`: a local, a parameter, a field) and the
/// constructor it was built with; each with where a qualified type comes from, as `home`
/// places its qualifier (`sync.Mutex` for a wrapper of package `locking`).
fn receiver_names<'m>(
    model: &'m FileModel,
    call: &Call,
    last: &'m str,
    declared: &[(&'m str, Place)],
    home: &dyn Fn(&str) -> Place,
) -> Vec<(&'m str, Place)> {
    let mut out = vec![(last, Place::Home)];
    out.extend_from_slice(declared);
    let idents = |ty: &'m str| type_names(ty, home);
    for a in bindings(model, call, last) {
        let Some(id) = a.value.peel().as_call() else {
            continue;
        };
        // `concurrency.NewMutex(..)` is another package's constructor.
        let callee = &model.call(id).callee;
        let mut parts = callee.rsplit(['.', ':']).filter(|p| !p.is_empty()).skip(1);
        let qualifier = parts.next();
        let name = simple_name(callee);
        out.push((name, qualifier.map_or(Place::Home, home)));
        // `manager.NewMutex(..)` builds a `Mutex` of the package an import
        // names, or of the package of the type `manager` is declared with
        // (`lock.MutexManager`); a bare `NewMutex(..)` of this package.
        let built = (profile(model.language).constructor_prefix)
            .and_then(|prefix| name.strip_prefix(prefix))
            .filter(|ty| ty.starts_with(|c: char| c.is_ascii_uppercase()));
        let Some(ty) = built else {
            continue;
        };
        let imported = |q: &str| {
            (model.imports.iter())
                .any(|i| i.alias.as_deref() == Some(q) || package_of(i) == Some(q))
        };
        let place = match qualifier {
            None => Some(Place::Home),
            Some(q) if imported(q) => Some(home(q)),
            Some(q) => (declared_types(model, call, q).into_iter())
                .flat_map(idents)
                .next()
                .map(|(_, place)| place),
        };
        out.extend(place.map(|place| (ty, place)));
    }
    out
}

/// Does a class of `model` mix `module` in (Ruby `include Locking`,
/// `extend Locking`, `prepend Locking`), so its methods are called bare?
fn mixes_in(model: &FileModel, module: &str) -> bool {
    model.calls.iter().any(|c| {
        c.receiver.is_none()
            && matches!(c.name.as_str(), "include" | "extend" | "prepend")
            && c.args.iter().any(|a| a.value.text == module)
    })
}

/// Is `call` made in a method of a class that declares `class` as a base?
fn inherits(model: &FileModel, call: &Call, class: &str) -> bool {
    call.func
        .and_then(|f| class_of(&model.functions[f].name))
        .is_some_and(|own| model.extends(own, class))
}

/// A receiver that is a call, as the name it stands for: a type built on
/// the spot (`new LeaseDao(handle).tryAcquireLease(..)`), or a getter's call
/// (`getLockHandler().obtainLock(..)`): the field this file's getter returns
/// (`return lockHandler;`, whose declared type then counts), else the
/// getter's own name, a receiver known by no type.
fn stand_in<'m>(model: &'m FileModel, receiver: &'m Expr) -> Option<&'m str> {
    let g = model.call(receiver.peel().as_call()?);
    if resolve::builds_type(g) {
        return Some(&g.name);
    }
    let on_self = (g.receiver.as_deref()).is_none_or(|r| resolve::is_self(model, g.func, &r.text));
    if !g.args.is_empty() || !on_self {
        return None;
    }
    let returned = model.function_named(&g.name).and_then(|f| {
        let mut exits = model
            .exits_in(Some(f.id))
            .filter(|e| e.kind == ExitKind::Return);
        let only = exits.next().filter(|_| exits.next().is_none())?;
        let name = only
            .value
            .trim_start_matches("this.")
            .trim_start_matches("self.");
        let ident = name.chars().all(|c| c.is_alphanumeric() || c == '_');
        (ident && !name.is_empty()).then_some(name)
    });
    Some(returned.unwrap_or(&g.name))
}

/// Is `call` made in a method of a declared base of `w`'s class, calling
/// the method the subclass overrides (a template method: `executeSQL(..)` in
/// quartz's `DBSemaphore.obtainLock` runs `StdRowLockSemaphore.executeSQL`)?
fn overridden(model: &FileModel, call: &Call, w: &Wrapper) -> bool {
    call.func
        .and_then(|f| class_of(&model.functions[f].name))
        .is_some_and(|own| w.bases.iter().any(|b| b == own))
}

/// Does the class of `call`'s method (or, outside a class, the file) define
/// a method `name` of its own, which `this.name(..)` then calls?
fn defines_own(model: &FileModel, call: &Call, name: &str) -> bool {
    if model.function_named(name).is_none() {
        return false;
    }
    let class = call.func.and_then(|f| class_of(&model.functions[f].name));
    match class {
        Some(class) => model
            .functions
            .iter()
            .any(|f| class_of(&f.name) == Some(class) && simple_name(&f.name) == name),
        None => true,
    }
}

/// Is the receiver of `call` (named `last`) built by a constructor of the
/// wrapper's own package, on the spot or bound before: `dbsqlc.New().
/// LeaderAttemptElect(..)`, `q := store.NewQueries(db); q.LockJob(..)`? Go's
/// `New` returns the package's type whatever it is called, so a method of
/// that name there is the wrapper. The package is the wrapper's when the
/// import path ends with its folder (3) or with its last three folders (2: the
/// scan's root may sit above the module's); another `internal/dbsqlc` of the
/// project (one per driver) shares only its last two.
fn built_by_package(model: &FileModel, call: &Call, last: &str, w: &Wrapper) -> Option<u8> {
    // Only a method is called on what a constructor built.
    w.class.as_ref()?;
    let prefix = profile(model.language).constructor_prefix?;
    let folder: Vec<&str> = (w.dir.iter().filter_map(|d| d.to_str()))
        .filter(|d| *d != ".")
        .collect();
    let receiver = call.receiver.as_deref().and_then(|r| r.as_call());
    let bound = bindings(model, call, last)
        .into_iter()
        .filter_map(|a| a.value.as_call());
    receiver
        .into_iter()
        .chain(bound)
        .filter_map(|id| {
            let (package, function) = model.call(id).callee.rsplit_once('.')?;
            let import = model
                .imports
                .iter()
                .find(|i| i.alias.as_deref() == Some(package) || package_of(i) == Some(package))?;
            let shared = (import.path.rsplit('/'))
                .zip(folder.iter().rev())
                .take_while(|(a, b)| a == *b)
                .count();
            match shared {
                _ if !function.starts_with(prefix) => None,
                n if n == folder.len() => Some(3),
                n if n >= 3 => Some(2),
                _ => None,
            }
        })
        .max()
}

/// A call by path names the wrapper's module: Rust's `crate::queue::f(..)`,
/// `queue::f(..)` for `queue.rs` or `queue/mod.rs`.
fn path_names_module(call: &Call, w: &Wrapper) -> bool {
    let module = if w.stem == "mod" {
        w.dir.file_name().and_then(|d| d.to_str())
    } else {
        Some(w.stem.as_str())
    };
    let path = call.callee.rsplit_once("::").map(|(p, _)| p);
    path.and_then(|p| p.rsplit("::").next())
        .is_some_and(|m| Some(m) == module)
}

/// The import that brings `class` into `model` by name (`import { Runner }
/// from ..`, `from locks import Runner`, `import a.b.Runner;`).
pub(super) fn class_import<'m>(model: &'m FileModel, class: &str) -> Option<&'m Import> {
    model.imports.iter().find(|i| {
        i.alias.as_deref() == Some(class) || i.path.rsplit(['.', '/', ':']).next() == Some(class)
    })
}

/// Is `call` (in `model`, file `path`) a call of `w`, and how surely? Same
/// file, an import of it, its module as receiver or (Go) the same package
/// (3); an inherited method or a receiver whose name or type is the class
/// (2); a receiver whose name or type only resembles the class (1).
pub(super) fn calls_wrapper(
    model: &FileModel,
    path: &Path,
    call: &Call,
    w: &Wrapper,
) -> Option<u8> {
    if call.name != w.name || model.language.catalog_language() != w.language {
        return None;
    }
    // (A Go call spreading a slice, `f(keys...)`, reaches only a variadic
    // function, which has no fixed arity.)
    if w.arity.is_some_and(|n| n != call.args.len()) {
        return None;
    }
    let same_file = path == w.path;
    let receiver = call.receiver.as_deref().map(|r| r.text.as_str());
    match receiver {
        // A bare call in the subclass's file is the base's wrapper's call.
        None if w.inherited => None,
        None => (same_file
            || (profile(model.language).package_scope && path.parent() == Some(w.dir.as_path()))
            || model.imports.iter().any(|i| {
                let p = i.path.replace("::", ".").replace('/', ".");
                let named =
                    p.ends_with(&format!(".{}", w.name)) || i.alias.as_deref() == Some(&w.name);
                named && p.split('.').any(|seg| seg == w.stem)
            })
            || (profile(model.language).path_calls && path_names_module(call, w)))
        .then_some(3)
        .or_else(|| {
            // A module mixed in, or a base class's method called bare from a
            // subclass (`run_with_advisory_lock(..)` in `class X < ApplicationJob`).
            w.class
                .as_deref()
                .filter(|c| mixes_in(model, c) || inherits(model, call, c))
                .map(|_| 2)
                .or_else(|| overridden(model, call, w).then_some(2))
        }),
        Some(r) => {
            let last = call
                .receiver
                .as_deref()
                .and_then(|e| stand_in(model, e))
                .unwrap_or_else(|| r.rsplit(['.', ':']).next().unwrap_or(r))
                .trim_start_matches('@');
            let own = resolve::is_self(model, call.func, last);
            // In the subclass's own file `self.x()` is the base's wrapper's
            // call; in a subclass of the subclass it is the copy's.
            if own && w.inherited && same_file {
                return None;
            }
            if (same_file && own)
                || last.eq_ignore_ascii_case(&w.stem)
                || last.eq_ignore_ascii_case(&w.stem.replace('_', ""))
            {
                return Some(3);
            }
            if let Some(strength) = built_by_package(model, call, last, w) {
                return Some(strength);
            }
            let class = w.class.as_deref()?;
            // An unexported Go type is reached from another package only
            // through a declared (interface) type, never by a receiver's name.
            let unexported = profile(model.language).package_scope
                && class.starts_with(|c: char| c.is_ascii_lowercase())
                && path.parent() != Some(w.dir.as_path());
            // Another method of the same Go type in another file of its
            // package: `s.Lock()` in `func (s *Server) purgeMember`.
            let same_type = call
                .func
                .and_then(|f| class_of(&model.functions[f].name))
                .is_some_and(|own_class| own_class == class);
            if own
                && same_type
                && profile(model.language).package_scope
                && path.parent() == Some(w.dir.as_path())
            {
                return Some(3);
            }
            if own {
                // An inherited helper: `this.withLock(..)` in a subclass that
                // does not define its own.
                // A subclass's copy reaches only the calls of its subclasses.
                let reached = inherits(model, call, class)
                    || (!w.inherited && class_import(model, class).is_some());
                (overridden(model, call, w) || (!defines_own(model, call, &w.name) && reached))
                    .then_some(2)
            } else {
                // A type of the wrapper's package, or of a package above it (an
                // interface beside its implementation's folder) by its very name;
                // another package's type (`sync.Mutex`) never.
                let dirs: Vec<&str> = w.dir.iter().filter_map(|d| d.to_str()).collect();
                let package = |q: &str| -> String {
                    let imported = (model.imports.iter())
                        .find(|i| i.alias.as_deref() == Some(q))
                        .or_else(|| model.imports.iter().find(|i| package_of(i) == Some(q)));
                    let last = imported.and_then(package_of);
                    last.unwrap_or(q).to_string()
                };
                let home = |q: &str| {
                    let p = package(q);
                    if q.eq_ignore_ascii_case(&w.stem) || dirs.last() == Some(&p.as_str()) {
                        Place::Home
                    } else if dirs.contains(&p.as_str()) {
                        Place::Near
                    } else {
                        Place::Foreign
                    }
                };
                // A declared type or constructor outweighs the receiver's name:
                // `mutex sync.Mutex` is no `RedisMutex` whatever it is called.
                let declared: Vec<(&str, Place)> = (declared_types(model, call, last).into_iter())
                    .flat_map(|ty| type_names(ty, &home))
                    .collect();
                let names = receiver_names(model, call, last, &declared, &home);
                let known = match names.len() {
                    1 if unexported => return None,
                    1 => &names[..],
                    _ => &names[1..],
                };
                let by_name = known
                    .iter()
                    .filter_map(|&(n, place)| match place {
                        Place::Home => related(n, class),
                        Place::Near => related(n, class).filter(|s| *s == 2),
                        Place::Foreign => None,
                    })
                    .max();
                // A receiver known by no type (`cls.dbapi`, bound to a factory's result
                // `db_api.get_instance()` or set in a base class) calling a method whose
                // name says what it does (`reserve_node`, `upgrade_lock`): that method.
                // (`ReportCache.with_lock` names a class, `new CelPolicyDao(h).reconcile..`
                // builds one: not untyped.)
                let ident = |n: &str| n.chars().all(|c| c.is_alphanumeric() || c == '_');
                // A package the file imports (`rivertype.JobCancel(err)`) is no object.
                let package = |n: &str| {
                    (model.imports.iter())
                        .any(|i| i.alias.as_deref() == Some(n) || package_of(i) == Some(n))
                };
                let untyped = !(r == last && package(last))
                    && names.iter().all(|(n, _)| {
                        ident(n) && n.starts_with(|c: char| c.is_ascii_lowercase() || c == '_')
                    });
                // Declared as a base of the wrapper's class (an interface or
                // abstract class of the project; its constructor would be no
                // implementation).
                let by_base = (declared.iter())
                    .any(|&(n, place)| {
                        !matches!(place, Place::Foreign) && w.bases.iter().any(|b| b == n)
                    })
                    .then_some(2);
                by_name.max(by_base).or_else(|| {
                    (untyped && (distinctive(w) || same_file && only_of_arity(model, call, w)))
                        .then_some(1)
                })
            }
        }
    }
}
