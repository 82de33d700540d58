//! `lock-audit.yaml`: project settings, found by walking up from the scanned
//! path. Raw YAML (unknown keys are errors with the offending line) →
//! [`Config`]; the CLI's flags override it.

use std::path::{Path, PathBuf};

use globset::{Glob, GlobSet};
use serde::Deserialize;

use std::sync::Arc;

use crate::cache::Cache;
use crate::catalog::raw::ClassName;
use crate::checks;
use crate::checks::{FailOn, Rule, Severity};
use crate::discover;
use crate::error::{closest, with_suggestion, YamlError, CONFIG_HELP};
use crate::sites::classify::ClassifyRule;
use crate::sites::Class;

/// The file names looked for, in order, in each folder from the scanned path up.
pub const FILE_NAMES: &[&str] = &["lock-audit.yaml", ".lock-audit.yaml"];

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawConfig {
    #[serde(default)]
    select: Vec<String>,
    #[serde(default)]
    ignore: Vec<String>,
    fail_on: Option<FailOn>,
    /// Extra catalog folders, relative to the config file.
    #[serde(default)]
    rules: Vec<PathBuf>,
    #[serde(default)]
    classify: Vec<RawClassify>,
    /// The class of a lock nothing else decides (default `unclassified`).
    assume_class: Option<AssumeClass>,
    /// A suppression without a reason is LA001 (default true).
    require_reason: Option<bool>,
    /// Analyse minified JavaScript/TypeScript too (default false: skipped with a notice).
    include_minified: Option<bool>,
    /// Report findings in test code too (default false: counted, not shown).
    include_tests: Option<bool>,
    /// Globs of test code, replacing the default list.
    test_paths: Option<Vec<String>>,
    /// Severity per rule: `LA105: error`, `unused-suppression: info`.
    #[serde(default)]
    severity: std::collections::BTreeMap<String, Severity>,
    /// Globs of walked files to scan (default: all) and to skip.
    #[serde(default)]
    include: Vec<String>,
    #[serde(default)]
    exclude: Vec<String>,
    /// Settings for some paths only: `{path: "tests/**", ignore: [LA101]}`.
    #[serde(default)]
    overrides: Vec<RawOverride>,
    /// Skip virtualenvs, `site-packages` and `node_modules` (default true).
    default_excludes: Option<bool>,
}

/// A Cargo manifest, read only for `[package|workspace.metadata.lock-audit]`
/// (parsed from the text so that an error points at the key).
#[derive(Deserialize)]
struct Manifest {
    package: Option<ManifestSection>,
    workspace: Option<ManifestSection>,
}

#[derive(Deserialize)]
struct ManifestSection {
    metadata: Option<ManifestMetadata>,
}

