use super::declare_rule;
use crate::checks::Finding;
use crate::lang::profile::profile;
use crate::model::{mentions, Call, Usage};
use crate::sites::swallowed::{error_logged_and_ignored, swallowed};
use crate::sites::{FileAnalysis, LockSite, SiteKind};

declare_rule! {
    /// ## What it flags
    /// A try-acquire whose result is thrown away or never tested before the
    /// critical section runs: a `SET ... NX` reply, a `SETNX` / `setIfAbsent`
    /// boolean, `tryLock()`, `acquire(blocking=False)`, go-redis
    /// `SetNX(...).Result()` with the bool dropped, bsm `Obtain`'s error,
    /// `pg_try_advisory_lock`, `GET_LOCK`; Rust `query::<()>` / `let _: () =`.
    /// Also an acquisition that waits and throws when refused (`redlock.acquire`,
    /// `lock!`, `lock()`) alone in a `try` whose handler only logs, while the
    /// work goes on after the handler (`try { lock = await redlock.acquire(..) }
    /// catch (e) { logger.error(e) }` then `charge(..)`). Not when a later test
    /// reads the bound result (`updated = tryUpdateEpoch(..)` then `if (updated)
    /// .. else throw ..`), nor when all that follows builds the value returned.
    /// In Go and Rust, where errors are values, also a call of a helper that
    /// returns a waiting lock's error (`worker.Lock()` over an etcd mutex's
    /// `Lock(ctx)`) made as a statement: the error is dropped.
    ///
    /// ## Why it breaks
    /// A try-acquire *reports* contention; it does not stop the caller. If
    /// the result is ignored, every caller runs the critical section,
    /// whether or not it got the lock: the lock does nothing at all.
    ///
    /// ## Example
    /// ```python
    /// r.set("lock:report", token, nx=True, px=60_000)
    /// build_report()
    /// ```
    ///
    /// ## Use instead
    /// ```python
    /// if not r.set("lock:report", token, nx=True, px=60_000):
    ///     return  # someone else is building it
    /// build_report()
    /// ```
    ///
    /// ## Not flagged
    /// Results tested by `if`/`while`/`match`/ternaries/`unless`, returned to
    /// the caller, or passed on; a SQL claim whose `cur.rowcount` is tested,
    /// returned or kept in a name (`won = cur.rowcount == 1`); blocking acquires that raise or wait
    /// (Redisson `lock()`, `with r.lock(...)`).
    /// De-duplication markers (class `marker`: a `SET NX` key such as
    /// `trace:{id}:seen` that records that something happened, not a lock).
    RULE {
        code: "LA104",
        name: "acquire-result-ignored",
        severity: Error,
        summary: "a try-acquire's result is discarded or never tested, or a failed acquisition's error is swallowed",
        label: "result not checked",
        help: "test the result and skip the critical section when the lock was not granted",
        check: check,
    }
}

/// Is `var`, bound at `after`, read later in the same function: a condition,
/// a return, an argument (logging does not count) or another assignment?
fn consumed(fa: &FileAnalysis, site: &LockSite, var: &str, after: usize) -> bool {
    let model = fa.model;
    let same = |func: Option<usize>, start: usize| func == site.func && start > after;
    let logs = |c: &Call| fa.catalog.log_methods.contains(&c.name);
    model
        .conditionals
        .iter()
        .any(|c| same(c.func, c.cond.start) && mentions(&c.text, var))
        || model
            .exits
            .iter()
            .any(|e| same(e.func, e.span.start) && mentions(&e.value, var))
        || model.calls.iter().any(|c| {
            same(c.func, c.span.start)
                && !logs(c)
                && c.args.iter().any(|a| mentions(&a.value.text, var))
        })
        || model
            .assigns
            .iter()
            .any(|a| same(a.func, a.span.start) && mentions(&a.value.text, var))
}

