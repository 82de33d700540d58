use super::declare_rule;
use crate::checks::Finding;
use crate::sites::effects::{counters, Protection};
use crate::sites::{Class, FileAnalysis};

declare_rule! {
    /// ## What it flags
    /// A lock whose grant exposes a fencing token (etcd's revision or key,
    /// a ZooKeeper sequence, Redisson's fenced lock token), or whose code
    /// increments a Redis `INCR` counter for one, when no write in the
    /// critical section uses it. Not for locks classified `efficiency`. At
    /// the callers of an in-house helper that takes such a lock and keeps the
    /// token to itself, too: the help says to return it from the helper.
    ///
    /// ## Why it breaks
    /// The token is the only thing that lets the resource refuse a holder
    /// whose lease has expired. Taking a lock that offers one and not
    /// passing it on leaves the stale-writer window open, with the fix one
    /// argument away.
    ///
    /// ## Example
    /// ```go
    /// m := concurrency.NewMutex(session, "/locks/ledger")
    /// m.Lock(ctx)
    /// db.ExecContext(ctx, "UPDATE ledger SET balance = $1 WHERE id = $2", b, id)
    /// ```
    ///
    /// ## Use instead
    /// ```go
    /// fence := m.Header().Revision
    /// db.ExecContext(ctx, "UPDATE ledger SET balance = $1, fence = $3 WHERE id = $2 AND fence < $3", b, id, fence)
    /// ```
    ///
    /// ## Not flagged
    /// Efficiency locks; sections whose writes carry the token.
    RULE {
        code: "LA303",
        name: "fencing-token-unused",
        severity: Warning,
        summary: "the grant exposes a fencing token that no write uses",
        label: "fencing token available, not used",
        help: "pass the token with each write and have the resource reject smaller ones",
        check: check,
    }
}

fn check(fa: &FileAnalysis, out: &mut Vec<Finding>) {
    for site in &fa.sites {
        // The grant's own token, or a Redis INCR counter taken alongside it.
        let counter = counters(fa, site).into_iter().next();
        let Some(token) = site
            .fencing
            .clone()
            .or(counter.map(|c| format!("INCR counter `{c}`")))
        else {
            continue;
        };
        // Only sections that write: with no write there is nothing to fence.
        if site.class == Class::Efficiency || !site.effects.iter().any(|e| e.write) {
            continue;
        }
        if site
            .effects
            .iter()
            .any(|e| e.protection == Some(Protection::Fencing))
        {
            continue;
        }
        let f = Finding::new(
            &RULE,
            site.span,
            format!("lock {} offers a fencing token ({token}) but no write in its critical section uses it", site.key_display()),
        )
        .site(site);
        // Behind a helper the token stays inside it: the fix starts there.
        let pass_on = match site.wrapper_name() {
            Some(w) => {
                format!("the grant inside `{w}` gives a token ({token}); have `{w}` return it")
            }
            None => format!("the grant already gives a token ({token})"),
        };
        out.push(match site.remedy() {
            Some(remedy) => f.help(format!("{pass_on}; {remedy}")),
            None if site.via.is_some() => f.help(format!("{pass_on} and pass it with each write")),
            None => f,
        });
    }
}
