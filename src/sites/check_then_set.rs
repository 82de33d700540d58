//! A lock made of three plain cache calls on one client: `if cache.get(k):
//! raise AlreadyRunning` then `cache.set(k, 1, timeout)`, and later
//! `cache.delete(k)` (Django's cache, an in-house Redis cache provider's
//! `has` / `set(k, true, 120)` / `delete`). The test and the set are two round
//! trips, so two callers can both find the key free; the value is the same for
//! every holder; the delete gives back whoever's key is there.
//!
//! All three must be there, on the same client and key: the test guarding an
//! exit before the set, the set storing a constant with an expiry, a delete of
//! the key somewhere in the file. Without the delete it is a cooldown window
//! left to expire; without the expiry an in-memory map's `set(k, v)`; with a
//! computed value a cache filled on a miss.

use std::collections::HashMap;

use super::{resolve, LockSite, Release, SiteKind, Ttl, Wait};
use crate::catalog::{Catalog, CheckThenSet};
use crate::model::{mentions, Call, Expr, ExprKind, FileModel};

/// The library name such sites and releases carry: no catalog library's.
const LIBRARY: &str = "check-then-set";

pub fn analyze(
    model: &FileModel,
    catalog: &Catalog,
    sites: &mut Vec<LockSite>,
    releases: &mut Vec<Release>,
) {
    let spec = &catalog.check_then_set;
    // The deletes first, by client and key: most files have none, and
    // without one there is no lock.
    let mut deletes: HashMap<(&str, String), Vec<&Call>> = HashMap::new();
    for c in (model.calls.iter()).filter(|c| spec.delete_methods.contains(&c.name)) {
        let (Some(receiver), Some(key)) = (c.receiver.as_deref(), c.positional(0)) else {
            continue;
        };
        let key_text = resolve::key_text(model, key, c.func);
        if !key_text.is_empty() {
            deletes
                .entry((&receiver.text, key_text))
                .or_default()
                .push(c);
        }
    }
    if deletes.is_empty() {
        return;
    }
    for set in model
        .calls
        .iter()
        .filter(|c| spec.set_methods.contains(&c.name))
    {
        let Some(receiver) = set.receiver.as_deref().map(|r| r.text.as_str()) else {
            continue;
        };
        let Some((key, value, ttl)) = arguments(model, spec, set) else {
            continue;
        };
        // A literal every holder stores alike (`1`, `true`, `"running"`).
        if !resolve::resolve(model, value, set.func).is_literal() {
            continue;
        }
        let key_text = resolve::key_text(model, key, set.func);
        let Some(gives_back) = deletes.get(&(receiver, key_text.clone())) else {
            continue;
        };
        // Deleted only when the work fails (`.catch(() => cache.delete(k))`):
        // a debounce window left to expire when all goes well.
        let released = gives_back.iter().any(|d| !model.on_failure(d));
        if !released || sites.iter().any(|s| s.span.contains(set.span)) {
            continue;
        }
        let Some(test) = tested_first(model, spec, set, receiver, &key_text) else {
            continue;
        };
        let i = sites.len();
        let mut site = LockSite {
            library: LIBRARY.into(),
            backend: "cache".into(),
            api: LIBRARY.into(),
            command: "SET".into(),
            key: Some(key.clone()),
            key_text: key_text.clone(),
            owner: Some(value.clone()),
            ttl: Ttl::Given(Some(ttl.clone())),
            wait: Wait::NoWait,
            evidence: vec![format!(
                "`{}` is tested before `{}` stores a constant with an expiry, and `{}` deletes the key: a check-then-set lock (two round trips: two callers can both find it free)",
                test.callee, set.callee, gives_back[0].callee
            )],
            ..LockSite::base(set.id, set.span, set.func, SiteKind::Command)
        };
        for delete in gives_back.iter().copied() {
            site.releases.push(releases.len());
            releases.push(Release {
                library: LIBRARY.into(),
                call: delete.id,
                span: delete.span,
                command: "DEL".into(),
                key: delete.positional(0).cloned(),
                key_text: key_text.clone(),
                owner_checked: false,
                site: Some(i),
                lock_evidence: format!("deletes the key `{}` set after testing it", set.callee),
                func: delete.func,
                script_name: None,
                racy_get: None,
            });
        }
        sites.push(site);
    }
}

/// The key, value and expiry `set` is given: by position (`set(k, v, 120)`),
/// by name (`set(key=k, value=v, timeout=t)`), or from a dict spread into it
/// (`set(**params)`, `params = {"key": k, "value": 1, "timeout": t}`).
fn arguments<'m>(
    model: &'m FileModel,
    spec: &CheckThenSet,
    set: &'m Call,
) -> Option<(&'m Expr, &'m Expr, &'m Expr)> {
    let named = |name: &str| -> Option<&'m Expr> {
        set.keyword(name).or_else(|| {
            let spread = set.args.iter().find(|a| a.value.text.starts_with("**"))?;
            let bound = spread.value.text.trim_start_matches('*');
            let value = model.lookup(bound, set.func, set.span.start)?;
            match &value.value.peel().kind {
                ExprKind::Map(pairs) => pairs
                    .iter()
                    .find(|(k, _)| k.as_str().or(k.as_name()) == Some(name))
                    .map(|(_, v)| v),
                _ => None,
            }
        })
    };
    // A spread (`**params`, `...opts`) is no positional argument.
    let positional = |i: usize| {
        (set.args.iter())
            .filter(|a| a.name.is_none() && !a.value.text.starts_with(['*', '.']))
            .nth(i)
            .map(|a| &a.value)
    };
    let key = positional(0).or_else(|| named("key"))?;
    let value = positional(1).or_else(|| named("value"))?;
    let ttl = positional(2).or_else(|| {
        (spec.expiry_keywords.iter()).find_map(|k| named(k).filter(|e| !e.is_nullish()))
    })?;
    Some((key, value, ttl))
}

/// The test of the key on the same client before `set`, in the same
/// function, whose branch leaves (`if cache.get(k): raise ..`, `is_running =
/// cache.get(k)` then `if is_running: return`, `if (await cache.has(k))
/// return null`).
fn tested_first<'m>(
    model: &'m FileModel,
    spec: &CheckThenSet,
    set: &Call,
    receiver: &str,
    key_text: &str,
) -> Option<&'m Call> {
    let exits: Vec<_> = model.exits_in(set.func).collect();
    model.calls_in(set.func).find(|t| {
        let same_key = || {
            t.receiver.as_deref().is_some_and(|r| r.text == receiver)
                && t.positional(0)
                    .is_some_and(|k| resolve::key_text(model, k, t.func) == key_text)
        };
        if t.span.end > set.span.start || !spec.test_methods.contains(&t.name) || !same_key() {
            return false;
        }
        let bound = t.usage.bound_names();
        model.conditionals_in(set.func).any(|c| {
            c.stmt.end <= set.span.start
                && (c.cond.contains(t.span)
                    || c.stmt.start >= t.span.end && bound.iter().any(|n| mentions(&c.text, n)))
                && exits.iter().any(|e| c.stmt.contains(e.span))
        })
    })
}
