//! A lock handed on for release elsewhere only after something that may raise.

use super::RULE;
use crate::catalog::Scope;
use crate::checks::Finding;
use crate::lang::profile::profile;
use crate::model::{mentions, Call, ExitKind, Span};
use crate::sites::resolve;

/// First words of a call that keeps what it is given for later
/// (`setSemaphorelock`, `put`, `register`).
const STORE_VERBS: &[&str] = &[
    "set", "put", "add", "store", "register", "push", "offer", "append", "attach", "keep",
];
use crate::sites::{FileAnalysis, LockSite, Ttl};

/// `lock.tryLock()` then `holder.setLock(lock)`: whoever the lock is handed
/// to releases it, but an exception before the hand-off either leaves the
/// function (no `catch`, or one that rethrows) or is caught by a `catch` that
/// logs and leaves, and nothing does.
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
    // Stored for whoever releases it (`setSemaphorelock(lock)`, `locks.add(lock)`),
    // not lent to a call that uses it.
    // The call or what it is made on names a lock (`_set_failed(task, ..)` does not).
    let stores = |c: &Call| {
        let names_lock = |t: &str| {
            let t = t.to_ascii_lowercase();
            fa.catalog.lock_words.iter().any(|w| t.contains(w.as_str()))
        };
        (resolve::words(&c.name).first()).is_some_and(|w| STORE_VERBS.contains(&w.as_str()))
            && (names_lock(&c.name) || c.receiver.as_deref().is_some_and(|r| names_lock(&r.text)))
    };
    let hand_off = model.calls_in(site.func).find(|c| {
        c.span.start > site.span.end
            && bound(c.span.start) == bound(site.span.start)
            && stores(c)
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
    // The clauses that may catch what is raised before the hand-off: one that
    // does anything with the lock (`lock.release()`, `release(lock)`) ends it.
    let covering: Vec<_> = (model.handlers.iter())
        .filter(|h| h.covers.contains(site.span) && h.covers.contains(hand_off.span))
        .collect();
    let releases = |span: Span| {
        (model.calls_in(site.func)).any(|c| {
            span.contains(c.span)
                && (c.args.iter().any(|a| mentions(&a.value.text, held))
                    || (c.receiver.as_deref()).is_some_and(|r| mentions(&r.text, held)))
        })
    };
    if covering.iter().any(|h| releases(h.span)) {
        return None;
    }
    // One that catches and leaves keeps the lock held; with none, or only
    // ones that raise again, the exception leaves the function without it.
    let raise_calls = profile(model.language).raise_calls;
    let swallows = covering.into_iter().find(|h| {
        !((model.exits_in(site.func)).any(|e| e.kind == ExitKind::Raise && h.span.contains(e.span))
            || (model.calls_in(site.func))
                .any(|c| h.span.contains(c.span) && raise_calls.contains(&c.name.as_str())))
    });
    let key = site.key_display();
    let said = match swallows {
        Some(_) => "the handler that catches them never releases it",
        None => "nothing releases it if one does",
    };
    let f = Finding::new(
        &RULE,
        site.span,
        format!("lock {key} is handed on only after calls that may raise, and {said}"),
    )
    .site(site)
    .label(hand_off.span, "handed on here");
    Some(match swallows {
        Some(handler) => f
            .label(handler.span, "caught here: the lock stays held")
            .help("release the lock in the handler, or hand it on before anything that may raise"),
        None => f.help("release the lock in a `finally` until it is handed on, or hand it on before anything that may raise"),
    })
}
