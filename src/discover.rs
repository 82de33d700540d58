//! Paths → the source files to scan.
//!
//! Directories are walked in parallel with the `ignore` crate (`.gitignore`, `.ignore`,
//! hidden files skipped, symlinks not followed); files named explicitly are
//! always scanned, ignored or not. The language comes from the extension, or
//! the shebang for extensionless scripts.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::lang;
use crate::lang::profile::profile;
use crate::model::Language;

/// A file to scan.
#[derive(Debug, Clone)]
pub struct SourceFile {
    pub path: PathBuf,
    /// The path relative to the scan root it was found under (stable JSON).
    pub rel: String,
    pub language: Language,
}

/// A path that could not be walked (missing, unreadable directory...).
#[derive(Debug, Clone)]
pub struct WalkError {
    pub path: String,
    pub reason: String,
}

fn head(path: &Path) -> Vec<u8> {
    use std::io::Read;
    let mut buf = vec![0; 128];
    let n = std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut buf))
        .unwrap_or(0);
    buf.truncate(n);
    buf
}

/// `path` made absolute against the working directory, with `.` and `..`
/// resolved lexically (symlinks are not followed: the path stays the one the
/// user wrote).
pub fn absolute(path: &Path) -> PathBuf {
    let joined = if path.as_os_str().is_empty() {
        std::env::current_dir().unwrap_or_default()
    } else {
        std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
    };
    let mut out = PathBuf::new();
    for c in joined.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The top of the git work tree holding `path`, if any.
pub fn git_top(path: &Path) -> Option<PathBuf> {
    let start = absolute(path);
    start
        .ancestors()
        .find(|dir| dir.join(".git").exists())
        .map(Path::to_path_buf)
}

/// The project root every machine-readable path is relative to: the config
/// file's folder, else the top of the git work tree holding `first`, else
/// the working directory.
pub fn project_root(config: Option<&Path>, first: &Path) -> PathBuf {
    config
        .map(|c| absolute(c.parent().unwrap_or(Path::new(""))))
        .or_else(|| git_top(first))
        .unwrap_or_else(|| absolute(Path::new("")))
}

/// `path` relative to `root` with `/` separators (as written when it is
/// outside `root`).
pub fn rel_to(root: &Path, path: &Path) -> String {
    let abs = absolute(path);
    let root = if root.is_absolute() {
        std::borrow::Cow::Borrowed(root)
    } else {
        std::borrow::Cow::Owned(absolute(root))
    };
    let rel = abs.strip_prefix(root.as_ref()).unwrap_or(path);
    let s = rel.to_string_lossy().replace('\\', "/");
    let s = s.strip_prefix("./").map(str::to_string).unwrap_or(s);
    if s.is_empty() {
        path.file_name()
            .map_or(s, |n| n.to_string_lossy().into_owned())
    } else {
        s
    }
}

/// Test folders in any language; each language's own test file names come
/// from its profile (`*_test.go`, `test_*.py`...). Test code is still read
/// for wrappers and constants, but its findings and sites are not reported
/// unless `--include-tests` (config `test-paths` replaces the whole list).
const TEST_FOLDERS: &[&str] = &[
    "test/**",
    "tests/**",
    "spec/**",
    "__tests__/**",
    "testdata/**",
    "fixtures/**",
];

/// The default test-code globs: the folders, then every language's files.
pub fn default_test_globs() -> Vec<&'static str> {
    let mut out = TEST_FOLDERS.to_vec();
    for language in Language::ALL {
        for glob in profile(language).test_files {
            if !out.contains(glob) {
                out.push(glob);
            }
        }
    }
    out
}

/// `patterns` as one set that matches a path or any suffix of it: `vendor/**`
/// also matches `svc/vendor/x`. On a bad pattern, the pattern and the reason.
pub fn suffix_globs<S: AsRef<str>>(
    patterns: &[S],
) -> Result<globset::GlobSet, (String, globset::Error)> {
    let mut b = globset::GlobSetBuilder::new();
    for p in patterns {
        let p = p.as_ref();
        for pattern in [p.to_string(), format!("**/{}", p.trim_start_matches("./"))] {
            let glob = globset::Glob::new(&pattern).map_err(|e| (p.to_string(), e))?;
            b.add(glob);
        }
    }
    let first = patterns.first().map_or("", |p| p.as_ref()).to_string();
    b.build().map_err(|e| (first, e))
}

/// The default test-code globs (constant patterns: they always compile).
pub fn default_test_paths() -> globset::GlobSet {
    suffix_globs(&default_test_globs()).unwrap_or_else(|_| globset::GlobSet::empty())
}

/// Which walked files to keep: `include`/`exclude` globs from the config,
/// matched against the path relative to the project root.
#[derive(Debug, Clone)]
pub struct PathFilter {
    /// The project root (see [`project_root`]); empty: the working directory.
    pub root: PathBuf,
    pub include: Option<globset::GlobSet>,
    pub exclude: Option<globset::GlobSet>,
    /// The globs as written (`--show-settings`).
    pub include_patterns: Vec<String>,
    pub exclude_patterns: Vec<String>,
    /// Skip virtualenvs, `site-packages` and `node_modules` even when no
    /// ignore file does (config `default-excludes: false` turns it off).
    pub default_excludes: bool,
    /// Apply `exclude` to files named on the command line too (pre-commit).
    pub force_exclude: bool,
    /// `(K, N)`: keep only files whose path hashes to shard K of N.
    pub shard: Option<(u64, u64)>,
}

impl Default for PathFilter {
    fn default() -> Self {
        PathFilter {
            root: absolute(Path::new("")),
            include: None,
            exclude: None,
            include_patterns: Vec::new(),
            exclude_patterns: Vec::new(),
            default_excludes: true,
            force_exclude: false,
            shard: None,
        }
    }
}

