//! `lock-audit explain RULE`: a rule's documentation.

use std::process::ExitCode;

use super::{emit, usage_error};
use crate::checks;

pub(super) fn run(id: &str) -> ExitCode {
    let Some(rule) = checks::lookup(id) else {
        return usage_error(&format!("unknown rule `{id}` (see `lock-audit rules`)"));
    };
    emit(&format!(
        "# {} {} ({})\n\n{}\n\n{}",
        rule.code,
        rule.name,
        rule.severity.name(),
        rule.summary,
        rule.documentation()
    ));
    ExitCode::SUCCESS
}
