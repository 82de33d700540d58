use super::declare_rule;
use crate::checks::Finding;
use crate::sites::{Class, FileAnalysis};

declare_rule! {
    /// ## What it flags
    /// (audit) A lock that no annotation, configuration or heuristic
    /// classifies as `correctness` or `efficiency`.
    ///
    /// ## Why it matters
    /// The two kinds need different things: an efficiency lock may fail
    /// now and then; a correctness lock must be fenced. Until someone says
    /// which this one is, lock-audit cannot tell whether it is safe.
    ///
    /// ## Example
    /// ```python
    /// with r.lock(f"lock:{name}", timeout=30, blocking_timeout=5):
    ///     run(name)
    /// ```
    ///
    /// ## Use instead
    /// ```python
    /// # lock-audit: efficiency reason="duplicate runs only waste work"
    /// with r.lock(f"lock:{name}", timeout=30, blocking_timeout=5):
    ///     run(name)
    /// ```
    /// or a `classify:` pattern in `lock-audit.yaml`.
    ///
    /// ## Not flagged
    /// Classified locks. Off in `check` unless selected; on in `audit`.
    RULE {
        code: "LA401",
        name: "unclassified-lock",
        severity: Info,
        summary: "no annotation, config pattern or heuristic decides the lock's class",
        label: "unclassified",
        help: "annotate it: `lock-audit: correctness` or `lock-audit: efficiency` with a reason",
        check: check,
        audit_only,
    }
}

fn check(fa: &FileAnalysis, out: &mut Vec<Finding>) {
    for site in fa.sites.iter().filter(|s| s.class == Class::Unclassified) {
        let f = Finding::new(
            &RULE,
            site.span,
            format!(
                "lock {} is neither correctness nor efficiency as far as lock-audit can tell",
                site.key_display()
            ),
        )
        .site(site);
        out.push(f);
    }
}