impl PathFilter {
    /// Would a walk (`explicit` = named on the command line) analyse `path`?
    pub fn keeps(&self, path: &Path, explicit: bool) -> bool {
        let rel = self.rel(path);
        let rel = Path::new(&rel);
        let excluded = self.exclude.as_ref().is_some_and(|g| g.is_match(rel));
        let included = self.include.as_ref().is_none_or(|g| g.is_match(rel));
        if explicit {
            !(self.force_exclude && excluded)
        } else {
            included && !excluded
        }
    }

    /// `path` relative to the project root.
    pub fn rel(&self, path: &Path) -> String {
        rel_to(&self.root, path)
    }
}

/// A folder of installed third-party code: a virtualenv (it holds
/// `pyvenv.cfg`, whatever its name), `site-packages`, `node_modules`, Go's
/// module vendor folder (`vendor/` holding `modules.txt`, as `go mod vendor`
/// writes it) and Bundler's `vendor/bundle`. A `vendor/` folder of the
/// project's own code (no `modules.txt`) is scanned.
fn third_party(dir: &Path) -> bool {
    let Some(name) = dir.file_name() else {
        return false;
    };
    let in_vendor = dir
        .parent()
        .and_then(Path::file_name)
        .is_some_and(|p| p == "vendor");
    name == "site-packages"
        || name == "node_modules"
        || (name == "vendor" && dir.join("modules.txt").is_file())
        || (name == "bundle" && in_vendor)
        || dir.join("pyvenv.cfg").is_file()
}

/// A stable hash of a path (FNV-1a), for sharding.
fn shard_of(path: &Path, n: u64) -> u64 {
    let h = path
        .to_string_lossy()
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
    h % n + 1
}

/// Walks `roots` and returns the files to scan, sorted by path.
pub fn discover(roots: &[PathBuf], filter: &PathFilter) -> (Vec<SourceFile>, Vec<WalkError>) {
    let files = Mutex::new(Vec::new());
    let errors = discover_each(roots, filter, |f| {
        if let Ok(mut files) = files.lock() {
            files.push(f);
        }
    });
    let mut files = files.into_inner().unwrap_or_default();
    sort_files(&mut files, |f| f);
    (files, errors)
}

/// Sorts `items` by their file's path and drops a file found twice (two
/// overlapping roots): the order every scan reports in.
pub fn sort_files<T>(items: &mut Vec<T>, file: impl Fn(&T) -> &SourceFile) {
    items.sort_by(|a, b| file(a).path.cmp(&file(b).path));
    items.dedup_by(|a, b| file(a).path == file(b).path);
}

/// Walks `roots` and hands each file to scan to `each` as it is found, from
/// the walker's threads and in no order (a scan starts on the first files
/// while the walk goes on); returns what could not be walked.
pub fn discover_each(
    roots: &[PathBuf],
    filter: &PathFilter,
    each: impl Fn(SourceFile) + Sync,
) -> Vec<WalkError> {
    let each = |f: SourceFile| {
        if filter.shard.is_none_or(|(k, n)| shard_of(&f.path, n) == k) {
            each(f);
        }
    };
    let mut errors = Vec::new();
    for root in roots {
        if root.is_file() {
            if !filter.keeps(root, true) {
                continue;
            }
            let language = lang::detect(root, &head(root));
            match language {
                Some(language) => each(SourceFile {
                    path: root.clone(),
                    rel: filter.rel(root),
                    language,
                }),
                None => errors.push(WalkError {
                    path: root.display().to_string(),
                    reason: "not a supported source file (no known extension or shebang)".into(),
                }),
            }
            continue;
        }
        if !root.exists() {
            errors.push(WalkError {
                path: root.display().to_string(),
                reason: "no such file or directory".into(),
            });
            continue;
        }
        errors.extend(walk(root, filter, &each));
    }
    errors
}

/// One directory, walked by `ignore`'s parallel walker (the order is fixed by
/// the caller's sort).
fn walk(root: &Path, filter: &PathFilter, each: &(impl Fn(SourceFile) + Sync)) -> Vec<WalkError> {
    let errors = Mutex::new(Vec::new());
    ignore::WalkBuilder::new(root)
        .hidden(true)
        .git_ignore(true)
        .require_git(false)
        .follow_links(false)
        .filter_entry({
            let defaults = filter.default_excludes;
            move |e| {
                // A folder named on the command line is scanned whatever it is.
                let dir = e.depth() > 0 && e.file_type().is_some_and(|t| t.is_dir());
                !(defaults && dir && third_party(e.path()))
            }
        })
        .build_parallel()
        .run(|| {
            Box::new(|entry| {
                match entry {
                    Ok(e) if e.file_type().is_some_and(|t| t.is_file()) => {
                        let path = e.path();
                        if filter.keeps(path, false) {
                            let needs_head = path.extension().is_none();
                            let h = if needs_head { head(path) } else { Vec::new() };
                            if let Some(language) = lang::detect(path, &h) {
                                each(SourceFile {
                                    path: path.to_path_buf(),
                                    rel: filter.rel(path),
                                    language,
                                });
                            }
                        }
                    }
                    Ok(_) => {}
                    Err(e) => {
                        if let Ok(mut errors) = errors.lock() {
                            errors.push(WalkError {
                                path: root.display().to_string(),
                                reason: e.to_string(),
                            });
                        }
                    }
                }
                ignore::WalkState::Continue
            })
        });
    let mut errors = errors.into_inner().unwrap_or_default();
    errors.sort_by(|a, b| a.reason.cmp(&b.reason));
    errors
}
