//! What a scan produces: per-file results, notices and the run summary,
//! shared by the reports, the cache, the scan and the editor server.

use std::collections::HashMap;
use std::sync::Arc;

use crate::checks::Finding;
use crate::{model, sites};

/// Why a file was not (fully) analysed.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub enum NoticeKind {
    /// Skipped on purpose: empty, binary, too large, unsupported.
    Skipped,
    /// Read, but the text or syntax was damaged; what could be analysed was.
    Degraded,
    /// Could not be read or parsed at all.
    Failed,
    /// lock-audit itself failed on this file (a bug): exit code 2.
    Internal,
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Notice {
    /// The file's path relative to the project root (a walk error: the path given).
    pub path: String,
    pub kind: NoticeKind,
    pub reason: String,
}

/// The findings of one file, with its text for rendering.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct FileResult {
    /// The path as walked (relative to the working directory when the root was).
    pub path: String,
    /// The path relative to the project root (`/` separators): what every
    /// machine-readable format and the baseline use.
    pub rel: String,
    pub language: model::Language,
    /// Not cached: the cache restores it from the file just read.
    #[serde(skip)]
    pub text: Arc<str>,
    pub findings: Vec<Finding>,
    /// Every lock site of the file, for the `audit` inventory.
    pub sites: Vec<SiteInfo>,
    /// Findings in test code (a test file, a Rust `#[cfg(test)]` module) not
    /// shown because tests are not included.
    #[serde(default)]
    pub hidden_in_tests: usize,
    /// The file's functions that write: other files' critical sections may
    /// call them ([`sites::writers`]).
    #[serde(default)]
    pub writers: Vec<sites::writers::Writer>,
    /// The modules whose files may define what its sites call: what it
    /// imports, its classes' bases, its own module ([`sites::writers::neighbours`]).
    #[serde(default)]
    pub neighbours: Vec<String>,
    /// Its typed package-level declarations (Go struct fields and
    /// variables: name, type), which type the fields other files of its
    /// package call through ([`sites::consts`]).
    #[serde(default)]
    pub fields: Vec<(String, String)>,
    /// Calls that looked like a lock but lacked the evidence to count
    /// ([`sites::near_miss`]), for `audit --verbose`.
    #[serde(default)]
    pub near_misses: Vec<NearMiss>,
}

/// A call that looked like a lock but was not counted, and why.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct NearMiss {
    pub line: usize,
    pub why: String,
}

/// One lock site as the inventory shows it.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct SiteInfo {
    pub span: model::Span,
    pub backend: String,
    pub library: String,
    pub api: String,
    /// For a call of an in-house wrapper: the wrapper and where its own
    /// acquisition is (`runCronJob (cron/utils.ts:36)`).
    pub via: Option<String>,
    pub key: String,
    /// `30000 ms`, `none`, `renewed`, `session`, `default 10s`...
    pub ttl: String,
    pub ttl_ms: Option<i64>,
    /// `forever`, `none`, a bound, or `-` for non-blocking APIs.
    pub wait: String,
    pub class: sites::Class,
    pub evidence: Vec<String>,
    /// Where each release of this lock is, and whether it checks the owner.
    pub releases: Vec<(model::Span, bool)>,
    /// The codes of the findings that belong to this site.
    #[serde(with = "crate::checks::codes")]
    pub findings: Vec<&'static str>,
    /// `fencing`, `conditional-write`, `idempotency-key` or `none`.
    #[serde(with = "crate::sites::effects::protection")]
    pub protection: crate::sites::effects::Name,
    /// Does the critical section write?
    pub writes: bool,
    /// For an unclassified site, or a correctness site with no write found:
    /// the names its section calls that the file does not define, where
    /// another file's writer may decide its class or be the write to fence.
    #[serde(default)]
    pub outside: Vec<String>,
}

#[derive(Debug, Clone, Default)]
pub struct Summary {
    pub files_scanned: usize,
    pub files_parsed: usize,
    pub sites: usize,
    pub findings: usize,
    /// Findings in test code, not shown (`--include-tests` shows them).
    pub hidden_in_tests: usize,
    /// Test files that name a lock library, not analysed (`--include-tests`
    /// analyses them).
    pub test_files_skipped: usize,
    pub elapsed_ms: u128,
}

#[derive(Debug, Clone, Default)]
pub struct Report {
    /// The project root the `rel` paths are relative to (absolute).
    pub root: std::path::PathBuf,
    /// Every file scanned, by project-relative path (a baseline's entries
    /// of other files are neither stale nor dropped).
    pub scanned: Vec<String>,
    /// Files with at least one finding or lock site, sorted by path.
    pub files: Vec<FileResult>,
    pub notices: Vec<Notice>,
    /// Every file's near misses, by the path as walked (as the inventory shows it).
    pub near_misses: Vec<(String, NearMiss)>,
    pub summary: Summary,
}

impl Report {
    pub fn has_internal_errors(&self) -> bool {
        self.notices.iter().any(|n| n.kind == NoticeKind::Internal)
    }
}

pub fn site_infos(
    analysis: &sites::FileAnalysis,
    findings: &[(Option<model::Span>, &'static str)],
) -> Vec<SiteInfo> {
    let mut sites: Vec<&sites::LockSite> = analysis.sites.iter().collect();
    sites.sort_by_key(|s| s.span.start);
    // By site span once: a pass over all findings per site is quadratic
    // in a generated file with thousands of both.
    let mut codes: HashMap<model::Span, Vec<&'static str>> = HashMap::new();
    for (span, code) in findings {
        if let Some(span) = span {
            codes.entry(*span).or_default().push(code);
        }
    }
    sites
        .into_iter()
        .map(|s| SiteInfo {
            span: s.span,
            backend: s.backend.clone(),
            library: s.library.clone(),
            api: s.api.clone(),
            via: s.via.as_ref().map(|at| {
                let name = s.wrapper_name().unwrap_or(&s.api);
                format!("{name} ({at})")
            }),
            key: s
                .key
                .as_ref()
                .map(|k| k.peel().text.clone())
                .unwrap_or_default(),
            ttl: s.ttl.describe(s.ttl_ms),
            ttl_ms: s.ttl_ms,
            wait: s.wait.describe(),
            class: s.class,
            evidence: s
                .evidence
                .iter()
                .chain(&s.class_evidence)
                .cloned()
                .collect(),
            protection: protection_of(s),
            writes: s.effects.iter().any(|e| e.write),
            releases: s
                .releases
                .iter()
                .map(|&i| {
                    (
                        analysis.releases[i].span,
                        analysis.releases[i].owner_checked,
                    )
                })
                .collect(),
            findings: codes.get(&s.span).cloned().unwrap_or_default(),
            outside: match s.class {
                sites::Class::Unclassified => sites::writers::outside_calls(analysis.model, s),
                sites::Class::Correctness if !s.effects.iter().any(|e| e.write) => {
                    sites::writers::outside_calls(analysis.model, s)
                }
                _ => Vec::new(),
            },
        })
        .collect()
}

/// A site's protection: the kind shared by all its writes, else `none`.
fn protection_of(s: &sites::LockSite) -> &'static str {
    let writes: Vec<_> = s.effects.iter().filter(|e| e.write).collect();
    match writes.first().and_then(|w| w.protection) {
        Some(p) if writes.iter().all(|w| w.protection.is_some()) => p.name(),
        _ => "none",
    }
}
