//! Editor latency: time from `didChange` to `publishDiagnostics` on a
//! 5,000-line Python file, through the real `lock-audit lsp` binary.
//! Run with `cargo bench --bench lsp_latency`.

#[path = "../tests/support/lsp_client.rs"]
mod lsp_client;

use std::time::{Duration, Instant};

use serde_json::json;

/// 5,000 lines: ordinary code with a lock function every 100 lines.
fn source(round: usize) -> String {
    let mut out = String::from("import redis\nr = redis.Redis()\n\n");
    for i in 0..50 {
        out.push_str(&format!(
            "def charge_{i}(order, token):\n    if r.set('lock:order:{i}', token, nx=True):\n        r.delete('lock:order:{i}')\n\n"
        ));
        for j in 0..24 {
            out.push_str(&format!(
                "def helper_{i}_{j}(x):\n    y = x * {round} + {j}\n    return [y, y + 1, str(y)]\n\n"
            ));
        }
    }
    out
}

/// One keystroke-sized edit in the middle of `base` per round (typing).
fn typed(base: &str, round: usize) -> String {
    let (head, tail) = base.split_at(base.len() / 2);
    let tail = tail.replacen("y = x * 0 + 12", &format!("y = x * {round} + 12"), 1);
    format!("{head}{tail}")
}

/// Sends each text as a full-text `didChange`; prints the median and max latency.
fn measure(c: &mut lsp_client::Client, uri: &str, label: &str, texts: Vec<String>) {
    let lines = texts[0].lines().count();
    let mut times: Vec<Duration> = Vec::new();
    for (round, changed) in texts.into_iter().enumerate() {
        let start = Instant::now();
        c.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": round + 2}, "contentChanges": [{"text": changed}]}),
        );
        let diags = c.diagnostics(uri);
        times.push(start.elapsed());
        assert_eq!(diags.len(), 100, "two findings per lock function");
    }
    times.sort();
    println!(
        "lsp didChange -> publishDiagnostics, {lines} lines, {} {label}: median {:.1} ms, max {:.1} ms",
        times.len(),
        times[times.len() / 2].as_secs_f64() * 1e3,
        times[times.len() - 1].as_secs_f64() * 1e3,
    );
}

fn main() {
    let dir = std::env::temp_dir().join("lock-audit-lsp-bench");
    let _ = std::fs::create_dir_all(&dir);
    let file = dir.join("big.py");
    let text = source(0);
    std::fs::write(&file, &text).expect("write the benchmark file");
    let uri = format!("file://{}", file.display());
    let (mut c, _) = lsp_client::Client::initialized(env!("CARGO_BIN_EXE_lock-audit"), &dir);
    c.open_python(&uri, &text);
    // Every helper function changes: nothing of the old tree can be reused.
    measure(
        &mut c,
        &uri,
        "whole-file rewrites",
        (1..=30).map(source).collect(),
    );
    // One line changes per edit, as when typing: the tree is reparsed incrementally.
    let typing = (1..=30).map(|round| typed(&text, round)).collect();
    measure(&mut c, &uri, "one-line edits", typing);
    c.shutdown();
}
