//! Calls that look like a library's lock method but were not counted: the
//! file imports the library and the call fits the method's arguments, yet
//! nothing shows its receiver is the library's client. `audit --verbose`
//! lists them, so a user can see why a lock is missing from the inventory
//! (and bind, annotate or name the client so that it counts).

use std::collections::HashSet;

use super::command::{fits, match_api};
use super::slots::slot_values;
use super::{receiver, FileAnalysis};
use crate::catalog::{ApiKind, LockSpec};
use crate::model::{CallId, Span};

/// The near misses of one file: method calls of an imported library's lock
/// method (`acquire`, `lock`, `tryLock`) that are not sites, with what the
/// call looked like and what was missing.
pub fn find(fa: &FileAnalysis) -> Vec<(Span, String)> {
    let (model, catalog) = (fa.model, fa.catalog);
    let sites: HashSet<CallId> = fa.sites.iter().map(|s| s.call).collect();
    let mut out = Vec::new();
    for call in &model.calls {
        let Some(recv) = call.receiver.as_deref() else {
            continue;
        };
        if sites.contains(&call.id) {
            continue;
        }
        let looks_like = catalog
            .candidates(model.language, &call.name)
            .iter()
            .map(|&id| &catalog.apis[id])
            .find(|api| {
                // The key, where the method takes one (`lock(key, ttl)`, not a mutex's `lock()`).
                let keyed = |spec: &LockSpec| {
                    (spec.key.as_ref()).is_none_or(|k| !slot_values(model, call, k).is_empty())
                };
                matches!(&api.kind, ApiKind::Lock(spec) if keyed(spec))
                    && api.methods.contains(&call.name)
                    && receiver::imported(model, catalog.library_of(api))
                    && fits(model, api, call)
            });
        let Some(api) = looks_like else { continue };
        // A file that defines the method itself calls its own code.
        let own = model
            .functions
            .iter()
            .any(|f| f.name.rsplit(['.', ':']).next() == Some(call.name.as_str()));
        if own || match_api(model, catalog, call).is_some() {
            continue;
        }
        let lib = catalog.library_of(api);
        let why = format!(
            "`{}.{}(..)` looks like {}'s `{}` (the file imports it), but nothing shows `{}` is \
             its client: bind it to a constructor, annotate its type, or name it like one; not \
             counted",
            recv.text, call.name, lib.name, call.name, recv.text
        );
        out.push((call.span, why));
    }
    out
}
