//! The binary as a user runs it: exit codes, subcommands, bad input, bad catalogs.

use assert_cmd::Command;
use predicates::prelude::*;
use std::fs;

fn lock_audit() -> Command {
    Command::cargo_bin("lock-audit").expect("binary builds")
}

/// `audit --no-cache --format json` over `dir`, parsed.
fn audit_json(dir: &std::path::Path) -> serde_json::Value {
    let out = lock_audit()
        .args(["audit", "--no-cache", "--format", "json"])
        .arg(dir)
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn examples_have_findings_and_exit_1() {
    lock_audit()
        .args(["check", "examples/", "--color", "never"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("LA101(missing-ttl)"))
        .stdout(predicate::str::contains("LA102(non-atomic-acquire)"))
        .stdout(predicate::str::contains("LA201(unchecked-release)"));
}

#[test]
fn clean_tree_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let src = "import redis, uuid\nr = redis.Redis()\nif r.set('lock:x', uuid.uuid4().hex, nx=True, px=1000):\n    print('mine')\n";
    fs::write(dir.path().join("ok.py"), src).unwrap();
    lock_audit()
        .arg("check")
        .arg(dir.path())
        .assert()
        .code(0)
        .stdout(predicate::str::contains("no findings"));
}

#[test]
fn select_and_ignore_filter_rules() {
    lock_audit()
        .args([
            "check",
            "examples/",
            "--select",
            "unchecked-release",
            "--format",
            "concise",
        ])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("LA201"))
        .stdout(predicate::str::contains("LA101").not());
    lock_audit()
        .args([
            "check",
            "examples/",
            "--ignore",
            "LA101,LA102,LA201,LA301,LA302,LA303,LA304",
        ])
        .assert()
        .code(0);
}

#[test]
fn unknown_rule_is_a_usage_error() {
    lock_audit()
        .args(["check", "examples/", "--select", "LA999"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown rule `LA999`"));
    lock_audit()
        .args(["explain", "no-such-rule"])
        .assert()
        .code(2);
}

#[test]
fn explain_by_code_and_name() {
    for id in ["LA201", "unchecked-release", "la201"] {
        lock_audit()
            .args(["explain", id])
            .assert()
            .code(0)
            .stdout(predicate::str::contains("## Why it breaks"))
            .stdout(predicate::str::contains("## Not flagged"));
    }
}

#[test]
fn explain_kinds_says_which_rules_apply_to_markers() {
    lock_audit()
        .args(["explain", "marker"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("## marker"))
        .stdout(predicate::str::contains("throttle window"))
        .stdout(predicate::str::contains("LA101 and LA102"));
}

#[test]
fn rules_lists_every_rule() {
    lock_audit().arg("rules").assert().code(0).stdout(
        predicate::str::contains("LA101").and(predicate::str::contains("unchecked-release")),
    );
}

#[test]
fn cargo_subcommand_drops_its_name() {
    Command::cargo_bin("cargo-lock-audit")
        .unwrap()
        .args(["lock-audit", "check", "examples/", "--format", "concise"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("LA201"));
}

/// `check examples/` with one extra rule file that must be rejected (exit 2).
fn bad_rules(name: &str, yaml: &str) -> assert_cmd::assert::Assert {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join(name), yaml).unwrap();
    lock_audit()
        .args(["check", "examples/", "--rules"])
        .arg(dir.path())
        .assert()
        .code(2)
}

#[test]
fn bad_rules_yaml_names_file_and_line() {
    bad_rules(
        "inhouse.yaml",
        "library: acme-lock\nlanguage: python\nbackend: redis\napis:\n  - id: acme.acquire\n    methods: [grab]\n    comand: SET\n",
    )
    .stderr(predicate::str::contains("inhouse.yaml:7"))
        .stderr(predicate::str::contains("unknown field `comand`"));
}

#[test]
fn bad_rules_yaml_semantic_error_points_at_entry() {
    bad_rules(
        "x.yaml",
        "library: acme\nlanguage: python\nbackend: redis\napis:\n  - id: acme.grab\n    methods: [grab]\n    command: GRAB\n",
    )
    .stderr(predicate::str::contains("x.yaml:5"))
        .stderr(predicate::str::contains("unknown command `GRAB`"));
}

#[test]
fn bad_rules_release_of_an_unknown_lock_points_at_entry() {
    bad_rules(
        "r.yaml",
        "library: acme-sql\nsql:\n  - id: acme.lock\n    function: acme_lock\n    role: acquire\n    scope: session\n  - id: acme.unlock\n    function: acme_unlock\n    role: release\n    releases: [acme.lck]\n",
    )
    .stderr(predicate::str::contains("r.yaml:7"))
    .stderr(predicate::str::contains("`acme.unlock` releases `acme.lck`"));
}

#[test]
fn bad_rules_values_name_the_accepted_ones() {
    let lock = |ttl: &str| {
        format!("library: acme\nlanguage: python\nbackend: redis\napis:\n  - id: acme.grab\n    methods: [grab]\n    lock:\n      acquires: now\n      key: {{pos: 0}}\n      ttl: {ttl}\n")
    };
    bad_rules("u.yaml", &lock("{pos: 1, unit: sec}"))
        .stderr(predicate::str::contains("u.yaml:10"))
        .stderr(predicate::str::contains("unknown variant `sec`"))
        .stderr(predicate::str::contains("`timeunit`"));
    bad_rules("d.yaml", &lock("{pos: 1, unit: s, default: nevr}"))
        .stderr(predicate::str::contains("d.yaml:10"))
        .stderr(predicate::str::contains("unknown default `nevr`"))
        .stderr(predicate::str::contains("`renewed`"));
}

/// `owner-checked-release: false`: the library's own release deletes the lock
/// whoever holds it, so each release call is LA201's; the default (true) is not.
#[test]
fn owner_checked_release_false_makes_releases_unchecked() {
    let run = |checked: &str| {
        let dir = tempfile::tempdir().unwrap();
        let rules = dir.path().join("rules");
        fs::create_dir(&rules).unwrap();
        fs::write(
            rules.join("taskq.yaml"),
            format!("library: taskq\nlanguage: python\nbackend: redis\ntriggers: [taskq]\nclients:\n  imports: [taskq]\n  constructors: [taskq.Queue]\napis:\n  - id: taskq.lock_task\n    methods: [lock_task]\n    lock:\n      acquires: now\n      key: {{pos: 0}}\n      ttl: {{pos: 1, unit: s, default: 30s}}\n      release-methods: [release]\n{checked}"),
        )
        .unwrap();
        let src = dir.path().join("job.py");
        fs::write(
            &src,
            "import taskq\nq = taskq.Queue()\n\ndef nightly():\n    lock = q.lock_task('lock:nightly', 60)\n    try:\n        run()\n    finally:\n        lock.release()\n",
        )
        .unwrap();
        let out = lock_audit()
            .args(["check", "--format", "concise", "--exit-zero", "--rules"])
            .arg(&rules)
            .arg(&src)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let unchecked = run("      owner-checked-release: false\n");
    assert!(unchecked.contains("job.py:9:9: LA201"), "{unchecked}");
    let checked = run("");
    assert!(!checked.contains("LA201"), "{checked}");
}

#[test]
fn user_rules_teach_a_new_client() {
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("rules");
    fs::create_dir(&rules).unwrap();
    fs::write(
        rules.join("acme.yaml"),
        "library: acme-kv\nlanguage: python\nbackend: redis\ntriggers: [acme_kv]\nclients:\n  imports: [acme_kv]\n  constructors: [acme_kv.connect]\napis:\n  - id: acme.put_if_absent\n    methods: [put_if_absent]\n    command: SETNX\n    args:\n      key: {pos: 0}\n      value: {pos: 1}\n",
    )
    .unwrap();
    let src = dir.path().join("job.py");
    fs::write(
        &src,
        "import acme_kv\nkv = acme_kv.connect()\nkv.put_if_absent('lock:job', 'me')\n",
    )
    .unwrap();
    lock_audit()
        .args(["check", "--format", "concise", "--rules"])
        .arg(&rules)
        .arg(&src)
        .assert()
        .code(1)
        .stdout(predicate::str::contains("job.py:3:1: LA101"));
}

#[test]
fn bad_input_files_are_notices_and_the_scan_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(d.join("binary.py"), b"import redis\0\x01\x02\xff").unwrap();
    fs::write(
        d.join("latin1.py"),
        b"# caf\xe9\nimport redis\nr = redis.Redis()\nr.setnx('lock:a', 'x')\n",
    )
    .unwrap();
    fs::write(d.join("empty.py"), b"").unwrap();
    fs::write(
        d.join("broken.py"),
        "import redis\nr = redis.Redis(\nr.delete('lock:a')\ndef (:\n",
    )
    .unwrap();
    fs::write(
        d.join("broken.rs"),
        "use redis::Commands;\nfn main( { redis::cmd(\"DEL\")\n",
    )
    .unwrap();
    fs::write(
        d.join("good.py"),
        "import redis\nr = redis.Redis()\nr.set('lock:b', 'x', nx=True)\n",
    )
    .unwrap();
    let out = lock_audit()
        .args(["check", "--verbose", "--format", "concise"])
        .arg(d)
        .assert()
        .code(1);
    let stdout = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    // Notices go to stderr (as for `audit`), the findings to stdout.
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(stdout.contains("good.py:3:1: LA101"), "{stdout}");
    assert!(
        stdout.contains("latin1.py:4:1: LA101"),
        "non-UTF-8 file still analysed: {stdout}"
    );
    for (file, reason) in [
        ("binary.py", "binary file"),
        ("latin1.py", "not valid UTF-8"),
        ("broken.py", "syntax error at line"),
        ("broken.rs", "cannot parse"),
    ] {
        let line = stderr
            .lines()
            .find(|l| l.contains(file) && l.starts_with("notice:"));
        assert!(
            line.is_some_and(|l| l.contains(reason)),
            "{file}: expected `{reason}` in\n{stderr}"
        );
    }
    // An empty file (an `__init__.py`) is nothing to report.
    assert!(
        !stderr.contains("empty.py") && !stdout.contains("empty.py"),
        "{stderr}"
    );
    // Without --verbose the notices are counted, not listed.
    lock_audit()
        .args(["check", "--format", "concise"])
        .arg(d)
        .assert()
        .stderr(predicate::str::contains(
            "4 files were skipped or only partly analysed",
        ));
}

/// A typo in a CI path is an error, not a green job.
#[test]
fn missing_path_is_reported() {
    lock_audit()
        .args(["check", "examples/", "does/not/exist"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "does/not/exist: no such file or directory",
        ));
    lock_audit()
        .args(["audit", "does/not/exist"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "does/not/exist: no such file or directory",
        ));
}

/// The README's suppression examples are themselves valid (no LA001).
#[test]
fn readme_suppression_examples_parse() {
    let readme = fs::read_to_string("README.md").unwrap();
    let section = readme
        .split("## Suppressing a finding")
        .nth(1)
        .and_then(|s| s.split("```python\n").nth(1))
        .and_then(|s| s.split("```").next())
        .expect("the README's suppression example");
    let body: String = section
        .lines()
        .map(|l| l.split("   <-").next().unwrap_or(l))
        .map(|l| format!("    {l}\n"))
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("job.py");
    fs::write(
        &file,
        format!("import redis\nr = redis.Redis()\n\ndef f(key):\n    r.set(key, 't', nx=True, px=1000)\n{body}"),
    )
    .unwrap();
    lock_audit()
        .args([
            "check",
            "--format",
            "concise",
            "--no-cache",
            "--select",
            "LA001",
        ])
        .arg(&file)
        .assert()
        .code(0)
        .stdout(predicate::str::contains("LA001").not());
}

/// `cargo lock-audit --help` documents the cargo options it takes.
#[test]
fn cargo_subcommand_help_names_its_options() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cargo-lock-audit"))
        .args(["lock-audit", "--help"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("-p, --package <NAME>") && text.contains("--manifest-path <P>"),
        "{text}"
    );
    assert!(
        text.contains("Usage:"),
        "then lock-audit's own help: {text}"
    );
}

/// `explain` ends in one newline; `rules` columns fit their longest entry.
#[test]
fn explain_and_rules_output_is_tidy() {
    for id in ["LA201", "config", "catalog", "kinds"] {
        let out = lock_audit().args(["explain", id]).output().unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.ends_with('\n') && !text.ends_with("\n\n"), "{id}");
    }
    let out = lock_audit().arg("rules").output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let severity_column: std::collections::BTreeSet<usize> = text
        .lines()
        .map(|l| {
            l.find("error")
                .or_else(|| l.find("warning"))
                .or_else(|| l.find("info"))
                .or_else(|| l.find("severity"))
                .unwrap_or(0)
        })
        .collect();
    assert_eq!(severity_column.len(), 1, "{text}");
}

/// A key written over several lines stays on its row of the `audit` table.
#[test]
fn audit_table_keeps_multi_line_keys_on_one_row() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("a.py"),
        "import redis\nr = redis.Redis()\n\ndef f(name):\n    r.set(\n        \"lock:\"\n        + name,\n        \"x\",\n        nx=True,\n    )\n",
    )
    .unwrap();
    let out = lock_audit()
        .args(["audit", "--no-cache"])
        .arg(dir.path())
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let row = text
        .lines()
        .find(|l| l.contains("a.py:5"))
        .unwrap_or_default();
    assert!(row.contains("\"lock:\" + name"), "{text}");
    assert_eq!(text.lines().count(), 3, "header, one row, summary:\n{text}");
}

