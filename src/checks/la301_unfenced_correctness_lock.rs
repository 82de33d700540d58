use super::declare_rule;
use crate::checks::Finding;
use crate::sites::{pools, Class, FileAnalysis};

declare_rule! {
    /// ## What it flags
    /// A lock classified `correctness` whose critical section writes (SQL,
    /// ORM, a payment API, an object store, HTTP POST/PUT/PATCH/DELETE, a
    /// queue, a file) and protects none of those writes with a fencing token,
    /// a conditional write or an idempotency key.
    ///
    /// ## Why it breaks
    /// A lease-based lock cannot know it has expired. The holder checks "I
    /// hold the lock", then pauses: a GC stop, a VM migration, a slow
    /// network. Meanwhile the lease runs out and another process takes the
    /// lock. When the first holder wakes up it writes, beside the new holder,
    /// with no idea anything happened. No check on the client side can close
    /// this window, because the pause can come right after the check. With
    /// Redis there is a second way in: replication is asynchronous, so a
    /// failover can lose the lock key and grant it again.
    ///
    /// Only the resource being written can refuse the stale writer, and it
    /// needs something to compare:
    /// - a **fencing token**: a number that grows with every grant (etcd's
    ///   revision, a ZooKeeper sequence, a Redis `INCR`), sent with each write;
    ///   the resource remembers the highest it has seen and rejects smaller ones
    ///   (`UPDATE ... WHERE id = $1 AND fence < $2`);
    /// - a **conditional write**: the write itself states what it expects
    ///   (`WHERE version = $3`, `If-Match`, DynamoDB `ConditionExpression`,
    ///   `ON CONFLICT DO NOTHING`, a state transition that tests the column it
    ///   sets: `SET state = 'sent' WHERE state = 'queued'`);
    /// - an **idempotency key**: doing it twice does it once (Stripe's
    ///   `Idempotency-Key`, a unique dedup row).
    ///
    /// ## Example
    /// ```python
    /// with r.lock(f"lock:refund:{order_id}", timeout=30, blocking_timeout=5):
    ///     stripe.Refund.create(payment_intent=pi)          # may run twice
    /// ```
    ///
    /// ## Use instead
    /// ```python
    /// stripe.Refund.create(payment_intent=pi, idempotency_key=f"refund-{order_id}")
    /// ```
    /// ```go
    /// fence := m.Header().Revision // etcd: grows with every grant
    /// db.ExecContext(ctx, `UPDATE ledger SET balance = $1, fence = $2
    ///                      WHERE account = $3 AND fence < $2`, bal, fence, acct)
    /// ```
    /// Or design the race away: a row claim with a unique constraint, or one
    /// writer per partition (a queue consumer per account).
    ///
    /// ## Not flagged
    /// Efficiency and unclassified locks; writes guarded as above; session or
    /// transaction-bound database locks (`pg_advisory_lock`, `FOR UPDATE`)
    /// whose writes go through the same connection: the database ends lock
    /// and writes together. A write a session lock's section sends through
    /// the pool (`sqlx::query(..).execute(pool)`, `pool.query(..)`) goes out
    /// on another connection and is flagged, and so are the writes after a
    /// row lock run on the pool itself (`pool.query(".. FOR UPDATE")`, Go
    /// `s.db.QueryRowContext(..)` with `db *sqlx.DB`): that statement commits
    /// alone and its lock with it. (A row claim, `UPDATE .. SET owner
    /// = me WHERE owner IS NULL`, is not such a lock: committed, it outlives
    /// its transaction.)
    /// A de-duplication marker set under the lock before
    /// the write (`SET payout:{id}:sent 1 NX EX 86400`) is an idempotency key
    /// for it.
    RULE {
        code: "LA301",
        name: "unfenced-correctness-lock",
        severity: Error,
        summary: "a correctness lock guards writes with no fencing token, conditional write or idempotency key",
        label: "correctness lock without fencing",
        help: "pass a fencing token the resource checks, make the write conditional, or use an idempotency key",
        check: check,
    }
}

fn check(fa: &FileAnalysis, out: &mut Vec<Finding>) {
    // Built on the first session lock's write that needs it, once per file.
    let chains = std::cell::OnceCell::new();
    for site in &fa.sites {
        if site.class != Class::Correctness {
            continue;
        }
        // A session or transaction lock ends with its writes, unless a write
        // goes out on another connection of the pool.
        let bound = site.ends_with_writes();
        let Some(write) = site.effects.iter().find(|e| {
            e.write
                && e.protection.is_none()
                && (!bound
                    || pools::write_beside_session(
                        fa.model,
                        chains.get_or_init(|| pools::Chains::new(fa.model)),
                        site,
                        e.span,
                    ))
        }) else {
            continue;
        };
        let weakness = match site.backend.as_str() {
            "redis" => "Redis replicates asynchronously, so a failover can grant the lock twice, and a paused holder can outlive its lease",
            _ => "a paused holder can outlive its lease and write beside the next holder",
        };
        let f = Finding::new(
            &RULE,
            site.span,
            format!(
                "correctness lock {} guards a write that nothing fences: {weakness}",
                site.key_display()
            ),
        )
        .site(site)
        .label(write.span, "unfenced write");
        out.push(match &write.remedy {
            Some(remedy) => f.help(remedy.clone()),
            None => f,
        });
    }
}
