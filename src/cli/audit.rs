//! `lock-audit audit`: the inventory of every lock site.

use std::process::ExitCode;

use super::{catalog_for, emit, load_config, usage_error, AuditArgs};
use crate::checks;
use crate::config::{settings_from, Settings};
use crate::report;

pub(super) fn run(args: AuditArgs) -> ExitCode {
    if let Some(missing) = args.paths.iter().find(|p| !p.exists()) {
        return usage_error(&format!("{}: no such file or directory", missing.display()));
    }
    let Ok(config) = load_config(args.config.as_ref(), &args.paths) else {
        return ExitCode::from(2);
    };
    let Some(catalog) = catalog_for(&config, &args.rules_dirs) else {
        return ExitCode::from(2);
    };
    // The audit runs every rule, the audit-only ones included.
    let config_path = config.path.clone();
    let mut settings = Settings {
        rules: checks::REGISTRY.to_vec(),
        ..settings_from(config, false)
    };
    args.analysis
        .apply(&mut settings, config_path.as_deref(), &catalog, &args.paths);
    let report = crate::scan::check(&args.paths, &catalog, &settings);
    emit(&report::audit::render(&report, args.format));
    for line in report::notice_lines(&report, args.verbose) {
        eprintln!("{line}");
    }
    for line in report::near_miss_lines(&report, args.verbose) {
        eprintln!("{line}");
    }
    ExitCode::from(if report.has_internal_errors() { 2 } else { 0 })
}
