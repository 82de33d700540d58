//! Throughput benchmark: scans a generated 200k-line mixed Python/Rust tree
//! (~3% of files use locks) and prints files/s and lines/s.
//!
//! `cargo bench --bench scan` (set LOCK_AUDIT_BENCH_LINES to change the size).
//! The corpus comes from `bench/gen_corpus.py` and is cached under `target/`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use lock_audit::catalog::Catalog;
use lock_audit::{check, Settings};

fn corpus(lines: usize) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = root.join(format!("target/bench-corpus-{lines}"));
    if !dir.join("corpus-manifest.json").exists() {
        let _ = std::fs::remove_dir_all(&dir);
        let status = Command::new("python3")
            .arg(root.join("bench/gen_corpus.py"))
            .arg(&dir)
            .args(["--lines", &lines.to_string(), "--seed", "1"])
            .status()
            .expect("python3 runs bench/gen_corpus.py");
        assert!(status.success(), "corpus generation failed");
    }
    dir
}

fn count(dir: &Path) -> (usize, usize) {
    let (mut files, mut lines) = (0, 0);
    for e in walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
    {
        let p = e.path();
        if p.extension().is_some_and(|x| x == "py" || x == "rs") {
            files += 1;
            lines += std::fs::read(p).map_or(0, |b| b.iter().filter(|c| **c == b'\n').count());
        }
    }
    (files, lines)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let lines: usize = std::env::var("LOCK_AUDIT_BENCH_LINES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200_000);
    let dir = corpus(lines);
    let (files, total_lines) = count(&dir);
    let catalog = Catalog::builtin().expect("built-in catalog");
    let settings = Settings::default();
    // Warm the page cache and the thread pool once.
    let warm = check(std::slice::from_ref(&dir), &catalog, &settings);
    let runs: Vec<Duration> = (0..7)
        .map(|_| {
            let t = Instant::now();
            let r = check(std::slice::from_ref(&dir), &catalog, &settings);
            assert_eq!(r.summary.findings, warm.summary.findings);
            t.elapsed()
        })
        .collect();
    let med = median(runs).as_secs_f64();
    // The parsed subset alone: the files the prefilter let through.
    println!(
        "corpus: {} ({files} files, {total_lines} lines)",
        dir.display()
    );
    println!(
        "whole scan:   median {:.1} ms over 7 runs, {:.0} files/s, {:.0} lines/s ({} parsed, {} sites, {} findings)",
        med * 1000.0,
        files as f64 / med,
        total_lines as f64 / med,
        warm.summary.files_parsed,
        warm.summary.sites,
        warm.summary.findings
    );
    let parsed: Vec<PathBuf> = walkdir::WalkDir::new(&dir)
        .into_iter()
        .filter_map(Result::ok)
        .map(|e| e.into_path())
        .filter(|p| {
            std::fs::read(p).is_ok_and(|b| b.windows(5).any(|w| w.eq_ignore_ascii_case(b"redis")))
        })
        .collect();
    let parsed_lines: usize = parsed.iter().map(|p| count_lines(p)).sum();
    let runs: Vec<Duration> = (0..7)
        .map(|_| {
            let t = Instant::now();
            check(&parsed, &catalog, &settings);
            t.elapsed()
        })
        .collect();
    let med = median(runs).as_secs_f64();
    println!(
        "parsed files: median {:.1} ms, {} files, {:.0} lines/s",
        med * 1000.0,
        parsed.len(),
        parsed_lines as f64 / med
    );
}

fn count_lines(p: &Path) -> usize {
    std::fs::read(p).map_or(0, |b| b.iter().filter(|c| **c == b'\n').count())
}
