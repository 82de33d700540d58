//! Human output: miette's graphical renderer, one snippet per finding with
//! labels on the acquisition, key, expiry and release. With `error.rs`, the
//! only place that knows about miette.

use std::fmt;

use miette::{
    Diagnostic, GraphicalReportHandler, GraphicalTheme, LabeledSpan, NamedSource, SourceCode,
};

use super::{summary_line, RenderOptions};
use crate::checks::{Finding, Severity};
use crate::outcome::{FileResult, Report};

struct Rendered<'a> {
    finding: &'a Finding,
    source: NamedSource<String>,
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

fn render_file(handler: &GraphicalReportHandler, file: &FileResult, out: &mut String) {
    for finding in &file.findings {
        let diag = Rendered {
            finding,
            source: NamedSource::new(&file.path, file.text.to_string()),
        };
        if handler.render_report(out, &diag).is_err() {
            out.push_str(&format!(
                "{}: {} {}\n",
                file.path, finding.rule.code, finding.message
            ));
        }
        out.push('\n');
    }
}

pub fn render(report: &Report, opts: RenderOptions) -> String {
    let theme = if opts.color {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    let handler = GraphicalReportHandler::new_themed(theme)
        .with_width(opts.width)
        .with_links(false);
    let mut out = String::new();
    for file in &report.files {
        render_file(&handler, file, &mut out);
    }
    out.push_str(&summary_line(report));
    out.push('\n');
    out
}
