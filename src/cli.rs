//! The command line: `check`, `explain`, `rules`. Returns the exit code.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::baseline;
use crate::cache::{self, Cache};

use crate::catalog::Catalog;
use crate::checks::FailOn;
use crate::checks::{self, Rule};
use crate::config::Settings;
use crate::config::{self, rule_set, settings_from, Config};
use crate::report::audit::AuditFormat;
use crate::report::{self, Format, RenderOptions};

#[derive(Parser, Debug)]
#[command(
    name = "lock-audit",
    version,
    about = "Find distributed-lock bugs: missing TTLs, unchecked releases, unfenced writes"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Scan files and directories for lock findings (default: the current directory).
    Check(Box<CheckArgs>),
    /// Inventory every lock site: backend, library, key, TTL, wait, releases, findings.
    Audit(AuditArgs),
    /// Print a rule's documentation: what it flags, why it breaks, what to do instead.
    Explain {
        /// A rule code (`LA201`) or name (`unchecked-release`).
        rule: String,
    },
    /// List every rule with its code, name, default severity and summary.
    Rules,
    /// Write a commented starter `lock-audit.yaml` in the current directory.
    Init,
    /// Run the language server on stdin/stdout (diagnostics, hover, code actions).
    Lsp,
    /// List every library the catalog recognises (markdown table).
    Libraries {
        /// Extra catalog folders to include (repeatable).
        #[arg(long = "rules", value_name = "DIR")]
        rules_dirs: Vec<PathBuf>,
        /// Print the prefilter's trigger literals instead, one per line (a file
        /// without any of them is never parsed).
        #[arg(long)]
        triggers: bool,
    },
}

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// Files or directories to scan; directories honour .gitignore.
    #[arg(default_value = ".")]
    pub paths: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// Only run these rules (codes or names, comma-separated or repeated).
    #[arg(long, value_delimiter = ',')]
    pub select: Vec<String>,
    /// Do not run these rules (codes or names).
    #[arg(long, value_delimiter = ',')]
    pub ignore: Vec<String>,
    /// An extra catalog folder of `*.yaml` API descriptions (repeatable).
    #[arg(long = "rules", value_name = "DIR")]
    pub rules_dirs: Vec<PathBuf>,
    /// Exit 1 when a finding at or above this severity is reported (default: warning).
    #[arg(long, value_enum)]
    pub fail_on: Option<FailOn>,
    /// Exit 0 even when there are findings (errors in the run still exit 2).
    #[arg(long)]
    pub exit_zero: bool,
    /// Print the number of findings per rule instead of the findings.
    #[arg(long)]
    pub statistics: bool,
    /// Apply the config's `exclude` to files named on the command line too (pre-commit).
    #[arg(long)]
    pub force_exclude: bool,
    /// Print the resolved settings and exit.
    #[arg(long)]
    pub show_settings: bool,
    /// Report only findings not recorded in this baseline file.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// Record the current findings in this file (and exit 0).
    #[arg(long, value_name = "FILE")]
    pub write_baseline: Option<PathBuf>,
    /// Report only findings in files changed since this git revision (the
    /// whole tree is still analysed, so wrappers defined elsewhere count).
    #[arg(long, value_name = "REV")]
    pub changed_since: Option<String>,
    /// Scan only shard K of N (`--shard 2/4`), split deterministically by path.
    #[arg(long, value_name = "K/N", value_parser = parse_shard)]
    pub shard: Option<(u64, u64)>,
    /// An output, repeatable: `FORMAT` to stdout or `FORMAT=PATH` to a file.
    #[arg(long, value_name = "FORMAT[=PATH]", value_parser = parse_output)]
    pub output_format: Vec<(Format, Option<PathBuf>)>,
    /// The config file (default: the nearest lock-audit.yaml above the first path).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Show every skipped or partly analysed file and why.
    #[arg(long, short)]
    pub verbose: bool,
    /// Colour in human output.
    #[arg(long, value_enum, default_value_t = Color::Auto)]
    pub color: Color,
    /// Skip files larger than this many bytes (reported as a notice).
    #[arg(long, default_value_t = 5 * 1024 * 1024)]
    pub max_file_size: u64,
    #[command(flatten)]
    pub analysis: AnalysisArgs,
}

