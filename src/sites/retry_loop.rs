//! A try-acquire retried in a loop that nothing bounds waits as long as a
//! blocking acquire with no timeout (LA105's "a retry loop with no
//! deadline"): `while (!acquired) { acquired = tryLock(); sleep(1000); }`,
//! `loop { match lock().await { Ok(l) => return Ok(l), Err(_) => continue } }`.
//!
//! The loop must repeat (a `while`, `loop`, Go's bare `for`), not walk a
//! collection; it must end on a grant (the acquisition is its condition, a
//! `return` / `break` follows it, or its head reads what the loop sets), so a
//! worker's poll loop that tries a lock each turn is not one; and nothing may
//! bound it: no clock read in it and no bound word (`deadline`, `attempts`,
//! `ctx`; the catalog's `retry-bounds`) in its head, its conditions or its calls.

use super::{first_word, LockSite, Wait};
use crate::catalog::Catalog;
use crate::model::{mentions, ExitKind, FileModel, GuardKind, Loop, Span};

/// Marks each site retried in an unbounded loop as waiting forever. A wrapper's
/// call (`self.lock(..)` in `acquire_no_guard`) is then this call's LA105.
pub fn mark(model: &FileModel, catalog: &Catalog, sites: &mut [LockSite]) {
    if !model.loops.iter().any(|l| l.repeats) {
        return;
    }
    for site in sites.iter_mut() {
        if matches!(site.wait, Wait::Forever) {
            continue;
        }
        let Some(l) = retried_in(model, catalog, site) else {
            continue;
        };
        site.wait = Wait::Forever;
        site.wait_at_call = site.via.is_some();
        site.evidence.push(format!(
            "retried in a loop (`{}`) with no deadline, attempt limit or cancellation",
            l.head
        ));
    }
}

/// The unbounded loop that retries `site`'s acquisition, if there is one.
fn retried_in<'m>(model: &'m FileModel, catalog: &Catalog, site: &LockSite) -> Option<&'m Loop> {
    let l = model.loop_around(site.span, site.func, 0)?;
    // A closure between the loop and the acquisition (a callback per item)
    // runs on its own terms.
    let in_closure = (model.enclosing(site.span, &[GuardKind::Closure]))
        .is_some_and(|b| l.span.contains(b.span));
    if !l.repeats || in_closure {
        return None;
    }
    // It stops on a grant: the acquisition is its condition (`while
    // (!lock.tryLock())`), a `return` / `break` follows it, or the head reads
    // something the loop sets after it (`acquired = rs.getBoolean(1)`).
    let after = |s: Span| l.span.contains(s) && s.start >= site.span.start;
    let in_head = site.span.end <= l.body;
    let leaves = (model.exits_in(site.func))
        .any(|e| after(e.span) && matches!(e.kind, ExitKind::Return | ExitKind::Break));
    let head_reads_it =
        (model.assigns_in(site.func)).any(|a| after(a.span) && mentions(&l.head, &a.target));
    if !(in_head || leaves || head_reads_it) {
        return None;
    }
    let bound = |text: &str| first_word(&catalog.retry_bounds, &[text]).is_some();
    // The acquisition's own arguments and chain (`SetNX(ctx, ..).Result()`)
    // bound one attempt, not the loop.
    let own = |s: Span| site.span.contains(s) || s.contains(site.span);
    let bounded = bound(&l.head)
        || (model.conditionals_in(site.func))
            .any(|c| l.span.contains(c.stmt) && !site.span.contains(c.cond) && bound(&c.text))
        || (model.calls_in(site.func))
            .filter(|c| l.span.contains(c.span) && !own(c.span))
            .any(|c| {
                catalog.clock_reads.contains(&c.name)
                    || bound(&c.name)
                    || c.receiver.as_deref().is_some_and(|r| bound(&r.text))
            });
    (!bounded).then_some(l)
}
