//! `lock-audit lsp` spoken to over JSON-RPC, as an editor would.

#[path = "support/lsp_client.rs"]
mod lsp_client;

use lsp_client::Client;
use serde_json::json;

const LOCK: &str = "import redis\nr = redis.Redis()\n\ndef charge(order, token):\n    if r.set('lock:order', token, nx=True):\n        r.delete('lock:order')\n";

#[test]
fn diagnostics_hover_actions_and_half_typed_code() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let file = root.join("billing.py");
    std::fs::write(&file, LOCK).unwrap();
    let uri = format!("file://{}", file.display());

    let (mut c, init) = Client::initialized(env!("CARGO_BIN_EXE_lock-audit"), &root);
    assert_eq!(init["capabilities"]["hoverProvider"], true);
    let diags = c.open_python(&uri, LOCK);
    let codes: Vec<&str> = diags.iter().map(|d| d["code"].as_str().unwrap()).collect();
    assert!(codes.contains(&"LA101"), "{diags:?}");
    assert!(codes.contains(&"LA201"), "{diags:?}");
    let la201 = diags.iter().find(|d| d["code"] == "LA201").unwrap();
    assert_eq!(la201["source"], "lock-audit");
    assert!(la201["codeDescription"]["href"]
        .as_str()
        .unwrap()
        .starts_with("https://"));
    assert!(
        la201["relatedInformation"]
            .as_array()
            .is_some_and(|r| !r.is_empty()),
        "{la201}"
    );
    let line = la201["range"]["start"]["line"].as_u64().unwrap();

    // Hover on the acquisition shows its audit row.
    let hover = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": uri}, "position": {"line": 4, "character": 10}}),
    );
    let text = hover["contents"]["value"].as_str().unwrap();
    assert!(
        text.contains("TTL") && text.contains("lock:order"),
        "{text}"
    );

    // Code actions: a suppression with a reason placeholder, and class annotations.
    let actions = c.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri},
               "range": {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 0}},
               "context": {"diagnostics": []}}),
    );
    let titles: Vec<&str> = actions
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["title"].as_str().unwrap())
        .collect();
    assert!(
        titles.iter().any(|t| t.starts_with("Suppress LA201")),
        "{titles:?}"
    );
    assert!(
        titles.contains(&"Mark this lock as correctness"),
        "{titles:?}"
    );
    let suppress = actions
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["title"].as_str().unwrap().starts_with("Suppress LA201"))
        .unwrap();
    let edit = &suppress["edit"]["changes"][&uri][0];
    assert_eq!(
        edit["newText"],
        "        # lock-audit: allow(LA201, reason=\"...\")\n"
    );

    // The quick fix on the release line (the LA201 line): the rule's fix,
    // against the owner the lock was taken with.
    let release = actions
        .as_array()
        .unwrap()
        .iter()
        .find(|a| {
            a["title"]
                .as_str()
                .unwrap()
                .starts_with("Release with compare-and-delete against the owner `token`")
        })
        .unwrap_or_else(|| panic!("{titles:?}"));
    let edit = &release["edit"]["changes"][&uri][0];
    assert_eq!(edit["range"]["start"], json!({"line": 5, "character": 8}));
    assert_eq!(
        edit["newText"],
        "r.eval(\"if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end\", 1, 'lock:order', token)"
    );

    // Half-typed code keeps the last diagnostics instead of clearing them.
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2},
               "contentChanges": [{"text": format!("{LOCK}    if r.set(\n")}]}),
    );
    // A fix: the release now checks the owner; LA201 goes away.
    let fixed = LOCK.replace(
        "        r.delete('lock:order')\n",
        "        r.eval(\"if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end\", 1, 'lock:order', token)\n",
    );
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 3}, "contentChanges": [{"text": fixed}]}),
    );
    let diags = c.diagnostics(&uri);
    let codes: Vec<&str> = diags.iter().map(|d| d["code"].as_str().unwrap()).collect();
    assert!(!codes.contains(&"LA201"), "{diags:?}");
    assert!(codes.contains(&"LA101"), "{diags:?}");

    // A config change reloads without a restart: a severity override, then an exclude.
    let config = root.join("lock-audit.yaml");
    let save_config = |c: &mut Client, text: &str| {
        std::fs::write(&config, text).unwrap();
        c.notify(
            "textDocument/didSave",
            json!({"textDocument": {"uri": format!("file://{}", config.display())}}),
        );
        c.diagnostics(&uri)
    };
    let diags = save_config(&mut c, "severity: {LA101: info}\n");
    let la101 = diags.iter().find(|d| d["code"] == "LA101").expect("LA101");
    assert_eq!(la101["severity"], 3, "{la101}");
    let diags = save_config(&mut c, "exclude: [\"billing.py\"]\n");
    assert!(diags.is_empty(), "{diags:?}");

    c.shutdown();
}

/// Wrappers defined in workspace files apply to the open document: jobs.py
/// has no lock library call of its own.
#[test]
fn workspace_wrappers_reach_open_documents() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let fixtures =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/python/wrappers");
    for name in ["jobs.py", "locks.py", "settings.py"] {
        std::fs::copy(fixtures.join(name), root.join(name)).unwrap();
    }
    let jobs = std::fs::read_to_string(root.join("jobs.py")).unwrap();
    let la104_line = jobs
        .lines()
        .position(|l| l.contains("expect: LA104"))
        .unwrap();
    let uri = format!("file://{}", root.join("jobs.py").display());
    let (mut c, _) = Client::initialized(env!("CARGO_BIN_EXE_lock-audit"), &root);
    let diags = c.open_python(&uri, &jobs);
    let found: Vec<(u64, &str)> = diags
        .iter()
        .map(|d| {
            (
                d["range"]["start"]["line"].as_u64().unwrap(),
                d["code"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(found, vec![(la104_line as u64, "LA104")], "{diags:?}");
    c.shutdown();
}
