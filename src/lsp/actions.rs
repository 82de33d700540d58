//! Code actions: a finding's fix (built by its rule), a suppression comment,
//! or a class annotation on its lock.

use std::collections::{HashMap, HashSet};

use lsp_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, CodeActionParams, Position, Range, TextEdit,
    WorkspaceEdit,
};

use super::positions::Lines;
use super::server::Server;
use crate::lang::profile::profile;

impl Server {
    /// The actions for the findings on the lines of the requested range.
    pub(super) fn actions(&self, p: &CodeActionParams) -> Vec<CodeActionOrCommand> {
        let uri = &p.text_document.uri;
        let Some(result) = self.last.get(uri) else {
            return Vec::new();
        };
        let lines = Lines::new(&result.text);
        let mark = profile(result.language).line_comment;
        // Whole lines: a cursor anywhere on a finding's line offers its actions.
        let from = lines.start(p.range.start.line).unwrap_or(result.text.len());
        let to = lines.offset(Position::new(p.range.end.line + 1, 0));
        let mut out = Vec::new();
        let mut annotated = HashSet::new();
        let action = |title: String, kind: CodeActionKind, edits: Vec<TextEdit>| {
            CodeActionOrCommand::CodeAction(CodeAction {
                title,
                kind: Some(kind),
                edit: Some(WorkspaceEdit {
                    changes: Some(HashMap::from([(uri.clone(), edits)])),
                    ..Default::default()
                }),
                // Each changes what the code does or says: the user decides.
                is_preferred: Some(false),
                ..Default::default()
            })
        };
        // A comment line above the line holding `at`, indented like it.
        let comment_above = |at: usize, comment: String| {
            let line = lines.position(at).line;
            let start = lines.start(line).unwrap_or(at);
            let indent: String = result.text[start..]
                .chars()
                .take_while(|c| *c == ' ' || *c == '\t')
                .collect();
            vec![TextEdit {
                range: Range::new(Position::new(line, 0), Position::new(line, 0)),
                new_text: format!("{indent}{mark} {comment}\n"),
            }]
        };
        for f in &result.findings {
            if f.span.end < from || f.span.start >= to {
                continue;
            }
            out.push(action(
                format!("Suppress {} ({}) on this line", f.rule.code, f.rule.name),
                CodeActionKind::QUICKFIX,
                comment_above(
                    f.span.start,
                    format!("lock-audit: allow({}, reason=\"...\")", f.rule.code),
                ),
            ));
            if let Some(fix) = &f.fix {
                let edits = fix
                    .edits
                    .iter()
                    .map(|e| TextEdit {
                        range: lines.range(e.span.start, e.span.end),
                        new_text: e.text.clone(),
                    })
                    .collect();
                out.push(action(fix.title.clone(), CodeActionKind::QUICKFIX, edits));
            }
            let site = f.site_span.unwrap_or(f.span);
            if annotated.insert(site.start) {
                for class in ["correctness", "efficiency"] {
                    out.push(action(
                        format!("Mark this lock as {class}"),
                        CodeActionKind::REFACTOR,
                        comment_above(site.start, format!("lock-audit: {class}")),
                    ));
                }
            }
        }
        out
    }
}
