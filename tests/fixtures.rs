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
    /// `expect-site: LIBRARY`: a lock acquisition of that library starts here.
    sites: BTreeMap<(usize, String), usize>,
    /// `expect-class: correctness|efficiency|unclassified` on an acquisition line.
    classes: BTreeMap<usize, String>,
    /// `expect-help: TEXT`: a finding on this line says TEXT in its `help:` line.
    helps: Vec<(usize, String)>,
}

/// The text after `expect-help:` up to the end of the line (a comment closer trimmed).
fn help_after(line: &str) -> Option<String> {
    let pos = line.find("expect-help:")?;
    let text = line[pos + "expect-help:".len()..]
        .trim()
        .trim_end_matches("*/")
        .trim();
    (!text.is_empty()).then(|| text.to_string())
}

/// The word after `expect-class:`.
fn class_after(line: &str) -> Option<String> {
    let pos = line.find("expect-class:")?;
    let word: String = line[pos + "expect-class:".len()..]
        .trim_start()
        .chars()
        .take_while(|c| c.is_alphabetic())
        .collect();
    (!word.is_empty()).then_some(word)
}

/// The word after `expect-site:` (a library name).
fn site_after(line: &str) -> Option<String> {
    let pos = line.find("expect-site:")?;
    let rest = line[pos + "expect-site:".len()..].trim_start();
    let lib: String = rest
        .chars()
        .take_while(|c| c.is_alphanumeric() || "-_.".contains(*c))
        .collect();
    // A trailing marker only: prose that mentions the syntax is not one. A
    // marker after it would turn the site marker into prose unnoticed.
    let after = rest[lib.len()..].trim();
    assert!(
        !after.starts_with("expect"),
        "`expect-site:` must be the last marker on its line: {line}"
    );
    let trailing = after.is_empty();
    (!lib.is_empty() && trailing).then_some(lib)
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
        // `expect:` and `expect-not:` never overlap as substrings; each takes
        // the codes that follow it up to the next non-code word.
        for code in codes_after(line, "expect:") {
            *m.expect.entry((i + 1, code)).or_default() += 1;
        }
        if let Some(class) = class_after(line) {
            m.classes.insert(i + 1, class);
        }
        if let Some(help) = help_after(line) {
            m.helps.push((i + 1, help));
        }
        if let Some(lib) = site_after(line) {
            *m.sites.entry((i + 1, lib)).or_default() += 1;
        }
    }
    m
}

/// `fixtures/` is test code by default (its findings are not shown); here
/// they are the point.
fn fixture_settings() -> Settings {
    Settings {
        include_tests: true,
        ..Settings::default()
    }
}

/// Every rule, the audit-only ones included.
fn all_rules() -> Settings {
    Settings {
        rules: lock_audit::checks::REGISTRY.to_vec(),
        ..fixture_settings()
    }
}

/// The fixtures lock-audit scans; files it does not (the `.lua` scripts a
/// fixture reads by name) are data, checked through the fixture that reads them.
fn fixture_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut files: Vec<PathBuf> = walkdir::WalkDir::new(&root)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .filter(|e| lock_audit::lang::detect(e.path(), b"").is_some())
        .map(|e| e.into_path())
        .collect();
    files.sort();
    files
}

