//! Hostile inputs: every case must end in bounded time, without a panic,
//! with a notice or error that names the file and the reason, the other
//! files still analysed, and the right exit code. Inputs are generated here.

use std::fs;
use std::path::Path;
use std::time::Duration;

use assert_cmd::Command;
use predicates::prelude::*;

/// A file with a lock bug, to prove the rest of the scan went on.
const GOOD: &str = "import redis\nr = redis.Redis()\n\ndef f(t):\n    if r.set('lock:x', t, nx=True):\n        pass\n";

fn lock_audit() -> Command {
    let mut cmd = Command::cargo_bin("lock-audit").expect("binary builds");
    cmd.timeout(Duration::from_secs(120));
    cmd
}

/// Scans `dir` verbosely; returns (exit code, stdout then stderr, stderr):
/// findings are on stdout, notices on stderr.
fn scan(dir: &Path, extra: &[&str]) -> (i32, String, String) {
    let out = lock_audit()
        .args(["check", "--verbose", "--format", "concise", "--no-cache"])
        .args(extra)
        .arg(dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned() + &stderr,
        stderr,
    )
}

fn assert_notice(stdout: &str, file: &str, reason: &str) {
    let hit = stdout
        .lines()
        .any(|l| l.starts_with("notice:") && l.contains(file) && l.contains(reason));
    assert!(
        hit,
        "expected a notice for {file} containing `{reason}` in:\n{stdout}"
    );
}

#[test]
fn encodings_and_line_endings() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(d.join("good.py"), GOOD).unwrap();
    fs::write(d.join("binary.py"), b"import redis\0\x00\xff\xfe").unwrap();
    let mut mixed = b"# caf\xe9 / caf\xc3\xa9\n".to_vec();
    mixed.extend_from_slice(GOOD.as_bytes());
    fs::write(d.join("mixed.py"), mixed).unwrap();
    fs::write(d.join("bom.py"), format!("\u{feff}{GOOD}")).unwrap();
    fs::write(d.join("crlf.py"), GOOD.replace('\n', "\r\n")).unwrap();
    fs::write(
        d.join("cr.rb"),
        "require 'redis'\rR = Redis.new\rdef f(t)\r  R.set('lock:x', t, nx: true)\rend\r",
    )
    .unwrap();
    let (code, out, _) = scan(d, &[]);
    assert_eq!(code, 1, "{out}");
    assert_notice(&out, "binary.py", "binary");
    assert_notice(&out, "mixed.py", "not valid UTF-8");
    for (file, line) in [
        ("good.py", 5),
        ("mixed.py", 6),
        ("bom.py", 5),
        ("crlf.py", 5),
        ("cr.rb", 4),
    ] {
        assert!(
            out.contains(&format!("{file}:{line}:")),
            "{file}:{line} missing in:\n{out}"
        );
    }
}

#[test]
fn huge_and_minified_files() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(d.join("good.py"), GOOD).unwrap();
    // 20 MB on one line: over the default 5 MB limit.
    let line = "a=1;".repeat(5_000_000);
    fs::write(
        d.join("bundle.min.js"),
        format!("const r=require('ioredis');{line}"),
    )
    .unwrap();
    // 3 MB on one line, under the limit, with a lock bug at the end: minified,
    // so skipped with a notice unless asked for.
    let small = "a=1;".repeat(750_000);
    fs::write(
        d.join("app.min.js"),
        format!("const Redis=require('ioredis');const r=new Redis();{small}r.del('lock:job');"),
    )
    .unwrap();
    let (code, out, _) = scan(d, &[]);
    assert_eq!(code, 1, "{out}");
    assert_notice(&out, "bundle.min.js", "over the 5242880 byte limit");
    assert_notice(&out, "app.min.js", "minified");
    assert!(out.contains("good.py:5:"), "{out}");
    let (code, out, _) = scan(d, &["--include-minified"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("app.min.js:1:") && out.contains("LA201"),
        "{out}"
    );
}

