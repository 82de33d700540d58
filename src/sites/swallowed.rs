//! Acquisitions whose failure a handler swallows: `try { m = await lock(k) }
//! catch (e) { logger.error(e) }` and the work after it runs whether or not
//! the lock was granted.

use super::{FileAnalysis, LockSite};
use crate::lang::profile::profile;
use crate::model::{mentions, Call, ExitKind, FileModel, Span};

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
    // Building the value returned (`return new EnvelopeResponse<>(..)`) is no work.
    let returned = |c: &Call| {
        super::resolve::builds_type(c)
            && (model.exits_in(site.func))
                .any(|e| e.kind == ExitKind::Return && e.span.contains(c.span))
    };
    let work_after = |end: usize| {
        model.calls_in(site.func).any(|c| {
            c.span.start > end
                && !fa.catalog.log_methods.contains(&c.name)
                && !returned(c)
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
    // The result bound to a name that a test after the handler reads, where
    // the test does more than hand the handle to its release (`updateEpoch =
    // tryForce..(..)`, then `if (updateEpoch && ..) .. else throw ..`; not
    // `if (mutex) { release(mutex) }`): the failure is recorded.
    let bound = call.usage.bound_names();
    let tested_after = |end: usize| {
        let hands_on = |stmt: Span, n: &str| {
            (model.calls_in(site.func))
                .any(|c| stmt.contains(c.span) && c.args.iter().any(|a| mentions(&a.value.text, n)))
        };
        model.conditionals_in(site.func).any(|c| {
            c.stmt.start > end
                && (bound.iter()).any(|n| mentions(&c.text, n) && !hands_on(c.stmt, n))
        })
    };
    model
        .handlers
        .iter()
        .filter(|h| h.covers.contains(site.span) && alone_in(h.covers))
        .any(|h| {
            !leaves(model, call, h.span)
                && !model.assigns_in(site.func).any(|a| h.span.contains(a.span))
                && work_after(h.span.end)
                && !tested_after(h.span.end)
        })
}
