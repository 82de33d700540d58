//! `lock-audit check`: findings, CI gates, baselines and fixes.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use super::{catalog_for, emit, fix, load_config, usage_error, CheckArgs, Color};
use crate::baseline;
use crate::catalog::Catalog;
use crate::checks::{FailOn, Rule};
use crate::config::{self, rule_set, settings_from, Settings};
use crate::outcome::Report;
use crate::report::{self, RenderOptions};

pub(super) fn run(args: CheckArgs) -> ExitCode {
    let Ok(config) = load_config(args.config.as_ref(), &args.paths) else {
        return ExitCode::from(2);
    };
    let Some(catalog) = catalog_for(&config, &args.rules_dirs) else {
        return ExitCode::from(2);
    };
    // Flags override the config file.
    let select = if args.select.is_empty() {
        &config.select
    } else {
        &args.select
    };
    let ignore = if args.ignore.is_empty() {
        &config.ignore
    } else {
        &args.ignore
    };
    let rules = match rule_set(select, ignore) {
        Ok(r) => r,
        Err(e) => return usage_error(&e),
    };
    let force_exclude = args.force_exclude;
    let config_path = config.path.clone();
    let fail_on = args.fail_on.or(config.fail_on).unwrap_or(FailOn::Warning);
    let mut settings = Settings {
        rules,
        max_file_size: args.max_file_size,
        ..settings_from(config, force_exclude)
    };
    settings.paths.shard = args.shard;
    args.analysis
        .apply(&mut settings, config_path.as_deref(), &catalog);
    if args.show_settings {
        emit(&show_settings(&settings, &args, &catalog, fail_on));
        return ExitCode::SUCCESS;
    }
    let mut report = crate::scan::check(&args.paths, &catalog, &settings);
    if let Some(rev) = &args.changed_since {
        if let Err(e) = keep_changed(&mut report, rev) {
            return usage_error(&e);
        }
    }
    if let Some(path) = &args.write_baseline {
        if let Err(e) = baseline::write(&report, path) {
            return usage_error(&format!("cannot write baseline {}: {e}", path.display()));
        }
        emit(&format!(
            "wrote {} findings to {}\n",
            report.summary.findings,
            path.display()
        ));
        return ExitCode::SUCCESS;
    }
    if let Some(path) = &args.baseline {
        match baseline::apply(&mut report, path) {
            Ok((_, stale)) if stale > 0 => eprintln!(
                "{stale} baseline entr{} in {} no longer match a finding (fixed or changed): rewrite it with --write-baseline",
                if stale == 1 { "y" } else { "ies" },
                path.display()
            ),
            Ok(_) => {}
            Err(e) => return usage_error(&e),
        }
    }
    if args.diff {
        let fixes = fix::apply(&report, false);
        emit(&fixes.diff);
        eprintln!("{}", fixes.summary(false));
        fixes.problems.iter().for_each(|p| eprintln!("{p}"));
        return ExitCode::from(u8::from(fixes.applied > 0));
    }
    if args.fix {
        let fixes = fix::apply(&report, true);
        eprintln!("{}", fixes.summary(true));
        fixes.problems.iter().for_each(|p| eprintln!("{p}"));
        if fixes.applied > 0 {
            // Report what is left, as the files now are.
            report = crate::scan::check(&args.paths, &catalog, &settings);
            if let Some(path) = &args.baseline {
                if let Err(e) = baseline::apply(&mut report, path) {
                    return usage_error(&e);
                }
            }
        }
    }
    let color = match args.color {
        Color::Always => true,
        Color::Never => false,
        Color::Auto => std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
    };
    let opts = RenderOptions {
        color,
        verbose: args.verbose,
        width: 100,
    };
    if args.statistics {
        emit(&statistics(&report));
    } else if args.output_format.is_empty() {
        emit(&report::render(&report, args.format, opts));
    } else {
        // Several outputs in one run: `--output-format sarif=results.sarif --output-format human`.
        for (format, path) in &args.output_format {
            let text = report::render(&report, *format, opts);
            match path {
                Some(p) => {
                    if let Err(e) = std::fs::write(p, text) {
                        return usage_error(&format!("cannot write {}: {e}", p.display()));
                    }
                }
                None => emit(&text),
            }
        }
    }
    if report.has_internal_errors() {
        return ExitCode::from(2);
    }
    let failing = report::each_finding(&report).any(|(_, f)| fail_on.fails(f.severity));
    ExitCode::from(u8::from(failing && !args.exit_zero))
}

