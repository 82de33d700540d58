//! Paths, baselines and config as CI and editors use them: several roots, a
//! subdirectory, file arguments, a cargo workspace, machine formats, partial
//! baselines, config-relative globs, `--changed-since` from elsewhere, stdin.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

const LOCK: &str =
    "import redis\nr = redis.Redis()\n\ndef run():\n    r.set('lock:job', 'x', nx=True)\n";

fn lock_audit(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lock-audit"))
        .current_dir(cwd)
        .args(args)
        .output()
        .expect("runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn json_paths(o: &Output) -> Vec<String> {
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON output");
    let mut paths: Vec<String> = v["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| f["path"].as_str().unwrap_or_default().to_string())
        .collect();
    paths.sort();
    paths
}

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.email=t@example.com", "-c", "user.name=t"])
        .args(args)
        .output()
        .expect("git runs")
        .status
        .success();
    assert!(ok, "git {args:?}");
}

/// A project with a config at its top and two services with the same layout.
fn two_services() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for svc in ["svcA", "svcB"] {
        fs::create_dir_all(d.join(svc).join("app")).unwrap();
        fs::write(d.join(svc).join("app/jobs.py"), LOCK).unwrap();
    }
    fs::write(d.join("lock-audit.yaml"), "select: [LA101]\n").unwrap();
    dir
}

#[test]
fn machine_paths_are_relative_to_the_project_root() {
    let dir = two_services();
    let d = dir.path();
    let both = vec![
        "svcA/app/jobs.py".to_string(),
        "svcB/app/jobs.py".to_string(),
    ];
    // Two roots: two distinct paths (GitLab fingerprints no longer collide).
    let o = lock_audit(
        d,
        &["check", "svcA", "svcB", "--format", "json", "--no-cache"],
    );
    assert_eq!(json_paths(&o), both, "{}", stderr(&o));
    // A subdirectory as the working directory, and a file argument (pre-commit).
    let o = lock_audit(
        &d.join("svcA"),
        &["check", ".", "--format", "json", "--no-cache"],
    );
    assert_eq!(json_paths(&o), vec!["svcA/app/jobs.py".to_string()]);
    let o = lock_audit(
        &d.join("svcA/app"),
        &["check", "jobs.py", "--format", "json", "--no-cache"],
    );
    assert_eq!(json_paths(&o), vec!["svcA/app/jobs.py".to_string()]);
    // SARIF: project-relative URIs against %SRCROOT%, the project's folder.
    let o = lock_audit(d, &["check", "svcA", "--format", "sarif", "--no-cache"]);
    let sarif: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let run = &sarif["runs"][0];
    let loc = &run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"];
    assert_eq!(loc["uri"], "svcA/app/jobs.py");
    assert_eq!(loc["uriBaseId"], "%SRCROOT%");
    let base = run["originalUriBaseIds"]["%SRCROOT%"]["uri"]
        .as_str()
        .unwrap();
    assert!(
        base.starts_with("file:///") && base.ends_with('/'),
        "{base}"
    );
    // GitLab and JUnit use the same paths.
    let o = lock_audit(
        d,
        &["check", "svcA", "svcB", "--format", "gitlab", "--no-cache"],
    );
    let gl: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let prints: std::collections::BTreeSet<&str> = gl
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["fingerprint"].as_str().unwrap())
        .collect();
    assert_eq!(prints.len(), 2, "{gl}");
}

#[test]
fn github_annotations_name_the_file_from_the_repository_top() {
    let dir = two_services();
    let d = dir.path();
    git(d, &["init", "-q"]);
    let o = lock_audit(
        &d.join("svcA"),
        &["check", ".", "--format", "github", "--no-cache"],
    );
    let out = stdout(&o);
    assert!(out.contains("file=svcA/app/jobs.py,"), "{out}");
    assert!(!out.contains("file=./"), "{out}");
}

#[test]
fn a_cargo_workspace_keeps_member_paths_apart() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    git(d, &["init", "-q"]);
    fs::write(
        d.join("Cargo.toml"),
        "[workspace]\nmembers = [\"a\", \"b\"]\n",
    )
    .unwrap();
    let lib = "use redis::Commands;\n\npub fn take(con: &mut redis::Connection) {\n    let _: bool = con.set_nx(\"lock:a\", 1).unwrap();\n}\n";
    for m in ["a", "b"] {
        fs::create_dir_all(d.join(m).join("src")).unwrap();
        fs::write(d.join(m).join("src/lib.rs"), lib).unwrap();
    }
    let o = lock_audit(
        d,
        &[
            "check",
            "a",
            "b",
            "--format",
            "json",
            "--no-cache",
            "--select",
            "LA101",
        ],
    );
    assert_eq!(
        json_paths(&o),
        vec!["a/src/lib.rs".to_string(), "b/src/lib.rs".to_string()],
        "{}",
        stderr(&o)
    );
}