/// Every rule is in the README's rules table with its name and severity.
#[test]
fn readme_rules_table_lists_every_rule() {
    let readme = fs::read_to_string("README.md").unwrap();
    for rule in lock_audit::checks::REGISTRY {
        let row = format!(
            "| {} | `{}` | {} |",
            rule.code,
            rule.name,
            rule.severity.name()
        );
        assert!(readme.contains(&row), "README.md rules table lacks {row}");
    }
}

/// The README's library table is `lock-audit libraries`; regenerate it with
/// `UPDATE_README=1 cargo test readme_library_table`.
#[test]
fn readme_library_table_is_in_sync() {
    let out = lock_audit()
        .arg("libraries")
        .assert()
        .code(0)
        .get_output()
        .stdout
        .clone();
    readme_block("libraries", &String::from_utf8(out).unwrap());
}

/// The README's options table is `check`'s arguments as clap defines them
/// (the same text as `--help`); regenerate with
/// `UPDATE_README=1 cargo test readme_options_table`.
#[test]
fn readme_options_table_is_in_sync() {
    readme_block("options", &lock_audit::cli::options_markdown());
}

/// README.md between `<!-- NAME:start -->` and `<!-- NAME:end -->` is
/// `generated` (rewritten instead with `UPDATE_README` set).
fn readme_block(name: &str, generated: &str) {
    let readme = fs::read_to_string("README.md").unwrap();
    let (start, end) = (
        format!("<!-- {name}:start -->\n"),
        format!("<!-- {name}:end -->"),
    );
    let (Some(a), Some(b)) = (readme.find(&start), readme.find(&end)) else {
        panic!("README.md lacks the {start:?} / {end:?} markers");
    };
    let current = &readme[a + start.len()..b];
    if std::env::var_os("UPDATE_README").is_some() {
        let updated = format!(
            "{}{}{}",
            &readme[..a + start.len()],
            generated,
            &readme[b..]
        );
        fs::write("README.md", updated).unwrap();
        return;
    }
    assert_eq!(
        current, generated,
        "README {name} block is stale: run UPDATE_README=1 cargo test readme_{name}"
    );
}