#[test]
fn deep_nesting_in_every_language() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(d.join("good.py"), GOOD).unwrap();
    let n = 10_000;
    let nest = |o: &str, c: &str| format!("{}1{}", o.repeat(n), c.repeat(n));
    let blocks = |o: &str, c: &str| format!("{}{}", o.repeat(n), c.repeat(n));
    let files = [
        ("deep.py", format!("import redis\nr.set('lock:x', 1, nx=True)\nx = {}\n", nest("(", ")"))),
        (
            "deep.rs",
            format!(
                "fn main() {{ redis::cmd(\"SET\").arg(\"NX\"); let x = {}; }}\n",
                nest("(", ")")
            ),
        ),
        (
            "blocks.rs",
            format!(
                "fn main() {{ redis::cmd(\"SET\").arg(\"NX\"); {} }}\n",
                blocks("{", "}")
            ),
        ),
        (
            "deep.go",
            format!(
                "package x\nimport \"github.com/redis/go-redis/v9\"\nvar ok = rdb.SetNX(ctx, \"lock:x\", 1, 0)\nvar x = {}\n",
                nest("(", ")")
            ),
        ),
        (
            "blocks.go",
            format!(
                "package x\nimport \"github.com/redis/go-redis/v9\"\nfunc f() {{ rdb.SetNX(ctx, \"lock:x\", 1, 0); {} }}\n",
                blocks("{", "}")
            ),
        ),
        (
            "Deep.java",
            format!(
                "import redis.clients.jedis.Jedis;\nclass D {{ Object o = jedis.setnx(\"lock:x\", \"1\"); int x = {}; }}\n",
                nest("(", ")")
            ),
        ),
        (
            "deep.js",
            format!(
                "const r = require('ioredis');\nr.set('lock:x', 1, 'NX');\nlet x = {};\n",
                nest("[", "]")
            ),
        ),
        (
            "blocks.js",
            format!(
                "const r = require('ioredis');\nfunction f() {{ r.set('lock:x', 1, 'NX'); {} }}\n",
                blocks("{", "}")
            ),
        ),
        (
            "deep.ts",
            format!(
                "import Redis from 'ioredis';\nnew Redis().set('lock:x', 1, 'NX');\nlet x: number = {};\n",
                nest("(", ")")
            ),
        ),
        (
            "deep.rb",
            format!("require 'redis'\nREDIS.set('lock:x', 1, nx: true)\nx = {}\n", nest("[", "]")),
        ),
    ];
    for (name, text) in &files {
        fs::write(d.join(name), text).unwrap();
    }
    let (code, out, err) = scan(d, &[]);
    assert_eq!(code, 1, "stdout:\n{out}\nstderr:\n{err}");
    assert!(out.contains("good.py:5:"), "{out}");
    assert_notice(&out, "deep.rs", "levels deep");
}

#[test]
fn broken_and_half_typed_code() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(d.join("good.py"), GOOD).unwrap();
    let files = [
        (
            "unterminated.py",
            "import redis\ns = \"never closed\nr.set('lock:x', 1, nx=True\n",
        ),
        (
            "comment.rs",
            "use redis::Commands;\nfn g(c: &mut redis::Connection) { let _: () = c.del(\"lock:x\").unwrap(); }\n/* never closed\nfn f() {}\n",
        ),
        (
            "string.go",
            "package x\nimport \"github.com/redis/go-redis/v9\"\nvar s = \"SET lock NX\nvar t = \"open\n",
        ),
        (
            "half.java",
            "import redis.clients.jedis.Jedis;\nclass A { void f(Jedis j) { j.set(\"lock:x\", ",
        ),
        (
            "half.ts",
            "import Redis from 'ioredis';\nconst r = new Redis(\nexport function f( { r.del('lock:x')",
        ),
        (
            "half.rb",
            "require 'redis'\ndef f(\n  REDIS.set('lock:x', 1, nx: true\n",
        ),
        (
            "nul.js",
            "const r = require('ioredis');\n\0\0\0 r.del('lock:x');\n",
        ),
    ];
    for (name, text) in files {
        fs::write(d.join(name), text).unwrap();
    }
    let (code, out, err) = scan(d, &[]);
    assert!(code == 1, "stdout:\n{out}\nstderr:\n{err}");
    assert!(out.contains("good.py:5:"), "{out}");
    assert_notice(&out, "comment.rs", "cannot parse");
    assert_notice(&out, "nul.js", "binary");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn symlinks_loops_and_vanished_files() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(d.join("good.py"), GOOD).unwrap();
    fs::write(outside.path().join("secret.py"), GOOD).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::symlink;
        symlink(outside.path(), d.join("out")).unwrap();
        symlink(outside.path().join("secret.py"), d.join("linked.py")).unwrap();
        fs::create_dir(d.join("loop")).unwrap();
        symlink(d.join("loop"), d.join("loop/again")).unwrap();
        symlink(d.join("gone.py"), d.join("dangling.py")).unwrap();
    }
    let (code, out, _) = scan(d, &[]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("good.py:5:"), "{out}");
    assert!(
        !out.contains("secret.py"),
        "followed a symlink out of the root:\n{out}"
    );
    // A file named on the command line that does not exist is an error.
    let (code, out, _) = scan(&d.join("vanished.py"), &[]);
    assert!(
        code == 2 && out.contains("vanished.py: no such file or directory"),
        "{out}"
    );
}

