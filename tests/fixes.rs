//! `check --fix` and `check --diff`: each safe fix is applied, the file is
//! checked again and the finding is gone; unsafe fixes and near misses are
//! left alone.

use std::fs;
use std::path::Path;
use std::process::Command;

fn lock_audit(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_lock-audit"))
        .current_dir(dir)
        .args(["check", ".", "--no-cache", "--format", "concise"])
        .args(args)
        .output()
        .expect("runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// One case: a file, what `--fix` makes of it, and what must remain.
struct Case {
    name: &'static str,
    before: &'static str,
    after: &'static str,
}

const CAS: &str = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "jobs.py",
            before: "import uuid\nimport redis\nr = redis.Redis()\n\ndef nightly():\n    token = str(uuid.uuid4())\n    if not r.set('lock:nightly', token, nx=True):\n        return\n    try:\n        run()\n    finally:\n        r.delete('lock:nightly')\n",
            after: "import uuid\nimport redis\nr = redis.Redis()\n\ndef nightly():\n    token = str(uuid.uuid4())\n    if not r.set('lock:nightly', token, nx=True, px=30000):\n        return\n    try:\n        run()\n    finally:\n        r.eval(\"CAS\", 1, 'lock:nightly', token)\n",
        },
        Case {
            name: "sweep.rb",
            before: "require 'redis'\nR = Redis.new\n\ndef sweep(owner)\n  return unless R.set('lock:sweep', owner, nx: true)\n  begin\n    work\n  ensure\n    R.del('lock:sweep')\n  end\nend\n",
            after: "require 'redis'\nR = Redis.new\n\ndef sweep(owner)\n  return unless R.set('lock:sweep', owner, nx: true, px: 30000)\n  begin\n    work\n  ensure\n    R.eval(\"CAS\", keys: ['lock:sweep'], argv: [owner])\n  end\nend\n",
        },
        Case {
            name: "job.js",
            before: "const Redis = require('ioredis');\nconst redis = new Redis();\n\nasync function job(id, owner) {\n  if (!(await redis.set(`lock:job:${id}`, owner, 'NX'))) return;\n  try {\n    await work();\n  } finally {\n    await redis.del(`lock:job:${id}`);\n  }\n}\n",
            after: "const Redis = require('ioredis');\nconst redis = new Redis();\n\nasync function job(id, owner) {\n  if (!(await redis.set(`lock:job:${id}`, owner, 'PX', 30000, 'NX'))) return;\n  try {\n    await work();\n  } finally {\n    await redis.eval(\"CAS\", 1, `lock:job:${id}`, owner);\n  }\n}\n",
        },
        Case {
            name: "sync.ts",
            before: "import { createClient } from 'redis';\nconst client = createClient();\n\nexport async function sync(owner: string) {\n  if (!(await client.set('lock:sync', owner, { NX: true }))) return;\n  try {\n    await work();\n  } finally {\n    await client.del('lock:sync');\n  }\n}\n",
            after: "import { createClient } from 'redis';\nconst client = createClient();\n\nexport async function sync(owner: string) {\n  if (!(await client.set('lock:sync', owner, {NX: true, PX: 30000}))) return;\n  try {\n    await work();\n  } finally {\n    await client.eval(\"CAS\", {keys: ['lock:sync'], arguments: [owner]});\n  }\n}\n",
        },
    ]
}

#[test]
fn fix_applies_each_safe_fix_and_the_findings_are_gone() {
    for case in cases() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(case.name);
        fs::write(&file, case.before).unwrap();
        let (_, before, _) = lock_audit(dir.path(), &[]);
        assert!(
            before.contains("LA101") && before.contains("LA201"),
            "{}: {before}",
            case.name
        );

        // --diff shows the change and writes nothing.
        let (code, diff, stderr) = lock_audit(dir.path(), &["--diff"]);
        assert_eq!(code, 1, "{}: {diff}{stderr}", case.name);
        assert!(diff.contains(&format!("+++ b/{}", case.name)), "{diff}");
        assert!(stderr.contains("would apply 2 fixes in 1 file"), "{stderr}");
        assert_eq!(fs::read_to_string(&file).unwrap(), case.before);

        let (_, after, stderr) = lock_audit(dir.path(), &["--fix"]);
        assert!(stderr.contains("applied 2 fixes in 1 file"), "{stderr}");
        let expected = case.after.replace("CAS", CAS);
        assert_eq!(
            fs::read_to_string(&file).unwrap(),
            expected,
            "{}",
            case.name
        );
        // Checked again: the fixed findings are gone.
        assert!(
            !after.contains("LA101") && !after.contains("LA201"),
            "{}: {after}",
            case.name
        );
        // Nothing left to fix.
        let (code, diff, _) = lock_audit(dir.path(), &["--diff"]);
        assert_eq!((code, diff.as_str()), (0, ""), "{}", case.name);
    }
}

#[test]
fn unsafe_fixes_and_near_misses_are_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    // The release is in another function (the owner is not in scope), the
    // owner is generated at the call, the SET carries an option the template
    // would drop, a counter initialised with SETNX must not start to expire
    // (its key names no lock), and a BOM must survive the one safe fix.
    let text = "\u{feff}import uuid\nimport redis\nr = redis.Redis()\n\ndef a(token):\n    r.set('lock:a', token, nx=True)\n\ndef b():\n    r.delete('lock:a')\n\ndef c():\n    r.set('lock:c', str(uuid.uuid4()), nx=True, get=True)\n    r.delete('lock:c')\n\ndef d(page):\n    r.setnx(f'visits:{page}', 0)\n";
    let file = dir.path().join("near.py");
    fs::write(&file, text).unwrap();
    let (code, _, stderr) = lock_audit(dir.path(), &["--fix", "--exit-zero"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("applied 1 fix in 1 file"), "{stderr}");
    let fixed = fs::read_to_string(&file).unwrap();
    assert_eq!(
        fixed,
        text.replace(
            "r.set('lock:a', token, nx=True)",
            "r.set('lock:a', token, nx=True, px=30000)"
        )
    );
    assert!(fixed.starts_with('\u{feff}'));
}