/// For SQL the row comes back through the cursor: a later fetch on it
/// (`cur.fetchone()`, `rows.Scan(..)`) or a read of `cur.rowcount` (tested,
/// returned, or kept: `won = cur.rowcount == 1`) consumes it; so does a
/// method called on the rows the statement returned (que's `jobs = conn.
/// execute("SELECT .. WHERE pg_try_advisory_lock(id)")` then `jobs.each`:
/// the rows returned are the ones locked).
fn sql_fetched(fa: &FileAnalysis, site: &LockSite) -> bool {
    let model = fa.model;
    let call = model.call(site.call);
    let Some(cursor) = call.receiver.as_deref().map(|r| r.text.as_str()) else {
        return false;
    };
    let after = |start: usize, func: Option<usize>| func == site.func && start > call.span.end;
    let fetch = |name: &str| {
        let n = name.to_ascii_lowercase();
        ["fetch", "scalar", "first", "one", "next", "scan"]
            .iter()
            .any(|p| n.starts_with(p))
    };
    let rowcount = format!("{cursor}.rowcount");
    let rows = call.usage.bound_names();
    model.calls.iter().any(|c| {
        let on = |name: &str| c.receiver.as_deref().is_some_and(|r| r.text == name);
        after(c.span.start, c.func)
            && ((fetch(&c.name) && on(cursor)) || rows.iter().any(|n| on(n)))
    }) || model
        .conditionals
        .iter()
        .any(|c| after(c.cond.start, c.func) && c.text.contains(&rowcount))
        || model
            .exits
            .iter()
            .any(|e| after(e.span.start, e.func) && e.value.contains(&rowcount))
        || model
            .assigns
            .iter()
            .any(|a| after(a.span.start, a.func) && a.value.text.contains(&rowcount))
}

/// Does a wrapper hand its caller the result of a blocking acquisition
/// that reports failure only in that value (Go's `error`, Rust's `Result`:
/// errors are values there), and does the caller drop it (`worker.Lock()`
/// as a statement)? A database lock's error comes back on the statement's
/// run, not here.
fn error_dropped(fa: &FileAnalysis, site: &LockSite) -> bool {
    let model = fa.model;
    !profile(model.language).calls_may_raise
        && site.returns_result
        && site.backend != "database"
        && model.call(site.result_call).usage == Usage::Discarded
}

fn check(fa: &FileAnalysis, out: &mut Vec<Finding>) {
    for site in fa.locks().filter(|s| !s.guarded) {
        let key = site.key_display();
        let what = if site.try_acquire {
            ignored(fa, site)
                .then(|| format!("the result of this try-acquire of lock {key} is never checked"))
        } else {
            // An acquisition that waits and raises when refused, its error caught
            // and the work going on after the handler (`catch (e) { logger.error(e) }`).
            let swallowed = swallowed(fa, site)
                .then(|| format!("a failure to acquire lock {key} is caught and the code goes on"));
            swallowed.or_else(|| {
                error_dropped(fa, site)
                    .then(|| format!("the error this acquisition of lock {key} returns is dropped"))
            })
        };
        // Go: the refusal's error tested, logged, and the work goes on.
        let what = what.or_else(|| {
            error_logged_and_ignored(fa, site)
                .then(|| format!("a failure to acquire lock {key} is logged and the code goes on"))
        });
        if let Some(what) = what {
            let message =
                format!("{what}: the critical section runs whether or not the lock was granted");
            out.push(Finding::new(&RULE, site.span, message).site(site));
        }
    }
}

/// Is a try-acquire's result thrown away, or bound and never read?
fn ignored(fa: &FileAnalysis, site: &LockSite) -> bool {
    let call = fa.model.call(site.result_call);
    // `ok, err := ...`: reading any of the names counts (go-redis and
    // bsm report contention through the error).
    let read =
        |var: &&str| *var != "_" && (var.contains('.') || consumed(fa, site, var, call.span.end));
    // `unless (token = locksmith.lock)`, `if ((ok = tryLock()))`: the
    // condition tests the value it binds.
    let tested_in_place = (fa.model.conditionals_in(site.func)).any(|c| c.cond.contains(call.span));
    let thrown_away = !tested_in_place
        && match &call.usage {
            Usage::Discarded => true,
            // The value itself must be read, unless contention is an error.
            Usage::Assigned(_) if site.contention_error => {
                !call.usage.bound_names().iter().any(read)
            }
            Usage::Assigned(_) => !call.usage.bound().is_some_and(|v| read(&v)),
            _ => false,
        };
    // Rust `acquire(..)?` / `.await?`: an error is propagated, so checked.
    let propagated =
        site.contention_error && fa.model.exits.iter().any(|e| e.propagates(call.span.end));
    thrown_away && !propagated && !(site.kind == SiteKind::Sql && sql_fetched(fa, site))
}