/// What `check` and `audit` share: which files to analyse and the cache.
#[derive(Args, Debug)]
pub struct AnalysisArgs {
    /// Analyse minified JavaScript/TypeScript bundles too (default: skipped with a notice).
    #[arg(long)]
    pub include_minified: bool,
    /// Report findings and sites in test code too (test/, tests/, spec/, *_test.go,
    /// test_*.py, *Test.java, *.spec.ts, Rust #[cfg(test)] modules...; config `test-paths`).
    #[arg(long)]
    pub include_tests: bool,
    /// Neither read nor write the analysis cache.
    #[arg(long)]
    pub no_cache: bool,
    /// The analysis cache's folder (default: `.lock-audit-cache` next to the
    /// config file, else in the working directory).
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
}

impl AnalysisArgs {
    /// Applies the flags to `settings` (config file values already in it).
    fn apply(&self, settings: &mut Settings, config: Option<&Path>, catalog: &Catalog) {
        settings.include_minified |= self.include_minified;
        settings.include_tests |= self.include_tests;
        if !self.no_cache {
            let dir = self.cache_dir.as_deref();
            settings.cache = Some(open_cache(dir, config, catalog, settings));
        }
    }
}

#[derive(Args, Debug)]
pub struct AuditArgs {
    /// Files or directories to scan.
    #[arg(default_value = ".")]
    pub paths: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = AuditFormat::Table)]
    pub format: AuditFormat,
    /// An extra catalog folder (repeatable).
    #[arg(long = "rules", value_name = "DIR")]
    pub rules_dirs: Vec<PathBuf>,
    /// Show every skipped or partly analysed file and why (on stderr).
    #[arg(long, short)]
    pub verbose: bool,
    /// The config file (default: the nearest lock-audit.yaml above the first path).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    #[command(flatten)]
    pub analysis: AnalysisArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Color {
    Auto,
    Always,
    Never,
}

/// Parses `args` (without the program name handling cargo's extra word) and runs.
pub fn main_with(args: impl IntoIterator<Item = String>) -> ExitCode {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    match cli.command {
        Command::Check(args) => check(*args),
        Command::Audit(args) => audit(args),
        Command::Explain { rule } => explain(&rule),
        Command::Rules => rules(),
        Command::Init => init(),
        Command::Lsp => match crate::lsp::run() {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => usage_error(&format!("lsp: {e}")),
        },
        Command::Libraries {
            rules_dirs,
            triggers,
        } => match load_catalog(&rules_dirs) {
            Some(c) if triggers => {
                emit(&format!("{}\n", c.triggers.join("\n")));
                ExitCode::SUCCESS
            }
            Some(c) => {
                emit(&c.libraries_markdown());
                ExitCode::SUCCESS
            }
            None => ExitCode::from(2),
        },
    }
}

fn usage_error(msg: &str) -> ExitCode {
    eprintln!("error: {msg}");
    ExitCode::from(2)
}

