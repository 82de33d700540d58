use super::declare_rule;
use crate::catalog::Scope;
use crate::checks::Finding;
use crate::lang::profile::profile;
use crate::model::{mentions, Call, ExitKind, FileModel, GuardKind, Span};
use crate::sites::branches::{acquisition_names, on_failure_path, refusal_branch};
use crate::sites::{wrapper, FileAnalysis, LockSite, Ttl};

mod hand_off;

declare_rule! {
    /// ## What it flags
    /// A release that some path out of the critical section skips, so the
    /// lock is held until its TTL (or forever without one):
    /// - Python, Java, JavaScript/TypeScript, Ruby: a release that is not in
    ///   `finally` / `ensure` / a `with` / try-with-resources / block form,
    ///   when anything that may raise runs before it;
    /// - Go: an explicit `return` between the acquisition and a release that
    ///   is not `defer`red;
    /// - Rust: a `return`, `?` or `break` between the acquisition and the release;
    /// - in a loop entered after the acquisition, "between" includes what
    ///   follows a release in one branch on the turns that did not take that
    ///   branch (`loop { match work { Ok(r) => { unlock(&l); return r }
    ///   Err(_) => l = extend(&l)? } }`);
    /// - a lock object, or a session-level `pg_advisory_lock` / `GET_LOCK`,
    ///   acquired and never released in the file (reported at the acquisition);
    /// - at the caller of an in-house helper, its release through the same
    ///   object (`storage.lockFragment()` ... `storage.releaseFragment()`,
    ///   `Semaphore.lock(..)` ... `Semaphore.release(mutex)`), by the same rules;
    ///   when one object holds several locks, each is paired with the release
    ///   named for the same thing (`lockFragment` ↔ `releaseFragment`);
    /// - a release in `finally` / `ensure` or `defer` whose `try` / `begin` is
    ///   entered, or `defer` reached, only after something that may raise (in
    ///   Go: a `return`) has run since the acquisition (logging the grant,
    ///   reading or marking what was acquired and taking the next lock do not
    ///   count);
    /// - a lock handed on for release elsewhere (a call that keeps it and names
    ///   a lock: `job.setLock(lock)`, `locks.add(lock)`) only after something
    ///   that may raise, when nothing that catches it releases it: no `try`,
    ///   a handler that re-raises, or one that logs and leaves; the same for
    ///   a lock handed back to the caller (`return lock`, Ruby's last value
    ///   `token`) after something that may raise (the caller's block, a
    ///   callback), when its class gives it back in another method (reported
    ///   at the acquisition);
    /// - a release in `finally` / `ensure` written after another lock's
    ///   release in the same block (`finally { a.release(); b.release(); }`):
    ///   if the first raises (an expired Redis lock's release does), the
    ///   second never runs.
    ///
    /// ## Why it breaks
    /// An exception or an early return leaves the lock held. Every other
    /// worker waits or skips the job until the lease runs out; with a session
    /// lock on a pooled connection, the *next* user of that connection
    /// inherits it.
    ///
    /// ## Example
    /// ```python
    /// lock.acquire()
    /// charge(order)          # raises: the lock stays held
    /// lock.release()
    /// ```
    ///
    /// ## Use instead
    /// ```python
    /// with r.lock(f"lock:order:{order.id}", timeout=30, blocking_timeout=5):
    ///     charge(order)
    /// ```
    /// Go: `defer mutex.Unlock()`; Rust: capture the work's result, release,
    /// then return the result.
    ///
    /// ## Not flagged
    /// Releases in `finally`/`ensure`/`defer`, guard forms, returns on the
    /// not-acquired path (`if !ok { return }`), releases in another function
    /// (the path cannot be followed), raw `SET NX` markers that are left to
    /// expire, handles returned or stored for release elsewhere (a field, a
    /// map on `self`) before anything that may raise, a session lock whose connection is kept in a field or
    /// returned (its owner closes the session), and a lock object built,
    /// acquired and dropped in one expression with a lease
    /// (`Lock(r, key, timeout=60).acquire()`: only the lease can end it), a
    /// helper's release inside a callback the caller defines for later.
    /// De-duplication markers (class `marker`: a `SET NX` key such as
    /// `trace:{id}:seen` that records that something happened, not a lock).
    RULE {
        code: "LA203",
        name: "release-not-guaranteed",
        severity: Warning,
        summary: "some path out of the critical section skips the release",
        label: "not reached on every path",
        help: "release in finally / ensure / defer, or use the library's guard form (with, block, using)",
        check: check,
    }
}

