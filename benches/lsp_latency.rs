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

fn main() {
    let dir = std::env::temp_dir().join("lock-audit-lsp-bench");
    let _ = std::fs::create_dir_all(&dir);
    let file = dir.join("big.py");
    let text = source(0);
    std::fs::write(&file, &text).expect("write the benchmark file");
    let uri = format!("file://{}", file.display());
    let (mut c, _) = lsp_client::Client::initialized(env!("CARGO_BIN_EXE_lock-audit"), &dir);
    c.open_python(&uri, &text);
    let lines = text.lines().count();
    let mut times: Vec<Duration> = Vec::new();
    for round in 1..=30 {
        let changed = source(round);
        let start = Instant::now();
        c.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": round + 1}, "contentChanges": [{"text": changed}]}),
        );
        let diags = c.diagnostics(&uri);
        times.push(start.elapsed());
        assert_eq!(diags.len(), 100, "two findings per lock function");
    }
    times.sort();
    println!(
        "lsp didChange -> publishDiagnostics, {lines} lines, {} edits: median {:.1} ms, max {:.1} ms",
        times.len(),
        times[times.len() / 2].as_secs_f64() * 1e3,
        times[times.len() - 1].as_secs_f64() * 1e3,
    );
    c.shutdown();
}