/// `audit` on a tree that mixes every language: one JSON inventory with
/// sites from each, per the documented schema.
#[test]
fn audit_inventories_every_language() {
    let out = lock_audit()
        .args(["audit", "fixtures", "--include-tests", "--format", "json"])
        .assert()
        .code(0)
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["version"], 1);
    let sites = v["sites"].as_array().unwrap();
    for lang in [
        "python",
        "rust",
        "go",
        "java",
        "javascript",
        "typescript",
        "ruby",
    ] {
        assert!(
            sites.iter().any(|s| s["language"] == lang),
            "no {lang} site in the inventory"
        );
    }
    for s in sites {
        for field in [
            "path",
            "line",
            "language",
            "backend",
            "library",
            "key",
            "ttl",
            "class",
            "evidence",
            "protection",
            "findings",
        ] {
            assert!(s.get(field).is_some(), "site lacks `{field}`: {s}");
        }
    }
    // A redis-py Lock without timeout shows `none`; a Redisson watchdog lock `renewed`.
    assert!(sites
        .iter()
        .any(|s| s["library"] == "redis-py" && s["ttl"] == "none"));
    assert!(sites
        .iter()
        .any(|s| s["library"] == "redisson" && s["ttl"] == "renewed"));
    lock_audit()
        .args([
            "audit",
            "fixtures",
            "--include-tests",
            "--format",
            "markdown",
        ])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("| site | language |"));
}

/// The README's example of a declared wrapper loads and finds the lock it describes.
#[test]
fn readme_declared_wrapper_works() {
    let readme = fs::read_to_string("README.md").unwrap();
    let start = readme
        .find("library: acme-locks")
        .expect("README has the acme-locks example");
    let yaml = &readme[start..start + readme[start..].find("```").unwrap()];
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("rules");
    fs::create_dir(&rules).unwrap();
    fs::write(rules.join("acme.yaml"), yaml).unwrap();
    let src = dir.path().join("job.py");
    fs::write(
        &src,
        "from acme_locks import hold\n\nwith hold('billing'):\n    print('x')\n",
    )
    .unwrap();
    lock_audit()
        .args(["check", "--format", "concise", "--rules"])
        .arg(&rules)
        .arg(&src)
        .assert()
        .code(1)
        .stdout(predicate::str::contains("job.py:3:6: LA101"))
        .stdout(predicate::str::contains("LA105"));
}

/// `classify:` in `lock-audit.yaml` decides a class the heuristics cannot;
/// the evidence names the entry; a bad key is an error naming the line.
#[test]
fn config_classifies_and_validates() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("worker.py");
    fs::write(
        &src,
        "import redis, uuid\nr = redis.Redis()\n\ndef step(n):\n    t = uuid.uuid4().hex\n    if not r.set(f\"lock:ledgerx:{n}\", t, nx=True, px=30000):\n        return\n    try:\n        db.execute(\"UPDATE t SET x = 1 WHERE id = %s\", (n,))\n    finally:\n        r.eval('if redis.call(\"get\", KEYS[1]) == ARGV[1] then return redis.call(\"del\", KEYS[1]) end', 1, f\"lock:ledgerx:{n}\", t)\n",
    )
    .unwrap();
    fs::write(
        dir.path().join("lock-audit.yaml"),
        "classify:\n  - class: efficiency\n    key: \"lock:ledgerx:*\"\n    reason: replayable\n",
    )
    .unwrap();
    let out = lock_audit()
        .args(["audit", "--format", "json"])
        .arg(dir.path())
        .assert()
        .code(0)
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["sites"][0]["class"], "efficiency", "{v}");
    assert!(
        v["sites"][0]["evidence"]
            .to_string()
            .contains("classify #1"),
        "{v}"
    );
    rejects_config(
        dir.path(),
        "classify:\n  - class: efficiency\n    keys: \"lock:*\"\n",
        &["lock-audit.yaml:3", "unknown field `keys`"],
    );
}

/// With `config` as its lock-audit.yaml, `check` of `dir` fails (exit 2)
/// with each of `errors` on stderr.
fn rejects_config(dir: &std::path::Path, config: &str, errors: &[&str]) {
    fs::write(dir.join("lock-audit.yaml"), config).unwrap();
    let mut run = lock_audit().arg("check").arg(dir).assert().code(2);
    for e in errors {
        run = run.stderr(predicate::str::contains(*e));
    }
}

/// `assume-class: correctness` classes the locks nothing decides (so LA301
/// fires on an unfenced write under one); decided locks keep their class; the
/// default and `unclassified` leave them unclassified; a bad value is an error.
#[test]
fn assume_class_settles_undecided_locks() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("worker.py"),
        "import redis, uuid, requests\nr = redis.Redis()\n\ndef step(n):\n    t = uuid.uuid4().hex\n    if not r.set(f\"lock:step:{n}\", t, nx=True, px=30000):\n        return\n    try:\n        requests.post(\"https://partner.internal/step\", json={\"n\": n})\n    finally:\n        r.eval('if redis.call(\"get\", KEYS[1]) == ARGV[1] then return redis.call(\"del\", KEYS[1]) end', 1, f\"lock:step:{n}\", t)\n\ndef warm_cache(n):\n    t = uuid.uuid4().hex\n    if not r.set(f\"lock:warm:{n}\", t, nx=True, px=30000):\n        return\n    r.eval('if redis.call(\"get\", KEYS[1]) == ARGV[1] then return redis.call(\"del\", KEYS[1]) end', 1, f\"lock:warm:{n}\", t)\n",
    )
    .unwrap();
    let classes = |config: Option<&str>| {
        if let Some(text) = config {
            fs::write(dir.path().join("lock-audit.yaml"), text).unwrap();
        }
        let v = audit_json(dir.path());
        let sites = v["sites"].as_array().unwrap().clone();
        sites
            .iter()
            .map(|s| {
                (
                    s["class"].as_str().unwrap().to_string(),
                    s["evidence"].to_string(),
                    s["findings"].to_string(),
                )
            })
            .collect::<Vec<_>>()
    };
    let default = classes(None);
    assert_eq!(default[0].0, "unclassified", "{default:?}");
    assert_eq!(default[1].0, "efficiency", "{default:?}");
    let assumed = classes(Some("assume-class: correctness\n"));
    assert_eq!(assumed[0].0, "correctness", "{assumed:?}");
    assert!(
        assumed[0].1.contains("assume-class: correctness"),
        "{assumed:?}"
    );
    assert!(assumed[0].2.contains("LA301"), "{assumed:?}");
    assert_eq!(assumed[1].0, "efficiency", "{assumed:?}");
    let explicit = classes(Some("assume-class: unclassified\n"));
    assert_eq!(explicit[0].0, "unclassified", "{explicit:?}");
    rejects_config(
        dir.path(),
        "assume-class: correct\n",
        &["lock-audit.yaml", "correct"],
    );
}

