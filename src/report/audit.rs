//! The `audit` inventory: every lock site with its backend, library, key,
//! TTL, wait bound, releases and findings, as a table, markdown or JSON.

use serde::Serialize;

use crate::lines::LineIndex;
use crate::outcome::{FileResult, Report, SiteInfo};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AuditFormat {
    Table,
    Markdown,
    Json,
}

#[derive(Serialize)]
struct JsonSite<'a> {
    path: &'a str,
    line: usize,
    language: &'static str,
    backend: &'a str,
    library: &'a str,
    api: &'a str,
    /// For a wrapper call: `Name (path:line)` of the acquisition it wraps.
    via: Option<&'a str>,
    key: &'a str,
    ttl: &'a str,
    ttl_ms: Option<i64>,
    wait: &'a str,
    class: &'static str,
    evidence: &'a [String],
    /// The first release's line, if any.
    release_line: Option<usize>,
    releases: Vec<JsonRelease>,
    /// What protects the critical section's writes (`none` also when it has none:
    /// see `writes`).
    protection: &'static str,
    /// Does the critical section write (what LA301 asks to be protected)?
    writes: bool,
    findings: &'a [&'static str],
}

#[derive(Serialize)]
struct JsonRelease {
    line: usize,
    owner_checked: bool,
}

struct Row<'a> {
    file: &'a FileResult,
    site: &'a SiteInfo,
    line: usize,
    releases: Vec<(usize, bool)>,
}

fn rows(report: &Report) -> Vec<Row<'_>> {
    let mut out = Vec::new();
    for file in &report.files {
        let index = LineIndex::new(&file.text);
        for site in &file.sites {
            out.push(Row {
                file,
                site,
                line: index.line_col(site.span.start).0,
                releases: site
                    .releases
                    .iter()
                    .map(|(sp, ok)| (index.line_col(sp.start).0, *ok))
                    .collect(),
            });
        }
    }
    out
}

fn release_text(r: &Row) -> String {
    if r.releases.is_empty() {
        return "-".into();
    }
    let parts: Vec<String> = r
        .releases
        .iter()
        .map(|(l, ok)| format!("L{l}{}", if *ok { "" } else { " (unchecked)" }))
        .collect();
    parts.join(", ")
}

/// A key for one table cell: whitespace runs (a multi-line key) as one space,
/// at most 40 characters, a cut shown with `…`.
fn short_key(key: &str) -> String {
    let flat = key.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= 40 {
        return flat;
    }
    let mut cut: String = flat.chars().take(39).collect();
    cut.push('…');
    cut
}

fn cells(r: &Row) -> [String; 10] {
    let findings = if r.site.findings.is_empty() {
        "-".into()
    } else {
        r.site.findings.join(",")
    };
    [
        format!("{}:{}", r.file.path, r.line),
        r.file.language.name().to_string(),
        match &r.site.via {
            Some(via) => format!("{} via {via}", r.site.library),
            None => r.site.library.clone(),
        },
        short_key(&r.site.key),
        r.site.ttl.clone(),
        r.site.wait.clone(),
        release_text(r),
        r.site.class.name().to_string(),
        if r.site.writes {
            r.site.protection.to_string()
        } else {
            "-".into()
        },
        findings,
    ]
}

const HEADERS: [&str; 10] = [
    "site",
    "language",
    "library",
    "key",
    "ttl",
    "wait",
    "release",
    "class",
    "protection",
    "findings",
];

pub fn render(report: &Report, format: AuditFormat) -> String {
    let rows = rows(report);
    match format {
        AuditFormat::Json => json(&rows),
        AuditFormat::Markdown => {
            let mut out = format!(
                "| {} |\n|{}\n",
                HEADERS.join(" | "),
                "---|".repeat(HEADERS.len())
            );
            for r in &rows {
                let c = cells(r).map(|c| c.replace('|', "\\|"));
                out.push_str(&format!("| {} |\n", c.join(" | ")));
            }
            out.push('\n');
            out.push_str(&summary(&rows));
            out.push('\n');
            out
        }
        AuditFormat::Table => {
            let all: Vec<[String; 10]> = rows.iter().map(cells).collect();
            let mut widths = HEADERS.map(str::len);
            for c in &all {
                for (w, cell) in widths.iter_mut().zip(c) {
                    *w = (*w).max(cell.chars().count());
                }
            }
            let line = |cells: &[String]| {
                let padded: Vec<String> = cells
                    .iter()
                    .zip(widths)
                    .map(|(c, w)| format!("{c:<w$}"))
                    .collect();
                padded.join("  ").trim_end().to_string() + "\n"
            };
            let mut out = line(&HEADERS.map(String::from));
            for c in &all {
                out.push_str(&line(c));
            }
            out.push_str(&summary(&rows));
            out.push('\n');
            out
        }
    }
}

/// `12 lock sites: 5 correctness (2 unprotected), 4 efficiency, 3 unclassified`.
fn summary(rows: &[Row]) -> String {
    use crate::sites::Class;
    let count = |c: Class| rows.iter().filter(|r| r.site.class == c).count();
    let unprotected = rows
        .iter()
        .filter(|r| {
            r.site.class == Class::Correctness && r.site.writes && r.site.protection == "none"
        })
        .count();
    let markers = match count(Class::Marker) {
        0 => String::new(),
        n => format!(
            ", {n} de-duplication marker{}",
            if n == 1 { "" } else { "s" }
        ),
    };
    format!(
        "{} lock site{}: {} correctness ({} unprotected), {} efficiency, {} unclassified{markers}",
        rows.len(),
        if rows.len() == 1 { "" } else { "s" },
        count(Class::Correctness),
        unprotected,
        count(Class::Efficiency),
        count(Class::Unclassified),
    )
}

fn json(rows: &[Row]) -> String {
    let sites: Vec<JsonSite> = rows
        .iter()
        .map(|r| JsonSite {
            path: &r.file.rel,
            line: r.line,
            language: r.file.language.name(),
            backend: &r.site.backend,
            library: &r.site.library,
            api: &r.site.api,
            via: r.site.via.as_deref(),
            key: &r.site.key,
            ttl: &r.site.ttl,
            ttl_ms: r.site.ttl_ms,
            wait: &r.site.wait,
            class: r.site.class.name(),
            evidence: &r.site.evidence,
            release_line: r.releases.first().map(|(l, _)| *l),
            releases: r
                .releases
                .iter()
                .map(|(line, ok)| JsonRelease {
                    line: *line,
                    owner_checked: *ok,
                })
                .collect(),
            protection: r.site.protection,
            writes: r.site.writes,
            findings: &r.site.findings,
        })
        .collect();
    #[derive(Serialize)]
    struct Out<'a> {
        version: u32,
        sites: Vec<JsonSite<'a>>,
    }
    serde_json::to_string_pretty(&Out { version: 1, sites }).unwrap_or_default() + "\n"
}
