//! Library lock objects reached through their declared type: a struct field
//! `mutex *redsync.Mutex` made in one method and locked in another
//! (`l.mutex.LockContext(ctx)`), a parameter `RLock lock`, an injected field.
//! The catalog names a lock object's types (`handle-types`); an
//! `acquire-methods` call on a receiver declared with one is the acquisition,
//! wherever the object was made. Its key is not in sight: the site names the
//! receiver.

use super::library::{acquire_method, Binding, Ctx};
use super::wrapper::class_of;
use super::{LockSite, Release};
use crate::catalog::{ApiKind, Catalog};
use std::collections::{HashMap, HashSet};

use crate::model::{Assign, Call, CallId, FileModel};

/// Does the declared type `ty` (`*redsync.Mutex`, `final RLock`, `Arc<Mutex>`)
/// name `handle` (`redsync.Mutex`, `RLock`): are the handle's segments the
/// last segments of one of the type's names?
fn declares(model: &FileModel, ty: &str, handle: &str) -> bool {
    let want: Vec<&str> = handle.split(['.', ':']).filter(|s| !s.is_empty()).collect();
    ty.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.' || c == ':'))
        .any(|name| {
            let have: Vec<&str> = name.split(['.', ':']).filter(|s| !s.is_empty()).collect();
            have.ends_with(&want) || imported_as(model, have).ends_with(&want)
        })
}

/// A type name spelled through an import, as the imported path: `kazoo_lock.Lock`
/// under `from kazoo.recipe import lock as kazoo_lock`, or `Lock` under `from
/// kazoo.recipe.lock import Lock`, is `kazoo.recipe.lock.Lock`.
fn imported_as<'m>(model: &'m FileModel, have: Vec<&'m str>) -> Vec<&'m str> {
    let Some(&head) = have.first() else {
        return have;
    };
    let import = model.imports.iter().find(|i| match &i.alias {
        Some(alias) => alias == head,
        None => have.len() == 1 && i.path.rsplit(['.', '/', ':']).next() == Some(head),
    });
    match import {
        Some(i) => i
            .path
            .split(['.', '/', ':'])
            .filter(|s| !s.is_empty())
            .chain(have[1..].iter().copied())
            .collect(),
        None => have,
    }
}

type Typed<'m> = HashMap<&'m str, Vec<&'m Assign>>;

fn typed_assigns(model: &FileModel) -> Typed<'_> {
    let mut out: Typed = HashMap::new();
    for a in model.assigns.iter().filter(|a| a.ty.is_some()) {
        let last = a.target.rsplit(['.', ':']).next().unwrap_or(&a.target);
        out.entry(last).or_default().push(a);
    }
    out
}

/// The types `call`'s receiver is declared with: a local or parameter of its
/// function, or a field (declared in a type, or assigned through `self.x`).
fn receiver_types<'m>(model: &'m FileModel, typed: &Typed<'m>, call: &Call) -> Vec<&'m str> {
    let Some(recv) = call.receiver.as_deref().and_then(|r| r.as_name()) else {
        return Vec::new();
    };
    let last = recv.rsplit(['.', ':']).next().unwrap_or(recv);
    let field = recv.contains('.') || recv.contains("::");
    let mut out: Vec<&str> = typed
        .get(last)
        .into_iter()
        .flatten()
        .filter(|a| {
            let declared = a.func.is_none() || a.target.contains('.');
            declared || (!field && a.func == call.func)
        })
        .filter_map(|a| a.ty.as_deref())
        .collect();
    if !field {
        out.extend(
            model
                .function_param(call.func, recv)
                .and_then(|p| p.ty.as_deref()),
        );
    } else {
        // A field set from a typed constructor parameter (`def __init__(self, lock:
        // kazoo_lock.Lock): self._lock = lock`): the parameter's type.
        // Same class only: another class's `self._lock` is another field.
        let class = |f: Option<usize>| f.and_then(|f| class_of(&model.functions[f].name));
        out.extend(model.assigns.iter().filter_map(|a| {
            let set_here = a.ty.is_none()
                && a.target.contains('.')
                && a.target.rsplit(['.', ':']).next() == Some(last)
                && class(a.func) == class(call.func);
            let param = a.value.peel().as_name().filter(|_| set_here)?;
            model.function_param(a.func, param)?.ty.as_deref()
        }));
    }
    out
}

/// The calls of `names` (release methods), by the last segment of their
/// receiver (`mutex` of `l.mutex.Unlock()`).
fn calls_by_receiver<'m>(
    model: &'m FileModel,
    names: &[String],
) -> HashMap<&'m str, Vec<&'m Call>> {
    let mut out: HashMap<&str, Vec<&Call>> = HashMap::new();
    for c in model.calls.iter().filter(|c| names.contains(&c.name)) {
        if let Some(recv) = c.receiver.as_deref().and_then(|r| r.as_name()) {
            out.entry(recv.rsplit(['.', ':']).next().unwrap_or(recv))
                .or_default()
                .push(c);
        }
    }
    out
}

