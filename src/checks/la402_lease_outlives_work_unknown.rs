use super::declare_rule;
use crate::catalog::raw::EffectKind;
use crate::checks::Finding;
use crate::sites::{FileAnalysis, Ttl};

declare_rule! {
    /// ## What it flags
    /// (audit) A fixed TTL guarding a critical section that sleeps or makes
    /// network calls, with no renewal (`extend`, `refresh`, a watchdog).
    ///
    /// ## Why it matters
    /// The TTL is a guess about the worst case of the work it guards. Work
    /// that waits on the network has no worst case: when it runs longer
    /// than the lease, the lock silently passes to someone else mid-work.
    ///
    /// ## Example
    /// ```python
    /// with r.lock("lock:export", timeout=60, blocking_timeout=5):
    ///     requests.post(EXPORT_URL, json=payload)     # may take minutes
    /// ```
    ///
    /// ## Use instead
    /// Renew the lease while working (`lock.extend()`, a watchdog such as
    /// Redisson's, python-redis-lock `auto_renewal=True`), or bound the work
    /// below the TTL with a timeout.
    ///
    /// ## Not flagged
    /// Renewed leases, session-bound locks, sections with no slow calls. Off
    /// in `check` unless selected; on in `audit`.
    RULE {
        code: "LA402",
        name: "lease-outlives-work-unknown",
        severity: Info,
        summary: "a fixed TTL guards work that waits on the network or sleeps, with no renewal",
        label: "fixed lease around slow work",
        help: "renew the lease during the work, or bound the work below the TTL",
        check: check,
        audit_only,
    }
}

fn check(fa: &FileAnalysis, out: &mut Vec<Finding>) {
    for site in fa.locks() {
        if !matches!(site.ttl, Ttl::Given(_) | Ttl::Default(_)) || site.renews {
            continue;
        }
        let Some(slow) = site
            .effects
            .iter()
            .find(|e| matches!(e.kind, EffectKind::Slow | EffectKind::HttpWrite))
        else {
            continue;
        };
        let f = Finding::new(
            &RULE,
            site.span,
            format!(
                "lock {} has a fixed lease but its work waits on `{}`",
                site.key_display(),
                slow.text
            ),
        )
        .site(site)
        .label(slow.span, "may outlast the lease");
        out.push(f);
    }
}