#[test]
fn many_tiny_files() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for i in 0..100_000 {
        let sub = d.join(format!("d{}", i / 1000));
        if i % 1000 == 0 {
            fs::create_dir(&sub).unwrap();
        }
        fs::write(sub.join(format!("f{i}.py")), "x = 1\n").unwrap();
    }
    fs::write(d.join("good.py"), GOOD).unwrap();
    let (code, out, _) = scan(d, &[]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("100001 files scanned, 1 parsed"), "{out}");
}

#[test]
fn hostile_yaml_in_config_and_rules() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(d.join("good.py"), GOOD).unwrap();
    let bomb = "a: &a [\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\"]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\nh: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\ni: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]\n";
    let rules = d.join("rules");
    fs::create_dir(&rules).unwrap();
    fs::write(rules.join("bomb.yaml"), bomb).unwrap();
    lock_audit()
        .arg("check")
        .arg(d)
        .arg("--rules")
        .arg(&rules)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("bomb.yaml"));
    fs::write(d.join("lock-audit.yaml"), bomb).unwrap();
    lock_audit()
        .arg("check")
        .arg(d)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("lock-audit.yaml"));
    // A huge (valid) config: 50,000 classify entries.
    let mut big = String::from("classify:\n");
    for i in 0..50_000 {
        big.push_str(&format!("  - {{class: efficiency, key: \"k{i}:*\"}}\n"));
    }
    fs::write(d.join("lock-audit.yaml"), big).unwrap();
    lock_audit().arg("check").arg(d).assert().code(1);
    fs::write(d.join("lock-audit.yaml"), "exclude: [\"[unclosed\"]\n").unwrap();
    lock_audit()
        .arg("check")
        .arg(d)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("invalid glob"));
}

#[test]
fn conflicting_annotations_take_the_nearest() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(
        d.join("a.py"),
        "import redis\nr = redis.Redis()\n\ndef f(t):\n    # lock-audit: efficiency\n    # lock-audit: correctness\n    if r.set('lock:x', t, nx=True, px=1000):\n        pass\n",
    )
    .unwrap();
    let out = lock_audit()
        .args(["audit", "--format", "json"])
        .arg(d)
        .assert()
        .code(0)
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["sites"][0]["class"], "correctness");
}

#[test]
fn a_panic_in_one_file_is_isolated() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(d.join("good.py"), GOOD).unwrap();
    fs::write(d.join("boom.py"), GOOD).unwrap();
    let out = lock_audit()
        .env("LOCK_AUDIT_PANIC_ON", "boom.py")
        .args(["check", "--format", "concise"])
        .arg(d)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stdout}");
    assert!(stdout.contains("good.py:5:"), "{stdout}");
    assert!(
        stderr.contains("boom.py: internal error while analysing this file"),
        "{stderr}"
    );
}

/// Issue 23: a wrapper whose key is not one of its parameters, called from a
/// much shorter file. Its key (an expression of the wrapper's file) was
/// resolved against the caller's model and indexed past its calls. The two
/// files are the project fuzz target's first regression.
#[test]
fn a_wrapper_key_is_never_resolved_in_the_callers_model() {
    let dir = tempfile::tempdir().unwrap();
    let shop = dir.path().join("shop");
    fs::create_dir(&shop).unwrap();
    let regression = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/regressions/project/issue23-wrapper-key/shop");
    for name in ["blocklist.py", "views.py"] {
        fs::copy(regression.join(name), shop.join(name)).unwrap();
    }
    // The same shape through an imported constant whose value is a call.
    fs::write(
        shop.join("limits.py"),
        "from datetime import timedelta\nLOCK_KEY = str(make_key(tenant(), region(), 'nightly').strip())\nTTL = timedelta(seconds=30)\n",
    )
    .unwrap();
    fs::write(
        shop.join("nightly.py"),
        "import redis\nfrom shop.limits import LOCK_KEY, TTL\nr = redis.Redis()\n\ndef run():\n    r.set(LOCK_KEY, 'x', nx=True, px=TTL)\n",
    )
    .unwrap();
    let (code, stdout, stderr) = scan(dir.path(), &[]);
    assert_ne!(code, 2, "no internal error expected:\n{stdout}\n{stderr}");
    assert!(!stdout.contains("internal"), "{stdout}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}
