//! `lock-audit explain RULE|config|catalog`: a rule's documentation, or the
//! reference of the config file or the catalog (what error messages point at:
//! the installed binary carries them).

use std::process::ExitCode;

use super::{emit, usage_error};
use crate::checks;
use crate::error::closest;

/// The commented starter config: every key with an example.
const CONFIG: &str = include_str!("../../docs/lock-audit.example.yaml");
/// The catalog's keys (`rules/README.md`).
const CATALOG: &str = include_str!("../../rules/README.md");

pub(super) fn run(id: &str) -> ExitCode {
    match id {
        "config" => return page(CONFIG),
        "catalog" => return page(CATALOG),
        _ => {}
    }
    let Some(rule) = checks::lookup(id) else {
        let names = checks::REGISTRY.iter().flat_map(|r| [r.code, r.name]);
        let hint = closest(id, names).map_or(String::new(), |n| format!("; did you mean `{n}`?"));
        return usage_error(&format!(
            "unknown rule `{id}`{hint} (`lock-audit rules` lists them; `explain config` and `explain catalog` document the files)"
        ));
    };
    page(&format!(
        "# {} {} ({})\n\n{}\n\n{}",
        rule.code,
        rule.name,
        rule.severity.name(),
        rule.summary,
        rule.documentation()
    ))
}

/// Prints `text` ending in exactly one newline.
fn page(text: &str) -> ExitCode {
    emit(&format!("{}\n", text.trim_end()));
    ExitCode::SUCCESS
}
