//! Which version of a library a file's project uses, read from the dependency
//! manifests in the file's folder and the folders above it, up to the
//! project's root: `requirements*.txt`, `pyproject.toml` and `poetry.lock`
//! (Python), `package.json` (JavaScript, TypeScript), `Gemfile.lock` (Ruby),
//! `go.mod` (Go), `pom.xml` (Java), `Cargo.lock` (Rust). The nearest manifest
//! that names a package wins. Only the packages whose catalog facts changed
//! between versions are looked up (pottery's `auto_release_time` was in
//! milliseconds before 3.0), so most scans read no manifest at all.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::lang::profile::profile;
use crate::model::Language;

/// A dotted version as numbers (`3.0.0` → `[3, 0, 0]`); missing parts are 0.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version(Vec<u64>);

impl Version {
    /// The leading `N.N.N` of `text` (`v2.3.1`, `=2.3`, `2.3.1rc1`), if any.
    pub fn parse(text: &str) -> Option<Version> {
        let t = text.trim().trim_start_matches(['v', '=', ' ']);
        let parts: Vec<u64> = t
            .split('.')
            .map_while(|p| {
                let digits: String = p.chars().take_while(char::is_ascii_digit).collect();
                digits.parse().ok()
            })
            .collect();
        (!parts.is_empty()).then_some(Version(parts))
    }

    fn cmp_padded(&self, other: &Version) -> std::cmp::Ordering {
        let n = self.0.len().max(other.0.len());
        let at = |v: &Version, i: usize| v.0.get(i).copied().unwrap_or(0);
        (0..n)
            .map(|i| at(self, i).cmp(&at(other, i)))
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal)
    }

    /// The version that ends the series `keep` leading parts fix (`2.3` kept
    /// at 1 → `3`).
    fn bump(&self, keep: usize) -> Version {
        let keep = keep.clamp(1, self.0.len().max(1));
        let mut parts: Vec<u64> = self.0.iter().take(keep).copied().collect();
        parts.resize(keep, 0);
        if let Some(last) = parts.last_mut() {
            *last += 1;
        }
        Version(parts)
    }
}

/// A package's version as a manifest states it.
#[derive(Debug, Clone, PartialEq)]
pub struct Used {
    /// As written (`==2.3.7`, `^2.0`, `2.3.7`), for evidence.
    pub text: String,
    /// The manifest it came from (`requirements.txt`).
    pub source: String,
    /// A pinned or locked version.
    exact: Option<Version>,
    /// The range ends below this (`<3`, `^2.0`, `~=2.3`).
    below: Option<Version>,
}

impl Used {
    /// Reads a requirement (`==2.3.7`, `>=2,<3`, `^2.0`, `~=2.3`, `2.3.7`):
    /// `None` when it says nothing about an upper end (`>=2`, `*`).
    pub fn parse(spec: &str, source: &str) -> Option<Used> {
        let mut used = Used {
            text: spec.trim().to_string(),
            source: source.to_string(),
            exact: None,
            below: None,
        };
        // `~> 2.3`, `== 2.3.7`: an operator keeps its version across blanks;
        // other blanks separate the parts of an npm range (`>=2.0.0 <3.0.0`).
        let mut joined = String::new();
        for c in spec.chars() {
            let after_op = joined.ends_with(['<', '>', '=', '~', '^', '!']);
            if !(c.is_whitespace() && after_op) {
                joined.push(c);
            }
        }
        for part in joined
            .split([',', ' '])
            .map(str::trim)
            .filter(|p| !p.is_empty())
        {
            let (op, rest) = split_op(part);
            let Some(v) = Version::parse(rest) else {
                continue;
            };
            match op {
                "==" | "=" | "" if !rest.contains(['x', '*']) => used.exact = Some(v),
                // npm `2.x`, `2.3.*`: the series.
                "" | "==" | "=" => used.below = Some(v.bump(v.0.len())),
                "<" => used.below = Some(v),
                "<=" => used.exact = used.exact.or(Some(v)),
                "~=" => used.below = Some(v.bump(v.0.len().saturating_sub(1))),
                "^" => {
                    let first = v.0.iter().position(|&n| n != 0).unwrap_or(0);
                    used.below = Some(v.bump(first + 1));
                }
                "~" | "~>" => used.below = Some(v.bump(if op == "~>" { v.0.len() - 1 } else { 2 })),
                _ => {}
            }
        }
        (used.exact.is_some() || used.below.is_some()).then_some(used)
    }

