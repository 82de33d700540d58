//! Where a wrapper's caller gives the lock back: the release through the
//! same object it locked with, and the section that release ends.

use super::resolve;
use crate::model::{Call, ExprKind, FileModel, Function, GuardKind, Span};
use crate::sites::LockSite;

/// The calls after `call` in its function that release what it took through
/// the same object (`this.countLock.acquire()` ... `this.countLock.release()`,
/// `storage.lockFragment()` ... `storage.releaseFragment()`).
fn receiver_releases<'m>(model: &'m FileModel, call: &'m Call) -> Vec<&'m Call> {
    let recv = call.receiver.as_deref();
    // One object holding several locks (`storage.lockFragment()`,
    // `storage.lockStorageUnit()`): each is released by the method named
    // for the same thing (`releaseFragment()`), when there is one.
    let named = resolve::lock_object(&call.name);
    let passed = passed_methods(model, call);
    let releases: Vec<&Call> = (model.calls_in(call.func))
        .filter(|c| {
            // `retryOperation(m.applier.LockTable)` .. `retryOperation(
            // m.applier.UnlockTables)`: the same object's method passed the same way.
            let by_reference = || {
                passed_methods(model, c)
                    .iter()
                    .any(|(on, m)| passed.iter().any(|(o, _)| o == on) && resolve::gives_back(m))
            };
            if c.span.start > call.span.end && !passed.is_empty() && by_reference() {
                return !cleanup_before_raise(model, c);
            }
            c.span.start > call.span.end
                && match (recv, c.receiver.as_deref()) {
                    // `lockUser()` ... `releaseUser()`: the object itself,
                    // when the two are named for the same thing; helpers named
                    // for nothing else (`acquire_lock(lock_id=k)` ... `release_lock(lock_id=k)`)
                    // when they name the same key.
                    (None, None) if named.is_empty() => {
                        resolve::lock_object(&c.name).is_empty() && same_key(call, c)
                    }
                    (None, None) => resolve::lock_object(&c.name) == named,
                    (Some(recv), Some(r)) => r.text == recv.text,
                    _ => false,
                }
                && resolve::gives_back(&c.name)
                && !cleanup_before_raise(model, c)
        })
        .collect();
    let by_name = !named.is_empty()
        && releases
            .iter()
            .any(|c| resolve::lock_object(&c.name) == named);
    (releases.into_iter())
        .filter(|c| !by_name || resolve::lock_object(&c.name) == named)
        .collect()
}

/// The methods `call` passes by reference (Go method values: `m.applier.LockTable`),
/// each as (its object, its name).
fn passed_methods<'c>(model: &FileModel, call: &'c Call) -> Vec<(&'c str, &'c str)> {
    if !crate::lang::profile::profile(model.language).method_references {
        return Vec::new();
    }
    (call.args.iter())
        .filter_map(|a| match &a.value.peel().kind {
            ExprKind::Name(path) => path.rsplit_once('.'),
            _ => None,
        })
        .collect()
}

/// Do two calls pass the same first argument (`lock_id=lock_id`, `key`)?
fn same_key(a: &Call, b: &Call) -> bool {
    match (a.args.first(), b.args.first()) {
        (Some(x), Some(y)) => x.value.text == y.value.text,
        _ => false,
    }
}

/// Is `release` the cleanup of a failure: the next thing its function does
/// is `raise` / `throw` (`except: self.release_resources(); raise`)? On
/// success the lock is still held.
fn cleanup_before_raise(model: &FileModel, release: &Call) -> bool {
    let after = release.span.end;
    let Some(next) = model
        .exits_in(release.func)
        .filter(|e| e.span.start >= after)
        .min_by_key(|e| e.span.start)
    else {
        return false;
    };
    let between = |at: usize| at > after && at < next.span.start;
    next.kind == crate::model::ExitKind::Raise
        && !model.calls_in(release.func).any(|c| between(c.span.start))
        && !model
            .assigns_in(release.func)
            .any(|a| between(a.span.start))
        && !model
            .conditionals_in(release.func)
            .any(|c| between(c.stmt.start))
}

/// The calls that end what a wrapper call `site` holds (`storage.lockFragment()`
/// ... `storage.releaseFragment()`, `Semaphore.lock(..)` ... `Semaphore.release(..)`):
/// a wrapper's caller releases through the object it locked with, not
/// through a key the file can pair.
pub fn paired_releases<'m>(model: &'m FileModel, site: &LockSite) -> Vec<&'m Call> {
    if site.via.is_none() || site.guarded {
        return Vec::new();
    }
    // A release in a callback the section defines (`const release = async () =>
    // { await Semaphore.release(mutex) }`) runs when that is called, not here.
    let later = |c: &Call| {
        model
            .enclosing(c.span, &[GuardKind::Closure])
            .is_some_and(|b| !b.span.contains(site.span))
    };
    receiver_releases(model, model.call(site.call))
        .into_iter()
        .filter(|c| !later(c))
        .collect()
}

/// Does `f` release what a wrapper call `site` took through the same object?
/// Wrapper call sites pair no release of their own.
pub(super) fn releases_receiver(model: &FileModel, f: &Function, site: &LockSite) -> bool {
    let call = model.call(site.call);
    site.via.is_some() && call.func == Some(f.id) && !receiver_releases(model, call).is_empty()
}

/// The section a wrapper call holds its lock over when no body runs under
/// it: up to the release through the same object, else to the end of the
/// caller (`a.service.Lock(); defer a.service.Unlock(); ...`: a deferred
/// release runs when the function returns).
pub(super) fn held_section(model: &FileModel, call: &Call) -> Span {
    // A release in a closure the function keeps for later (`const release =
    // async () => Semaphore.release(mutex)`) ends nothing where it is written.
    let kept = |c: &Call| {
        (model.blocks.iter()).any(|b| {
            b.kind == GuardKind::Closure && b.span.contains(c.span) && !b.span.contains(call.span)
        })
    };
    let release = (receiver_releases(model, call).into_iter()).find(|c| {
        !model.inside(c.span, &[GuardKind::Defer])
            && !kept(c)
            && !model.on_way_out(c.span, c.func, call.span)
    });
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
