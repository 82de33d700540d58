use super::declare_rule;
use crate::checks::Finding;
use crate::sites::FileAnalysis;

declare_rule! {
    /// ## What it flags
    /// A suppression comment (`lock-audit: allow(...)` or `allow-file(...)`)
    /// with no `reason="..."`, or naming a rule that does not exist; and any
    /// `lock-audit:` comment that does not parse (`allow LA201` without
    /// parentheses, an unclosed quote, an unknown directive), which would
    /// otherwise be silently ignored. A reason may contain commas and
    /// parentheses inside its quotes.
    ///
    /// ## Why it matters
    /// A suppression is a decision that a finding does not apply. Without
    /// the reason, the next reader cannot tell a considered exception from
    /// a silenced bug, and a misspelt code silently suppresses nothing.
    ///
    /// ## Example
    /// ```python
    /// r.delete(key)  # lock-audit: allow(LA201)
    /// ```
    ///
    /// ## Use instead
    /// ```python
    /// r.delete(key)  # lock-audit: allow(LA201, reason="key is per-request, never shared")
    /// ```
    ///
    /// ## Not flagged
    /// Suppressions with a reason; with `require-reason: false` in the
    /// config, reasonless ones.
    RULE {
        code: "LA001",
        name: "bad-suppression",
        severity: Warning,
        summary: "a suppression has no reason, names an unknown rule, or does not parse",
        label: "suppression",
        help: "add reason=\"...\" and check the rule code or name",
        check: check,
    }
}

/// Reported by the suppression stage, which sees the comments.
fn check(_: &FileAnalysis, _: &mut Vec<Finding>) {}