#[derive(Deserialize)]
struct ManifestMetadata {
    #[serde(rename = "lock-audit")]
    lock_audit: Option<RawConfig>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOverride {
    path: String,
    #[serde(default)]
    ignore: Vec<String>,
    #[serde(default)]
    severity: std::collections::BTreeMap<String, Severity>,
}

/// Per-path settings: rules ignored and severities changed under a glob.
#[derive(Debug, Clone)]
pub struct Override {
    /// The glob as written.
    pub pattern: String,
    pub path: GlobSet,
    pub ignore: Vec<&'static str>,
    pub severity: Vec<(&'static str, Severity)>,
}

/// `classify:` entries: every given pattern must match.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawClassify {
    class: ClassName,
    /// Glob on the lock key as written (quotes dropped): `lock:billing:*`.
    key: Option<String>,
    /// Glob on the file path: `src/payments/**`.
    path: Option<String>,
    /// Glob on the enclosing function's name: `settle_*`.
    function: Option<String>,
    reason: Option<String>,
}

/// `assume-class:` — what a lock that no annotation, pattern or heuristic
/// decides is taken to be.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "lowercase")]
enum AssumeClass {
    Correctness,
    Efficiency,
    Unclassified,
}

/// The resolved settings of a `lock-audit.yaml`.
#[derive(Debug, Default, Clone)]
pub struct Config {
    pub path: Option<PathBuf>,
    pub select: Vec<String>,
    pub ignore: Vec<String>,
    pub fail_on: Option<FailOn>,
    pub rules: Vec<PathBuf>,
    pub classify: Vec<ClassifyRule>,
    /// `assume-class`: correctness or efficiency for locks nothing decides.
    pub assume_class: Option<Class>,
    /// `None` when the file does not say: reasons are then required.
    pub require_reason: Option<bool>,
    pub include_minified: Option<bool>,
    pub include_tests: Option<bool>,
    /// `test-paths:`; `None` keeps the default list.
    pub test_paths: Option<GlobSet>,
    pub severity: Vec<(&'static str, Severity)>,
    pub include: Option<GlobSet>,
    pub exclude: Option<GlobSet>,
    /// `include` / `exclude` as written.
    pub include_patterns: Vec<String>,
    pub exclude_patterns: Vec<String>,
    pub overrides: Vec<Override>,
    pub default_excludes: Option<bool>,
}

/// The config file for `start`: the nearest `lock-audit.yaml` in it or a
/// parent folder, or a `Cargo.toml` with `[package.metadata.lock-audit]` /
/// `[workspace.metadata.lock-audit]`.
pub fn find(start: &Path) -> Option<PathBuf> {
    // `jobs.py` (a file argument) has the parent `""`: start from its folder.
    let start = discover::absolute(start);
    let start = if start.is_file() {
        start.parent()?
    } else {
        &start
    };
    start.ancestors().find_map(|d| {
        FILE_NAMES
            .iter()
            .map(|n| d.join(n))
            .find(|p| p.is_file())
            .or_else(|| {
                let cargo = d.join("Cargo.toml");
                cargo_table(&cargo).is_some().then_some(cargo)
            })
    })
}

/// The `lock-audit` table of a Cargo manifest's package or workspace metadata.
fn cargo_table(path: &Path) -> Option<toml::Value> {
    let text = std::fs::read_to_string(path).ok()?;
    let doc: toml::Value = toml::from_str(&text).ok()?;
    ["package", "workspace"]
        .iter()
        .find_map(|k| doc.get(k)?.get("metadata")?.get("lock-audit").cloned())
}

/// Reads and validates a config file.
pub fn load(path: &Path) -> Result<Config, Box<YamlError>> {
    let shown = path.display().to_string();
    let src = std::fs::read_to_string(path).map_err(|e| {
        Box::new(YamlError::Io {
            path: shown.clone(),
            reason: e.to_string(),
        })
    })?;
    parse(path, &shown, &src)
}

/// Parses and validates config text (`path` tells YAML from `Cargo.toml`,
/// and anchors relative folders).
pub fn parse(path: &Path, shown: &str, src: &str) -> Result<Config, Box<YamlError>> {
    let (shown, src) = (shown.to_string(), src.to_string());
    let raw: RawConfig = if path.file_name().is_some_and(|n| n == "Cargo.toml") {
        // `[package.metadata.lock-audit]`: the same keys, in TOML.
        let manifest: Manifest = toml::from_str(&src).map_err(|e| {
            let at = e.span().map_or(0, |s| s.start);
            let msg = with_suggestion(format!("in [*.metadata.lock-audit]: {}", e.message()));
            Box::new(YamlError::at(&shown, &src, at, msg, CONFIG_HELP))
        })?;
        [manifest.package, manifest.workspace]
            .into_iter()
            .flatten()
            .find_map(|s| s.metadata?.lock_audit)
            .unwrap_or_default()
    } else if src.trim().is_empty() {
        RawConfig::default()
    } else {
        serde_yaml::from_str(&src)
            .map_err(|e| Box::new(YamlError::from_serde(&shown, &src, &e).help(CONFIG_HELP)))?
    };
    // A misspelt rule is an error here, where the file and line are known.
    for id in raw.select.iter().chain(&raw.ignore) {
        rule_code(id, "select` / `ignore", &shown, &src)?;
    }
    let base = path.parent().unwrap_or(Path::new("."));
    let glob = |pattern: &str| {
        Glob::new(pattern)
            .map(|g| g.compile_matcher())
            .map_err(|e| {
                Box::new(
                    YamlError::about(
                        &shown,
                        &src,
                        pattern,
                        format!("invalid glob `{pattern}`: {e}"),
                    )
                    .help(CONFIG_HELP),
                )
            })
    };
    let mut classify = Vec::new();
    for (i, c) in raw.classify.iter().enumerate() {
        let parts: Vec<String> = [
            ("key", &c.key),
            ("path", &c.path),
            ("function", &c.function),
        ]
        .iter()
        .filter_map(|(k, v)| v.as_ref().map(|v| format!("{k} {v}")))
        .collect();
        if parts.is_empty() {
            let msg = format!(
                "classify entry {} needs at least one of `key`, `path`, `function`",
                i + 1
            );
            return Err(Box::new(
                YamlError::about(&shown, &src, "classify", msg).help(CONFIG_HELP),
            ));
        }
        let reason = c
            .reason
            .as_deref()
            .map(|r| format!(" ({r})"))
            .unwrap_or_default();
        classify.push(ClassifyRule {
            class: match c.class {
                ClassName::Correctness => Class::Correctness,
                ClassName::Efficiency => Class::Efficiency,
            },
            key: c.key.as_deref().map(glob).transpose()?,
            path: c
                .path
                .as_deref()
                .map(|p| glob(&format!("**/{}", p.trim_start_matches("./"))))
                .transpose()?,
            function: c.function.as_deref().map(glob).transpose()?,
            why: format!(
                "{} classify #{}: {}{reason}",
                FILE_NAMES[0],
                i + 1,
                parts.join(", ")
            ),
        });
    }
    let severity = severities(&raw, &shown, &src)?;
    let include = globset(&raw.include, &shown, &src)?;
    let exclude = globset(&raw.exclude, &shown, &src)?;
    let mut overrides = Vec::new();
    for o in &raw.overrides {
        let rule = |id: &String| rule_code(id, "overrides", &shown, &src);
        overrides.push(Override {
            pattern: o.path.clone(),
            path: globset(std::slice::from_ref(&o.path), &shown, &src)?.unwrap_or_default(),
            ignore: o.ignore.iter().map(rule).collect::<Result<_, _>>()?,
            severity: o
                .severity
                .iter()
                .map(|(id, s)| rule(id).map(|c| (c, *s)))
                .collect::<Result<_, _>>()?,
        });
    }
    Ok(Config {
        path: Some(path.to_path_buf()),
        select: raw.select,
        ignore: raw.ignore,
        fail_on: raw.fail_on,
        rules: raw.rules.iter().map(|r| base.join(r)).collect(),
        classify,
        assume_class: match raw.assume_class {
            Some(AssumeClass::Correctness) => Some(Class::Correctness),
            Some(AssumeClass::Efficiency) => Some(Class::Efficiency),
            Some(AssumeClass::Unclassified) | None => None,
        },
        require_reason: raw.require_reason,
        include_minified: raw.include_minified,
        include_tests: raw.include_tests,
        test_paths: match &raw.test_paths {
            Some(p) if p.is_empty() => Some(GlobSet::empty()),
            Some(p) => globset(p, &shown, &src)?,
            None => None,
        },
        severity,
        include,
        exclude,
        overrides,
        include_patterns: raw.include.clone(),
        exclude_patterns: raw.exclude.clone(),
        default_excludes: raw.default_excludes,
    })
}

fn severities(
    raw: &RawConfig,
    shown: &str,
    src: &str,
) -> Result<Vec<(&'static str, Severity)>, Box<YamlError>> {
    raw.severity
        .iter()
        .map(|(id, s)| rule_code(id, "severity", shown, src).map(|code| (code, *s)))
        .collect()
}

/// The code of rule `id` (a code or a name), or an error at its line in the
/// config with the nearest rule's name.
fn rule_code(id: &str, key: &str, shown: &str, src: &str) -> Result<&'static str, Box<YamlError>> {
    if let Some(rule) = checks::lookup(id.trim()) {
        return Ok(rule.code);
    }
    let names = checks::REGISTRY.iter().flat_map(|r| [r.code, r.name]);
    let hint = closest(id, names).map_or(String::new(), |n| format!("; did you mean `{n}`?"));
    let msg = format!("unknown rule `{id}` in `{key}`{hint} (`lock-audit rules` lists them)");
    Err(Box::new(
        YamlError::about(shown, src, id, msg).help(CONFIG_HELP),
    ))
}

/// Patterns match the path as walked, or any suffix of it (`vendor/**`).
fn globset(patterns: &[String], shown: &str, src: &str) -> Result<Option<GlobSet>, Box<YamlError>> {
    if patterns.is_empty() {
        return Ok(None);
    }
    crate::discover::suffix_globs(patterns)
        .map(Some)
        .map_err(|(p, e)| {
            Box::new(
                YamlError::about(shown, src, &p, format!("invalid glob `{p}`: {e}"))
                    .help(CONFIG_HELP),
            )
        })
}

/// What a scan runs with.
#[derive(Debug, Clone)]
pub struct Settings {
    pub rules: Vec<&'static Rule>,
    /// Files larger than this are skipped with a notice.
    pub max_file_size: u64,
    /// Analyse minified JavaScript/TypeScript (otherwise skipped with a notice).
    pub include_minified: bool,
    /// Report findings and sites in test code (otherwise counted, not shown).
    pub include_tests: bool,
    /// Parse every file, not only those the prefilter picks (`--no-prefilter`).
    pub parse_all: bool,
    /// Which paths are test code.
    pub test_paths: globset::GlobSet,
    /// `classify:` patterns from `lock-audit.yaml`.
    pub classify: Vec<ClassifyRule>,
    /// `assume-class:` for locks nothing decides (`None`: unclassified).
    pub assume_class: Option<Class>,
    /// A suppression without `reason="..."` is LA001 (default true).
    pub require_reason: bool,
    /// Severity overrides per rule code.
    pub severity: Vec<(&'static str, Severity)>,
    /// Catalog folders besides the built-in one (config `rules:`, `--rules`).
    pub rule_folders: Vec<PathBuf>,
    /// `include` / `exclude` globs.
    pub paths: discover::PathFilter,
    /// Per-path rule settings.
    pub overrides: Vec<Override>,
    /// Reuse and record analyses in a content-hash cache (`None`: off).
    pub cache: Option<Arc<Cache>>,
}

impl Settings {
    /// Is `rel` test code this run does not analyse? Its findings would not
    /// be shown, and a test file's wrappers, constants and writers serve only
    /// other tests: parsing it would be a quarter of a scan's work for nothing.
    pub fn skips_test(&self, rel: &str) -> bool {
        !self.include_tests && self.test_paths.is_match(rel)
    }
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            rules: checks::defaults(),
            max_file_size: 5 * 1024 * 1024,
            include_minified: false,
            include_tests: false,
            parse_all: false,
            test_paths: discover::default_test_paths(),
            classify: Vec::new(),
            assume_class: None,
            require_reason: true,
            severity: Vec::new(),
            rule_folders: Vec::new(),
            paths: discover::PathFilter::default(),
            overrides: Vec::new(),
            cache: None,
        }
    }
}

