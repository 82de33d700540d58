use super::declare_rule;
use crate::checks::Finding;
use crate::model::Call;
use crate::sites::branches::{acquisition_names, refusal_branch};
use crate::sites::resolve;
use crate::sites::section::section_calls;
use crate::sites::{Class, FileAnalysis, LockSite};

declare_rule! {
    /// ## What it flags
    /// A critical section that re-checks ownership (`lock.owned()`,
    /// `lock.locked()`, `isHeldByCurrentThread()`, `IsOwner()`) and then
    /// writes, as if the check made the write safe. Not for locks classified
    /// `efficiency`.
    ///
    /// ## Why it breaks
    /// The check answers "did I hold the lock a moment ago". The lease can
    /// expire right after it answers yes, before the write lands. The check
    /// narrows the window; it does not close it.
    ///
    /// ## Example
    /// ```python
    /// if lock.owned():
    ///     db.execute("UPDATE accounts SET balance = %s WHERE id = %s", (b, i))
    /// ```
    ///
    /// ## Use instead
    /// Let the resource decide: a fencing token or a conditional write
    /// (`... WHERE id = %s AND version = %s`).
    ///
    /// ## Not flagged
    /// Re-checks with no write after them (a write made earlier by a helper
    /// the section calls counts where the helper is called); efficiency locks;
    /// database-bound locks (`FOR UPDATE`, advisory locks), which no lease
    /// ends under their holder; de-duplication markers, which have no holder.
    RULE {
        code: "LA304",
        name: "check-then-write",
        severity: Warning,
        summary: "the critical section re-checks ownership and then writes",
        label: "ownership re-check",
        help: "make the write conditional on a fencing token or version instead of checking first",
        check: check,
    }
}

fn check(fa: &FileAnalysis, out: &mut Vec<Finding>) {
    let recheck = &fa.catalog.protection.recheck_methods;
    // A lease can expire between a check and a write; a database-bound lock
    // cannot, and a marker has no holder to re-check.
    let leased = |s: &&LockSite| {
        !matches!(s.class, Class::Efficiency | Class::Marker) && !s.ends_with_writes()
    };
    for site in fa.sites.iter().filter(leased) {
        let handle = site.handle.as_deref();
        // `lock.owned()`, or `GET` of the lock key compared with the token.
        let reads_key = |c: &Call| {
            c.name.eq_ignore_ascii_case("get")
                && !site.key_text.is_empty()
                && c.args
                    .iter()
                    .any(|a| resolve::key_text(fa.model, &a.value, c.func) == site.key_text)
        };
        // Who holds the result, read once per site and only for a re-check.
        let names = std::cell::OnceCell::new();
        let refused = |c: &Call| {
            let names = names.get_or_init(|| acquisition_names(fa.model, site));
            refused_path(fa, site, names, c)
        };
        let checks = section_calls(fa.model, site).into_iter().filter(|(c, _)| {
            let receiver = c.receiver.as_deref().map(|r| r.text.as_str());
            // Without a handle, only a receiver named as a lock (`self._lock.owned()`):
            // `serializer.is_valid()` checks a form, not the lock.
            let on_lock = match handle {
                Some(h) => receiver == Some(h),
                None => {
                    receiver.is_some_and(|r| crate::sites::lock_words(fa.catalog, &[r]).is_some())
                }
            };
            ((recheck.contains(&c.name) && on_lock) || reads_key(c)) && !refused(c)
        });
        for (c, at) in checks {
            let Some(write) = site
                .effects
                .iter()
                .find(|e| e.write && e.reached.start > at.end)
            else {
                continue;
            };
            let f = Finding::new(
                &RULE,
                c.span,
                format!("`{}` re-checks lock {} before a write: the lease can expire between the check and the write", c.name, site.key_display()),
            )
            .site(site)
            .label(write.span, "write after the check");
            out.push(match (write.protection, &write.remedy) {
                (None, Some(remedy)) => f.help(format!(
                    "a re-check only narrows the window; protect the write itself: {remedy}"
                )),
                _ => f,
            });
        }
    }
}

/// Is `c` on the path of a refused acquisition: in a branch that tests the
/// acquisition for failure and leaves after it (`if not r.setnx(k, me):
/// log(.., r.get(k)); return`)? There it reads who holds the lock; nothing is
/// written after it.
fn refused_path(fa: &FileAnalysis, site: &LockSite, names: &[String], c: &Call) -> bool {
    let model = fa.model;
    refusal_branch(model, site, names, c.span).is_some_and(|t| {
        model
            .exits_in(site.func)
            .any(|e| t.stmt.contains(e.span) && e.span.start > c.span.end)
    })
}
