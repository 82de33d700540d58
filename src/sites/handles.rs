//! Library lock objects reached through their declared type: a struct field
//! `mutex *redsync.Mutex` made in one method and locked in another
//! (`l.mutex.LockContext(ctx)`), a parameter `RLock lock`, an injected field.
//! The catalog names a lock object's types (`handle-types`); an
//! `acquire-methods` call on a receiver declared with one is the acquisition,
//! wherever the object was made. Its key is not in sight: the site names the
//! receiver.

use super::library::{acquire_method, Binding, Ctx};
use super::{LockSite, Release};
use crate::catalog::{ApiKind, Catalog, LockSpec};
use crate::model::{Call, FileModel};

/// Does the declared type `ty` (`*redsync.Mutex`, `final RLock`, `Arc<Mutex>`)
/// name `handle` (`redsync.Mutex`, `RLock`): are the handle's segments the
/// last segments of one of the type's names?
fn declares(ty: &str, handle: &str) -> bool {
    let want: Vec<&str> = handle.split(['.', ':']).filter(|s| !s.is_empty()).collect();
    ty.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.' || c == ':'))
        .map(|name| {
            name.split(['.', ':'])
                .filter(|s| !s.is_empty())
                .collect::<Vec<_>>()
        })
        .any(|have| have.ends_with(&want))
}

/// The types `call`'s receiver is declared with: a local or parameter of its
/// function, or a field (declared in a type, or assigned through `self.x`).
fn receiver_types<'m>(model: &'m FileModel, call: &Call) -> Vec<&'m str> {
    let Some(recv) = call.receiver.as_deref().and_then(|r| r.as_name()) else {
        return Vec::new();
    };
    let last = recv.rsplit(['.', ':']).next().unwrap_or(recv);
    let field = recv.contains('.') || recv.contains("::");
    let mut out: Vec<&str> = model
        .assigns
        .iter()
        .filter(|a| {
            let declared = a.func.is_none() || a.target.contains('.');
            let named = a.target.rsplit(['.', ':']).next() == Some(last);
            named && (declared || (!field && a.func == call.func))
        })
        .filter_map(|a| a.ty.as_deref())
        .collect();
    if !field {
        out.extend(
            model
                .function_param(call.func, recv)
                .and_then(|p| p.ty.as_deref()),
        );
    }
    out
}

/// Adds the sites of acquire calls on typed lock objects not already sites,
/// and their releases on the same receiver.
pub fn analyze(
    model: &FileModel,
    catalog: &Catalog,
    sites: &mut Vec<LockSite>,
    releases: &mut Vec<Release>,
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
        if !declared_types.any(|ty| spec.handle_types.iter().any(|h| declares(ty, h))) {
            continue;
        }
        for call in &model.calls {
            let Some(method) = acquire_method(spec, call) else {
                continue;
            };
            let typed = receiver_types(model, call)
                .iter()
                .any(|ty| spec.handle_types.iter().any(|h| declares(ty, h)));
            if !typed || sites.iter().any(|s| s.call == call.id) {
                continue;
            }
            let cx = Ctx {
                contention_error: api.contention_error,
                model,
                lib,
                api_id: &api.id,
                spec,
                evidence: format!("the receiver is declared as {}", spec.handle_types[0]),
            };
            let mut site = cx.site(call, call, Some(method), call.span);
            site.key = None;
            site.key_text = String::new();
            site.handle = call.receiver.as_deref().map(|r| r.text.clone());
            let index = sites.len();
            sites.push(site);
            pair_releases(model, spec, &cx, call, index, sites, releases);
        }
    }
}

/// The object's releases: a release method on the same receiver, anywhere in
/// the file for a field, in the function for a local.
fn pair_releases(
    model: &FileModel,
    spec: &LockSpec,
    cx: &Ctx,
    acquire: &Call,
    index: usize,
    sites: &mut [LockSite],
    releases: &mut Vec<Release>,
) {
    let object = Binding::on(model, acquire);
    for c in &model.calls {
        let checked = spec.release_methods.contains(&c.name);
        let unchecked = spec.unchecked_release_methods.contains(&c.name);
        if (checked || unchecked) && object.is_receiver_of(model, c) {
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

    #[test]
    fn declared_types() {
        assert!(declares("*redsync.Mutex", "redsync.Mutex"));
        assert!(declares("final RLock", "RLock"));
        assert!(declares("Arc<redsync.Mutex>", "redsync.Mutex"));
        assert!(!declares("*sync.Mutex", "redsync.Mutex"));
        assert!(!declares("Mutex", "redsync.Mutex"));
        assert!(!declares("RLockFactory", "RLock"));
    }
}