/// The rules `select` (default: the default set) minus `ignore`.
pub fn rule_set(select: &[String], ignore: &[String]) -> Result<Vec<&'static Rule>, String> {
    let selected = match resolve_rules(select)? {
        r if r.is_empty() => checks::defaults(),
        r => r,
    };
    let ignored = resolve_rules(ignore)?;
    Ok(selected
        .into_iter()
        .filter(|r| !ignored.iter().any(|i| i.code == r.code))
        .collect())
}

fn resolve_rules(ids: &[String]) -> Result<Vec<&'static Rule>, String> {
    ids.iter()
        .map(|id| {
            checks::lookup(id.trim())
                .ok_or_else(|| format!("unknown rule `{id}` (see `lock-audit rules`)"))
        })
        .collect()
}

/// What the config file contributes to a scan's settings.
pub fn settings_from(config: Config, force_exclude: bool) -> Settings {
    Settings {
        classify: config.classify,
        assume_class: config.assume_class,
        require_reason: config.require_reason.unwrap_or(true),
        include_minified: config.include_minified.unwrap_or(false),
        include_tests: config.include_tests.unwrap_or(false),
        test_paths: config
            .test_paths
            .unwrap_or_else(discover::default_test_paths),
        severity: config.severity,
        overrides: config.overrides,
        rule_folders: config.rules,
        paths: discover::PathFilter {
            root: discover::absolute(Path::new("")),
            include: config.include,
            exclude: config.exclude,
            include_patterns: config.include_patterns,
            exclude_patterns: config.exclude_patterns,
            default_excludes: config.default_excludes.unwrap_or(true),
            force_exclude,
            shard: None,
        },
        ..Settings::default()
    }
}