/// The handle leaves the function (returned, stored on an object, passed on):
/// it may be released elsewhere. For a session lock the session is the
/// handle: a connection kept in a field (`apl.lockConn = conn`) is closed,
/// and the lock with it, by whoever owns the field.
fn escapes(fa: &FileAnalysis, site: &LockSite) -> bool {
    let model = fa.model;
    let session = matches!(site.ttl, Ttl::Scoped(Scope::Session))
        .then(|| model.call(site.call).receiver.as_deref())
        .flatten()
        .and_then(|r| r.peel().as_name());
    // A connection passed to a call is lent for a query, not handed over; a
    // session on a pooled field's connection (`p.db`) stays with the pool.
    site.handle.as_deref().is_some_and(|h| {
        kept(model, site, h)
            || model.calls_in(site.func).any(|c| {
                c.span.start > site.span.end
                    && !fa.catalog.log_methods.contains(&c.name)
                    && c.args.iter().any(|a| mentions(&a.value.text, h))
            })
    }) || session.is_some_and(|s| {
        !stored(s)
            && (model.exits_in(site.func).any(|e| returns(&e.value, s))
                || stored_later(model, site, s))
    })
}

/// `return conn` / `return conn, nil`: the value itself, not a call that uses it.
fn returns(value: &str, h: &str) -> bool {
    value
        .split(',')
        .any(|v| v.trim().trim_start_matches('&') == h)
}

fn stored_later(model: &FileModel, site: &LockSite, h: &str) -> bool {
    model
        .assigns_in(site.func)
        .any(|a| a.span.start > site.span.end && stored(&a.target) && mentions(&a.value.text, h))
}

/// A field or an entry of one (`self.lock`, `self._locks[k]`, `@lock`).
fn stored(target: &str) -> bool {
    target.contains(['.', '[']) || target.starts_with('@')
}

/// `h` outlives the function: it is a field, or it is returned (Ruby: the
/// method's last value) or stored in one.
fn kept(model: &FileModel, site: &LockSite, h: &str) -> bool {
    stored(h)
        || model.ends_with_name(site.func, h).is_some()
        || model.exits_in(site.func).any(|e| mentions(&e.value, h))
        || stored_later(model, site, h)
}

/// The session the lock lives in is closed in the function (`conn.close()` in
/// `finally`, Go `defer session.Close()`): a session-level SQL lock on that
/// connection, or a lock the session keeps alive (etcd
/// `concurrency.NewMutex(session, key)`), ends with it.
fn session_closed(fa: &FileAnalysis, site: &LockSite) -> bool {
    let model = fa.model;
    let call = model.call(site.call);
    let sessions: Vec<&str> = match site.ttl {
        Ttl::Scoped(Scope::Session) => call
            .receiver
            .as_deref()
            .and_then(|r| r.peel().as_name())
            .into_iter()
            .collect(),
        Ttl::Renewed => {
            // The factory's arguments: the lock object's own call, or the one it is made on.
            let factory = call.receiver_call().map_or(call, |id| model.call(id));
            let bound = site
                .handle
                .as_deref()
                .and_then(|h| model.lookup(h, site.func, site.span.start))
                .and_then(|a| a.value.as_call())
                .map(|id| model.call(id));
            [factory, call]
                .into_iter()
                .chain(bound)
                .flat_map(|c| c.args.iter().filter_map(|a| a.value.peel().as_name()))
                .collect()
        }
        _ => Vec::new(),
    };
    !sessions.is_empty()
        && model.calls_in(site.func).any(|c| {
            fa.catalog.session_close_methods.contains(&c.name)
                && c.receiver
                    .as_deref()
                    .and_then(|r| r.peel().as_name())
                    .is_some_and(|r| sessions.contains(&r))
        })
}

/// A lock object built, acquired and dropped in one expression
/// (`Lock(r, key, timeout=60).acquire()`): nothing can release it but its
/// lease, so with a lease it is left to expire on purpose.
fn left_to_expire(model: &FileModel, site: &LockSite) -> bool {
    let built = model.call(site.call);
    let object_dropped = built
        .receiver_call()
        .is_some_and(|inner| model.call(inner).usage.bound().is_none());
    object_dropped && matches!(site.ttl, Ttl::Given(_))
}

