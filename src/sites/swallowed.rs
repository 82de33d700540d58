//! Acquisitions whose failure a handler swallows: `try { m = await lock(k) }
//! catch (e) { logger.error(e) }` and the work after it runs whether or not
//! the lock was granted.

use super::{FileAnalysis, LockSite};
use crate::lang::profile::profile;
use crate::model::{Call, FileModel, Span};

/// Does the handler send the loser away (`raise LockFailed`, `return False`)?
/// One that only logs and goes on (a health check's test insert) claims nothing.
pub(super) fn leaves(model: &FileModel, call: &Call, handler: Span) -> bool {
    let raises = profile(model.language).raise_calls;
    model.exits_in(call.func).any(|e| handler.contains(e.span))
        || model.calls_in(call.func).any(|c| {
            c.receiver.is_none() && raises.contains(&c.name.as_str()) && handler.contains(c.span)
        })
}

/// Is `site`'s acquisition the last work of a `try` whose handler neither
/// leaves (returns, raises) nor records the failure (an assignment), while the
/// function goes on to other work after the handler (a release or a log line
/// is no work)? A `try` that holds the critical section too skips it on failure.
pub fn swallowed(fa: &FileAnalysis, site: &LockSite) -> bool {
    let model = fa.model;
    let call = model.call(site.call);
    let releases: Vec<Span> = (site.releases.iter())
        .filter_map(|&r| fa.releases.get(r).map(|r| r.span))
        .collect();
    let work_after = |end: usize| {
        model.calls_in(site.func).any(|c| {
            c.span.start > end
                && !fa.catalog.log_methods.contains(&c.name)
                && !releases
                    .iter()
                    .any(|r| r.contains(c.span) || c.span.contains(*r))
        })
    };
    // Nothing but logging follows the acquisition in the `try`: no work, and
    // no exit that leaves on success (`return true`, so what follows the
    // handler runs only on failure).
    let alone_in = |covers: Span| {
        let later = |span: Span| covers.contains(span) && span.start > call.span.end;
        !model
            .calls_in(site.func)
            .any(|c| later(c.span) && !fa.catalog.log_methods.contains(&c.name))
            && !model.exits_in(site.func).any(|e| later(e.span))
    };
    model
        .handlers
        .iter()
        .filter(|h| h.covers.contains(site.span) && alone_in(h.covers))
        .any(|h| {
            !leaves(model, call, h.span)
                && !model.assigns_in(site.func).any(|a| h.span.contains(a.span))
                && work_after(h.span.end)
        })
}
