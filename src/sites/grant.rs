//! What an `acquires: now` call hands back and who gives it back: a future
//! of the grant that must be awaited (jetcd), and a release on the same
//! manager in another function that names the same key.

use std::collections::HashMap;

use super::slots::slot_values;
use super::{LockSite, Wait};
use crate::catalog::LockSpec;
use crate::model::{Call, CallId, FileModel};

/// Does the release `c` name the key the acquisition `call` took, written
/// the same? The key is read from both calls by the API's key slot (consul's
/// `Acquire(&api.KVPair{Key: kvKey, ..})` and `Release(&api.KVPair{Key: kvKey,
/// Session: id})`), else from the release's first argument (`unlock(NODE)`).
pub(super) fn same_key(model: &FileModel, spec: &LockSpec, call: &Call, c: &Call) -> bool {
    let Some(slot) = spec.key.as_ref() else {
        return false;
    };
    let Some(key) = slot_values(model, call, slot).into_iter().next() else {
        return false;
    };
    let released = slot_values(model, c, slot)
        .into_iter()
        .next()
        .or_else(|| c.positional(0).cloned());
    released.is_some_and(|r| squeezed(&r.text) == squeezed(&key.text))
}

/// The manager a call is made on, as written: its last two segments
/// (`client.KV()`), so that `l.client.KV()` in the acquiring method and
/// `l.leaser.client.KV()` in its lease's `Close` are the same client.
pub(super) fn manager(receiver: &str) -> String {
    let receiver = squeezed(receiver);
    let mut parts = receiver.rsplitn(3, '.');
    match (parts.next(), parts.next()) {
        (Some(last), Some(before)) => format!("{before}.{last}"),
        _ => receiver,
    }
}

/// `text` without its whitespace: a chain split over lines (`client\n  .getLockClient()`)
/// is the same receiver as written on one.
pub(super) fn squeezed(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

/// A future of the grant (`lockClient.lock(name, lease)`): awaited in the
/// chain (`.get()`, `.join()` wait forever; `.get(timeout, unit)` is bounded)
/// it is a blocking acquire; otherwise the caller goes on at once, so the
/// future itself is the result to check (LA104 when nobody reads it).
pub(super) fn awaited(
    model: &FileModel,
    next: &HashMap<CallId, CallId>,
    call: &Call,
    site: &mut LockSite,
) {
    let wait = next
        .get(&call.id)
        .map(|&id| model.call(id))
        .filter(|c| matches!(c.name.as_str(), "get" | "join"));
    match wait {
        Some(c) => {
            site.try_acquire = false;
            site.wait = match c.positional(0) {
                Some(timeout) => Wait::Given(timeout.clone()),
                None => Wait::Forever,
            };
        }
        None => {
            site.try_acquire = true;
            site.wait = Wait::NotApplicable;
        }
    }
}