/// What keeps an unreleased lock held, in the message's words.
fn held_until(ttl: &Ttl) -> &'static str {
    match ttl {
        Ttl::Given(_) | Ttl::Default(_) => "it is held until its lease ends",
        Ttl::Absent => "it is held until something deletes it, forever if the holder dies",
        Ttl::Renewed => "it is renewed, and so held, for as long as the holder runs",
        Ttl::Scoped(Scope::Session) => {
            "it is held until the database session ends; on a pooled connection, until the \
             pool closes that connection"
        }
        Ttl::Scoped(Scope::Transaction) => "it is held until the transaction ends",
        Ttl::Scoped(Scope::Row) => "it is held until something clears the row's claim",
    }
}

/// The releases of `site` in its own function. A wrapper's call is released
/// through the object it locked with; a never-released wrapper lock is the
/// wrapper's own business.
fn release_spans(fa: &FileAnalysis, site: &LockSite) -> Vec<Span> {
    if site.via.is_some() {
        wrapper::paired_releases(fa.model, site)
            .into_iter()
            .map(|c| c.span)
            .collect()
    } else {
        site.releases
            .iter()
            .map(|&i| &fa.releases[i])
            .filter(|rel| rel.func == site.func)
            .map(|rel| rel.span)
            .collect()
    }
}

/// Every kind of block: the innermost one holding a statement.
const ANY_BLOCK: &[GuardKind] = &[
    GuardKind::Module,
    GuardKind::Function,
    GuardKind::Plain,
    GuardKind::With,
    GuardKind::Finally,
    GuardKind::Defer,
    GuardKind::Closure,
];

/// Where the code a release in `finally` / `ensure` or `defer` protects
/// begins: its `try`, or the `defer` statement itself. What leaves the
/// function between the acquisition and there skips the release.
fn protected_from(model: &FileModel, rel: Span) -> Option<usize> {
    if let Some(d) = model.enclosing(rel, &[GuardKind::Defer]) {
        return Some(d.span.start);
    }
    if !model.inside(rel, &[GuardKind::Finally]) {
        return None;
    }
    (model.tries.iter())
        .filter(|t| t.contains(rel))
        .min_by_key(|t| t.end - t.start)
        .map(|t| t.start)
}

/// Another lock's release made just before `rel` in the same block of a
/// `finally` (`finally { releaseFragment(); releaseStorageUnit(); }`): if it
/// raises, `rel` never runs. One in its own `try` or branch is no such release.
fn released_before(model: &FileModel, rel: Span, own: &[Span], all: &[Vec<Span>]) -> Option<Span> {
    let block = model.enclosing(rel, ANY_BLOCK)?.id;
    all.iter()
        .flatten()
        .filter(|r| r.end <= rel.start && !own.contains(r))
        .filter(|r| {
            model
                .enclosing(**r, ANY_BLOCK)
                .is_some_and(|b| b.id == block)
        })
        .max_by_key(|r| r.start)
        .copied()
}

fn check(fa: &FileAnalysis, out: &mut Vec<Finding>) {
    let model = fa.model;
    let all: Vec<Vec<Span>> = fa.locks().map(|s| release_spans(fa, s)).collect();
    // Every acquisition and release of the file: taking or giving back another
    // lock is not work that can skip a release.
    let taken: Vec<Span> = (fa.locks().map(|s| s.span))
        .chain(fa.releases.iter().map(|r| r.span))
        .collect();
    for (site, releases) in fa.locks().zip(&all) {
        if site.guarded {
            continue;
        }
        if releases.is_empty() {
            if let Some(f) = hand_off::raised_before_hand_off(fa, site) {
                out.push(f);
                continue;
            }
        }
        if site.via.is_none() && site.releases.is_empty() {
            if site.expects_release
                && !escapes(fa, site)
                && !left_to_expire(model, site)
                && !session_closed(fa, site)
            {
                let f = Finding::new(
                    &RULE,
                    site.span,
                    format!(
                        "lock {} is acquired but never released in this file: {}",
                        site.key_display(),
                        held_until(&site.ttl)
                    ),
                )
                .site(site);
                out.push(f);
            }
            continue;
        }
        let names = acquisition_names(model, site);
        for &rel in releases {
            if rel.start < site.span.end {
                continue;
            }
            if let Some(f) = skipped_before_protection(fa, site, rel, (&names, releases), &taken) {
                out.push(f);
                continue;
            }
            if model.inside(rel, &[GuardKind::Finally]) {
                if let Some(before) = released_before(model, rel, releases, &all) {
                    let f = Finding::new(
                        &RULE,
                        rel,
                        format!(
                            "the release of lock {} is skipped when the release before it in the same block raises",
                            site.key_display()
                        ),
                    )
                    .site(site)
                    .label(before, "if this raises, the next release never runs")
                    .label(site.span, "acquired here")
                    .help("give each release its own `try` / `finally` (nested, in reverse order of acquiring)");
                    out.push(f);
                }
                continue;
            }
            if model.inside(rel, &[GuardKind::Defer])
                || refusal_branch(model, site, &names, rel).is_some()
            {
                continue;
            }
            if let Some((skip, why)) = skipping_path(fa, site, rel, (&names, releases), &|_| false)
            {
                let f = Finding::new(
                    &RULE,
                    rel,
                    format!(
                        "the release of lock {} is skipped when {why}",
                        site.key_display()
                    ),
                )
                .site(site)
                .label(skip, why)
                .label(site.span, "acquired here");
                out.push(f);
            }
        }
    }
}

