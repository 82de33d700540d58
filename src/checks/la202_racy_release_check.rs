use super::declare_rule;
use crate::checks::Finding;
use crate::sites::FileAnalysis;

declare_rule! {
    /// ## What it flags
    /// A release that checks ownership and deletes in two round trips: `GET`
    /// the key, compare it with the caller's token, then `DEL` it, outside
    /// `WATCH`/`MULTI` and outside a Lua script. Reported instead of LA201
    /// for that delete.
    ///
    /// ## Why it breaks
    /// Between the `GET` and the `DEL` the lease can expire and another
    /// process can acquire the lock; the `DEL` then removes the new holder's
    /// lock. The check narrows the window, it does not close it: a GC pause
    /// or a slow network between the two commands is enough.
    ///
    /// ## Example
    /// ```python
    /// if r.get(key) == token:
    ///     r.delete(key)
    /// ```
    ///
    /// ## Use instead
    /// One atomic compare-and-delete: a Lua script, or `DELEX key IFEQ token`
    /// on Redis 8.4+ (`DELIFEQ` on Valkey 9):
    /// ```python
    /// RELEASE = 'if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) end return 0'
    /// r.eval(RELEASE, 1, key, token)
    /// ```
    ///
    /// ## Not flagged
    /// The same sequence inside `WATCH` ... `MULTI`/`EXEC` (the server aborts
    /// the transaction if the key changed), Lua scripts, a `GET` that does not
    /// decide the delete.
    RULE {
        code: "LA202",
        name: "racy-release-check",
        severity: Error,
        summary: "ownership is checked with GET and the key deleted with a separate DEL",
        label: "deletes after a separate ownership check",
        help: "compare and delete atomically: a Lua script (GET == token then DEL) or DELEX key IFEQ token",
        check: check,
    }
}

fn check(fa: &FileAnalysis, out: &mut Vec<Finding>) {
    for rel in fa.lock_releases() {
        let Some(get) = rel.racy_get else { continue };
        let mut f = Finding::new(
            &RULE,
            rel.span,
            format!("lock {} is checked with GET and deleted with a separate {}: the lease can pass to another holder in between", rel.key_display(), rel.command),
        )
        .label(get, "ownership read here, in an earlier round trip");
        if let Some(site) = rel.site.map(|i| &fa.sites[i]) {
            f = f.site(site).label(site.span, "acquired here");
        }
        out.push(f);
    }
}
