//! `check --show-settings`: everything a run would use, resolved.

use std::path::Path;

use super::CheckArgs;
use crate::catalog::Catalog;
use crate::checks::FailOn;
use crate::config::Settings;

/// One `key: value` line per setting.
pub(super) fn render(
    settings: &Settings,
    args: &CheckArgs,
    config: Option<&Path>,
    catalog: &Catalog,
    fail_on: FailOn,
) -> String {
    let list = |items: Vec<String>| {
        if items.is_empty() {
            "(none)".to_string()
        } else {
            items.join(", ")
        }
    };
    let codes: Vec<String> = settings.rules.iter().map(|r| r.code.to_string()).collect();
    let severity = settings
        .severity
        .iter()
        .map(|(c, s)| format!("{c}={}", s.name()))
        .collect();
    let overrides = settings
        .overrides
        .iter()
        .map(|o| {
            let sev: Vec<String> = o
                .severity
                .iter()
                .map(|(c, s)| format!("{c}={}", s.name()))
                .collect();
            format!(
                "{} ignore [{}] severity [{}]",
                o.pattern,
                o.ignore.join(" "),
                sev.join(" ")
            )
        })
        .collect();
    let globs = |g: &[String]| list(g.to_vec());
    let lines = [
        (
            "config",
            config.map_or("(none)".into(), |p| p.display().to_string()),
        ),
        ("project root", settings.paths.root.display().to_string()),
        (
            "paths",
            list(args.paths.iter().map(|p| p.display().to_string()).collect()),
        ),
        ("rules", list(codes)),
        ("severity overrides", list(severity)),
        ("fail-on", format!("{fail_on:?}").to_lowercase()),
        ("include", globs(&settings.paths.include_patterns)),
        ("exclude", globs(&settings.paths.exclude_patterns)),
        (
            "default-excludes",
            settings.paths.default_excludes.to_string(),
        ),
        ("force-exclude", settings.paths.force_exclude.to_string()),
        ("overrides", list(overrides)),
        ("classify patterns", settings.classify.len().to_string()),
        (
            "assume-class",
            settings
                .assume_class
                .map_or("unclassified", |c| c.name())
                .to_string(),
        ),
        ("require-reason", settings.require_reason.to_string()),
        (
            "rule folders",
            list(
                settings
                    .rule_folders
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect(),
            ),
        ),
        (
            "catalog",
            format!(
                "{} libraries, {} APIs, {} SQL locks",
                catalog.libraries.len(),
                catalog.apis.len(),
                catalog.sql.len()
            ),
        ),
        ("max-file-size", settings.max_file_size.to_string()),
        ("include-minified", settings.include_minified.to_string()),
        ("include-tests", settings.include_tests.to_string()),
        (
            "cache",
            settings
                .cache
                .as_ref()
                .map_or("off".into(), |c| c.path().display().to_string()),
        ),
    ];
    lines.iter().map(|(k, v)| format!("{k}: {v}\n")).collect()
}
