//! What runs in a critical section: the section's own calls, and the bodies
//! of the same-file functions and local closures it calls, a few levels down.

use super::{resolve, LockSite};
use crate::model::{Call, FileModel, FuncId, GuardKind, Span};

/// How deep [`section_calls`] follows same-file functions calling each other
/// (`order.lock(() => recordPaypalCapture(..))` → `recordTransaction(..)` →
/// `models.Transaction.create..(..)`).
const SAME_FILE_DEPTH: usize = 3;

/// The calls that run in `site`'s critical section: the section itself, plus
/// the bodies of same-file functions it calls, and of those they call, up to
/// [`SAME_FILE_DEPTH`] levels, each body once. Each with where in the section
/// it runs: its own span, or the span of the section's call that leads to the
/// function it is in (so "after the check" compares places in the section).
pub fn section_calls<'m>(model: &'m FileModel, site: &LockSite) -> Vec<(&'m Call, Span)> {
    let direct: Vec<&Call> = model
        .calls_starting_in(site.held_over.or(site.func), site.section)
        .into_iter()
        // A block form's body lies inside the acquiring call; otherwise the
        // call's own arguments are not part of the section.
        .filter(|c| {
            site.section.contains(c.span)
                && (site.span.contains(site.section) || !site.span.contains(c.span))
        })
        .collect();
    let mut out: Vec<(&Call, Span)> = direct.iter().map(|c| (*c, c.span)).collect();
    // The actions a registered callback runs around (`around_action`).
    out.extend(
        (site.runs_around.iter())
            .flat_map(|&f| model.calls_in(Some(f)))
            .map(|c| (c, site.span)),
    );
    let mut seen: std::collections::HashSet<FuncId> = (site.func.into_iter())
        .chain(site.held_over)
        .chain(site.runs_around.iter().copied())
        .collect();
    let mut level: Vec<(&Call, Span)> = out.clone();
    let mut seen_closures: std::collections::HashSet<Span> = std::collections::HashSet::new();
    for _ in 0..SAME_FILE_DEPTH {
        let mut next = Vec::new();
        for (c, at) in level {
            // A closure the function keeps in a local (`const refresh = async () =>
            // { .. }` then `refresh()`): its body.
            if let Some(body) = local_closure(model, c).filter(|b| seen_closures.insert(*b)) {
                next.extend(
                    (model.calls_in(c.func).filter(|i| body.contains(i.span))).map(|i| (i, at)),
                );
                continue;
            }
            let Some(f) = on_own_object(model, c)
                .then(|| model.function_named(&c.name))
                .flatten()
            else {
                continue;
            };
            if !seen.insert(f.id) {
                continue;
            }
            next.extend(model.calls_in(Some(f.id)).map(|inner| (inner, at)));
        }
        out.extend(next.iter().copied());
        level = next;
    }
    out
}

/// The body of the closure a bare call runs when its function bound that
/// name to one before the call (`const refresh = async () => { .. }`).
fn local_closure(model: &FileModel, call: &Call) -> Option<Span> {
    if call.receiver.is_some() || call.func.is_none() {
        return None;
    }
    let bound = model.lookup(&call.name, call.func, call.span.start)?;
    (model.blocks.iter())
        .find(|b| b.kind == GuardKind::Closure && b.span == bound.value.span)
        .map(|b| b.span)
}

/// Is `call` a call of a function of this file's own scope: a bare call, or
/// a method on the object itself (`self._apply()`, `this.save()`, Go's
/// `r.flush()` on the method's receiver)? `cache.updateFragment()` on
/// another object is not, whatever this file defines under that name.
pub fn on_own_object(model: &FileModel, call: &Call) -> bool {
    call.receiver
        .as_deref()
        .is_none_or(|r| resolve::is_self(model, call.func, &r.text))
}
