//! `lock-audit check`: findings, CI gates, baselines and fixes.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use super::{
    catalog_for, emit, fix, load_config, settings_view, statistics, stdin, usage_error, CheckArgs,
    Color,
};
use crate::baseline;
use crate::checks::FailOn;
use crate::config::{rule_set, settings_from, Settings};
use crate::outcome::Report;
use crate::report::{self, RenderOptions};

pub(super) fn run(args: CheckArgs) -> ExitCode {
    // `check - --stdin-filename PATH`: the buffer comes from stdin and stands
    // for PATH (its language, config and project).
    let stdin = args.paths.iter().any(|p| p.as_os_str() == "-");
    let paths = match (&args.stdin_filename, stdin) {
        (Some(name), true) if args.paths.len() == 1 => vec![name.clone()],
        (None, true) => {
            return usage_error("`check -` reads a buffer from stdin: name the file it stands for with --stdin-filename PATH")
        }
        (_, true) => return usage_error("`-` (stdin) cannot be combined with other paths"),
        (Some(_), false) => return usage_error("--stdin-filename is for `check -` (a buffer on stdin)"),
        (None, false) => args.paths.clone(),
    };
    if !stdin {
        if let Some(missing) = paths.iter().find(|p| !p.exists()) {
            return usage_error(&format!("{}: no such file or directory", missing.display()));
        }
    }
    if args.statistics && !statistics::supports(args.format) {
        return usage_error("--statistics prints a table (human, concise) or JSON (--format json)");
    }
    let Ok(config) = load_config(args.config.as_ref(), &paths) else {
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
    settings
        .rule_folders
        .extend(args.rules_dirs.iter().cloned());
    settings.paths.shard = args.shard;
    args.analysis
        .apply(&mut settings, config_path.as_deref(), &catalog, &paths);
    if args.show_settings {
        emit(&settings_view::render(
            &settings,
            &args,
            config_path.as_deref(),
            &catalog,
            fail_on,
        ));
        return ExitCode::SUCCESS;
    }
    let scan = || match stdin {
        true => stdin::check(&paths[0], &catalog, &settings),
        false => Ok(crate::scan::check(&paths, &catalog, &settings)),
    };
    let mut report = match scan() {
        Ok(r) => r,
        Err(e) => return usage_error(&e),
    };
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
                "{stale} baseline entr{} in {} no longer match a finding (fixed or changed): --write-baseline {} updates them (entries of files not scanned are kept)",
                if stale == 1 { "y" } else { "ies" },
                path.display(),
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
    if args.fix && !stdin {
        let fixes = fix::apply(&report, true);
        eprintln!("{}", fixes.summary(true));
        fixes.problems.iter().for_each(|p| eprintln!("{p}"));
        if fixes.applied > 0 {
            // Report what is left, as the files now are.
            report = crate::scan::check(&paths, &catalog, &settings);
            if let Some(path) = &args.baseline {
                if let Err(e) = baseline::apply(&mut report, path) {
                    return usage_error(&e);
                }
            }
        }
    }
    let no_color = std::env::var_os("NO_COLOR");
    let color = use_color(
        args.color,
        std::io::stdout().is_terminal(),
        no_color.as_deref(),
    );
    let opts = RenderOptions { color, width: 100 };
    if args.statistics {
        emit(&statistics::render(&report, args.format).unwrap_or_default());
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
    // Notices on stderr, as `audit` prints them.
    for line in report::notice_lines(&report, args.verbose) {
        eprintln!("{line}");
    }
    if report.summary.files_scanned == 0 && !stdin {
        let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        eprintln!("no source files found under {}", shown.join(" "));
    }
    if report.has_internal_errors() {
        return ExitCode::from(2);
    }
    let failing = report::each_finding(&report).any(|(_, f)| fail_on.fails(f.severity));
    ExitCode::from(u8::from(failing && !args.exit_zero))
}

/// `--changed-since REV`: keep the findings of files git reports as changed
/// since REV (committed, staged, unstaged or untracked).
fn keep_changed(report: &mut Report, rev: &str) -> Result<(), String> {
    // In the scanned tree's repository, wherever lock-audit runs from.
    let repo = report.root.clone();
    let run = |args: &[&str]| -> Result<Vec<PathBuf>, String> {
        let out = std::process::Command::new("git")
            .current_dir(&repo)
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
    let kept = |path: &Path| path.canonicalize().is_ok_and(|p| changed.contains(&p));
    report.files.retain(|f| kept(Path::new(&f.path)));
    let root = report.root.clone();
    report.scanned.retain(|rel| kept(&root.join(rel)));
    report.summary.findings = report.files.iter().map(|f| f.findings.len()).sum();
    Ok(())
}

/// Colour in human output: `auto` means a terminal, unless NO_COLOR is set
/// and not empty (no-color.org).
fn use_color(choice: Color, terminal: bool, no_color: Option<&std::ffi::OsStr>) -> bool {
    match choice {
        Color::Always => true,
        Color::Never => false,
        Color::Auto => terminal && no_color.is_none_or(|v| v.is_empty()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_color_counts_only_when_not_empty() {
        let set = Some(std::ffi::OsStr::new("1"));
        let empty = Some(std::ffi::OsStr::new(""));
        assert!(use_color(Color::Auto, true, None));
        assert!(use_color(Color::Auto, true, empty));
        assert!(!use_color(Color::Auto, true, set));
        assert!(!use_color(Color::Auto, false, None));
        assert!(use_color(Color::Always, false, set));
    }
}