/// `--show-settings`: what this run would use, resolved.
fn show_settings(
    settings: &Settings,
    args: &CheckArgs,
    catalog: &Catalog,
    fail_on: FailOn,
) -> String {
    let codes: Vec<&str> = settings.rules.iter().map(|r| r.code).collect();
    let severity: Vec<String> = settings
        .severity
        .iter()
        .map(|(c, s)| format!("{c}={}", s.name()))
        .collect();
    let config = args
        .config
        .clone()
        .or_else(|| config::find(args.paths.first().map_or(Path::new("."), PathBuf::as_path)));
    format!(
        "config: {}\npaths: {}\nrules: {}\nseverity overrides: {}\nfail-on: {}\nclassify patterns: {}\nrequire-reason: {}\ncatalog: {} libraries, {} APIs, {} SQL locks\nmax-file-size: {}\ninclude-minified: {}\ninclude-tests: {}\ncache: {}\n",
        config.map_or("(none)".into(), |p| p.display().to_string()),
        args.paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(" "),
        codes.join(", "),
        if severity.is_empty() { "(none)".into() } else { severity.join(", ") },
        format!("{fail_on:?}").to_lowercase(),
        settings.classify.len(),
        settings.require_reason,
        catalog.libraries.len(),
        catalog.apis.len(),
        catalog.sql.len(),
        settings.max_file_size,
        settings.include_minified,
        settings.include_tests,
        settings
            .cache
            .as_ref()
            .map_or("off".into(), |c| c.path().display().to_string()),
    )
}

/// `--changed-since REV`: keep the findings of files git reports as changed
/// since REV (committed, staged, unstaged or untracked).
fn keep_changed(report: &mut Report, rev: &str) -> Result<(), String> {
    let run = |args: &[&str]| -> Result<Vec<PathBuf>, String> {
        let out = std::process::Command::new("git")
            .args(args)
            .output()
            .map_err(|e| format!("cannot run git: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "git {}: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(PathBuf::from)
            .collect())
    };
    let top = run(&["rev-parse", "--show-toplevel"])?
        .into_iter()
        .next()
        .unwrap_or_default();
    let mut changed = run(&["diff", "--name-only", rev])?;
    changed.extend(run(&["ls-files", "--others", "--exclude-standard"])?);
    let changed: Vec<PathBuf> = changed
        .iter()
        .filter_map(|p| top.join(p).canonicalize().ok())
        .collect();
    report.files.retain(|f| {
        Path::new(&f.path)
            .canonicalize()
            .is_ok_and(|p| changed.contains(&p))
    });
    report.summary.findings = report.files.iter().map(|f| f.findings.len()).sum();
    Ok(())
}

/// `--statistics`: findings per rule, most frequent first.
fn statistics(report: &Report) -> String {
    let mut counts: Vec<(usize, &'static Rule)> = Vec::new();
    for (_, f) in report::each_finding(report) {
        match counts.iter_mut().find(|(_, r)| r.code == f.rule.code) {
            Some((n, _)) => *n += 1,
            None => counts.push((1, f.rule)),
        }
    }
    counts.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.code.cmp(b.1.code)));
    let mut out = String::new();
    for (n, r) in counts {
        out.push_str(&format!(
            "{n:>5}  {:<6} {:<28} {}\n",
            r.code,
            r.name,
            r.severity.name()
        ));
    }
    out.push_str(&report::summary_line(report));
    out.push('\n');
    out
}