#[test]
fn every_fixture_matches_its_markers() {
    let catalog = Catalog::builtin().expect("built-in catalog loads");
    // Every rule, the audit-only ones included; LA4xx findings are compared
    // only in files whose markers mention them.
    let settings = all_rules();
    let files = fixture_files();
    // One scan of the whole tree, as a user runs it: wrappers defined in one
    // fixture are seen by the fixtures that call them.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let report = check(&[root], &catalog, &settings);
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
        let audit_codes = text.contains("LA401") || text.contains("LA402");
        if m.expect.is_empty() && m.expect_not.is_empty() && m.sites.is_empty() {
            problems.push(format!("{name}: no `expect:` or `expect-not:` markers"));
            continue;
        }
        let shown = path.display().to_string();
        for n in report.notices.iter().filter(|n| n.path == shown) {
            if matches!(
                n.kind,
                NoticeKind::Failed | NoticeKind::Internal | NoticeKind::Degraded
            ) {
                problems.push(format!("{name}: {}", n.reason));
            }
        }
        let index = LineIndex::new(&text);
        let mut actual: BTreeMap<(usize, String), usize> = BTreeMap::new();
        let this_file = report.files.iter().filter(|f| f.path == shown);
        for file in this_file.clone() {
            for f in file
                .findings
                .iter()
                .filter(|f| audit_codes || !f.rule.audit_only)
            {
                let line = index.line_col(f.span.start).0;
                *actual.entry((line, f.rule.code.to_string())).or_default() += 1;
            }
        }
        for (line, want) in &m.helps {
            let said = this_file
                .clone()
                .flat_map(|f| &f.findings)
                .any(|f| index.line_col(f.span.start).0 == *line && f.help.contains(want.as_str()));
            if !said {
                problems.push(format!(
                    "{name}:{line}: no finding here says `{want}` in its help"
                ));
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
        if !m.sites.is_empty() {
            // Files with site markers must mark every acquisition.
            let mut got: BTreeMap<(usize, String), usize> = BTreeMap::new();
            for file in this_file.clone() {
                for site in &file.sites {
                    let line = index.line_col(site.span.start).0;
                    *got.entry((line, site.library.clone())).or_default() += 1;
                }
            }
            for (key, &n) in &m.sites {
                if got.get(key).copied().unwrap_or(0) < n {
                    problems.push(format!("{name}:{}: no {} lock site found", key.0, key.1));
                }
            }
            for (key, &n) in &got {
                if m.sites.get(key).copied().unwrap_or(0) < n {
                    problems.push(format!("{name}:{}: unexpected {} lock site", key.0, key.1));
                }
            }
        }
        if !m.classes.is_empty() {
            // Files with class markers must mark every acquisition.
            let mut got: BTreeMap<usize, String> = BTreeMap::new();
            for file in this_file.clone() {
                for site in &file.sites {
                    got.insert(
                        index.line_col(site.span.start).0,
                        site.class.name().to_string(),
                    );
                }
            }
            for (line, want) in &m.classes {
                match got.get(line) {
                    Some(class) if class == want => {}
                    Some(class) => {
                        problems.push(format!("{name}:{line}: class {class}, expected {want}"))
                    }
                    None => problems.push(format!(
                        "{name}:{line}: expect-class on a line with no lock site"
                    )),
                }
            }
            for (line, class) in &got {
                if !m.classes.contains_key(line) {
                    problems.push(format!(
                        "{name}:{line}: lock site classified {class} has no expect-class marker"
                    ));
                }
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
    let misplaced =
        std::panic::catch_unwind(|| markers("x # expect-site: go-redis expect: LA101\n"));
    assert!(misplaced.is_err(), "a marker after expect-site is an error");
    let m = markers("x  # expect: LA101, LA201\ny // expect-not: LA102\nz // expect: LA101 expect-site: go-redis\nw # expect: LA101 expect-not: LA102\n");
    assert_eq!(m.expect.len(), 4);
    assert_eq!(m.expect_not.len(), 2);
    assert_eq!(m.sites.keys().next(), Some(&(3, "go-redis".to_string())));
    assert_eq!(m.expect_not[0], (2, "LA102".to_string()));
}

/// Per language, every rule has at least one positive (`expect:`) and one
/// near-miss (`expect-not:`) fixture. Prints the coverage matrix.
/// Can a file of `lang` hold what `code` is about? A `.sql` file has
/// statements, not clients: no TTLs, owners, releases by DEL, critical
/// sections or Redlock; what it can get wrong is a discarded try-lock, an
/// unbounded wait and a session lock never unlocked.
fn expressible(lang: lock_audit::model::Language, code: &str) -> bool {
    lang != lock_audit::model::Language::Sql || matches!(code, "LA104" | "LA105" | "LA203")
}

#[test]
fn every_rule_is_covered_in_every_language() {
    use lock_audit::checks::REGISTRY;
    use lock_audit::model::Language;
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut table = String::from("language     ");
    for rule in REGISTRY {
        table.push_str(&format!(" {:<9}", rule.code));
    }
    table.push('\n');
    let mut gaps = Vec::new();
    for lang in Language::ALL {
        let mut pos: BTreeMap<String, usize> = BTreeMap::new();
        let mut neg: BTreeMap<String, usize> = BTreeMap::new();
        let dir = root.join(lang.name());
        for e in walkdir::WalkDir::new(&dir)
            .into_iter()
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_file())
        {
            let m = markers(&std::fs::read_to_string(e.path()).unwrap_or_default());
            for ((_, code), n) in m.expect {
                *pos.entry(code).or_default() += n;
            }
            for (_, code) in m.expect_not {
                *neg.entry(code).or_default() += 1;
            }
        }
        table.push_str(&format!("{:<13}", lang.name()));
        for rule in REGISTRY {
            let (p, n) = (
                pos.get(rule.code).copied().unwrap_or(0),
                neg.get(rule.code).copied().unwrap_or(0),
            );
            table.push_str(&format!(" {:<9}", format!("+{p}/-{n}")));
            if (p == 0 || n == 0) && expressible(lang, rule.code) {
                gaps.push(format!(
                    "{} in {}: {p} positive, {n} negative",
                    rule.code,
                    lang.name()
                ));
            }
        }
        table.push('\n');
    }
    println!("{table}");
    assert!(
        gaps.is_empty(),
        "fixture coverage gaps:\n{}\n\n{table}",
        gaps.join("\n")
    );
}

/// Every catalog library is exercised by the fixtures: at least one lock site
/// of it is found (a positive) in a file that also has near-miss markers.
#[test]
fn every_library_has_fixtures() {
    let catalog = Catalog::builtin().expect("built-in catalog loads");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let report = check(&[root], &catalog, &fixture_settings());
    let mut sites: BTreeMap<String, usize> = BTreeMap::new();
    let mut negatives: BTreeMap<String, usize> = BTreeMap::new();
    for file in &report.files {
        let m = markers(&file.text);
        for site in &file.sites {
            *sites.entry(site.library.clone()).or_default() += 1;
        }
        let libs: std::collections::BTreeSet<&String> =
            file.sites.iter().map(|s| &s.library).collect();
        for lib in libs {
            *negatives.entry(lib.clone()).or_default() += m.expect_not.len();
        }
    }
    let mut names: Vec<String> = catalog.libraries.iter().map(|l| l.name.clone()).collect();
    names.extend(catalog.sql.iter().map(|q| q.library.clone()));
    names.sort();
    names.dedup();
    let gaps: Vec<String> = names
        .iter()
        .filter(|n| {
            sites.get(*n).copied().unwrap_or(0) == 0 || negatives.get(*n).copied().unwrap_or(0) == 0
        })
        .map(|n| {
            format!(
                "{n}: {} sites, {} near misses",
                sites.get(n).copied().unwrap_or(0),
                negatives.get(n).copied().unwrap_or(0)
            )
        })
        .collect();
    assert!(
        gaps.is_empty(),
        "catalog libraries without fixtures:\n{}",
        gaps.join("\n")
    );
}

/// Findings of `report` that repeat an earlier (rule, site, anchor).
fn reported_twice(report: &lock_audit::Report) -> Vec<String> {
    let mut twice = Vec::new();
    for file in &report.files {
        let mut seen = std::collections::BTreeSet::new();
        for f in &file.findings {
            let key = (f.rule.code, f.site_span, f.span);
            if !seen.insert(key) {
                twice.push(format!(
                    "{}: {} at byte {}",
                    file.path, f.rule.code, f.span.start
                ));
            }
        }
    }
    twice
}

/// One finding per (rule, site, anchor): the same problem is never reported
/// twice, e.g. for same-named variables in two closures of one method.
#[test]
fn no_finding_is_reported_twice() {
    let catalog = Catalog::builtin().expect("built-in catalog loads");
    let settings = all_rules();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let twice = reported_twice(&check(&[root], &catalog, &settings));
    assert!(
        twice.is_empty(),
        "findings reported twice:\n{}",
        twice.join("\n")
    );
}

/// The same over the field corpus's trees when they are extracted
/// (`python3 field/score.py extract`; `LOCK_AUDIT_FIELD`, else /tmp/field):
/// real code has shapes no fixture thought of.
#[test]
fn no_finding_is_reported_twice_on_the_field_corpus() {
    let dir = std::env::var_os("LOCK_AUDIT_FIELD")
        .map_or_else(|| PathBuf::from("/tmp/field"), PathBuf::from);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        eprintln!("no field corpus at {}: skipped", dir.display());
        return;
    };
    let catalog = Catalog::builtin().expect("built-in catalog loads");
    let settings = all_rules();
    let mut twice = Vec::new();
    for tree in entries.flatten().map(|e| e.path()).filter(|p| p.is_dir()) {
        twice.extend(reported_twice(&check(&[tree], &catalog, &settings)));
    }
    assert!(
        twice.is_empty(),
        "findings reported twice:\n{}",
        twice.join("\n")
    );
}