/// Adds the sites of acquire calls on typed lock objects not already sites,
/// and their releases on the same receiver.
pub fn analyze(
    model: &FileModel,
    catalog: &Catalog,
    versions: &crate::manifest::Versions,
    (sites, releases): (&mut Vec<LockSite>, &mut Vec<Release>),
) {
    let language = model.language.catalog_language();
    for api in &catalog.apis {
        let ApiKind::Lock(spec) = &api.kind else {
            continue;
        };
        let lib = catalog.library_of(api);
        if spec.handle_types.is_empty() || lib.language != language {
            continue;
        }
        // Once per file: a file that declares nothing of these types has no
        // typed lock object, whatever its calls are named (`mu.Lock()`).
        let mut declared_types = model.assigns.iter().filter_map(|a| a.ty.as_deref()).chain(
            model
                .functions
                .iter()
                .flat_map(|f| f.params.iter().filter_map(|p| p.ty.as_deref())),
        );
        if !declared_types.any(|ty| spec.handle_types.iter().any(|h| declares(model, ty, h))) {
            continue;
        }
        let typed = typed_assigns(model);
        let release_names: Vec<String> = spec
            .release_methods
            .iter()
            .chain(&spec.unchecked_release_methods)
            .cloned()
            .collect();
        let released = calls_by_receiver(model, &release_names);
        let mut taken: HashSet<CallId> = sites.iter().map(|s| s.call).collect();
        for call in &model.calls {
            let Some(method) = acquire_method(spec, call) else {
                continue;
            };
            let is_typed = receiver_types(model, &typed, call)
                .iter()
                .any(|ty| spec.handle_types.iter().any(|h| declares(model, ty, h)));
            if !is_typed || !taken.insert(call.id) {
                continue;
            }
            let cx = Ctx {
                contention_error: api.contention_error,
                model,
                lib,
                api_id: &api.id,
                spec,
                evidence: format!("the receiver is declared as {}", spec.handle_types[0]),
                used: versions.get(&lib.package),
            };
            let mut site = cx.site(call, call, Some(method), call.span);
            site.key = None;
            site.key_text = String::new();
            site.handle = call.receiver.as_deref().map(|r| r.text.clone());
            let index = sites.len();
            sites.push(site);
            let candidates = call
                .receiver
                .as_deref()
                .and_then(|r| r.as_name())
                .and_then(|r| released.get(r.rsplit(['.', ':']).next().unwrap_or(r)));
            let candidates = candidates.map_or(&[][..], Vec::as_slice);
            pair_releases(&cx, call, candidates, index, sites, releases);
        }
    }
}

/// The object's releases among `candidates` (release calls on a receiver of
/// the same last name): on the same receiver, anywhere in the file for a
/// field, in the function for a local.
fn pair_releases(
    cx: &Ctx,
    acquire: &Call,
    candidates: &[&Call],
    index: usize,
    sites: &mut [LockSite],
    releases: &mut Vec<Release>,
) {
    let (model, spec) = (cx.model, cx.spec);
    let object = Binding::on(model, acquire);
    let mut on_object: Vec<&Call> = candidates
        .iter()
        .copied()
        .filter(|c| object.is_receiver_of(model, c))
        .collect();
    // A release in the acquiring function is the one that pairs; a field
    // released only elsewhere (`Unlock()` in another method) pairs with those.
    // (Also keeps a file of N lock/unlock methods on one field linear.)
    if on_object.iter().any(|c| c.func == acquire.func) {
        on_object.retain(|c| c.func == acquire.func);
    }
    for c in on_object {
        let checked = spec.release_methods.contains(&c.name);
        let unchecked = spec.unchecked_release_methods.contains(&c.name);
        if checked || unchecked {
            sites[index].releases.push(releases.len());
            releases.push(cx.release(
                c,
                None,
                checked && !unchecked && spec.owner_checked_release,
                Some(index),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::declares;
    use crate::model::{FileModel, Import, Language, Span};

    /// Any language: `declares` reads only the imports.
    fn model() -> FileModel {
        FileModel::new(Language::ALL[0], Span::default())
    }

    #[test]
    fn declared_types() {
        let m = model();
        assert!(declares(&m, "*redsync.Mutex", "redsync.Mutex"));
        assert!(declares(&m, "final RLock", "RLock"));
        assert!(declares(&m, "Arc<redsync.Mutex>", "redsync.Mutex"));
        assert!(!declares(&m, "*sync.Mutex", "redsync.Mutex"));
        assert!(!declares(&m, "Mutex", "redsync.Mutex"));
        assert!(!declares(&m, "RLockFactory", "RLock"));
    }

    #[test]
    fn declared_types_through_imports() {
        let mut m = model();
        let import = |path: &str, alias: Option<&str>| Import {
            path: path.into(),
            alias: alias.map(str::to_string),
            span: Span::default(),
        };
        m.imports
            .push(import("kazoo.recipe.lock", Some("kazoo_lock")));
        m.imports.push(import("threading.Lock", None));
        let kazoo = "kazoo.recipe.lock.Lock";
        assert!(declares(&m, "kazoo_lock.Lock", kazoo));
        assert!(declares(&m, "Optional[kazoo_lock.Lock]", kazoo));
        assert!(!declares(&m, "Lock", kazoo));
        assert!(!declares(&m, "threading.Lock", kazoo));
    }
}
