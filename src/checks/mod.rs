//! The rules: one file per rule, registered in [`REGISTRY`].
//!
//! Each rule file declares its metadata and documentation with
//! [`declare_rule!`] (the `///` lines become `lock-audit explain` text) and a
//! `check` function from a file's [`FileAnalysis`] to findings. Checks never
//! see parsers, YAML or miette: only lock sites and releases.

mod la001_bad_suppression;
mod la002_unused_suppression;
mod la101_missing_ttl;
mod la102_non_atomic_acquire;
mod la103_constant_lock_owner;
mod la104_acquire_result_ignored;
mod la105_unbounded_wait;
mod la201_unchecked_release;
mod la202_racy_release_check;
mod la203_release_not_guaranteed;
mod la301_unfenced_correctness_lock;
mod la302_redlock_for_correctness;
mod la303_fencing_token_unused;
mod la304_check_then_write;
mod la401_unclassified_lock;
mod la402_lease_outlives_work_unknown;

mod finding;
pub mod fix;

use crate::sites::FileAnalysis;
pub use finding::{FailOn, Finding, Label, Severity};
pub use fix::Fix;

/// A rule's identity, documentation and logic.
pub struct Rule {
    pub code: &'static str,
    pub name: &'static str,
    pub severity: Severity,
    /// One line for `lock-audit rules`.
    pub summary: &'static str,
    /// The default fix hint.
    pub help: &'static str,
    /// The caption on the span the finding points at.
    pub label: &'static str,
    /// Markdown documentation for `lock-audit explain`.
    pub doc: &'static str,
    /// Off in `check` unless selected; on in `audit` (LA4xx).
    pub audit_only: bool,
    pub check: fn(&FileAnalysis, &mut Vec<Finding>),
}

impl std::fmt::Debug for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.code, self.name)
    }
}

impl Rule {
    /// The documentation with the one leading space of each `///` line removed.
    pub fn documentation(&self) -> String {
        self.doc
            .lines()
            .map(|l| l.strip_prefix(' ').unwrap_or(l))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// Declares a rule: doc comments, then its fields.
macro_rules! declare_rule {
    (@audit) => { false };
    (@audit audit_only) => { true };
    ($(#[doc = $doc:literal])* $id:ident {
        code: $code:literal, name: $name:literal, severity: $sev:ident,
        summary: $summary:literal, label: $label:literal, help: $help:literal,
        check: $check:path $(, $audit:ident)? $(,)?
    }) => {
        pub static $id: $crate::checks::Rule = $crate::checks::Rule {
            code: $code,
            name: $name,
            severity: $crate::checks::Severity::$sev,
            summary: $summary,
            help: $help,
            label: $label,
            doc: concat!($($doc, "\n"),*),
            check: $check,
            audit_only: $crate::checks::declare_rule!(@audit $($audit)?),
        };
    };
}
pub(crate) use declare_rule;

/// Every rule, in code order. Adding a rule is one line here.
pub use la001_bad_suppression::RULE as BAD_SUPPRESSION;
pub use la002_unused_suppression::RULE as UNUSED_SUPPRESSION;

pub static REGISTRY: &[&Rule] = &[
    &la001_bad_suppression::RULE,
    &la002_unused_suppression::RULE,
    &la101_missing_ttl::RULE,
    &la102_non_atomic_acquire::RULE,
    &la103_constant_lock_owner::RULE,
    &la104_acquire_result_ignored::RULE,
    &la105_unbounded_wait::RULE,
    &la201_unchecked_release::RULE,
    &la202_racy_release_check::RULE,
    &la203_release_not_guaranteed::RULE,
    &la301_unfenced_correctness_lock::RULE,
    &la302_redlock_for_correctness::RULE,
    &la303_fencing_token_unused::RULE,
    &la304_check_then_write::RULE,
    &la401_unclassified_lock::RULE,
    &la402_lease_outlives_work_unknown::RULE,
];

/// The rules `check` runs when none are selected: all but the audit-only ones.
pub fn defaults() -> Vec<&'static Rule> {
    REGISTRY.iter().copied().filter(|r| !r.audit_only).collect()
}

/// Finds a rule by code (`LA201`, any case) or name (`unchecked-release`).
pub fn lookup(id: &str) -> Option<&'static Rule> {
    REGISTRY
        .iter()
        .copied()
        .find(|r| r.code.eq_ignore_ascii_case(id) || r.name == id)
}

/// Runs the selected rules over one file.
pub fn run(fa: &FileAnalysis, selected: &[&'static Rule]) -> Vec<Finding> {
    let mut out = Vec::new();
    for rule in selected {
        (rule.check)(fa, &mut out);
    }
    out
}

/// `&'static Rule` as its code.
pub mod rule {
    use serde::{Deserialize, Deserializer, Serializer};

    use super::{Rule, REGISTRY};

    pub fn serialize<S: Serializer>(rule: &&'static Rule, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(rule.code)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<&'static Rule, D::Error> {
        let code = String::deserialize(d)?;
        REGISTRY
            .iter()
            .copied()
            .find(|r| r.code == code)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown rule {code}")))
    }
}

/// Rule codes (`&'static str`), checked against the registry.
pub mod codes {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::REGISTRY;

    pub fn serialize<S: Serializer>(codes: &[&'static str], s: S) -> Result<S::Ok, S::Error> {
        codes.serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<&'static str>, D::Error> {
        Vec::<String>::deserialize(d)?
            .iter()
            .map(|code| {
                REGISTRY
                    .iter()
                    .find(|r| r.code == code)
                    .map(|r| r.code)
                    .ok_or_else(|| serde::de::Error::custom(format!("unknown rule {code}")))
            })
            .collect()
    }
}
