//! Mutation fuzzing on stable Rust, one harness per input surface: each
//! language frontend (parse, lower, sites, checks), the Lua and SQL string
//! analysers, the config loader and the catalog loader.
//!
//! Seeds come from `fixtures/` (and the built-in catalog for YAML); inputs are
//! mutated with a deterministic generator (byte flips, splices from other
//! seeds, deletions, duplications, truncations). A panic fails the test and
//! saves the input under `target/fuzz-crashes/`. Each target runs for
//! `LOCK_AUDIT_FUZZ_SECS` seconds (default 1: a smoke run for `cargo test`);
//! see `fuzz/README.md` for longer runs and their figures.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use lock_audit::catalog::Catalog;
use lock_audit::model::Language;

/// xorshift64*: small, deterministic, good enough to mutate with.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

/// Interesting bytes for source code: brackets, quotes, comment starts, keywords.
const TOKENS: &[&[u8]] = &[
    b"(",
    b")",
    b"{",
    b"}",
    b"[",
    b"]",
    b"\"",
    b"'",
    b"`",
    b"#",
    b"//",
    b"/*",
    b"*/",
    b"\\",
    b"\n",
    b"\r",
    b"\0",
    b"\xff",
    b"nx=True",
    b"\"NX\"",
    b"px=",
    b"lock",
    b"finally",
    b"defer",
    b"with ",
    b"?",
    b"await ",
    b"redis.call('del', KEYS[1])",
    b"<<~SQL\n",
    b"f\"{",
    b"${",
    b"lock-audit: allow(",
    b"lock-audit: correctness",
];

fn mutate(rng: &mut Rng, seeds: &[Vec<u8>], input: &[u8]) -> Vec<u8> {
    let mut out = input.to_vec();
    for _ in 0..1 + rng.below(4) {
        let len = out.len();
        match rng.below(6) {
            0 if len > 0 => {
                let i = rng.below(len);
                out[i] ^= 1 << rng.below(8);
            }
            1 => {
                let t = TOKENS[rng.below(TOKENS.len())];
                let i = rng.below(len + 1);
                out.splice(i..i, t.iter().copied());
            }
            2 if len > 0 => {
                let a = rng.below(len);
                let b = (a + rng.below(64)).min(len);
                out.drain(a..b);
            }
            3 if len > 0 => {
                let a = rng.below(len);
                let b = (a + rng.below(256)).min(len);
                let chunk = out[a..b].to_vec();
                let i = rng.below(len + 1);
                out.splice(i..i, chunk);
            }
            4 => {
                let other = &seeds[rng.below(seeds.len())];
                if !other.is_empty() {
                    let a = rng.below(other.len());
                    let b = (a + rng.below(512)).min(other.len());
                    let i = rng.below(len + 1);
                    out.splice(i..i, other[a..b].iter().copied());
                }
            }
            _ if len > 0 => out.truncate(rng.below(len)),
            _ => {}
        }
    }
    out
}

fn budget() -> Duration {
    let secs = std::env::var("LOCK_AUDIT_FUZZ_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1.0);
    Duration::from_secs_f64(secs)
}

fn fixtures(ext: &[&str]) -> Vec<Vec<u8>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    walkdir::WalkDir::new(root)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| {
            e.path()
                .extension()
                .is_some_and(|x| ext.iter().any(|w| x == *w))
        })
        .filter_map(|e| std::fs::read(e.path()).ok())
        .collect()
}

/// Inputs that once crashed `name`: replayed first on every run, then used as seeds.
fn regressions(name: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/regressions")
        .join(name);
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<_> = entries
        .filter_map(Result::ok)
        .filter_map(|e| Some((e.path(), std::fs::read(e.path()).ok()?)))
        .collect();
    found.sort();
    found
}