/// The CI gate's knobs: `--fail-on`, `--exit-zero`, `--statistics`, SARIF and GitHub output.
#[test]
fn ci_gate_options() {
    lock_audit()
        .args(["check", "examples/", "--fail-on", "never"])
        .assert()
        .code(0);
    lock_audit()
        .args(["check", "examples/", "--exit-zero"])
        .assert()
        .code(0);
    lock_audit()
        .args(["check", "examples/", "--fail-on", "error"])
        .assert()
        .code(1);
    lock_audit()
        .args(["check", "examples/", "--statistics"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("LA101  missing-ttl"));
    lock_audit()
        .args(["check", "examples/", "--format", "github"])
        .assert()
        .stdout(predicate::str::contains(
            "::error file=examples/payments/billing_job.py,line=42",
        ));
    lock_audit()
        .args(["check", "examples/", "--format", "sarif"])
        .assert()
        .stdout(predicate::str::contains("\"version\": \"2.1.0\""));
}

/// Deep nesting never overflows the stack: Rust beyond the guard is a notice,
/// the tree-sitter languages are walked iteratively.
#[test]
fn deep_nesting_is_survived() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let deep =
        |open: &str, close: &str, n: usize| format!("{}1{}", open.repeat(n), close.repeat(n));
    fs::write(
        d.join("deep.rs"),
        format!(
            "fn main() {{ let x = {}; redis::cmd(\"SET\").arg(\"NX\"); }}\n",
            deep("(", ")", 10_000)
        ),
    )
    .unwrap();
    fs::write(
        d.join("ok.rs"),
        format!(
            "fn main() {{ let x = {}; redis::cmd(\"SET\").arg(\"NX\"); }}\n",
            deep("(", ")", 1_500)
        ),
    )
    .unwrap();
    fs::write(
        d.join("deep.py"),
        format!(
            "import redis\nr.delete('lock:a')\nx = {}\n",
            deep("(", ")", 10_000)
        ),
    )
    .unwrap();
    fs::write(
        d.join("deep.js"),
        format!(
            "const redis = require('ioredis');\nredis.del('lock:a');\nlet x = {};\n",
            deep("[", "]", 10_000)
        ),
    )
    .unwrap();
    fs::write(
        d.join("deep.rb"),
        format!(
            "require 'redis'\nREDIS.del('lock:a')\nx = {}\n",
            deep("[", "]", 10_000)
        ),
    )
    .unwrap();
    lock_audit()
        .args(["check", "--verbose", "--format", "concise"])
        .arg(d)
        .assert()
        .code(1)
        // The deep Python and Ruby files are analysed to the end.
        .stdout(predicate::str::contains("deep.py:2:1: LA201"))
        .stdout(predicate::str::contains("deep.rb:2:1: LA201"))
        .stderr(predicate::str::contains(
            "deep.rs: cannot parse: nesting 10001 levels deep",
        ));
}

/// `init` writes a starter config that loads; severity overrides and
/// `exclude` apply; `--force-exclude` drops excluded files named explicitly.
#[test]
fn init_severity_exclude_and_show_settings() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    lock_audit().current_dir(d).arg("init").assert().code(0);
    lock_audit().current_dir(d).arg("init").assert().code(2);
    fs::create_dir(d.join("vendor")).unwrap();
    let bad = "import redis\nr = redis.Redis()\n\ndef f(t):\n    if r.set('lock:x', t, nx=True):\n        pass\n";
    fs::write(d.join("vendor/dep.py"), bad).unwrap();
    fs::write(d.join("app.py"), bad).unwrap();
    lock_audit()
        .current_dir(d)
        .args(["check", "--format", "concise", "."])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("app.py:5:8: LA101 [error]"))
        .stdout(predicate::str::contains("vendor").not());
    let yaml = fs::read_to_string(d.join("lock-audit.yaml")).unwrap()
        + "severity:\n  missing-ttl: warning\n";
    fs::write(d.join("lock-audit.yaml"), yaml).unwrap();
    lock_audit()
        .current_dir(d)
        .args(["check", "--format", "concise", "--fail-on", "error", "."])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("LA101 [warning]"));
    lock_audit()
        .current_dir(d)
        .args([
            "check",
            "--format",
            "concise",
            "--force-exclude",
            "vendor/dep.py",
        ])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("no findings"));
    lock_audit()
        .current_dir(d)
        .args(["check", "--show-settings", "."])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            "severity overrides: LA101=warning",
        ));
}

/// A baseline written before an unrelated edit that shifts lines still
/// suppresses the same findings; a new finding shows; stale entries are said.
#[test]
fn baseline_survives_line_shifts() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let body = "def claim(t):\n    if r.set('lock:x', t, nx=True):\n        return True\n";
    fs::write(
        d.join("job.py"),
        format!("import redis\nr = redis.Redis()\n\n{body}"),
    )
    .unwrap();
    let base = d.join("baseline.json");
    lock_audit()
        .arg("check")
        .arg(d)
        .arg("--write-baseline")
        .arg(&base)
        .assert()
        .code(0);
    // Unrelated lines pushed in above: the finding moves, the baseline still matches.
    fs::write(
        d.join("job.py"),
        format!("import redis\nimport os\nimport sys\nr = redis.Redis()\n\n\n{body}"),
    )
    .unwrap();
    lock_audit()
        .arg("check")
        .arg(d)
        .arg("--baseline")
        .arg(&base)
        .assert()
        .code(0)
        .stdout(predicate::str::contains("no findings"));
    // A new bug is reported; a fixed one leaves a stale entry.
    fs::write(
        d.join("job.py"),
        "import redis\nr = redis.Redis()\n\ndef drop():\n    r.delete('lock:x')\n",
    )
    .unwrap();
    lock_audit()
        .arg("check")
        .arg(d)
        .arg("--baseline")
        .arg(&base)
        .args(["--format", "concise"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("LA201"))
        .stderr(predicate::str::contains("1 baseline entry"));
}

/// Several outputs in one run, JUnit and GitLab formats, and shards that
/// together cover the tree exactly once.
#[test]
fn outputs_formats_and_shards() {
    let dir = tempfile::tempdir().unwrap();
    let sarif = dir.path().join("out.sarif");
    let junit = dir.path().join("out.xml");
    lock_audit()
        .args(["check", "examples/", "--output-format", "concise"])
        .arg("--output-format")
        .arg(format!("sarif={}", sarif.display()))
        .arg("--output-format")
        .arg(format!("junit={}", junit.display()))
        .assert()
        .code(1)
        .stdout(predicate::str::contains("LA101"));
    assert!(fs::read_to_string(&sarif).unwrap().contains("\"2.1.0\""));
    assert!(fs::read_to_string(&junit)
        .unwrap()
        .contains("<testcase classname="));
    let gitlab = lock_audit()
        .args(["check", "examples/", "--format", "gitlab"])
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&gitlab).unwrap();
    assert!(v
        .as_array()
        .is_some_and(|a| a.len() >= 7 && a[0]["fingerprint"].is_string()));
    let whole = lock_audit()
        .args(["check", "examples/", "--format", "json"])
        .assert()
        .get_output()
        .stdout
        .clone();
    let whole: serde_json::Value = serde_json::from_slice(&whole).unwrap();
    let mut total = 0;
    for k in 1..=3 {
        let out = lock_audit()
            .args([
                "check",
                "examples/",
                "--format",
                "json",
                "--shard",
                &format!("{k}/3"),
            ])
            .assert()
            .get_output()
            .stdout
            .clone();
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        total += v["summary"]["findings"].as_u64().unwrap();
    }
    // Every file's findings, each in exactly one shard.
    assert_eq!(Some(total), whole["summary"]["findings"].as_u64());
    lock_audit()
        .args(["check", "examples/", "--shard", "4/3"])
        .assert()
        .code(2);
}

/// `--changed-since REV` reports only files changed since REV.
#[test]
fn changed_since_reports_changed_files_only() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git")
            .args(args)
            .current_dir(d)
            .output()
            .unwrap()
            .status
            .success();
        assert!(ok, "git {args:?}");
    };
    let bug = "import redis\nr = redis.Redis()\n\ndef f(t):\n    if r.set('lock:x', t, nx=True):\n        pass\n";
    git(&["init", "-q", "."]);
    git(&["config", "user.email", "t@example.invalid"]);
    git(&["config", "user.name", "t"]);
    fs::write(d.join("old.py"), bug).unwrap();
    git(&["add", "."]);
    git(&["commit", "-q", "-m", "old"]);
    fs::write(d.join("new.py"), bug).unwrap();
    lock_audit()
        .current_dir(d)
        .args([
            "check",
            "--format",
            "concise",
            "--changed-since",
            "HEAD",
            ".",
        ])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("new.py"))
        .stdout(predicate::str::contains("old.py").not());
}