#[test]
fn baselines_match_whatever_is_scanned() {
    let dir = two_services();
    let d = dir.path();
    let base = d.join("baseline.json");
    let b = base.to_str().unwrap();
    let o = lock_audit(d, &["check", ".", "--no-cache", "--write-baseline", b]);
    assert!(o.status.success(), "{}", stderr(&o));
    // A subfolder, from a subfolder, and a file: nothing new, nothing stale.
    for (cwd, path) in [
        (d.to_path_buf(), "svcA"),
        (d.join("svcB"), "."),
        (d.join("svcA/app"), "jobs.py"),
    ] {
        let o = lock_audit(
            &cwd,
            &[
                "check",
                path,
                "--no-cache",
                "--format",
                "concise",
                "--baseline",
                b,
            ],
        );
        assert!(o.status.success(), "{path}: {}{}", stdout(&o), stderr(&o));
        assert!(
            !stderr(&o).contains("stale") && !stderr(&o).contains("no longer match"),
            "{}",
            stderr(&o)
        );
    }
    // Rewriting it from a partial scan keeps the other service's entries.
    let o = lock_audit(d, &["check", "svcA", "--no-cache", "--write-baseline", b]);
    assert!(o.status.success());
    let text = fs::read_to_string(&base).unwrap();
    assert!(
        text.contains("svcA/app/jobs.py") && text.contains("svcB/app/jobs.py"),
        "{text}"
    );
    // A fixed finding is stale, in the files scanned.
    fs::write(d.join("svcA/app/jobs.py"), "import redis\n").unwrap();
    let o = lock_audit(d, &["check", ".", "--no-cache", "--baseline", b]);
    assert!(stderr(&o).contains("1 baseline entry"), "{}", stderr(&o));
}

#[test]
fn config_globs_are_relative_to_the_config_file() {
    let dir = two_services();
    let d = dir.path();
    fs::create_dir_all(d.join("svcA/legacy")).unwrap();
    fs::write(d.join("svcA/legacy/old.py"), LOCK).unwrap();
    fs::write(
        d.join("lock-audit.yaml"),
        "select: [LA101]\nexclude: [\"svcA/legacy/**\"]\noverrides:\n  - {path: \"svcB/app/**\", ignore: [LA101]}\n",
    )
    .unwrap();
    for (cwd, path) in [
        (d.to_path_buf(), "."),
        (d.join("svcA"), "."),
        (d.join("svcB"), "."),
    ] {
        let o = lock_audit(
            &cwd,
            &[
                "check",
                path,
                "--format",
                "json",
                "--no-cache",
                "--exit-zero",
            ],
        );
        let paths = json_paths(&o);
        assert!(
            !paths.iter().any(|p| p.contains("legacy")),
            "{cwd:?}: {paths:?}"
        );
        assert!(
            !paths.iter().any(|p| p.starts_with("svcB/")),
            "{cwd:?}: {paths:?}"
        );
    }
}

#[test]
fn config_errors_name_the_line_and_the_nearest_name() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(d.join("a.py"), LOCK).unwrap();
    fs::write(
        d.join("lock-audit.yaml"),
        "fail-on: error\nselect: [LA101, unchecked-relase]\n",
    )
    .unwrap();
    let o = lock_audit(d, &["check", "."]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2));
    assert!(err.contains("lock-audit.yaml:2"), "{err}");
    assert!(err.contains("did you mean `unchecked-release`"), "{err}");
    assert!(err.contains("lock-audit explain config"), "{err}");
    fs::write(d.join("lock-audit.yaml"), "exlude: [\"x/**\"]\n").unwrap();
    let err = stderr(&lock_audit(d, &["check", "."]));
    // The report wraps long lines: compare its words.
    let words: Vec<&str> = err.split_whitespace().filter(|w| *w != "│").collect();
    assert!(words.join(" ").contains("did you mean `exclude`"), "{err}");
    // Cargo metadata: the error points at the key, not the table.
    fs::remove_file(d.join("lock-audit.yaml")).unwrap();
    fs::write(
        d.join("Cargo.toml"),
        "[package]\nname = \"x\"\nversion = \"0.1.0\"\n\n[package.metadata.lock-audit]\nselect = [\"LA101\"]\nfail_on = \"error\"\n",
    )
    .unwrap();
    let err = stderr(&lock_audit(d, &["check", "."]));
    assert!(err.contains("Cargo.toml:7"), "{err}");
    assert!(err.contains("did you mean `fail-on`"), "{err}");
}

#[test]
fn changed_since_runs_git_in_the_scanned_repository() {
    let repo = tempfile::tempdir().unwrap();
    let r = repo.path();
    git(r, &["init", "-q"]);
    fs::write(r.join("old.py"), LOCK).unwrap();
    git(r, &["add", "."]);
    git(r, &["commit", "-q", "-m", "old"]);
    fs::write(r.join("new.py"), LOCK).unwrap();
    // Run from a folder that is not a repository at all.
    let elsewhere = tempfile::tempdir().unwrap();
    let o = lock_audit(
        elsewhere.path(),
        &[
            "check",
            r.to_str().unwrap(),
            "--changed-since",
            "HEAD",
            "--format",
            "json",
            "--no-cache",
            "--select",
            "LA101",
        ],
    );
    assert!(o.status.code() != Some(2), "{}", stderr(&o));
    assert_eq!(json_paths(&o), vec!["new.py".to_string()]);
}