/// Replays the regressions, then runs `target` on mutated seeds until the
/// budget is spent; a panic saves the input and fails.
fn fuzz(name: &str, mut seeds: Vec<Vec<u8>>, target: impl Fn(&[u8])) -> usize {
    for (path, input) in regressions(name) {
        let crashed = catch_unwind(AssertUnwindSafe(|| target(&input))).is_err();
        assert!(
            !crashed,
            "{name}: regression {} panics again",
            path.display()
        );
        seeds.push(input);
    }
    assert!(!seeds.is_empty(), "{name}: no seeds");
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ name.len() as u64);
    let deadline = Instant::now() + budget();
    let mut runs = 0;
    while Instant::now() < deadline {
        let seed = &seeds[rng.below(seeds.len())];
        let input = mutate(&mut rng, &seeds, seed);
        if catch_unwind(AssertUnwindSafe(|| target(&input))).is_err() {
            let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/fuzz-crashes");
            let _ = std::fs::create_dir_all(&dir);
            let path = dir.join(format!("{name}-{runs}"));
            let _ = std::fs::write(&path, &input);
            panic!(
                "{name}: a mutated input panicked; saved to {}",
                path.display()
            );
        }
        runs += 1;
    }
    eprintln!("fuzz {name}: {runs} executions, no crash");
    runs
}

fn frontend(language: Language, ext: &[&str]) {
    let catalog = Catalog::builtin().expect("catalog");
    let rules = lock_audit::checks::REGISTRY.to_vec();
    let name = format!("frontend-{}", language.name());
    fuzz(&name, fixtures(ext), |bytes| {
        let text = String::from_utf8_lossy(bytes);
        if let Ok(model) = lock_audit::lang::lower(language, &text, false) {
            let fa = lock_audit::sites::analyze(
                &model,
                &text,
                &catalog,
                Path::new("fuzz"),
                &[],
                &lock_audit::sites::classify::UserClasses::none(),
                &lock_audit::manifest::Versions::default(),
            );
            let mut findings = lock_audit::checks::run(&fa, &rules);
            lock_audit::suppress::apply(&model.comments, &text, &mut findings, &rules, true);
        }
    });
}

#[test]
fn fuzz_python() {
    frontend(Language::Python, &["py"]);
}

#[test]
fn fuzz_rust() {
    frontend(Language::Rust, &["rs"]);
}

#[test]
fn fuzz_go() {
    frontend(Language::Go, &["go"]);
}

#[test]
fn fuzz_java() {
    frontend(Language::Java, &["java"]);
}

#[test]
fn fuzz_javascript() {
    frontend(Language::JavaScript, &["js", "mjs"]);
}

#[test]
fn fuzz_typescript() {
    frontend(Language::TypeScript, &["ts", "tsx"]);
}

#[test]
fn fuzz_ruby() {
    frontend(Language::Ruby, &["rb"]);
}

#[test]
fn fuzz_sql_files() {
    frontend(Language::Sql, &["sql"]);
}

#[test]
fn fuzz_lua() {
    let seeds: Vec<Vec<u8>> = vec![
        br#"if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end"#.to_vec(),
        b"local v = redis.call('GET', KEYS[1])\nif v == ARGV[1] then redis.call('UNLINK', KEYS[1]) end".to_vec(),
        b"--[[ long\ncomment ]] return redis.pcall('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2])".to_vec(),
    ];
    fuzz("lua", seeds, |bytes| {
        lock_audit::sites::lua::analyze(&String::from_utf8_lossy(bytes));
    });
}

