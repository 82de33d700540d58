//! Rendering a [`Report`]: one module per output format.

pub mod audit;
pub mod concise;
pub mod github;
pub mod gitlab;
pub mod human;
pub mod json;
pub mod junit;
pub mod sarif;

use crate::checks::Finding;
use crate::lines::LineIndex;
use crate::outcome::{FileResult, Report};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Source snippets with labels on the key, TTL and release (miette).
    Human,
    /// One line per finding: `path:line:col: CODE message`.
    Concise,
    /// The stable JSON schema (version 1).
    Json,
    /// SARIF 2.1.0, for code scanning.
    Sarif,
    /// GitHub Actions annotations.
    Github,
    /// GitLab code quality JSON.
    Gitlab,
    /// JUnit XML.
    Junit,
}

/// Options shared by the renderers.
#[derive(Debug, Clone, Copy)]
pub struct RenderOptions {
    pub color: bool,
    pub width: usize,
}

/// A finding's position, computed once from the file's line index.
pub struct Position {
    pub line: usize,
    pub column: usize,
    pub end_line: usize,
    pub end_column: usize,
    pub site_line: usize,
}

pub fn position(index: &LineIndex, f: &Finding) -> Position {
    let (line, column) = index.line_col(f.span.start);
    let (end_line, end_column) = index.line_col(f.span.end);
    let site_line = f.site_span.map_or(line, |s| index.line_col(s.start).0);
    Position {
        line,
        column,
        end_line,
        end_column,
        site_line,
    }
}

/// Renders `report` in `format`.
pub fn render(report: &Report, format: Format, opts: RenderOptions) -> String {
    match format {
        Format::Human => human::render(report, opts),
        Format::Concise => concise::render(report),
        Format::Json => json::render(report),
        Format::Sarif => sarif::render(report),
        Format::Github => github::render(report),
        Format::Gitlab => gitlab::render(report),
        Format::Junit => junit::render(report),
    }
}

/// Every finding with its file, in output order.
pub fn each_finding(report: &Report) -> impl Iterator<Item = (&FileResult, &Finding)> {
    report
        .files
        .iter()
        .flat_map(|file| file.findings.iter().map(move |f| (file, f)))
}

/// The closing summary line shared by the text formats.
pub fn summary_line(report: &Report) -> String {
    let s = &report.summary;
    let count = |sev| {
        each_finding(report)
            .filter(|(_, f)| f.severity == sev)
            .count()
    };
    use crate::checks::Severity::*;
    let (e, w, i) = (count(Error), count(Warning), count(Info));
    let found = if s.findings == 0 {
        "no findings".to_string()
    } else {
        let mut parts = Vec::new();
        for (n, what) in [(e, "error"), (w, "warning"), (i, "info")] {
            if n > 0 {
                parts.push(format!(
                    "{n} {what}{}",
                    if n == 1 || what == "info" { "" } else { "s" }
                ));
            }
        }
        format!(
            "{} finding{} ({})",
            s.findings,
            if s.findings == 1 { "" } else { "s" },
            parts.join(", ")
        )
    };
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    let mut hidden = Vec::new();
    if s.hidden_in_tests > 0 {
        let n = s.hidden_in_tests;
        hidden.push(format!("{n} finding{} in test code not shown", plural(n)));
    }
    if s.test_files_skipped > 0 {
        let n = s.test_files_skipped;
        hidden.push(format!(
            "{n} test file{} naming a lock library not analysed",
            plural(n)
        ));
    }
    let tests = match hidden.is_empty() {
        true => String::new(),
        false => format!("; {} (--include-tests)", hidden.join(", ")),
    };
    format!(
        "{found} in {} lock site{}; {} file{} scanned, {} parsed{tests}",
        s.sites,
        if s.sites == 1 { "" } else { "s" },
        s.files_scanned,
        if s.files_scanned == 1 { "" } else { "s" },
        s.files_parsed,
    )
}

/// The near misses for `audit`: each with `verbose`, else how many there are.
pub fn near_miss_lines(report: &Report, verbose: bool) -> Vec<String> {
    let n = report.near_misses.len();
    if verbose {
        let line = |(path, m): &(String, crate::outcome::NearMiss)| {
            format!("near miss: {path}:{}: {}", m.line, m.why)
        };
        report.near_misses.iter().map(line).collect()
    } else if n > 0 {
        vec![format!(
            "{n} call{} looked like a lock but lacked the evidence to count (run with --verbose to see which and why)",
            if n == 1 { "" } else { "s" }
        )]
    } else {
        Vec::new()
    }
}

/// The notice lines: all of them with `verbose`, else internal errors and a count.
pub fn notice_lines(report: &Report, verbose: bool) -> Vec<String> {
    let mut out = Vec::new();
    let mut hidden = 0;
    for n in &report.notices {
        if verbose || n.kind == crate::outcome::NoticeKind::Internal {
            out.push(format!("notice: {}: {}", n.path, n.reason));
        } else {
            hidden += 1;
        }
    }
    if hidden > 0 {
        out.push(format!(
            "{hidden} file{} skipped or only partly analysed (run with --verbose to see which and why)",
            if hidden == 1 { " was" } else { "s were" }
        ));
    }
    out
}