/// `overrides:` in the config: rules ignored or re-graded under a path glob.
#[test]
fn per_path_overrides() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::create_dir(d.join("tests")).unwrap();
    let bug = "import redis\nr = redis.Redis()\n\ndef f(t):\n    if r.set('lock:x', t, nx=True):\n        pass\n";
    fs::write(d.join("tests/test_job.py"), bug).unwrap();
    fs::write(d.join("job.py"), bug).unwrap();
    fs::write(
        d.join("lock-audit.yaml"),
        "overrides:\n  - path: \"tests/**\"\n    ignore: [missing-ttl]\n",
    )
    .unwrap();
    lock_audit()
        .current_dir(d)
        .args(["check", "--format", "concise", "."])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("job.py:5"))
        .stdout(predicate::str::contains("test_job.py").not());
    fs::write(
        d.join("lock-audit.yaml"),
        "overrides:\n  - path: \"tests/**\"\n    ignore: [LA999]\n",
    )
    .unwrap();
    lock_audit()
        .current_dir(d)
        .args(["check", "."])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown rule `LA999`"));
}

/// `check --format concise` of `dir` with the cache in `cache`; (stdout, stderr).
fn cached_check(dir: &std::path::Path, cache: &std::path::Path) -> (String, String) {
    let out = lock_audit()
        .args(["check", "--verbose", "--format", "concise", "--exit-zero"])
        .arg(dir)
        .arg("--cache-dir")
        .arg(cache)
        .env("LOCK_AUDIT_TRACE", "1")
        .assert()
        .code(0);
    let o = out.get_output();
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The lock sites `audit` finds in `.rs` files of `dir`, with the cache in `cache`.
fn cached_rust_sites(dir: &std::path::Path, cache: &std::path::Path) -> usize {
    let out = lock_audit()
        .args(["audit", "--format", "json"])
        .arg(dir)
        .arg("--cache-dir")
        .arg(cache)
        .assert()
        .success();
    let json: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    json["sites"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["path"].as_str().is_some_and(|p| p.ends_with(".rs")))
        .count()
}

#[test]
fn an_embedded_file_edited_alone_is_read_again() {
    let tmp = tempfile::tempdir().unwrap();
    let (d, cache) = (tmp.path().join("src"), tmp.path().join("cache"));
    fs::create_dir_all(&d).unwrap();
    fs::write(
        d.join("jobs.rs"),
        "pub fn next(conn: &mut PgConnection) {\n    diesel::sql_query(\"SELECT pg_advisory_xact_lock(7)\").execute(conn);\n    diesel::sql_query(include_str!(\"next.sql\")).execute(conn);\n}\n",
    )
    .unwrap();
    fs::write(d.join("next.sql"), "SELECT id FROM jobs LIMIT 1;\n").unwrap();
    assert_eq!(cached_rust_sites(&d, &cache), 1);
    // Only the embedded file changes: the Rust file's cached analysis is stale.
    fs::write(
        d.join("next.sql"),
        "SELECT id FROM jobs LIMIT 1 FOR UPDATE SKIP LOCKED;\n",
    )
    .unwrap();
    assert_eq!(cached_rust_sites(&d, &cache), 2);
}

#[test]
fn an_embedded_file_that_cannot_be_read_is_a_notice() {
    let tmp = tempfile::tempdir().unwrap();
    fs::write(
        tmp.path().join("jobs.rs"),
        "pub fn next(conn: &mut PgConnection) {\n    diesel::sql_query(\"SELECT pg_advisory_xact_lock(7)\").execute(conn);\n    diesel::sql_query(include_str!(\"gone.sql\")).execute(conn);\n}\n",
    )
    .unwrap();
    fs::write(
        tmp.path().join("jobs.go"),
        "package jobs\n\nimport _ \"embed\"\n\n//go:embed gone.lua\nvar lockSrc string\n\nvar lockKey = \"lock:jobs\"\n",
    )
    .unwrap();
    lock_audit()
        .args(["check", "--verbose", "--exit-zero", "--no-cache"])
        .arg(tmp.path())
        .assert()
        .success()
        .stderr(predicate::str::contains("jobs.rs"))
        .stderr(predicate::str::contains(
            "include_str!(\"gone.sql\") not read",
        ))
        .stderr(predicate::str::contains("jobs.go"))
        .stderr(predicate::str::contains("//go:embed gone.lua not read"));
}

#[test]
fn audit_verbose_lists_the_calls_that_looked_like_a_lock() {
    let tmp = tempfile::tempdir().unwrap();
    fs::write(
        tmp.path().join("jobs.rb"),
        "require \"redlock\"\n\nclass Jobs\n  def run(locker)\n    locker.lock(\"job:1\", 10_000)\n  end\n\n  def counted\n    lock_manager = Redlock::Client.new([\"redis://localhost\"])\n    lock_manager.lock(\"job:2\", 10_000)\n  end\n\n  def mutex(m)\n    m.lock\n  end\nend\n",
    )
    .unwrap();
    // A file that requires nothing (Bundler loads the gem): a key naming a lock
    // is some evidence, a key naming none is not.
    fs::write(
        tmp.path().join("sweep.rb"),
        "class Sweeper\n  def sweep(store)\n    store.lock(\"sweep-lock\", 30_000)\n  end\n\n  def report(store)\n    store.lock(\"report\", 30_000)\n  end\nend\n",
    )
    .unwrap();
    // The parameter `locker` is no client the file shows; `lock_manager` is,
    // and `m.lock` fits no redlock-rb `lock` (it takes a key and a TTL).
    lock_audit()
        .args(["audit", "--verbose", "--no-cache"])
        .arg(tmp.path())
        .assert()
        .success()
        .stdout(predicate::str::contains("jobs.rb:10"))
        .stderr(predicate::str::contains(
            "jobs.rb:5: `locker.lock(..)` looks like redlock-rb's `lock` (the file imports it)",
        ))
        .stderr(predicate::str::contains(
            "sweep.rb:3: `store.lock(..)` looks like redlock-rb's `lock` (its key names a lock)",
        ))
        .stderr(predicate::str::contains("jobs.rb:10:").not())
        .stderr(predicate::str::contains("jobs.rb:14:").not())
        .stderr(predicate::str::contains("sweep.rb:7:").not());
    lock_audit()
        .args(["audit", "--no-cache"])
        .arg(tmp.path())
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "2 calls looked like a lock but lacked the evidence to count",
        ));
}

