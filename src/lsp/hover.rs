//! Hover: the audit row of the lock site under the cursor.

use lsp_types::{Hover, HoverContents, HoverParams, MarkupContent, MarkupKind};

use super::positions::Lines;
use super::server::Server;

impl Server {
    /// The audit row of the lock site under the cursor.
    pub(super) fn hover(&self, p: &HoverParams) -> Option<Hover> {
        let uri = &p.text_document_position_params.text_document.uri;
        let result = self.last.get(uri)?;
        let lines = Lines::new(&result.text);
        let at = lines.offset(p.text_document_position_params.position);
        let site = result
            .sites
            .iter()
            .find(|s| s.span.start <= at && at <= s.span.end)?;
        let releases: Vec<String> = site
            .releases
            .iter()
            .map(|(span, checked)| {
                let line = lines.position(span.start).line + 1;
                format!(
                    "line {line} ({})",
                    if *checked {
                        "owner-checked"
                    } else {
                        "unchecked"
                    }
                )
            })
            .collect();
        let text = format!(
            "**{} lock** `{}` — {} / {}\n\n| | |\n|---|---|\n| class | {} |\n| evidence | {} |\n| TTL | {} |\n| wait | {} |\n| release | {} |\n| protection | {} |\n| findings | {} |",
            site.backend,
            site.key,
            site.library,
            site.api,
            site.class.name(),
            if site.evidence.is_empty() { "-".into() } else { site.evidence.join("; ") },
            site.ttl,
            site.wait,
            if releases.is_empty() { "none found".into() } else { releases.join(", ") },
            site.protection,
            if site.findings.is_empty() { "none".into() } else { site.findings.join(", ") },
        );
        Some(Hover {
            contents: HoverContents::Markup(MarkupContent {
                kind: MarkupKind::Markdown,
                value: text,
            }),
            range: Some(lines.range(site.span.start, site.span.end)),
        })
    }
}
