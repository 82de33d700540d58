use super::declare_rule;
use crate::checks::Finding;
use crate::sites::FileAnalysis;

declare_rule! {
    /// ## What it flags
    /// A suppression comment that suppresses no finding: the code it names
    /// does not fire on its line (or, for `allow-file`, anywhere in the file).
    ///
    /// ## Why it matters
    /// Stale suppressions pile up after fixes and hide the next real finding
    /// on that line. Removing them keeps every remaining one meaningful.
    ///
    /// ## Example
    /// ```python
    /// if r.set(key, token, nx=True, px=30_000):  # lock-audit: allow(LA101, reason="legacy")
    /// ```
    ///
    /// ## Use instead
    /// Delete the suppression.
    ///
    /// ## Not flagged
    /// Suppressions that suppress something.
    RULE {
        code: "LA002",
        name: "unused-suppression",
        severity: Warning,
        summary: "a suppression suppresses nothing",
        label: "unused suppression",
        help: "remove the suppression",
        check: check,
    }
}

/// Reported by the suppression stage, which sees the comments.
fn check(_: &FileAnalysis, _: &mut Vec<Finding>) {}