/// LA203 for a release in `finally` / `ensure` or `defer` when something
/// that may leave the function runs between the acquisition and the `try`
/// it closes (or the `defer` statement). `taken`: the file's acquisitions
/// and releases.
fn skipped_before_protection(
    fa: &FileAnalysis,
    site: &LockSite,
    rel: Span,
    (names, own_releases): (&[String], &[Span]),
    taken: &[Span],
) -> Option<Finding> {
    let model = fa.model;
    let start = protected_from(model, rel)?;
    let before = Span { start, end: start };
    let acquired_on = (model.call(site.call).receiver.as_deref()).and_then(|a| a.peel().as_name());
    // Reading or marking what was acquired (`cur.fetchone()`,
    // `row.update({lockedAt})`, a separate `EXPIRE`: LA102's), logging the
    // grant, reading the clock, and taking or giving back another lock (their
    // own failure is their business) before entering the `try` is the usual shape.
    let own = |c: &Call| {
        let r = c.receiver.as_deref().and_then(|r| r.peel().as_name());
        r.is_some_and(|r| {
            acquired_on == Some(r)
                || site.handle.as_deref() == Some(r)
                || names.iter().any(|n| n == r)
        })
    };
    let ignored = |c: &Call| {
        own(c)
            || fa.catalog.log_methods.contains(&c.name)
            || fa.catalog.clock_reads.contains(&c.name)
            || site.separate_expire.is_some_and(|e| e.contains(c.span))
            || taken.iter().any(|t| t.contains(c.span))
    };
    let skipped: Vec<Span> = (model.calls_in(site.func))
        .filter(|c| c.span.start >= site.span.end && c.span.end <= start && ignored(c))
        .map(|c| c.span)
        .collect();
    // What runs in the block that takes the lock (a retry loop, a
    // transaction's callback) or in the handler of its failure (`catch`
    // around the acquisition) is part of taking it.
    let taking: Vec<Span> = (model.blocks.iter())
        .filter(|b| !matches!(b.kind, GuardKind::Function | GuardKind::Module))
        .map(|b| b.span)
        .chain(model.loops.iter().map(|l| l.span))
        .filter(|b| b.contains(site.span) && !b.contains(before))
        .chain(
            (model.handlers.iter())
                .filter(|h| h.covers.contains(site.span))
                .map(|h| h.span),
        )
        .collect();
    let usual = |c: &Call| skipped.iter().chain(&taking).any(|o| o.contains(c.span));
    let (skip, why) = skipping_path(fa, site, before, (names, own_releases), &usual)?;
    let place = if model.inside(rel, &[GuardKind::Defer]) {
        "the `defer` is reached"
    } else {
        "the block it protects (`try` / `begin`) is entered"
    };
    Some(
        Finding::new(
            &RULE,
            rel,
            format!(
                "the release of lock {} is skipped when {why} before {place}",
                site.key_display()
            ),
        )
        .site(site)
        .label(skip, why)
        .label(site.span, "acquired here")
        .help("enter the `try` (or register the `defer`) right after acquiring"),
    )
}

/// Does the exit at `exit` give the lock back first: one of its releases
/// (`own`) made after the acquisition in the block the exit leaves from
/// (`if err := second.Lock(); err != nil { first.Unlock(); return err }`),
/// not in a branch of a loop that a later turn passes by?
fn released_on_the_way(
    model: &FileModel,
    site: &LockSite,
    exit: Span,
    own: &[Span],
    acquired: usize,
) -> bool {
    let Some(block) = model.enclosing(exit, ANY_BLOCK) else {
        return false;
    };
    own.iter().any(|r| {
        r.start >= acquired
            && r.end <= exit.start
            && block.span.contains(*r)
            && !(model.bypass(*r, site.func, acquired)).is_some_and(|b| b.reaches(exit))
    })
}

