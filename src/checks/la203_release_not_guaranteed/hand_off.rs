//! A lock handed on for release elsewhere, but caught before the hand-off.

use super::RULE;
use crate::catalog::Scope;
use crate::checks::Finding;
use crate::lang::profile::profile;
use crate::model::{mentions, ExitKind};
use crate::sites::{FileAnalysis, LockSite, Ttl};

/// `lock.tryLock()` then `holder.setLock(lock)`, both in a `try` whose
/// `catch` logs and leaves: whoever the lock is handed to releases it, but
/// an exception before the hand-off is caught there and nothing does.
pub(super) fn caught_before_hand_off(fa: &FileAnalysis, site: &LockSite) -> Option<Finding> {
    let model = fa.model;
    // A transaction's lock ends with it, whatever the handler does.
    if matches!(site.ttl, Ttl::Scoped(Scope::Transaction)) {
        return None;
    }
    let call = model.call(site.call);
    let held = (site.handle.as_deref())
        .or_else(|| call.receiver.as_deref().and_then(|r| r.peel().as_name()))?;
    // The same variable: a sibling branch's `lock` is bound anew.
    let bound = |at: usize| model.lookup(held, site.func, at).map(|a| a.span);
    let hand_off = model.calls_in(site.func).find(|c| {
        c.span.start > site.span.end
            && bound(c.span.start) == bound(site.span.start)
            && !fa.catalog.log_methods.contains(&c.name)
            && c.args
                .iter()
                .any(|a| a.value.peel().as_name() == Some(held))
    })?;
    // Something that may raise runs first (a getter of the holder counts;
    // the refused branch's way out, `if (!locked) { requeue(); return; }`,
    // does not).
    let risky = model.calls_in(site.func).any(|c| {
        c.id != hand_off.id
            && c.span.start >= site.span.end
            && c.span.end <= hand_off.span.end
            && !fa.catalog.log_methods.contains(&c.name)
            && !model.on_way_out(c.span, site.func, hand_off.span)
    });
    if !risky {
        return None;
    }
    let handler = model.handlers.iter().find(|h| {
        h.covers.contains(site.span) && h.covers.contains(hand_off.span) && {
            // The clause itself: what runs when it catches.
            let raise_calls = profile(model.language).raise_calls;
            let rethrows = (model.exits_in(site.func))
                .any(|e| e.kind == ExitKind::Raise && h.span.contains(e.span))
                || (model.calls_in(site.func))
                    .any(|c| h.span.contains(c.span) && raise_calls.contains(&c.name.as_str()));
            // `lock.release()`, `release(lock)`: anything done with the lock.
            let releases = (model.calls_in(site.func)).any(|c| {
                h.span.contains(c.span)
                    && (c.args.iter().any(|a| mentions(&a.value.text, held))
                        || (c.receiver.as_deref()).is_some_and(|r| mentions(&r.text, held)))
            });
            !rethrows && !releases
        }
    })?;
    let f = Finding::new(
        &RULE,
        site.span,
        format!(
            "lock {} is handed on only after calls that may raise, and the handler that catches them never releases it",
            site.key_display()
        ),
    )
    .site(site)
    .label(hand_off.span, "handed on here")
    .label(handler.span, "caught here: the lock stays held")
    .help("release the lock in the handler, or hand it on before anything that may raise");
    Some(f)
}
