//! A lock handed on for release elsewhere only after something that may raise.

use super::RULE;
use crate::catalog::Scope;
use crate::checks::Finding;
use crate::lang::profile::profile;
use crate::model::{mentions, Call, CallId, ExitKind, FileModel, GuardKind, Span};
use crate::sites::{resolve, writers, FileAnalysis, LockSite, Ttl};

/// First words of a call that keeps what it is given for later
/// (`setSemaphorelock`, `put`, `register`).
const STORE_VERBS: &[&str] = &[
    "set", "put", "add", "store", "register", "push", "offer", "append", "attach", "keep",
];

/// Does the acquiring function's class (or file, outside a class) give the
/// lock back in another method: through the object it was taken with, the
/// object itself (`locksmith.unlock`, `unlock_and_callback`) or what the
/// acquisition gave (`lock.release()`)?
fn given_back_elsewhere(model: &FileModel, site: &LockSite, given: &str) -> bool {
    let on = model
        .call(site.call)
        .receiver
        .as_deref()
        .map(|r| r.text.as_str());
    let class = writers::owner_of(model, site.func);
    model.calls.iter().any(|c| {
        let through = c.receiver.as_deref().map(|r| r.text.as_str());
        c.func != site.func
            && writers::owner_of(model, c.func) == class
            && resolve::gives_back(&c.name)
            && (through.is_none() || through == on || through == Some(given))
    })
}

/// Where `site`'s lock `held` leaves the function for whoever releases it:
/// a call that keeps it (its id and place), or the return handing it back.
fn hand_off_point(
    fa: &FileAnalysis,
    site: &LockSite,
    held: &str,
) -> Option<(Option<CallId>, Span)> {
    let model = fa.model;
    let call = model.call(site.call);
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
    let stored = model.calls_in(site.func).find(|c| {
        c.span.start > site.span.end
            && bound(c.span.start) == bound(site.span.start)
            && stores(c)
            && c.args
                .iter()
                .any(|a| a.value.peel().as_name() == Some(held))
    });
    // Or handed back to the caller: `return lock`, Ruby's last statement
    // `token`; what the acquisition gave, not the object it was made on.
    let given = (site.handle.as_deref()).or(call.usage.bound());
    let ends_with = given.and_then(|g| model.ends_with_name(site.func, g));
    // Only where the acquisition's own closure returns it (`go func() { .. }()`
    // does not return to the enclosing function), and only a lock the file
    // gives back elsewhere: one left to expire is no hand-off.
    let closure = model
        .enclosing(site.span, &[GuardKind::Closure])
        .map(|b| b.span);
    let returned = (model.exits_in(site.func))
        .filter(|e| e.kind == ExitKind::Return && e.span.start > site.span.end)
        .find(|e| Some(e.value.trim()) == given)
        .map(|e| e.span)
        .or(ends_with)
        .filter(|at| closure.is_none_or(|c| c.contains(*at)))
        .filter(|_| given.is_some_and(|g| given_back_elsewhere(model, site, g)));
    match (stored, returned) {
        (Some(c), _) => Some((Some(c.id), c.span)),
        (None, returned) => returned.map(|span| (None, span)),
    }
}

/// `lock.tryLock()` then `holder.setLock(lock)`: whoever the lock is handed
/// to releases it, but an exception before the hand-off either leaves the
/// function (no `catch`, or one that rethrows) or is caught by a `catch` that
/// logs and leaves, and nothing does.
pub(super) fn raised_before_hand_off(fa: &FileAnalysis, site: &LockSite) -> Option<Finding> {
    let model = fa.model;
    // A transaction's lock ends with it, whatever the handler does.
    if matches!(site.ttl, Ttl::Scoped(Scope::Transaction)) {
        return None;
    }
    let call = model.call(site.call);
    let held = (site.handle.as_deref())
        .or_else(|| call.receiver.as_deref().and_then(|r| r.peel().as_name()))?;
    let (hand_id, hand_off) = hand_off_point(fa, site, held)?;
    // Something that may raise runs first (a getter of the holder counts;
    // the refused branch's way out, `if (!locked) { requeue(); return; }`,
    // does not).
    let risky = model.calls_in(site.func).any(|c| {
        Some(c.id) != hand_id
            && c.span.start >= site.span.end
            && c.span.end <= hand_off.end
            && !fa.catalog.log_methods.contains(&c.name)
            && !model.on_way_out(c.span, site.func, hand_off)
    });
    if !risky {
        return None;
    }
    // The clauses that may catch what is raised before the hand-off: one that
    // does anything with the lock (`lock.release()`, `release(lock)`) ends it.
    let covering: Vec<_> = (model.handlers.iter())
        .filter(|h| h.covers.contains(site.span) && h.covers.contains(hand_off))
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
    .label(hand_off, "handed on here");
    Some(match swallows {
        Some(handler) => f
            .label(handler.span, "caught here: the lock stays held")
            .help("release the lock in the handler, or hand it on before anything that may raise"),
        None => f.help("release the lock in a `finally` until it is handed on, or hand it on before anything that may raise"),
    })
}