#[test]
fn fuzz_sql() {
    // SQL reaches the analyser inside a driver call; mutate the statement only.
    let catalog = Catalog::builtin().expect("catalog");
    let seeds: Vec<Vec<u8>> = [
        "SELECT pg_advisory_lock(%s)",
        "SELECT pg_try_advisory_xact_lock(:k)",
        "UPDATE jobs SET owner = %s, at = now() WHERE id = %s AND owner IS NULL",
        "SELECT * FROM jobs WHERE state = 'queued' FOR UPDATE SKIP LOCKED",
        "SELECT GET_LOCK(?, 10)",
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect();
    fuzz("sql", seeds, |bytes| {
        let sql = String::from_utf8_lossy(bytes).replace(['"', '\\', '\n', '\r'], " ");
        let text = format!(
            "def f(cur, k):\n    cur.execute(\"{sql}\", (k,))\n    return cur.fetchone()\n"
        );
        if let Ok(model) = lock_audit::lang::lower(Language::Python, &text, false) {
            lock_audit::sites::analyze(
                &model,
                &text,
                &catalog,
                Path::new("fuzz.py"),
                &[],
                &lock_audit::sites::classify::UserClasses::none(),
                &lock_audit::manifest::Versions::default(),
            );
        }
    });
}

#[test]
fn fuzz_config() {
    let seeds = vec![
        include_bytes!("../docs/lock-audit.example.yaml").to_vec(),
        b"classify:\n  - {class: correctness, key: \"lock:*\", path: \"src/**\", function: \"f*\"}\nseverity: {LA105: error}\noverrides:\n  - {path: \"t/**\", ignore: [LA101]}\n".to_vec(),
    ];
    fuzz("config", seeds, |bytes| {
        let _ = lock_audit::config::parse(
            Path::new("lock-audit.yaml"),
            "lock-audit.yaml",
            &String::from_utf8_lossy(bytes),
        );
    });
}

#[test]
fn fuzz_catalog() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("rules");
    let seeds: Vec<Vec<u8>> = std::fs::read_dir(root)
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "yaml"))
        .filter_map(|e| std::fs::read(e.path()).ok())
        .collect();
    fuzz("catalog", seeds, |bytes| {
        let _ = Catalog::with_sources(&[(
            "user.yaml".to_string(),
            String::from_utf8_lossy(bytes).into_owned(),
        )]);
    });
}

/// Files of one generated project: relative path → text.
type Project = Vec<(String, Vec<u8>)>;

/// Key, TTL and constant shapes a wrapper or a constants module can hold:
/// parameters, fixed keys built from calls, constants, arithmetic.
const KEYS: &[&str] = &[
    "f\"lock:{name}\"",
    "str(make_key(tenant(), region(), 'nightly').strip())",
    "LOCK_KEY",
    "'lock:' + name",
    "settings.LOCK_KEY",
];
const TTLS: &[&str] = &[
    "30000",
    "TTL",
    "timedelta(seconds=30)",
    "ttl()",
    "None",
    "2 * TTL",
];
const VALUES: &[&str] = &[
    "'lock:nightly'",
    "str(make_key(tenant(), region(), 'nightly').strip())",
    "timedelta(seconds=int(os.environ.get('TTL', '30')))",
    "30 * 1000",
    "None",
    "compute(a(b(c(d(e())))))",
];

/// A Python project with a wrapper module, a constants module and callers,
/// in the shapes that move facts between files.
fn python_project(rng: &mut Rng) -> Project {
    let pick = |rng: &mut Rng, xs: &[&str]| xs[rng.below(xs.len())].to_string();
    let key = pick(rng, KEYS);
    let ttl = pick(rng, TTLS);
    let wrapper = format!(
        "import redis\nfrom datetime import timedelta\nfrom shop.settings import LOCK_KEY, TTL\nfrom shop import settings\n\nr = redis.Redis()\n\n\ndef with_lock(name, fn):\n    key = {key}\n    if not r.set(key, token(), nx=True, px={ttl}):\n        return None\n    try:\n        return fn()\n    finally:\n        r.delete(key)\n\n\ndef unblock(address, user):\n    with database.get_cursor() as cursor:\n        audit = {{\"by\": user.id, \"a\": address.lower(), \"n\": str(user.name).strip()}}\n        return cursor.all(\"UPDATE blocked SET ignore_after = now(), by = %(by)s WHERE a = %(a)s AND (ignore_after IS NULL) RETURNING *\", dict(by=audit[\"by\"], a=audit[\"a\"]))\n"
    );
    let settings = format!(
        "import os\nLOCK_KEY = {}\nTTL = {}\n",
        pick(rng, VALUES),
        pick(rng, VALUES)
    );
    let mut project = vec![
        ("shop/locks.py".to_string(), wrapper.into_bytes()),
        ("shop/settings.py".to_string(), settings.into_bytes()),
    ];
    for i in 0..1 + rng.below(4) {
        let padding = "x = 1\n".repeat(rng.below(3) * 20);
        let caller = format!(
            "from shop.locks import with_lock, unblock\nfrom shop.settings import LOCK_KEY, TTL\n{padding}\ndef post(body, user):\n    unblock(body, user)\n    with_lock(LOCK_KEY, lambda: charge(body))\n"
        );
        project.push((format!("shop/views{i}.py"), caller.into_bytes()));
    }
    project
}

