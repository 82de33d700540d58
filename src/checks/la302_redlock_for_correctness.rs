use super::declare_rule;
use crate::checks::Finding;
use crate::sites::{Class, FileAnalysis};

declare_rule! {
    /// ## What it flags
    /// A Redlock-family lock (redsync, node-redlock, pottery `Redlock`,
    /// aioredlock, Redisson `RedLock`, redlock-rb, rslock, redlock-rs,
    /// redis-semaphore `RedlockMutex`) guarding a lock classified
    /// `correctness`, whatever its number of nodes.
    ///
    /// ## Why it breaks
    /// Redlock issues no fencing token, and its safety argument assumes
    /// bounded clock drift, bounded network delay and bounded process pauses.
    /// None of those holds in practice: a clock jump or a long GC pause lets
    /// two clients believe they hold the lock, and the resource has nothing to
    /// tell them apart. It is a fine efficiency lock; it cannot make a write
    /// correct on its own.
    ///
    /// ## Example
    /// ```javascript
    /// const lock = await redlock.acquire([`payout:${id}`], 10_000);
    /// await stripe.payouts.create({ amount, currency });
    /// ```
    ///
    /// ## Use instead
    /// A lock with a fencing token the resource checks (etcd, ZooKeeper, a
    /// database row with a version), or make the write itself safe twice
    /// (idempotency key, conditional write).
    ///
    /// ## Not flagged
    /// Redlock used for efficiency (deduplicating work) or unclassified; the
    /// Redlock inside a wrapper whose class its callers give it (reported at
    /// those callers, where the correctness work is).
    RULE {
        code: "LA302",
        name: "redlock-for-correctness",
        severity: Error,
        summary: "a Redlock-family lock guards a correctness lock",
        label: "Redlock for correctness",
        help: "use a lock with a fencing token the resource checks, or make the write idempotent",
        check: check,
    }
}

fn check(fa: &FileAnalysis, out: &mut Vec<Finding>) {
    for site in fa
        .sites
        .iter()
        // A wrapper's own lock classed by its callers: they are told, at theirs.
        .filter(|s| s.redlock && s.class == Class::Correctness && !s.classed_by_callers)
    {
        let f = Finding::new(
            &RULE,
            site.span,
            format!("{} is a Redlock-family lock guarding correctness lock {}: Redlock gives no fencing token and assumes bounded clocks and pauses", site.library, site.key_display()),
        )
        .site(site);
        out.push(match site.remedy() {
            Some(remedy) => f.help(format!(
                "Redlock gives nothing to fence with, so protect the write itself: {remedy}"
            )),
            None => f,
        });
    }
}