/// Writes to stdout; a closed pipe (`| head`) is not an error.
fn emit(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

fn load_catalog(dirs: &[PathBuf]) -> Option<Catalog> {
    match Catalog::load(dirs) {
        Ok(c) => Some(c),
        Err(e) => {
            eprintln!("{:?}", miette::Report::new(*e));
            None
        }
    }
}

/// The project's `lock-audit.yaml` (`--config`, else the nearest one above
/// the first path); `Err` is already reported.
fn load_config(explicit: Option<&PathBuf>, paths: &[PathBuf]) -> Result<Config, ()> {
    let found = explicit
        .cloned()
        .or_else(|| config::find(paths.first().map_or(Path::new("."), PathBuf::as_path)));
    match found {
        None => Ok(Config::default()),
        Some(path) => config::load(&path).map_err(|e| eprintln!("{:?}", miette::Report::new(*e))),
    }
}

/// The analysis cache of a run: its key covers everything besides a file's
/// text that its analysis depends on (config, catalog, rules, size limit).
fn open_cache(
    dir: Option<&Path>,
    config: Option<&Path>,
    catalog: &Catalog,
    settings: &Settings,
) -> std::sync::Arc<Cache> {
    let dir = dir.map_or_else(
        || {
            config
                .and_then(Path::parent)
                .unwrap_or(Path::new(""))
                .join(cache::DIR_NAME)
        },
        Path::to_path_buf,
    );
    let config_text = config
        .and_then(|p| std::fs::read(p).ok())
        .unwrap_or_default();
    let rules: Vec<&str> = settings.rules.iter().map(|r| r.code).collect();
    let rules = rules.join(",");
    let inputs: [&[u8]; 6] = [
        &config_text,
        catalog.fingerprint.as_bytes(),
        rules.as_bytes(),
        &settings.max_file_size.to_le_bytes(),
        &[u8::from(settings.include_minified)],
        &[u8::from(settings.include_tests)],
    ];
    std::sync::Arc::new(Cache::open(&dir, &inputs))
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

/// The catalog: built-in, the config's folders, then `--rules`.
fn catalog_for(config: &Config, extra: &[PathBuf]) -> Option<Catalog> {
    let dirs: Vec<PathBuf> = config.rules.iter().chain(extra).cloned().collect();
    load_catalog(&dirs)
}

fn audit(args: AuditArgs) -> ExitCode {
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
        .apply(&mut settings, config_path.as_deref(), &catalog);
    let report = crate::scan::check(&args.paths, &catalog, &settings);
    emit(&report::audit::render(&report, args.format));
    for line in report::notice_lines(&report, args.verbose) {
        eprintln!("{line}");
    }
    ExitCode::from(if report.has_internal_errors() { 2 } else { 0 })
}

fn check(args: CheckArgs) -> ExitCode {
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

fn parse_shard(s: &str) -> Result<(u64, u64), String> {
    let (k, n) = s.split_once('/').ok_or("expected K/N, e.g. 2/4")?;
    let (k, n): (u64, u64) = (
        k.parse().map_err(|_| "K is not a number")?,
        n.parse().map_err(|_| "N is not a number")?,
    );
    if n == 0 || k == 0 || k > n {
        return Err(format!("shard {k}/{n}: need 1 <= K <= N"));
    }
    Ok((k, n))
}

fn parse_output(s: &str) -> Result<(Format, Option<PathBuf>), String> {
    let (name, path) = match s.split_once('=') {
        Some((n, p)) => (n, Some(PathBuf::from(p))),
        None => (s, None),
    };
    let format = Format::from_str(name, true).map_err(|_| format!("unknown format `{name}`"))?;
    Ok((format, path))
}

/// `--changed-since REV`: keep the findings of files git reports as changed
/// since REV (committed, staged, unstaged or untracked).
fn keep_changed(report: &mut crate::outcome::Report, rev: &str) -> Result<(), String> {
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
fn statistics(report: &crate::outcome::Report) -> String {
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

fn explain(id: &str) -> ExitCode {
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

const STARTER: &str = include_str!("../docs/lock-audit.example.yaml");

fn init() -> ExitCode {
    let path = Path::new(config::FILE_NAMES[0]);
    if path.exists() {
        return usage_error("lock-audit.yaml already exists here; not overwriting it");
    }
    match std::fs::write(path, STARTER) {
        Ok(()) => {
            emit("wrote lock-audit.yaml\n");
            ExitCode::SUCCESS
        }
        Err(e) => usage_error(&format!("cannot write lock-audit.yaml: {e}")),
    }
}

fn rules() -> ExitCode {
    let mut out = format!(
        "{:<7} {:<22} {:<8} {}\n",
        "code", "name", "severity", "fires when"
    );
    for r in checks::REGISTRY {
        out.push_str(&format!(
            "{:<7} {:<22} {:<8} {}\n",
            r.code,
            r.name,
            r.severity.name(),
            r.summary
        ));
    }
    emit(&out);
    ExitCode::SUCCESS
}
