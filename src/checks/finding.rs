//! A finding: a typed value built by a check, rendered by `report/`.

use serde::Serialize;

use super::fix::Fix;
use super::Rule;
use crate::model::Span;
use crate::sites::{Class, LockSite};

#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Serialize,
    serde::Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warning,
    Error,
}

impl Severity {
    pub fn name(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// A secondary span with a short caption (the key, the TTL, the release...).
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct Label {
    pub span: Span,
    pub text: String,
}

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Finding {
    #[serde(with = "super::rule")]
    pub rule: &'static Rule,
    pub severity: Severity,
    /// Where the finding points (see rules.md, "Where a finding points").
    pub span: Span,
    /// One line, lowercase, no trailing period.
    pub message: String,
    pub labels: Vec<Label>,
    /// Starts with a verb.
    pub help: String,
    /// The acquisition this finding belongs to, if any.
    pub site_span: Option<Span>,
    pub class: Class,
    /// Why lock-audit took the call for a lock (receiver evidence, lock words).
    pub evidence: Vec<String>,
    /// Why the lock has its class.
    pub class_evidence: Vec<String>,
    /// A source edit that resolves the finding, if the rule knows one.
    #[serde(default)]
    pub fix: Option<Fix>,
}

impl Finding {
    pub fn new(rule: &'static Rule, span: Span, message: impl Into<String>) -> Self {
        Finding {
            rule,
            severity: rule.severity,
            span,
            message: message.into(),
            labels: Vec::new(),
            help: rule.help.to_string(),
            site_span: None,
            class: Class::Unclassified,
            evidence: Vec::new(),
            class_evidence: Vec::new(),
            fix: None,
        }
    }

    pub fn fix(mut self, fix: Option<Fix>) -> Self {
        self.fix = fix;
        self
    }

    pub fn label(mut self, span: Span, text: impl Into<String>) -> Self {
        if span != Span::default() {
            self.labels.push(Label {
                span,
                text: text.into(),
            });
        }
        self
    }

    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = help.into();
        self
    }

    /// Attaches the finding to its lock site: class, and a label on the acquisition.
    pub fn site(mut self, site: &LockSite) -> Self {
        self.site_span = Some(site.span);
        self.class = site.class;
        self.evidence
            .extend(site.evidence.iter().chain(&site.class_evidence).cloned());
        self.class_evidence = site.class_evidence.clone();
        self
    }

    pub fn evidence(mut self, why: impl Into<String>) -> Self {
        self.evidence.push(why.into());
        self
    }
}

/// The lowest severity that fails the run, or `never`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FailOn {
    Error,
    Warning,
    Info,
    Never,
}

impl FailOn {
    /// Does a finding of severity `s` fail the run?
    pub fn fails(self, s: Severity) -> bool {
        match self {
            FailOn::Error => s >= Severity::Error,
            FailOn::Warning => s >= Severity::Warning,
            FailOn::Info => true,
            FailOn::Never => false,
        }
    }
}
