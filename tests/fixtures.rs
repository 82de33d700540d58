//! Runs every file under `fixtures/` and compares its findings with the
//! `expect: CODE` / `expect-not: CODE` markers written on the lines where a
//! finding must (not) be. Fails once, listing every missing, extra and
//! misplaced finding of every file; a fixture without markers fails too.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use lock_audit::catalog::Catalog;
use lock_audit::lines::LineIndex;
use lock_audit::{check, NoticeKind, Settings};

#[derive(Default)]
struct Markers {
    expect: BTreeMap<(usize, String), usize>,
    expect_not: Vec<(usize, String)>,
}

/// The rule codes after `tag` on a line: `expect: LA101, LA201`.
fn codes_after(line: &str, tag: &str) -> Vec<String> {
    let Some(pos) = line.find(tag) else {
        return Vec::new();
    };
    line[pos + tag.len()..]
        .split([',', ' '])
        .map(str::trim)
        .take_while(|c| c.is_empty() || c.starts_with("LA"))
        .filter(|c| !c.is_empty())
        .map(|c| {
            c.trim_end_matches(|ch: char| !ch.is_ascii_alphanumeric())
                .to_string()
        })
        .collect()
}

fn markers(text: &str) -> Markers {
    let mut m = Markers::default();
    for (i, line) in text.lines().enumerate() {
        for code in codes_after(line, "expect-not:") {
            m.expect_not.push((i + 1, code));
        }
        let without_not = line.replace("expect-not:", "");
        for code in codes_after(&without_not, "expect:") {
            *m.expect.entry((i + 1, code)).or_default() += 1;
        }
    }
    m
}

fn fixture_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut files: Vec<PathBuf> = walkdir::WalkDir::new(&root)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(|e| e.into_path())
        .collect();
    files.sort();
    files
}

#[test]
fn every_fixture_matches_its_markers() {
    let catalog = Catalog::builtin().expect("built-in catalog loads");
    let settings = Settings::default();
    let files = fixture_files();
    assert!(
        files.len() >= 8,
        "expected fixtures under fixtures/, found {}",
        files.len()
    );
    let mut problems = Vec::new();
    for path in &files {
        let name = path
            .strip_prefix(env!("CARGO_MANIFEST_DIR"))
            .unwrap_or(path)
            .display()
            .to_string();
        let text = std::fs::read_to_string(path).expect("fixtures are UTF-8");
        let m = markers(&text);
        if m.expect.is_empty() && m.expect_not.is_empty() {
            problems.push(format!("{name}: no `expect:` or `expect-not:` markers"));
            continue;
        }
        let report = check(std::slice::from_ref(path), &catalog, &settings);
        for n in &report.notices {
            if matches!(
                n.kind,
                NoticeKind::Failed | NoticeKind::Internal | NoticeKind::Degraded
            ) {
                problems.push(format!("{name}: {}", n.reason));
            }
        }
        let index = LineIndex::new(&text);
        let mut actual: BTreeMap<(usize, String), usize> = BTreeMap::new();
        for file in &report.files {
            for f in &file.findings {
                let line = index.line_col(f.span.start).0;
                *actual.entry((line, f.rule.code.to_string())).or_default() += 1;
            }
        }
        let mut missing = Vec::new();
        let mut extra = Vec::new();
        for (key, &n) in &m.expect {
            let got = actual.get(key).copied().unwrap_or(0);
            missing.extend(std::iter::repeat_n(key.clone(), n.saturating_sub(got)));
        }
        for (key, &n) in &actual {
            let want = m.expect.get(key).copied().unwrap_or(0);
            extra.extend(std::iter::repeat_n(key.clone(), n.saturating_sub(want)));
        }
        for (line, code) in &missing {
            match extra.iter().position(|(_, c)| c == code) {
                Some(i) => {
                    let (at, _) = extra.remove(i);
                    problems.push(format!(
                        "{name}:{line}: {code} misplaced: expected here, reported at line {at}"
                    ));
                }
                None => problems.push(format!("{name}:{line}: {code} missing")),
            }
        }
        for (line, code) in &extra {
            let why = if m.expect_not.iter().any(|(l, c)| l == line && c == code) {
                "reported on an `expect-not` line"
            } else {
                "unexpected"
            };
            problems.push(format!("{name}:{line}: {code} {why}"));
        }
    }
    assert!(
        problems.is_empty(),
        "fixture mismatches:\n{}",
        problems.join("\n")
    );
}

#[test]
fn markers_parse() {
    let m = markers("x  # expect: LA101, LA201\ny // expect-not: LA102\n");
    assert_eq!(m.expect.len(), 2);
    assert_eq!(m.expect_not, vec![(2, "LA102".to_string())]);
}
