//! Diagnostics: one open document analysed and its findings published.

use std::path::PathBuf;

use lsp_server::{Connection, Message, Notification};
use lsp_types::notification::{self as note, Notification as _};
use lsp_types::{
    CodeDescription, Diagnostic, DiagnosticRelatedInformation, DiagnosticSeverity, Location,
    NumberOrString, PublishDiagnosticsParams, Url,
};

use super::positions::Lines;
use super::server::Server;
use crate::checks::Severity;
use crate::discover::SourceFile;
use crate::outcome::{FileResult, NoticeKind};
use crate::{lang, scan};

/// Rule documentation, linked from every diagnostic's code.
const DOCS: &str = "https://github.com/lock-audit/lock-audit/blob/main/README.md#rules";

impl Server {
    /// Analyses one open document and publishes its diagnostics.
    pub(super) fn publish(&mut self, conn: &Connection, uri: &Url) {
        let Some(text) = self.docs.get(uri).cloned() else {
            return;
        };
        let path = uri
            .to_file_path()
            .unwrap_or_else(|_| PathBuf::from(uri.path()));
        let Some(language) = lang::detect(&path, text.as_bytes()) else {
            return;
        };
        // The config's `include` / `exclude` decide, as in a walk of the workspace.
        if !self.settings.paths.keeps(&path, false) {
            self.last.remove(uri);
            send_diagnostics(conn, uri.clone(), Vec::new());
            return;
        }
        let file = SourceFile {
            rel: path
                .strip_prefix(&self.root)
                .unwrap_or(&path)
                .display()
                .to_string(),
            path,
            language,
        };
        let scan::SourceAnalysis {
            result,
            wrappers,
            notices,
        } = scan::analyse_source(&file, text, &self.catalog, &self.settings, &self.wrappers);
        if result.is_some() {
            self.replace_wrappers(&file.path, wrappers);
        }
        // Editor text is always UTF-8: a notice that is not a skip means it did not parse cleanly.
        let broken = notices.iter().find(|n| n.kind != NoticeKind::Skipped);
        match (result, broken) {
            // Half-typed code: keep what the last good text showed.
            (_, Some(n)) if self.last.contains_key(uri) => {
                self.log(
                    conn,
                    &format!("{}: {}; keeping the last diagnostics", file.rel, n.reason),
                );
            }
            (None, _) => {
                if let Some(n) = notices.first() {
                    self.log(conn, &format!("{}: {}", file.rel, n.reason));
                }
            }
            (Some(result), _) => {
                let diags = diagnostics(uri, &result);
                self.last.insert(uri.clone(), result);
                send_diagnostics(conn, uri.clone(), diags);
            }
        }
    }
}

pub(super) fn send_diagnostics(conn: &Connection, uri: Url, diagnostics: Vec<Diagnostic>) {
    let params = PublishDiagnosticsParams {
        uri,
        diagnostics,
        version: None,
    };
    let n = Notification::new(note::PublishDiagnostics::METHOD.to_string(), params);
    let _ = conn.sender.send(Message::Notification(n));
}

/// One diagnostic per finding: the rule, the class and its evidence, the help,
/// and the release / TTL / write as related locations.
fn diagnostics(uri: &Url, result: &FileResult) -> Vec<Diagnostic> {
    let lines = Lines::new(&result.text);
    let docs = Url::parse(DOCS).ok();
    result
        .findings
        .iter()
        .map(|f| {
            let mut message = f.message.clone();
            if f.class != crate::sites::Class::Unclassified {
                message.push_str(&format!("\nclass: {}", f.class.name()));
                if !f.class_evidence.is_empty() {
                    message.push_str(&format!(" ({})", f.class_evidence.join("; ")));
                }
            }
            message.push_str(&format!("\nhelp: {}", f.help));
            let related = f
                .labels
                .iter()
                .map(|l| DiagnosticRelatedInformation {
                    location: Location::new(uri.clone(), lines.range(l.span.start, l.span.end)),
                    message: l.text.clone(),
                })
                .collect::<Vec<_>>();
            Diagnostic {
                range: lines.range(f.span.start, f.span.end),
                severity: Some(match f.severity {
                    Severity::Error => DiagnosticSeverity::ERROR,
                    Severity::Warning => DiagnosticSeverity::WARNING,
                    Severity::Info => DiagnosticSeverity::INFORMATION,
                }),
                code: Some(NumberOrString::String(f.rule.code.to_string())),
                code_description: docs.clone().map(|href| CodeDescription { href }),
                source: Some("lock-audit".into()),
                message,
                related_information: (!related.is_empty()).then_some(related),
                ..Default::default()
            }
        })
        .collect()
}