#[test]
fn cache_reuses_unchanged_files_and_never_serves_stale_results() {
    let tmp = tempfile::tempdir().unwrap();
    let (d, cache) = (tmp.path().join("src"), tmp.path().join("cache"));
    fs::create_dir_all(d.join("claims")).unwrap();
    let wrapper = "import redis\nr = redis.Redis()\n\n\ndef try_claim(job, token):\n    return r.set(f'claim:{job}', token, nx=True, ex=60)\n";
    fs::write(d.join("claims/__init__.py"), wrapper).unwrap();
    fs::write(
        d.join("jobs.py"),
        "from claims import try_claim\n\n\ndef export(job, token):\n    try_claim(job, token)\n",
    )
    .unwrap();
    fs::write(
        d.join("a.py"),
        "import redis\nr = redis.Redis()\nr.set('lock:a', 'x', nx=True)\n",
    )
    .unwrap();
    fs::write(
        d.join("broken.py"),
        "import redis\nr = redis.Redis(\nr.delete('lock:a')\ndef (:\n",
    )
    .unwrap();
    fs::write(d.join("later.py"), "import claims\n").unwrap();

    let (first, err) = cached_check(&d, &cache);
    assert!(err.contains("cache: 0 hits"), "{err}");
    assert!(first.contains("a.py:3:1: LA101"), "{first}");
    assert!(
        first.contains("jobs.py:5:5: LA104"),
        "cross-file finding: {first}"
    );
    assert!(err.contains("syntax error at line"), "{err}");
    assert!(cache.join(".gitignore").exists() && cache.join("CACHEDIR.TAG").exists());

    // Unchanged: every analysis comes from the cache, findings and notices alike.
    let (second, err) = cached_check(&d, &cache);
    assert!(err.contains(" 0 misses"), "{err}");
    assert_eq!(first, second);

    // A file that starts calling a wrapper is re-examined (pass 1 looks for
    // the last run's wrapper names in every file it reads).
    fs::write(
        d.join("later.py"),
        "from claims import try_claim\n\n\ndef f(job, token):\n    try_claim(job, token)\n",
    )
    .unwrap();
    let (with_later, _) = cached_check(&d, &cache);
    assert!(with_later.contains("later.py:5:5: LA104"), "{with_later}");
    fs::remove_file(d.join("later.py")).unwrap();

    // A changed file is analysed again.
    fs::write(
        d.join("a.py"),
        "import redis\nr = redis.Redis()\nr.set('lock:a', 'x', nx=True, px=500)\n",
    )
    .unwrap();
    let (third, _) = cached_check(&d, &cache);
    assert!(!third.contains("a.py:3:1: LA101"), "{third}");

    // An unchanged caller whose wrapper changed elsewhere is analysed again.
    assert!(second.contains("try-acquire of lock `job`"), "{second}");
    fs::write(
        d.join("claims/__init__.py"),
        wrapper.replace("f'claim:{job}'", "'claim:all'"),
    )
    .unwrap();
    let (fourth, _) = cached_check(&d, &cache);
    assert!(
        fourth.contains("try-acquire of lock `'claim:all'`"),
        "{fourth}"
    );

    // Checking one file reads that file's entry only.
    let out = lock_audit()
        .args(["check", "--format", "concise", "--exit-zero"])
        .arg(d.join("a.py"))
        .arg("--cache-dir")
        .arg(&cache)
        .env("LOCK_AUDIT_TRACE", "1")
        .assert()
        .code(0);
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(err.contains("cache: 1 hits, 0 misses"), "{err}");

    // A damaged cache is rebuilt, not trusted.
    fn damage(dir: &std::path::Path) -> usize {
        let mut n = 0;
        for f in fs::read_dir(dir).unwrap().flatten() {
            if f.path().is_dir() {
                n += damage(&f.path());
            } else if f.path().extension().is_some_and(|e| e == "json") {
                fs::write(f.path(), "{not json").unwrap();
                n += 1;
            }
        }
        n
    }
    assert!(damage(&cache) >= 4);
    let (fifth, err) = cached_check(&d, &cache);
    assert!(err.contains("cache: 0 hits"), "{err}");
    assert_eq!(fourth, fifth);

    // --no-cache neither reads nor writes one.
    let unused = tmp.path().join("unused");
    lock_audit()
        .args(["check", "--exit-zero", "--no-cache", "--cache-dir"])
        .arg(&unused)
        .arg(&d)
        .assert()
        .code(0);
    assert!(!unused.exists());
}

/// A file that held nothing to analyse is not read again while its time and
/// size stay the same and the run looks for the same wrapper names; a change
/// to the file, or new wrapper names, has it read again.
#[test]
fn unchanged_inert_files_are_not_read_again() {
    let tmp = tempfile::tempdir().unwrap();
    let (d, cache) = (tmp.path().join("src"), tmp.path().join("cache"));
    fs::create_dir_all(&d).unwrap();
    // Written an hour ago: a file modified within the last seconds is never
    // recorded (its time could survive a change).
    let write_aged = |name: &str, text: &str| {
        let path = d.join(name);
        fs::write(&path, text).unwrap();
        let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(hour_ago)
            .unwrap();
    };
    write_aged(
        "claims.py",
        "import redis\nr = redis.Redis()\n\n\ndef try_claim(job, token):\n    return r.set(f'claim:{job}', token, nx=True, ex=60)\n",
    );
    write_aged("plain.py", "def add(a, b):\n    return a + b\n");
    write_aged("util.py", "def mul(a, b):\n    return a * b\n");
    let unread = |err: &str| {
        err.lines()
            .find_map(|l| l.strip_suffix(" unchanged files not read"))
            .and_then(|l| l.rsplit(' ').next())
            .and_then(|n| n.parse::<usize>().ok())
    };
    // The first run finds the wrapper names; from the second on, the inert
    // files are judged against them.
    cached_check(&d, &cache);
    cached_check(&d, &cache);
    let (_, err) = cached_check(&d, &cache);
    assert_eq!(unread(&err), Some(2), "{err}");

    // A changed file is read again, and its new call is found.
    write_aged(
        "plain.py",
        "from claims import try_claim\n\n\ndef f(job, token):\n    try_claim(job, token)\n",
    );
    let (out, err) = cached_check(&d, &cache);
    assert!(out.contains("plain.py:5:5: LA104"), "{out}");
    assert_eq!(unread(&err), Some(1), "{err}");

    // New wrapper names: the next run reads every file again.
    write_aged(
        "grab.py",
        "import redis\nr = redis.Redis()\n\n\ndef grab(k):\n    return r.set(k, 'x', nx=True, ex=5)\n",
    );
    cached_check(&d, &cache);
    let (_, err) = cached_check(&d, &cache);
    assert_eq!(unread(&err), Some(0), "{err}");
    let (_, err) = cached_check(&d, &cache);
    assert_eq!(unread(&err), Some(1), "{err}");
}

/// Runs sharing one cache folder at the same time each get the uncached
/// findings, and leave a cache the next run reads in full.
#[test]
fn concurrent_runs_share_a_cache_safely() {
    let tmp = tempfile::tempdir().unwrap();
    let (d, cache) = (tmp.path().join("src"), tmp.path().join("cache"));
    fs::create_dir_all(&d).unwrap();
    for i in 0..40 {
        fs::write(
            d.join(format!("m{i}.py")),
            format!("import redis\nr = redis.Redis()\nr.set('lock:{i}', 'x', nx=True)\nr.delete('lock:{i}')\n"),
        )
        .unwrap();
    }
    let expected = lock_audit()
        .args(["check", "--format", "concise", "--exit-zero", "--no-cache"])
        .arg(&d)
        .output()
        .unwrap();
    let bin = assert_cmd::cargo::cargo_bin("lock-audit");
    let runs: Vec<std::process::Child> = (0..6)
        .map(|_| {
            std::process::Command::new(&bin)
                .args(["check", "--format", "concise", "--exit-zero", "--cache-dir"])
                .arg(&cache)
                .arg(&d)
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for run in runs {
        let out = run.wait_with_output().unwrap();
        assert!(out.status.success());
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&expected.stdout)
        );
    }
    let (after, err) = cached_check(&d, &cache);
    assert!(err.contains("cache: 40 hits, 0 misses"), "{err}");
    assert!(after.contains("m7.py:4:1: LA201"), "{after}");
}

#[test]
fn minified_bundles_are_skipped_with_a_notice_unless_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let filler: String = (0..2000)
        .map(|i| format!("function f{i}(a){{return a*{i}}};"))
        .collect();
    let bundle = format!(
        "const Redis=require(\"ioredis\");const r=new Redis();{filler}async function g(){{await r.set(\"lock:x\",\"1\",\"NX\")}}\n"
    );
    fs::write(dir.path().join("app.min.js"), bundle).unwrap();
    let check = |extra: &[&str]| {
        lock_audit()
            .args(["check", "--no-cache", "--verbose", "--format", "concise"])
            .args(extra)
            .arg(dir.path())
            .assert()
    };
    check(&[])
        .code(0)
        .stderr(predicate::str::contains("skipped: minified"))
        .stderr(predicate::str::contains("--include-minified"));
    check(&["--include-minified"])
        .code(1)
        .stdout(predicate::str::contains("LA101"));
    // The same from the config file.
    fs::write(
        dir.path().join("lock-audit.yaml"),
        "include-minified: true\n",
    )
    .unwrap();
    check(&[]).code(1).stdout(predicate::str::contains("LA101"));
}

