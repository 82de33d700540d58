//! Acquisitions whose failure a handler swallows: `try { m = await lock(k) }
//! catch (e) { logger.error(e) }` and the work after it runs whether or not
//! the lock was granted.

use super::{FileAnalysis, LockSite};
use crate::lang::profile::profile;
use crate::model::{mentions, Call, ExitKind, FileModel, GuardKind, Span};

/// Does the handler send the loser away (`raise LockFailed`, `return False`)?
/// One that only logs and goes on (a health check's test insert) claims nothing.
pub(super) fn leaves(model: &FileModel, call: &Call, handler: Span) -> bool {
    let language = profile(model.language);
    model.exits_in(call.func).any(|e| handler.contains(e.span))
        || model.calls_in(call.func).any(|c| {
            let raises = c.receiver.is_none() && language.raise_calls.contains(&c.name.as_str());
            (raises || language.exit_methods.contains(&c.name.as_str())) && handler.contains(c.span)
        })
}

/// Does `site`'s function do work after `end` (and before `until`): a call that is not logging,
/// not the release, not building the value it returns
/// (`return new EnvelopeResponse<>(..)`)?
fn work_after(fa: &FileAnalysis, site: &LockSite, end: usize, until: Option<usize>) -> bool {
    let model = fa.model;
    let releases: Vec<Span> = (site.releases.iter())
        .filter_map(|&r| fa.releases.get(r).map(|r| r.span))
        .collect();
    let returned = |c: &Call| {
        super::resolve::builds_type(c)
            && (model.exits_in(site.func))
                .any(|e| e.kind == ExitKind::Return && e.span.contains(c.span))
    };
    model.calls_in(site.func).any(|c| {
        c.span.start > end
            && until.is_none_or(|u| c.span.end <= u)
            && !fa.catalog.log_methods.contains(&c.name)
            && !returned(c)
            && !releases
                .iter()
                .any(|r| r.contains(c.span) || c.span.contains(*r))
    })
}

/// Go reports a refused lock as an error value: `if _, err :=
/// globalLock(ctx); err != nil { log.Err(err).Msg(..) } else { defer .. }`,
/// then the work. Is the first test of the acquisition's result one for
/// failure whose statement neither leaves (return, panic) nor records
/// anything (an assignment), with work after it? The work then runs whether
/// or not the lock was granted.
pub fn error_logged_and_ignored(fa: &FileAnalysis, site: &LockSite) -> bool {
    let model = fa.model;
    let language = profile(model.language);
    if language.calls_may_raise {
        return false;
    }
    let call = model.call(site.result_call);
    let names = call.usage.bound_names();
    // In the branch's initializer (`if _, err := lock(); err != nil`), or the
    // first test after it of a name it bound; the whole `if`, not an operand
    // of its `||`.
    let test = (model.conditionals_in(site.func))
        .filter(|c| {
            (c.stmt.contains(site.span) && site.span.start < c.cond.start)
                || (c.stmt.start > call.span.end && names.iter().any(|n| mentions(&c.text, n)))
        })
        .min_by_key(|c| (c.stmt.start, std::cmp::Reverse(c.stmt.end)));
    let Some(c) = test else {
        return false;
    };
    // A goroutine's or callback's failure ends that closure, not its caller's work.
    let closure = model.enclosing(site.span, &[GuardKind::Closure]);
    let work = work_after(fa, site, c.stmt.end, closure.map(|b| b.span.end));
    // A flag set for later (`locked = false`), not a deferred release's own
    // `if err := mx.Unlock(); ..` or the locals of a closure inside the branch.
    let nested = |at: Span| {
        model
            .enclosing(at, &[GuardKind::Closure, GuardKind::Defer])
            .is_some_and(|b| !b.span.contains(site.span))
            || (model.conditionals_in(site.func)).any(|inner| {
                inner.stmt != c.stmt && inner.stmt.contains(at) && at.start < inner.cond.end
            })
    };
    let recorded = (model.assigns_in(site.func))
        .any(|a| c.stmt.contains(a.span) && a.span.start > c.cond.end && !nested(a.span));
    // Go's error comes last (`mx, err :=`) and fails when not nil. (Not a
    // test of the grant itself, `if !claimed { bail!(..) }`: a macro that leaves.)
    let failed = (names.last()).is_some_and(|err| c.text.contains(&format!("{err} != nil")));
    failed && !leaves(model, call, c.stmt) && !recorded && work
}

/// Is `site`'s acquisition the last work of a `try` whose handler neither
/// leaves (returns, raises) nor records the failure (an assignment), while the
/// function goes on to other work after the handler (a release or a log line
/// is no work)? A `try` that holds the critical section too skips it on failure.
pub fn swallowed(fa: &FileAnalysis, site: &LockSite) -> bool {
    let model = fa.model;
    let call = model.call(site.call);
    let work_after = |end: usize| work_after(fa, site, end, None);
    // Nothing but logging follows the acquisition in the `try`: no work, and
    // no exit that leaves on success (`return true`, so what follows the
    // handler runs only on failure).
    // (What a log line's arguments compute, `id.toString()`, is logging too.)
    let logs: Vec<Span> = (model.calls_in(site.func))
        .filter(|c| fa.catalog.log_methods.contains(&c.name))
        .map(|c| c.span)
        .collect();
    let alone_in = |covers: Span| {
        let later = |span: Span| covers.contains(span) && span.start > call.span.end;
        !model
            .calls_in(site.func)
            .any(|c| later(c.span) && !logs.iter().any(|l| l.contains(c.span)))
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