    /// Is the version in use certainly older than `version`?
    pub fn older_than(&self, version: &Version) -> bool {
        match (&self.exact, &self.below) {
            (Some(e), _) => e.cmp_padded(version).is_lt(),
            (None, Some(b)) => b.cmp_padded(version).is_le(),
            (None, None) => false,
        }
    }
}

fn split_op(part: &str) -> (&str, &str) {
    let end = part
        .find(|c: char| c.is_ascii_alphanumeric() || c == '*')
        .unwrap_or(part.len());
    (part[..end].trim(), &part[end..])
}

/// The versions a file's project uses, by package.
#[derive(Debug, Clone, Default)]
pub struct Versions(pub Vec<(String, Used)>);

impl Versions {
    pub fn get(&self, package: &str) -> Option<&Used> {
        self.0
            .iter()
            .find(|(p, _)| p.eq_ignore_ascii_case(package))
            .map(|(_, u)| u)
    }

    /// A stable text of what was found, for the analysis cache's key.
    pub fn fingerprint(&self) -> String {
        let parts: Vec<String> = self
            .0
            .iter()
            .map(|(p, u)| format!("{p}={}", u.text))
            .collect();
        parts.join(";")
    }
}

/// The watched packages one folder's manifests name.
type Found = Vec<(String, Used)>;

/// The manifests of one scan, read once per folder.
pub struct Manifests {
    root: PathBuf,
    /// The packages worth looking up, per language.
    packages: Vec<(Language, String)>,
    folders: Mutex<HashMap<(PathBuf, Language), Arc<Found>>>,
}

impl Manifests {
    pub fn new(root: &Path, packages: Vec<(Language, String)>) -> Manifests {
        Manifests {
            root: root.to_path_buf(),
            packages,
            folders: Mutex::new(HashMap::new()),
        }
    }

    /// The versions of the watched packages that `file`'s project uses.
    pub fn for_file(&self, file: &Path, language: Language) -> Versions {
        let language = language.catalog_language();
        let wanted: Vec<&str> = self
            .packages
            .iter()
            .filter(|(l, _)| *l == language)
            .map(|(_, p)| p.as_str())
            .collect();
        let mut found: Vec<(String, Used)> = Vec::new();
        if wanted.is_empty() {
            return Versions(found);
        }
        let mut dir = file.parent();
        while let Some(d) = dir {
            for (p, u) in self.folder(d, language, &wanted).iter() {
                if !found.iter().any(|(q, _)| q == p) {
                    found.push((p.clone(), u.clone()));
                }
            }
            if d == self.root || !d.starts_with(&self.root) || found.len() == wanted.len() {
                break;
            }
            dir = d.parent();
        }
        Versions(found)
    }

    fn folder(&self, dir: &Path, language: Language, wanted: &[&str]) -> Arc<Found> {
        let key = (dir.to_path_buf(), language);
        if let Some(v) = self.folders.lock().ok().and_then(|m| m.get(&key).cloned()) {
            return v;
        }
        let read = Arc::new(read_folder(dir, language, wanted));
        if let Ok(mut m) = self.folders.lock() {
            m.insert(key, read.clone());
        }
        read
    }
}

/// The watched packages the manifests of `dir` name (the language's own
/// manifests, lock files first).
fn read_folder(dir: &Path, language: Language, wanted: &[&str]) -> Found {
    let mut out: Found = Vec::new();
    let mut add = |package: &str, spec: &str, source: &str| {
        let hit = wanted.iter().find(|w| same_package(w, package));
        if let (Some(w), Some(used)) = (hit, Used::parse(spec, source)) {
            if !out.iter().any(|(p, _)| p == w) {
                out.push((w.to_string(), used));
            }
        }
    };
    for pattern in profile(language).manifests {
        for path in matching(dir, pattern) {
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            let name = path
                .file_name()
                .map_or(String::new(), |n| n.to_string_lossy().into_owned());
            read_manifest(&name, &text, &mut |n, spec| add(n, spec, &name));
        }
    }
    out
}