#[test]
fn audit_takes_the_analysis_flags() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    for _ in 0..2 {
        lock_audit()
            .args(["audit", "examples/", "--include-minified", "--cache-dir"])
            .arg(&cache)
            .assert()
            .code(0)
            .stdout(predicate::str::contains("lock sites:"));
    }
    assert!(cache.join(".gitignore").exists(), "audit writes its cache");
    lock_audit()
        .args(["audit", "examples/", "--no-cache", "--format", "json"])
        .assert()
        .code(0);
}

/// README's first screen shows the demo's real output: this keeps them equal.
#[test]
fn readme_shows_the_demo_output() {
    let readme = fs::read_to_string("README.md").unwrap();
    let start = "$ lock-audit check examples/ --format concise\n";
    let at = readme.find(start).expect("README has the demo block") + start.len();
    let block = &readme[at..at + readme[at..].find("```").expect("the block ends")];
    let out = lock_audit()
        .args(["check", "examples/", "--format", "concise", "--no-cache"])
        .args(["--color", "never"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let actual = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        block, actual,
        "README's demo output differs from `check examples/`: update the block"
    );
}

/// `audit examples/`: the summary's counts agree with the sites it lists.
#[test]
fn audit_summary_agrees_with_its_sites() {
    let run = |format: &str| {
        let out = lock_audit()
            .args(["audit", "examples/", "--no-cache", "--format", format])
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    let json: serde_json::Value = serde_json::from_str(&run("json")).unwrap();
    let sites = json["sites"].as_array().unwrap();
    let correctness: Vec<_> = sites
        .iter()
        .filter(|s| s["class"] == "correctness")
        .collect();
    let unprotected = correctness
        .iter()
        .filter(|s| s["writes"] == true && s["protection"] == "none")
        .count();
    let table = run("table");
    let summary = table.lines().last().unwrap();
    assert!(
        summary.contains(&format!(
            "{} correctness ({unprotected} unprotected)",
            correctness.len()
        )),
        "{summary}"
    );
    assert!(
        unprotected >= 4,
        "the demo shows unprotected correctness locks"
    );
    assert!(sites.iter().any(|s| s["protection"] == "fencing"));
    // A correctness lock whose section writes nothing is not "unprotected".
    assert!(correctness.iter().any(|s| s["writes"] == false));
}

/// Test code is not reported by default: test files by path are not analysed
/// (the summary counts those naming a lock library), Rust `#[cfg(test)]`
/// modules inside production files are analysed and their findings counted.
/// `--include-tests` and the config show them; `test-paths` replaces the list.
#[test]
fn test_code_is_counted_not_shown() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let bug = "import redis\nr = redis.Redis()\n\ndef f():\n    r.set('lock:x', 'me', nx=True)\n";
    fs::create_dir_all(d.join("app")).unwrap();
    fs::create_dir_all(d.join("tests")).unwrap();
    fs::create_dir_all(d.join("qa")).unwrap();
    fs::write(d.join("app/jobs.py"), bug).unwrap();
    fs::write(d.join("tests/test_jobs.py"), bug).unwrap();
    fs::write(d.join("app/jobs_test.py"), bug).unwrap();
    fs::write(d.join("qa/smoke.py"), bug).unwrap();
    fs::write(
        d.join("app/lock.rs"),
        "pub fn lock(con: &mut redis::Connection) -> bool {\n    redis::cmd(\"SET\").arg(\"lock:a\").arg(\"me\").arg(\"NX\").arg(\"PX\").arg(30000).query(con).unwrap_or(false)\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn leaks() {\n        let _: bool = redis::cmd(\"SET\").arg(\"lock:t\").arg(\"me\").arg(\"NX\").query(&mut con()).unwrap();\n    }\n}\n",
    )
    .unwrap();
    let run = |extra: &[&str]| {
        let out = lock_audit()
            .args(["check", "--format", "concise", "--no-cache"])
            .args(extra)
            .arg(d)
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    let default = run(&[]);
    assert!(default.contains("app/jobs.py"), "{default}");
    assert!(default.contains("qa/smoke.py"), "{default}");
    for hidden in ["test_jobs.py", "jobs_test.py", "lock.rs"] {
        assert!(!default.contains(hidden), "{hidden} shown:\n{default}");
    }
    // Test files are not analysed (counted when they name a lock library);
    // a test module inside a production file is analysed, its findings hidden.
    assert!(
        default.contains(
            "2 findings in test code not shown, \
             2 test files naming a lock library not analysed (--include-tests)"
        ),
        "{default}"
    );
    let all = run(&["--include-tests"]);
    for shown in ["test_jobs.py", "jobs_test.py", "lock.rs:9"] {
        assert!(all.contains(shown), "{shown} missing:\n{all}");
    }
    assert!(!all.contains("not shown"), "{all}");
    // The config: another list of test paths, or tests included.
    fs::write(d.join("lock-audit.yaml"), "test-paths: [\"qa/**\"]\n").unwrap();
    let custom = run(&[]);
    assert!(!custom.contains("qa/smoke.py"), "{custom}");
    assert!(custom.contains("tests/test_jobs.py"), "{custom}");
    fs::write(d.join("lock-audit.yaml"), "include-tests: true\n").unwrap();
    assert!(run(&[]).contains("tests/test_jobs.py"));
}

/// The prefilter and the cache change how much work a run does, never what it
/// finds: the fixtures and the example project give the same findings and
/// sites parsed whole (`--no-prefilter`), cold, warm and without a cache.
#[test]
fn prefilter_and_cache_never_change_the_findings() {
    let root = env!("CARGO_MANIFEST_DIR");
    let cache = tempfile::tempdir().unwrap();
    let cache_dir = cache.path().to_str().unwrap().to_string();
    // The report without its summary (files parsed, time): findings or sites.
    let run = |command: &str, extra: &[&str]| -> (serde_json::Value, u64) {
        let out = lock_audit()
            .current_dir(root)
            .args([command, "fixtures", "examples", "--include-tests"])
            .args(["--format", "json"])
            .args(extra)
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let parsed = v["summary"]["files_parsed"].as_u64().unwrap_or(0);
        let body = if command == "check" {
            &v["findings"]
        } else {
            &v["sites"]
        };
        (body.clone(), parsed)
    };
    for command in ["check", "audit"] {
        let (plain, parsed) = run(command, &["--no-cache"]);
        assert!(plain.as_array().is_some_and(|a| a.len() > 100), "{command}");
        let (whole, parsed_whole) = run(command, &["--no-cache", "--no-prefilter"]);
        if command == "check" {
            assert!(parsed_whole > parsed, "--no-prefilter parses every file");
        }
        assert!(plain == whole, "{command}: --no-prefilter differs");
        let (cold, _) = run(command, &["--cache-dir", &cache_dir]);
        assert!(plain == cold, "{command}: a cold cache differs");
        let (warm, _) = run(command, &["--cache-dir", &cache_dir]);
        assert!(plain == warm, "{command}: a warm cache differs");
    }
}

/// A unit that changed between versions follows the project's manifest:
/// pottery's `auto_release_time` was milliseconds before 3.0.0.
#[test]
fn a_pinned_library_version_decides_the_ttl_unit() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let source = "from pottery import Redlock\nfrom redis import Redis\n\nredis = Redis()\n\n\ndef settle(batch_id):\n    lock = Redlock(key=f\"settle:{batch_id}\", masters={redis}, auto_release_time=15 * 1000)\n    with lock:\n        print(batch_id)\n";
    for (folder, manifest, text) in [
        (
            "legacy",
            "requirements.txt",
            "redis==4.5.1\npottery==2.3.7  # pinned\n",
        ),
        (
            "poetry",
            "pyproject.toml",
            "[tool.poetry.dependencies]\npottery = \"^2.1\"\n",
        ),
        (
            "current",
            "pyproject.toml",
            "[project]\ndependencies = [\"pottery>=3.0.0\"]\n",
        ),
        ("unpinned", "README.md", "no manifest\n"),
    ] {
        fs::create_dir_all(d.join(folder)).unwrap();
        fs::write(d.join(folder).join(manifest), text).unwrap();
        fs::write(d.join(folder).join("jobs.py"), source).unwrap();
    }
    let v = audit_json(d);
    let ttl = |folder: &str| {
        let site = v["sites"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["path"].as_str().unwrap().contains(folder))
            .unwrap_or_else(|| panic!("a site in {folder}"));
        (site["ttl_ms"].as_i64(), site["evidence"].to_string())
    };
    let (legacy, why) = ttl("legacy");
    assert_eq!(legacy, Some(15_000));
    assert!(why.contains("==2.3.7 (requirements.txt)"), "{why}");
    assert_eq!(ttl("poetry").0, Some(15_000));
    assert_eq!(ttl("current").0, Some(15_000_000));
    assert_eq!(ttl("unpinned").0, Some(15_000_000));
    // The cache follows the manifest: an upgrade changes the reading.
    let cache = d.join("cache");
    let legacy_ttl = || {
        let out = lock_audit()
            .args(["audit", "--format", "json", "--cache-dir"])
            .arg(&cache)
            .arg(d.join("legacy"))
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["sites"][0]["ttl_ms"].as_i64()
    };
    assert_eq!(legacy_ttl(), Some(15_000));
    fs::write(d.join("legacy/requirements.txt"), "pottery==3.0.1\n").unwrap();
    assert_eq!(legacy_ttl(), Some(15_000_000));
}

/// A file the callers pass redoes in two rounds (a wrapper over a wrapper)
/// keeps one cached analysis per round: a warm run misses nothing.
#[test]
fn a_warm_run_over_wrappers_of_wrappers_misses_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let (d, cache) = (tmp.path().join("src"), tmp.path().join("cache"));
    fs::create_dir_all(&d).unwrap();
    fs::write(
        d.join("locks.py"),
        "import redis\nr = redis.Redis()\n\n\ndef try_lock(name, token):\n    return r.set(f'lock:{name}', token, nx=True, ex=60)\n",
    )
    .unwrap();
    fs::write(
        d.join("jobs.py"),
        "from locks import try_lock\n\n\ndef try_job_lock(job, token):\n    return try_lock(f'job:{job}', token)\n\n\ndef run(job, token):\n    try_lock(job, token)\n",
    )
    .unwrap();
    fs::write(
        d.join("cron.py"),
        "from jobs import try_job_lock\nfrom locks import try_lock\n\n\ndef tick(token):\n    try_job_lock('tick', token)\n    try_lock('tock', token)\n",
    )
    .unwrap();
    let (first, _) = cached_check(&d, &cache);
    assert!(
        first.contains("cron.py:6:5: LA104"),
        "two rounds of wrappers: {first}"
    );
    let (second, err) = cached_check(&d, &cache);
    assert!(err.contains(" 0 misses"), "{err}");
    assert_eq!(first, second);
}

