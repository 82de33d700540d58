//! Human output: miette's graphical renderer, one snippet per finding with
//! labels on the acquisition, key, expiry and release. With `error.rs`, the
//! only place that knows about miette.

use std::fmt;

use miette::{
    Diagnostic, GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteError,
    MietteSpanContents, SourceCode, SourceSpan, SpanContents,
};

use rayon::prelude::*;

use super::{summary_line, RenderOptions};
use crate::checks::{Finding, Severity};
use crate::lines::LineIndex;
use crate::outcome::{FileResult, Report};

struct Rendered<'a> {
    finding: &'a Finding,
    source: Windowed<'a>,
}

/// A file's text as miette reads it, through a window of the lines around
/// each span: miette finds a span's line by counting from the start of the
/// text on every read, which made a file with 10,000 findings take 13 s to
/// print. Line numbers, offsets and contents come out as for the whole text.
struct Windowed<'t> {
    name: &'t str,
    text: &'t str,
    lines: &'t LineIndex,
}

impl SourceCode for Windowed<'_> {
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        before: usize,
        after: usize,
    ) -> Result<Box<dyn SpanContents<'a> + 'a>, MietteError> {
        let (first, _) = self.lines.line_col(span.offset());
        let (last, _) = self.lines.line_col(span.offset() + span.len());
        // 1-based: the first line shown, and the line after the last one read.
        let from = first.saturating_sub(before).max(1);
        let start = self.lines.line_start(from).unwrap_or(0);
        let end = self
            .lines
            .line_start(last + after + 2)
            .unwrap_or(self.text.len());
        let window = self.text.as_bytes().get(start..end).unwrap_or_default();
        let inner = SourceSpan::new((span.offset().saturating_sub(start)).into(), span.len());
        let c = window.read_span(&inner, before, after)?;
        Ok(Box::new(MietteSpanContents::new_named(
            self.name.to_string(),
            c.data(),
            SourceSpan::new((c.span().offset() + start).into(), c.span().len()),
            c.line() + from - 1,
            c.column(),
            c.line_count() + from - 1,
        )))
    }
}

impl fmt::Debug for Rendered<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.finding.message)
    }
}

impl fmt::Display for Rendered<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.finding.message)
    }
}

impl std::error::Error for Rendered<'_> {}

impl Diagnostic for Rendered<'_> {
    fn code<'b>(&'b self) -> Option<Box<dyn fmt::Display + 'b>> {
        Some(Box::new(format!(
            "{}({})",
            self.finding.rule.code, self.finding.rule.name
        )))
    }

    fn severity(&self) -> Option<miette::Severity> {
        Some(match self.finding.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
            Severity::Info => miette::Severity::Advice,
        })
    }

    fn help<'b>(&'b self) -> Option<Box<dyn fmt::Display + 'b>> {
        let f = self.finding;
        let why = match f.class_evidence.as_slice() {
            [] => String::new(),
            ev => format!(
                ": {}",
                ev.iter().take(3).cloned().collect::<Vec<_>>().join("; ")
            ),
        };
        Some(Box::new(format!(
            "{}\n(class: {}{why}; `lock-audit explain {}` tells the whole story)",
            f.help,
            f.class.name(),
            f.rule.code
        )))
    }

    fn source_code(&self) -> Option<&dyn SourceCode> {
        Some(&self.source)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        let f = self.finding;
        let primary = LabeledSpan::new_primary_with_span(
            Some(f.rule.label.to_string()),
            (f.span.start, f.span.end.saturating_sub(f.span.start)),
        );
        let rest = f.labels.iter().map(|l| {
            LabeledSpan::new_with_span(
                Some(l.text.clone()),
                (l.span.start, l.span.end.saturating_sub(l.span.start)),
            )
        });
        Some(Box::new(std::iter::once(primary).chain(rest)))
    }
}

/// One finding's snippet and the blank line after it.
fn render_finding(
    handler: &GraphicalReportHandler,
    file: &FileResult,
    lines: &LineIndex,
    finding: &Finding,
) -> String {
    let diag = Rendered {
        finding,
        source: Windowed {
            name: &file.path,
            text: &file.text,
            lines,
        },
    };
    let mut out = String::new();
    if handler.render_report(&mut out, &diag).is_err() {
        out = format!("{}: {} {}\n", file.path, finding.rule.code, finding.message);
    }
    out.push('\n');
    out
}

/// Snippets are rendered in parallel (miette's line wrapping made 40,000
/// findings of one generated file take a third of a second) and joined in
/// report order.
pub fn render(report: &Report, opts: RenderOptions) -> String {
    let theme = if opts.color {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    let handler = GraphicalReportHandler::new_themed(theme)
        .with_width(opts.width)
        .with_links(false);
    let indexed: Vec<(&FileResult, LineIndex)> = report
        .files
        .iter()
        .filter(|f| !f.findings.is_empty())
        .map(|f| (f, LineIndex::new(&f.text)))
        .collect();
    let findings: Vec<(&FileResult, &LineIndex, &Finding)> = indexed
        .iter()
        .flat_map(|(file, lines)| file.findings.iter().map(move |f| (*file, lines, f)))
        .collect();
    let snippets: Vec<String> = findings
        .par_iter()
        .map(|(file, lines, f)| render_finding(&handler, file, lines, f))
        .collect();
    let mut out = snippets.concat();
    out.push_str(&summary_line(report));
    out.push('\n');
    out
}