/// The files of `dir` that `pattern` names (`requirements*.txt`: any text at `*`).
fn matching(dir: &Path, pattern: &str) -> Vec<PathBuf> {
    let Some((prefix, suffix)) = pattern.split_once('*') else {
        return vec![dir.join(pattern)];
    };
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(prefix) && n.ends_with(suffix))
        })
        .collect();
    found.sort();
    found
}

/// Each (package, requirement) a manifest states, by the manifest's format.
fn read_manifest(name: &str, text: &str, add: &mut dyn FnMut(&str, &str)) {
    match name {
        "poetry.lock" | "Cargo.lock" => {
            lock_packages(text, &mut |n, v| add(n, &format!("=={v}")));
        }
        "pyproject.toml" => pyproject(text, add),
        "package.json" => package_json(text, add),
        "Gemfile.lock" => {
            for line in text.lines() {
                // `    redis-lock (0.4.1)`: a locked gem, four spaces in.
                let Some(rest) = line.strip_prefix("    ").filter(|r| !r.starts_with(' ')) else {
                    continue;
                };
                if let Some((n, v)) = rest.split_once(" (") {
                    add(n, &format!("=={}", v.trim_end_matches(')')));
                }
            }
        }
        "go.mod" => {
            for line in text.lines() {
                let words: Vec<&str> = line.split_whitespace().collect();
                let words = words.strip_prefix(&["require"]).unwrap_or(&words);
                if let [module, version, ..] = words {
                    add(module, &format!("=={version}"));
                }
            }
        }
        "pom.xml" => {
            for dep in text.split("<dependency>").skip(1) {
                let tag = |t: &str| {
                    let open = format!("<{t}>");
                    let start = dep.find(&open)? + open.len();
                    let end = dep[start..].find('<')? + start;
                    Some(dep[start..end].trim().to_string())
                };
                if let (Some(a), Some(v)) = (tag("artifactId"), tag("version")) {
                    add(&a, &format!("=={v}"));
                }
            }
        }
        // requirements*.txt
        _ => {
            for line in text.lines() {
                let (n, spec) = pep508(line);
                add(n, spec);
            }
        }
    }
}

/// PyPI names compare case- and separator-insensitively (`Pottery`, `redis_lock`).
fn same_package(a: &str, b: &str) -> bool {
    let norm = |s: &str| s.to_ascii_lowercase().replace(['_', '.'], "-");
    norm(a) == norm(b)
}

/// `pottery[extra]==2.3.7 ; python_version >= "3.8"  # pin` → (`pottery`, `==2.3.7`).
fn pep508(line: &str) -> (&str, &str) {
    let line = line
        .split('#')
        .next()
        .unwrap_or("")
        .split(';')
        .next()
        .unwrap_or("")
        .trim();
    let end = line
        .find(|c: char| !(c.is_ascii_alphanumeric() || "-_.".contains(c)))
        .unwrap_or(line.len());
    let rest = line[end..].trim_start();
    let rest = match rest.strip_prefix('[') {
        Some(r) => r.split_once(']').map_or("", |(_, after)| after),
        None => rest,
    };
    (
        &line[..end],
        rest.trim().trim_start_matches('(').trim_end_matches(')'),
    )
}

/// `[[package]] name = .. version = ..` of poetry.lock and Cargo.lock.
fn lock_packages(text: &str, f: &mut dyn FnMut(&str, &str)) {
    let Ok(doc) = text.parse::<toml::Table>() else {
        return;
    };
    for p in doc
        .get("package")
        .and_then(|p| p.as_array())
        .into_iter()
        .flatten()
    {
        let field = |k: &str| p.get(k).and_then(|v| v.as_str());
        if let (Some(n), Some(v)) = (field("name"), field("version")) {
            f(n, v);
        }
    }
}

