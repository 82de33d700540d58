//! Calls that look like a library's lock method but were not counted: the
//! call fits the method's arguments, and the file imports the library or the
//! key names a lock, yet nothing shows its receiver is the library's client. `audit --verbose`
//! lists them, so a user can see why a lock is missing from the inventory
//! (and bind, annotate or name the client so that it counts).

use std::collections::HashSet;

use super::command::{fits, match_api};
use super::slots::slot_values;
use super::{lock_words, receiver, resolve, FileAnalysis};
use crate::catalog::{Api, ApiKind};
use crate::model::{CallId, Span};

/// The near misses of one file: method calls of a library's lock method
/// (`acquire`, `lock`, `tryLock`) with some evidence that are not sites, with
/// what the call looked like and what was missing.
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
        // Some evidence: the file imports the library, or the key names a lock
        // (`lock("job-lock:#{id}", ttl)` in a Ruby file Bundler gave the gem).
        let hint = |api: &Api| -> Option<String> {
            let ApiKind::Lock(spec) = &api.kind else {
                return None;
            };
            // The key, where the method takes one (`lock(key, ttl)`, not a mutex's `lock()`).
            let key = match &spec.key {
                Some(slot) => Some(slot_values(model, call, slot).into_iter().next()?),
                None => None,
            };
            if !api.methods.contains(&call.name) || !fits(model, api, call) {
                return None;
            }
            if receiver::imported(model, catalog.library_of(api)) {
                return Some("the file imports it".into());
            }
            let key = key?;
            let text = resolve::key_text(model, &key, call.func);
            lock_words(catalog, &[&text]).map(|w| format!("its key names a {w}"))
        };
        let looks_like = (catalog.candidates(model.language, &call.name).iter())
            .find_map(|&id| Some((&catalog.apis[id], hint(&catalog.apis[id])?)));
        let Some((api, hint)) = looks_like else {
            continue;
        };
        // A file that defines the method itself calls its own code.
        if model.function_named(&call.name).is_some() || match_api(model, catalog, call).is_some() {
            continue;
        }
        let lib = catalog.library_of(api);
        let why = format!(
            "`{}.{}(..)` looks like {}'s `{}` ({hint}), but nothing shows `{}` is its client: \
             bind it to a constructor, annotate its type, or name it like one; not counted",
            recv.text, call.name, lib.name, call.name, recv.text
        );
        out.push((call.span, why));
    }
    out
}
