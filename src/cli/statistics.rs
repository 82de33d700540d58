//! `check --statistics`: findings per rule, most frequent first, as a table
//! or (`--format json`) as JSON.

use serde_json::json;

use crate::checks::Rule;
use crate::outcome::Report;
use crate::report::{self, Format};

/// Each rule with findings and how many, most frequent first.
fn counts(report: &Report) -> Vec<(usize, &'static Rule)> {
    let mut counts: Vec<(usize, &'static Rule)> = Vec::new();
    for (_, f) in report::each_finding(report) {
        match counts.iter_mut().find(|(_, r)| r.code == f.rule.code) {
            Some((n, _)) => *n += 1,
            None => counts.push((1, f.rule)),
        }
    }
    counts.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.code.cmp(b.1.code)));
    counts
}

/// Does `format` have a statistics form?
pub(super) fn supports(format: Format) -> bool {
    matches!(format, Format::Json | Format::Human | Format::Concise)
}

/// The statistics in `format`: JSON for `json`, else the table; `None` for a
/// format that has no statistics form.
pub(super) fn render(report: &Report, format: Format) -> Option<String> {
    let counts = counts(report);
    match format {
        Format::Json => {
            let rows: Vec<_> = counts
                .iter()
                .map(|(n, r)| json!({"code": r.code, "name": r.name, "severity": r.severity.name(), "count": n}))
                .collect();
            let out =
                json!({"version": 1, "statistics": rows, "findings": report.summary.findings});
            Some(serde_json::to_string_pretty(&out).unwrap_or_default() + "\n")
        }
        Format::Human | Format::Concise => {
            let mut out = String::new();
            for (n, r) in counts {
                out.push_str(&format!(
                    "{n:>5}  {:<6} {:<28} {}\n",
                    r.code,
                    r.name,
                    r.severity.name()
                ));
            }
            out.push_str(&report::summary_line(report));
            out.push('\n');
            Some(out)
        }
        _ => None,
    }
}