/// The class evidence is the two strongest reasons for the class chosen, each
/// with its line; weaker and contrary ones are left out, and ten saves count as one.
#[test]
fn class_evidence_is_the_two_strongest_reasons_with_lines() {
    let dir = tempfile::tempdir().unwrap();
    let src = "import redis\nr = redis.Redis()\n\n\ndef refresh_billing(db, account):\n    with r.lock(f\"lock:billing:{account}\", timeout=30, blocking_timeout=5):\n        db.execute(\"UPDATE accounts SET paid = 1 WHERE id = %s\", (account,))\n        db.execute(\"UPDATE accounts SET seen = 1 WHERE id = %s\", (account,))\n        account.save()\n";
    fs::write(dir.path().join("jobs.py"), src).unwrap();
    let json = audit_json(dir.path());
    let evidence: Vec<&str> = json["sites"][0]["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e.as_str())
        .filter(|e| e.ends_with("(correctness)") || e.ends_with("(efficiency)"))
        .collect();
    assert_eq!(json["sites"][0]["class"], "correctness", "{json}");
    assert_eq!(
        evidence,
        [
            "critical section writes SQL at L7 (correctness)",
            "critical section saves through the ORM (`account.save`) at L9 (correctness)",
        ],
        "{json}"
    );
}

/// A number followed by a `TimeUnit` counts in that unit, also for a
/// command API whose expiry slot is a plain number (Spring's
/// `setIfAbsent(k, v, 45, TimeUnit.SECONDS)`); without one it counts in the
/// flag's unit (`Duration.ofMillis(500)` stays 500 ms).
#[test]
fn a_number_before_a_time_unit_counts_in_that_unit() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    fs::write(
        d.join("Locks.java"),
        r#"import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.springframework.data.redis.core.StringRedisTemplate;

class Locks {
    private final StringRedisTemplate redis;

    Locks(StringRedisTemplate redis) { this.redis = redis; }

    boolean seconds(String id, String token) {
        return Boolean.TRUE.equals(redis.opsForValue().setIfAbsent("a:" + id, token, 45, TimeUnit.SECONDS));
    }

    boolean millis(String id, String token) {
        return Boolean.TRUE.equals(redis.opsForValue().setIfAbsent("b:" + id, token, Duration.ofMillis(500)));
    }
}
"#,
    )
    .unwrap();
    let v = audit_json(d);
    let ttls: Vec<Option<i64>> = v["sites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["ttl_ms"].as_i64())
        .collect();
    assert_eq!(ttls, [Some(45_000), Some(500)], "{v}");
}

/// An options object bound to a name before the call is read like one written
/// in place: redis-lock's `LockAcrossOptions::default()` leases for 10 ms, the
/// named options for their own `ttl`; a TypeScript `const opts = {..}` likewise.
#[test]
fn options_bound_to_a_name_are_read_at_the_call() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    fs::write(
        d.join("settle.rs"),
        r#"use std::time::Duration;
use redis_lock::{lock_across, LockAcrossOptions};

pub async fn settle(conns: &[Conn], account: &str) {
    lock_across(conns, account, async move { pay().await }, LockAcrossOptions::default()).await;
    let options = LockAcrossOptions { ttl: Duration::from_secs(30), ..LockAcrossOptions::default() };
    lock_across(conns, account, async move { pay().await }, options).await;
}
"#,
    )
    .unwrap();
    fs::write(
        d.join("sweep.ts"),
        r#"import { createLock } from "redlock-universal";

export async function sweep() {
  const opts = { key: "sweep", ttl: 5000 };
  const lock = createLock(opts);
  await lock.acquire();
}
"#,
    )
    .unwrap();
    let v = audit_json(d);
    let ttls: Vec<(String, Option<i64>)> = v["sites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["path"]
                    .as_str()
                    .unwrap_or_default()
                    .rsplit('/')
                    .next()
                    .unwrap_or_default()
                    .to_string(),
                s["ttl_ms"].as_i64(),
            )
        })
        .collect();
    assert_eq!(
        ttls,
        [
            ("settle.rs".into(), Some(10)),
            ("settle.rs".into(), Some(30_000)),
            ("sweep.ts".into(), Some(5_000))
        ],
        "{v}"
    );
}
