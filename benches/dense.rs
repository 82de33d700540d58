//! Per-file analysis must stay linear in the size of a file: generated files
//! with many lock sites (`bench/gen_dense.py`) checked one at a time.
//!
//! `cargo bench --bench dense` prints the median of 5 runs per file (a
//! shared 2-core box varies by a quarter from run to run), each
//! a check and the default (human) report of its findings, as the command
//! line prints it:
//! - `dense.py`: 20,000 small functions, each `SET NX PX` then `DEL`
//! - `pairs.py`: one function with 5,000 sequential `SET NX` / `DEL` pairs
//! - `ordinary.py`: 100,000 lines of ordinary code with one lock
//! - `typed.go`: 5,000 methods locking one `*redsync.Mutex` struct field

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use lock_audit::catalog::Catalog;
use lock_audit::report::{render, Format, RenderOptions};
use lock_audit::{check, Settings};

fn corpus() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = root.join("target/bench-dense");
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let generator = root.join("bench/gen_dense.py");
    // Generated again when missing or older than the generator.
    if modified(&dir.join("typed.go")) < modified(&generator) {
        let status = Command::new("python3")
            .arg(&generator)
            .arg(&dir)
            .status()
            .expect("python3 runs bench/gen_dense.py");
        assert!(status.success(), "generation failed");
    }
    dir
}

fn main() {
    let dir = corpus();
    let catalog = Catalog::builtin().expect("built-in catalog");
    let settings = Settings::default();
    for name in ["dense.py", "pairs.py", "ordinary.py", "typed.go"] {
        let file = dir.join(name);
        let lines = std::fs::read(&file).map_or(0, |b| b.iter().filter(|c| **c == b'\n').count());
        let mut runs: Vec<Duration> = Vec::new();
        let mut sites = 0;
        for _ in 0..5 {
            let t = Instant::now();
            let r = check(std::slice::from_ref(&file), &catalog, &settings);
            let opts = RenderOptions {
                color: false,
                width: 100,
            };
            std::hint::black_box(render(&r, Format::Human, opts));
            runs.push(t.elapsed());
            sites = r.summary.sites;
        }
        runs.sort();
        println!(
            "{name:<12} {lines:>7} lines {sites:>6} sites  median {:>8.1} ms",
            runs[runs.len() / 2].as_secs_f64() * 1000.0
        );
    }
}
