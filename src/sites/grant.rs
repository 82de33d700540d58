//! What an `acquires: now` call hands back and who gives it back: a future
//! of the grant that must be awaited (jetcd), and a release on the same
//! manager in another function that names the same key.

use std::collections::HashMap;

use super::command::slot_values;
use super::{LockSite, Wait};
use crate::catalog::LockSpec;
use crate::model::{Call, CallId, FileModel};

/// Does the release `c` name the key the acquisition `call` took (its first
/// argument, written the same)?
pub(super) fn same_key(model: &FileModel, spec: &LockSpec, call: &Call, c: &Call) -> bool {
    let key = spec
        .key
        .as_ref()
        .and_then(|s| slot_values(model, call, s).into_iter().next());
    key.is_some_and(|k| {
        c.positional(0)
            .is_some_and(|a| squeezed(&a.text) == squeezed(&k.text))
    })
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
