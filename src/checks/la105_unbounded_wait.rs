use super::declare_rule;
use crate::catalog::Scope;
use crate::checks::Finding;
use crate::sites::{FileAnalysis, SiteKind, Ttl, Wait};

declare_rule! {
    /// ## What it flags
    /// A blocking acquire with no bound on how long it waits: redis-py
    /// `Lock` without `blocking_timeout`, python-redis-lock `acquire()`
    /// without `timeout`, Redisson `lock()`, Curator `acquire()`, etcd
    /// `Lock(ctx)`, `pg_advisory_lock` in a file that never sets
    /// `lock_timeout`, MySQL `LOCK TABLES` in a function that does not set
    /// `lock_wait_timeout` (its default is a year). A call of an in-house wrapper whose wait bound is its
    /// own parameter defaulting to none (`def wait_for(self, key,
    /// timeout=None): .. lock.acquire(blocking_timeout=timeout)`) that
    /// leaves it out is flagged at that call; a wrapper handing its own
    /// `timeout=None` on leaves the choice to its callers. A try-acquire
    /// retried until it is granted in a loop that nothing bounds (`while
    /// (!lock.tryLock()) Thread.sleep(100);`, Rust `loop { match lock().await
    /// { Ok(l) => return Ok(l), Err(_) => continue } }`) waits just as long.
    ///
    /// ## Why it breaks
    /// When the holder is stuck (or the lock never expires), every waiter
    /// blocks with it: request threads, worker slots and connections pile up
    /// until the service stops answering. An unbounded wait turns one slow
    /// job into an outage.
    ///
    /// ## Example
    /// ```python
    /// with r.lock("lock:report", timeout=60):       # waits forever for the lock
    ///     build_report()
    /// ```
    ///
    /// ## Use instead
    /// ```python
    /// with r.lock("lock:report", timeout=60, blocking_timeout=5):
    ///     build_report()
    /// ```
    ///
    /// ## Not flagged
    /// Try-acquires (`SET NX`, `tryLock()`, `blocking=False`), libraries with
    /// bounded retries by default (redsync, node-redlock), `lock_timeout`
    /// set for Postgres advisory locks. A retry loop bounded by the clock, a
    /// deadline, an attempt count, a context or its service's stop flag (the
    /// catalog's `retry-bounds`), a `for` over items or a counted range, and a
    /// poll loop that tries the lock each turn without leaving when granted.
    RULE {
        code: "LA105",
        name: "unbounded-wait",
        severity: Warning,
        summary: "a blocking acquire has no wait bound",
        label: "may wait forever",
        help: "bound the wait (blocking_timeout=, tryLock(wait, lease, unit), a context deadline, lock_timeout)",
        check: check,
    }
}

fn check(fa: &FileAnalysis, out: &mut Vec<Finding>) {
    for site in fa.locks() {
        // A wrapper's call: the acquisition is checked once, inside the
        // wrapper, unless this call left out the wrapper's wait bound.
        if site.via.is_some() && !site.wait_at_call {
            continue;
        }
        if !matches!(site.wait, Wait::Forever) {
            continue;
        }
        if site.kind == SiteKind::Sql {
            // Row locks (`FOR UPDATE`, row claims, a transaction's `LOCK TABLE`)
            // wait like any write does: not this rule's business. Advisory locks
            // are, unless `lock_timeout` bounds every lock wait of the session.
            // MySQL's session `LOCK TABLES` waits up to `lock_wait_timeout`
            // (default one year), set for the session that takes it: in its
            // function (gh-ost sets it on the cut-over's own connection only).
            let clause = site.command.contains(' ') || site.command.is_empty();
            let session = matches!(site.ttl, Ttl::Scoped(Scope::Session));
            let bounded = if clause {
                !session || fa.sets_lock_wait_timeout(site.func)
            } else {
                fa.sets_lock_timeout()
            };
            if bounded {
                continue;
            }
        }
        let f = Finding::new(
            &RULE,
            site.span,
            format!(
                "acquiring lock {} blocks with no bound on the wait",
                site.key_display()
            ),
        )
        .site(site);
        out.push(f);
    }
}
