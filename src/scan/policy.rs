//! What the settings change in a file's findings after the checks ran:
//! severities, per-path overrides, and test code kept out of sight.

use crate::checks::Finding;
use crate::config::{Override, Settings};
use crate::model::{FileModel, Span};

/// Severity overrides, then per-path overrides (which may also drop rules).
pub(super) fn severities(findings: &mut Vec<Finding>, rel: &str, settings: &Settings) {
    let here: Vec<&Override> = settings
        .overrides
        .iter()
        .filter(|o| o.path.is_match(rel))
        .collect();
    findings.retain(|f| !here.iter().any(|o| o.ignore.contains(&f.rule.code)));
    for f in findings.iter_mut() {
        let specific = here
            .iter()
            .rev()
            .find_map(|o| o.severity.iter().find(|(c, _)| *c == f.rule.code));
        if let Some((_, s)) =
            specific.or_else(|| settings.severity.iter().find(|(c, _)| *c == f.rule.code))
        {
            f.severity = *s;
        }
    }
}

/// Is `span` test code that is not shown (a test file, a Rust `#[cfg(test)]`
/// module)? `whole_file`: the path is a test path. Its wrappers and constants
/// still count.
pub(super) fn in_tests(
    span: Span,
    whole_file: bool,
    model: &FileModel,
    settings: &Settings,
) -> bool {
    !settings.include_tests && (whole_file || model.test_regions.iter().any(|r| r.contains(span)))
}
