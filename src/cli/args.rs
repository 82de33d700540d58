//! The arguments of `check` and `audit`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::{Args, ValueEnum};

use crate::cache::{self, Cache};
use crate::catalog::Catalog;
use crate::checks::FailOn;
use crate::config::Settings;
use crate::discover;
use crate::report::audit::AuditFormat;
use crate::report::Format;

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// Files or directories to scan; directories honour .gitignore. `-` reads
    /// one file's text from stdin (with --stdin-filename).
    #[arg(default_value = ".")]
    pub paths: Vec<PathBuf>,
    /// With `-`: the path of the file whose text is on stdin (its language,
    /// config and project).
    #[arg(long, value_name = "PATH")]
    pub stdin_filename: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// Only run these rules (codes or names, comma-separated or repeated).
    #[arg(long, value_delimiter = ',', value_name = "CODES")]
    pub select: Vec<String>,
    /// Do not run these rules (codes or names).
    #[arg(long, value_delimiter = ',', value_name = "CODES")]
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
    /// Apply the safe fixes (an expiry added to a `SET NX`, a plain-DEL release
    /// made compare-and-delete), then report what remains.
    #[arg(long, conflicts_with = "diff")]
    pub fix: bool,
    /// Print the safe fixes as a unified diff instead of applying them; exit 1
    /// when there is one.
    #[arg(long)]
    pub diff: bool,
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
    /// An output, repeatable: `FORMAT` to stdout or `FORMAT=PATH` to a file
    /// (instead of --format).
    #[arg(long, value_name = "FORMAT[=PATH]", value_parser = parse_output, conflicts_with = "format")]
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
    #[arg(long, default_value_t = 5 * 1024 * 1024, value_name = "BYTES")]
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
    /// Analyse test files and report findings and sites in test code too (test/, tests/, spec/, *_test.go,
    /// test_*.py, *Test.java, *.spec.ts, Rust #[cfg(test)] modules...; config `test-paths`).
    #[arg(long)]
    pub include_tests: bool,
    /// Neither read nor write the analysis cache.
    #[arg(long)]
    pub no_cache: bool,
    /// Parse every file, not only those whose text names a lock library and one
    /// of its operations (slower; shows whether the prefilter skips a lock).
    #[arg(long)]
    pub no_prefilter: bool,
    /// The analysis cache's folder (default: `.lock-audit-cache` next to the
    /// config file, else at the top of the git work tree, else in the scanned folder).
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
}

impl AnalysisArgs {
    /// Applies the flags to `settings` (config file values already in it),
    /// and fixes the project root the scan of `paths` reports against.
    pub(super) fn apply(
        &self,
        settings: &mut Settings,
        config: Option<&Path>,
        catalog: &Catalog,
        paths: &[PathBuf],
    ) {
        settings.include_minified |= self.include_minified;
        settings.include_tests |= self.include_tests;
        settings.parse_all |= self.no_prefilter;
        let first = paths.first().map_or(Path::new("."), PathBuf::as_path);
        settings.paths.root = discover::project_root(config, first);
        if !self.no_cache {
            let dir = self.cache_dir.clone().unwrap_or_else(|| {
                // Never in an unrelated working directory: the config's folder,
                // the git top, else the scanned folder itself.
                let home = config
                    .and_then(Path::parent)
                    .map(discover::absolute)
                    .or_else(|| discover::git_top(first))
                    .unwrap_or_else(|| {
                        let dir = if first.is_dir() {
                            first
                        } else {
                            first.parent().unwrap_or(first)
                        };
                        discover::absolute(dir)
                    });
                home.join(cache::DIR_NAME)
            });
            settings.cache = Some(open_cache(&dir, config, catalog, settings));
        }
    }
}

/// The analysis cache of a run: its key covers everything besides a file's
/// text that its analysis depends on (config, catalog, rules, size limit).
fn open_cache(
    dir: &Path,
    config: Option<&Path>,
    catalog: &Catalog,
    settings: &Settings,
) -> Arc<Cache> {
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
    Arc::new(Cache::open(dir, &inputs))
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
    /// Show every skipped or partly analysed file and why, and every call that looked like a
    /// lock but lacked the evidence to count (on stderr).
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