#[test]
fn the_cache_never_lands_in_an_unrelated_working_directory() {
    let svc = tempfile::tempdir().unwrap();
    fs::write(svc.path().join("a.py"), LOCK).unwrap();
    let other = tempfile::tempdir().unwrap();
    let o = lock_audit(other.path(), &["check", svc.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(!other.path().join(".lock-audit-cache").exists());
    assert!(svc.path().join(".lock-audit-cache").exists());
}

#[test]
fn stdin_is_analysed_as_the_named_file() {
    let dir = two_services();
    let d = dir.path();
    let mut child = Command::new(env!("CARGO_BIN_EXE_lock-audit"))
        .current_dir(d)
        .args([
            "check",
            "-",
            "--stdin-filename",
            "svcA/app/jobs.py",
            "--format",
            "json",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"import redis\nr = redis.Redis()\n\n\nr.set('lock:buffer', 'x', nx=True)\n")
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(json_paths(&o), vec!["svcA/app/jobs.py".to_string()]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        v["findings"][0]["line"], 5,
        "the buffer, not the file on disk"
    );
    // `-` needs a name.
    let o = lock_audit(d, &["check", "-"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--stdin-filename"));
}

#[test]
fn options_are_honoured_or_rejected() {
    let dir = two_services();
    let d = dir.path();
    // --statistics in JSON.
    let o = lock_audit(
        d,
        &[
            "check",
            ".",
            "--statistics",
            "--format",
            "json",
            "--no-cache",
        ],
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("statistics as JSON");
    assert_eq!(v["statistics"][0]["code"], "LA101");
    assert_eq!(v["statistics"][0]["count"], 2);
    let o = lock_audit(d, &["check", ".", "--statistics", "--format", "sarif"]);
    assert_eq!(o.status.code(), Some(2));
    // --output-format and --format together.
    let o = lock_audit(
        d,
        &[
            "check",
            ".",
            "--format",
            "json",
            "--output-format",
            "concise",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    // --show-settings names the path settings and rule folders.
    fs::write(
        d.join("lock-audit.yaml"),
        "exclude: [\"gen/**\"]\noverrides:\n  - {path: \"svcB/**\", ignore: [LA101]}\n",
    )
    .unwrap();
    fs::create_dir(d.join("extra")).unwrap();
    let out = stdout(&lock_audit(
        d,
        &["check", "--show-settings", "--rules", "extra"],
    ));
    for key in [
        "project root: ",
        "exclude: gen/**",
        "overrides: svcB/** ignore [LA101]",
        "rule folders: extra",
        "default-excludes: true",
    ] {
        assert!(out.contains(key), "{key} in\n{out}");
    }
    // An empty folder: exit 0, and says so.
    let empty = tempfile::tempdir().unwrap();
    let o = lock_audit(empty.path(), &["check", "."]);
    assert_eq!(o.status.code(), Some(0));
    assert!(
        stderr(&o).contains("no source files found under ."),
        "{}",
        stderr(&o)
    );
}

#[test]
fn virtualenvs_and_installed_packages_are_skipped_by_default() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::create_dir_all(d.join("env/lib/python3.12/site-packages/dep")).unwrap();
    fs::write(d.join("env/pyvenv.cfg"), "home = /usr/bin\n").unwrap();
    fs::write(d.join("env/lib/python3.12/site-packages/dep/x.py"), LOCK).unwrap();
    fs::create_dir_all(d.join("node_modules/dep")).unwrap();
    fs::write(d.join("node_modules/dep/x.py"), LOCK).unwrap();
    // Go's vendored modules and Bundler's gems; a `vendor/` of the project's
    // own code (no `modules.txt`) and a `bundle/` elsewhere are scanned.
    fs::create_dir_all(d.join("svc/vendor/github.com/dep")).unwrap();
    fs::write(
        d.join("svc/vendor/modules.txt"),
        "# github.com/dep v1.0.0\n",
    )
    .unwrap();
    fs::write(d.join("svc/vendor/github.com/dep/x.py"), LOCK).unwrap();
    fs::create_dir_all(d.join("vendor/bundle/ruby")).unwrap();
    fs::write(d.join("vendor/bundle/ruby/x.py"), LOCK).unwrap();
    fs::write(d.join("vendor/own.py"), LOCK).unwrap();
    fs::create_dir_all(d.join("bundle")).unwrap();
    fs::write(d.join("bundle/app.py"), LOCK).unwrap();
    fs::write(d.join("app.py"), LOCK).unwrap();
    let o = lock_audit(
        d,
        &[
            "check",
            ".",
            "--format",
            "json",
            "--no-cache",
            "--select",
            "LA101",
        ],
    );
    assert_eq!(
        json_paths(&o),
        ["app.py", "bundle/app.py", "vendor/own.py"].map(String::from)
    );
    fs::write(
        d.join("lock-audit.yaml"),
        "default-excludes: false\nselect: [LA101]\n",
    )
    .unwrap();
    let o = lock_audit(d, &["check", ".", "--format", "json", "--no-cache"]);
    assert_eq!(json_paths(&o).len(), 7, "{:?}", json_paths(&o));
}