/// The promises `rel` is chained to (`buildFeed(slug).finally(() =>
/// cache.delete(k))`): the work's failure rejects one, and the release runs
/// either way, so nothing inside them skips it.
fn chained_to(model: &FileModel, site: &LockSite, rel: Span) -> Vec<Span> {
    (model.calls_in(site.func))
        .filter(|f| f.name == "finally" && f.args.iter().any(|a| a.value.span.contains(rel)))
        .filter_map(|f| f.receiver.as_deref().map(|r| r.span))
        .collect()
}

/// The first thing between the acquisition and `rel` that leaves without
/// releasing; calls that are `ignored` do not count. `names` carry the
/// acquisition's result, `own` are the site's releases.
fn skipping_path(
    fa: &FileAnalysis,
    site: &LockSite,
    rel: Span,
    (names, own): (&[String], &[Span]),
    ignored: &dyn Fn(&Call) -> bool,
) -> Option<(Span, &'static str)> {
    let model = fa.model;
    // After the whole acquisition expression (`sqlx::query(..).bind(k).execute(..)`).
    let acquired = model.call(site.result_call).span.end.max(site.span.end);
    // Before the release, or after it on a later turn of a loop that skipped
    // it (the lock is still held there).
    let bypass = model.bypass(rel, site.func, acquired);
    let between = |s: Span| {
        s.start >= acquired && (s.end <= rel.start || bypass.is_some_and(|b| b.reaches(s)))
    };
    let language = profile(model.language);
    match language.calls_may_raise {
        false => model
            .exits_in(site.func)
            .filter(|e| between(e.span))
            .filter(|e| language.early_exits.contains(&e.kind))
            // A `break` leaves its loop: it skips only a release inside a
            // block around it (the loop's body), not one after the loop.
            .filter(|e| {
                !matches!(e.kind, ExitKind::Break | ExitKind::Continue)
                    || shares_block(model, e.span, rel)
            })
            // A `?` or `return` in a closure or `async { .. }` block leaves that block.
            .filter(|e| {
                (model.enclosing(e.span, &[GuardKind::Closure]))
                    .is_none_or(|b| b.span.contains(rel))
            })
            .filter(|e| !on_failure_path(model, site, names, e.span, rel))
            .filter(|e| !released_on_the_way(model, site, e.span, own, acquired))
            // `set_nx(..)?` / `.await?`: the `?` of the acquisition itself.
            .filter(|e| !e.propagates(acquired))
            .map(|e| {
                let why = match e.kind {
                    ExitKind::Try => "`?` returns early",
                    ExitKind::Break => "the loop breaks early",
                    ExitKind::Continue => "the loop's turn ends early (`continue` / `next`)",
                    _ => "the function returns early",
                };
                (e.span, why)
            })
            .next(),
        true => {
            let chained = chained_to(model, site, rel);
            model
                .calls_in(site.func)
                .filter(|c| between(c.span) && !site.span.contains(c.span) && !ignored(c))
                .filter(|c| !on_failure_path(model, site, names, c.span, rel))
                .filter(|c| !chained.iter().any(|p| p.contains(c.span)))
                .find(|c| {
                    !model.inside(c.span, &[GuardKind::Closure])
                        || model.inside(site.span, &[GuardKind::Closure])
                })
                .map(|c| (c.span, "this call raises"))
        }
    }
}

/// Is there an ordinary block below the function's own body (a loop's or a
/// branch's body) holding both?
fn shares_block(model: &FileModel, a: Span, b: Span) -> bool {
    let nested = |k: &crate::model::Block| {
        (k.parent.and_then(|p| model.blocks.get(p))).is_some_and(|p| p.kind != GuardKind::Function)
    };
    (model.blocks.iter()).any(|k| {
        k.kind == GuardKind::Plain && k.span.contains(a) && k.span.contains(b) && nested(k)
    })
}

#[cfg(test)]
mod message_tests {
    use super::held_until;
    use crate::catalog::Scope;
    use crate::sites::Ttl;

    #[test]
    fn says_what_keeps_the_lock() {
        assert!(held_until(&Ttl::Scoped(Scope::Session)).contains("session ends"));
        assert!(held_until(&Ttl::Scoped(Scope::Transaction)).contains("transaction ends"));
        assert!(held_until(&Ttl::Absent).contains("forever if the holder dies"));
        assert!(held_until(&Ttl::Given(None)).contains("lease ends"));
    }
}