/// PEP 621 `[project] dependencies` and Poetry's `[tool.poetry.dependencies]`.
fn pyproject(text: &str, f: &mut dyn FnMut(&str, &str)) {
    let Ok(doc) = text.parse::<toml::Table>() else {
        return;
    };
    let project = doc.get("project").and_then(|p| p.get("dependencies"));
    for d in project.and_then(|d| d.as_array()).into_iter().flatten() {
        if let Some((n, spec)) = d.as_str().map(pep508) {
            f(n, spec);
        }
    }
    let poetry = doc
        .get("tool")
        .and_then(|t| t.get("poetry"))
        .and_then(|p| p.get("dependencies"))
        .and_then(|d| d.as_table());
    for (n, v) in poetry.into_iter().flatten() {
        let spec = v
            .as_str()
            .or_else(|| v.get("version").and_then(|v| v.as_str()));
        if let Some(spec) = spec {
            f(n, spec);
        }
    }
}

/// `dependencies`, `devDependencies`, `peerDependencies` of package.json.
fn package_json(text: &str, f: &mut dyn FnMut(&str, &str)) {
    let Ok(doc) = serde_json::from_str::<serde_json::Value>(text) else {
        return;
    };
    for section in ["dependencies", "devDependencies", "peerDependencies"] {
        for (n, v) in doc
            .get(section)
            .and_then(|d| d.as_object())
            .into_iter()
            .flatten()
        {
            if let Some(spec) = v.as_str() {
                f(n, spec);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        Version::parse(s).expect("a version")
    }

    #[test]
    fn requirements_say_older_only_when_certain() {
        let older = |spec: &str| Used::parse(spec, "t").is_some_and(|u| u.older_than(&v("3.0.0")));
        assert!(older("==2.3.7"));
        assert!(older(">=2.0,<3"));
        assert!(older("^2.1"));
        assert!(older("~=2.3"));
        assert!(older("2.3.7"));
        assert!(older("2.x"));
        assert!(!older("==3.0.1"));
        assert!(!older("~=3.0"));
        assert!(!older("^3.0.0"));
        assert!(Used::parse(">=2.0", "t").is_none());
        assert!(Used::parse("*", "t").is_none());
        // ~=2.3.1 allows 2.3.x only; ~> is Ruby's pessimistic operator.
        assert!(older("~=2.3.1"));
        assert!(older("~> 2.3"));
    }

    #[test]
    fn manifests_are_read_nearest_first() {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path();
        let app = root.join("services/app");
        std::fs::create_dir_all(&app).expect("folders");
        std::fs::write(root.join("requirements.txt"), "pottery>=3.0.1\n").expect("write");
        std::fs::write(
            app.join("pyproject.toml"),
            "[tool.poetry.dependencies]\npython = \"^3.10\"\nPottery = \"^2.3\"\n",
        )
        .expect("write");
        let py = Language::from_name("python").expect("python");
        let m = Manifests::new(root, vec![(py, "pottery".into())]);
        let used = m.for_file(&app.join("jobs.py"), py);
        let pottery = used.get("pottery").expect("found");
        assert_eq!(
            (pottery.text.as_str(), pottery.source.as_str()),
            ("^2.3", "pyproject.toml")
        );
        assert!(pottery.older_than(&v("3.0.0")));
        // Above the app: the root's range has no upper end, so nothing is certain.
        assert!(m.for_file(&root.join("a.py"), py).get("pottery").is_none());
        let go = Language::from_name("go").expect("go");
        assert!(m.for_file(&root.join("a.go"), go).0.is_empty());
    }

    #[test]
    fn each_ecosystem_is_read() {
        let mut got = Vec::new();
        lock_packages(
            "[[package]]\nname = \"pottery\"\nversion = \"2.3.7\"\n",
            &mut |n, v| got.push(format!("{n} {v}")),
        );
        package_json(r#"{"dependencies": {"redlock": "^4.2.0"}}"#, &mut |n, v| {
            got.push(format!("{n} {v}"))
        });
        assert_eq!(got, ["pottery 2.3.7", "redlock ^4.2.0"]);
        assert_eq!(
            pep508("pottery[extra] == 2.3.7 ; python_version > '3'"),
            ("pottery", "== 2.3.7")
        );
    }
}
