//! `lock-audit explain RULE|config|catalog|kinds`: a rule's documentation, or the
//! reference of the config file, the catalog or the kinds of site (what error
//! messages point at: the installed binary carries them).

use std::process::ExitCode;

use super::{emit, usage_error};
use crate::checks;
use crate::error::closest;

/// The commented starter config: every key with an example.
const CONFIG: &str = include_str!("../../docs/lock-audit.example.yaml");
/// The catalog's keys (`rules/README.md`).
const CATALOG: &str = include_str!("../../rules/README.md");
/// Locks and markers, and the rules that apply to each (`docs/kinds.md`).
const KINDS: &str = include_str!("../../docs/kinds.md");

pub(super) fn run(id: &str) -> ExitCode {
    match id {
        "config" => return page(CONFIG),
        "catalog" => return page(CATALOG),
        "kinds" | "marker" | "markers" => return page(KINDS),
        _ => {}
    }
    let Some(rule) = checks::lookup(id) else {
        let names = checks::REGISTRY.iter().flat_map(|r| [r.code, r.name]);
        let hint = closest(id, names).map_or(String::new(), |n| format!("; did you mean `{n}`?"));
        return usage_error(&format!(
            "unknown rule `{id}`{hint} (`lock-audit rules` lists them; `explain config` and `explain catalog` document the files, `explain kinds` locks and markers)"
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