/// Fixture files, by path relative to `fixtures/`: the fragments projects are built from.
fn fixture_fragments() -> Project {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut out: Project = walkdir::WalkDir::new(&root)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .filter_map(|e| {
            let rel = e
                .path()
                .strip_prefix(&root)
                .ok()?
                .to_string_lossy()
                .into_owned();
            Some((rel, std::fs::read(e.path()).ok()?))
        })
        .collect();
    out.sort();
    out
}

/// 2–6 files: a generated Python project, or fixture files (wrappers and
/// their callers most often) under their own names so imports still match;
/// some mutated, some cut short.
fn project(rng: &mut Rng, fragments: &Project, seeds: &[Vec<u8>]) -> Project {
    let mut files = if rng.below(3) == 0 {
        python_project(rng)
    } else {
        let wrappers: Vec<&(String, Vec<u8>)> = fragments
            .iter()
            .filter(|(p, _)| p.contains("wrappers"))
            .collect();
        let n = 2 + rng.below(5);
        (0..n)
            .map(|_| {
                if rng.below(2) == 0 && !wrappers.is_empty() {
                    wrappers[rng.below(wrappers.len())].clone()
                } else {
                    fragments[rng.below(fragments.len())].clone()
                }
            })
            .collect()
    };
    for (_, text) in files.iter_mut() {
        match rng.below(4) {
            0 => *text = mutate(rng, seeds, text),
            1 => {
                let cut = rng.below(text.len() + 1);
                text.truncate(cut);
            }
            _ => {}
        }
    }
    files
}

fn write_project(dir: &Path, files: &Project) {
    let _ = std::fs::remove_dir_all(dir);
    for (rel, text) in files {
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        let _ = std::fs::write(path, text);
    }
}

/// The whole two-pass scan over one project folder; an internal error
/// (a panic isolated by the scan) is a crash.
fn scan_project(dir: &Path, catalog: &Catalog) -> bool {
    let settings = lock_audit::Settings {
        rules: lock_audit::checks::REGISTRY.to_vec(),
        ..lock_audit::Settings::default()
    };
    let report = lock_audit::scan::check(&[dir.to_path_buf()], catalog, &settings);
    !report.has_internal_errors()
}

/// Whole projects: facts that cross files (wrappers, constants, imports) are
/// where one file's ids can reach another's model, which single-file targets
/// cannot see. Regressions are folders under `fuzz/regressions/project/`.
#[test]
fn fuzz_project() {
    let catalog = Catalog::builtin().expect("catalog");
    let regressions = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/regressions/project");
    let mut replayed: Vec<_> = std::fs::read_dir(&regressions)
        .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    replayed.sort();
    for dir in &replayed {
        assert!(
            scan_project(dir, &catalog),
            "project: regression {} fails again",
            dir.display()
        );
    }
    let fragments = fixture_fragments();
    let seeds: Vec<Vec<u8>> = fragments.iter().map(|(_, t)| t.clone()).collect();
    let work = tempfile::tempdir().expect("temp dir");
    let mut rng = Rng(0x5EED_0FC0_FFEE);
    let deadline = Instant::now() + budget();
    let mut runs = 0;
    while Instant::now() < deadline {
        let files = project(&mut rng, &fragments, &seeds);
        let dir = work.path().join("p");
        write_project(&dir, &files);
        if !scan_project(&dir, &catalog) {
            let saved = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("target/fuzz-crashes")
                .join(format!("project-{runs}"));
            write_project(&saved, &files);
            panic!(
                "project: an internal error; the project is saved in {}",
                saved.display()
            );
        }
        runs += 1;
    }
    eprintln!("fuzz project: {runs} executions, no crash");
}
