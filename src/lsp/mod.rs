//! `lock-audit lsp`: a language server over stdio.
//!
//! Diagnostics come from the editor's in-memory text, analysed like a file of
//! the workspace (its config, catalog folders and in-house wrappers). Changes
//! that arrive together are coalesced: the queue is drained before anything is
//! analysed, so a burst of keystrokes costs one analysis per document.
//! Text that does not parse keeps its last diagnostics; the reason is logged.

mod fixes;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use lsp_server::{Connection, Message, Notification, Request, Response};
use lsp_types::notification::{self as note, Notification as _};
use lsp_types::request::{self as req, Request as _};
use lsp_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, CodeActionParams, CodeDescription, Diagnostic,
    DiagnosticRelatedInformation, DiagnosticSeverity, Hover, HoverContents, HoverParams,
    InitializeParams, Location, MarkupContent, MarkupKind, NumberOrString, Position,
    PublishDiagnosticsParams, Range, ServerCapabilities, TextDocumentSyncCapability,
    TextDocumentSyncKind, TextDocumentSyncOptions, TextDocumentSyncSaveOptions, TextEdit, Url,
    WorkspaceEdit,
};

use crate::catalog::Catalog;
use crate::checks::Severity;
use crate::config::Settings;
use crate::config::{self, Config};
use crate::discover::SourceFile;
use crate::lines::LineIndex;
use crate::model::Language;
use crate::outcome::{FileResult, NoticeKind};
use crate::sites::wrapper::Wrapper;
use crate::{lang, scan};

/// Rule documentation, linked from every diagnostic's code.
const DOCS: &str = "https://github.com/lock-audit/lock-audit/blob/main/README.md#rules";

/// What the server knows about the workspace and the open documents.
struct Server {
    /// The first workspace folder: its `lock-audit.yaml` configures the server.
    root: PathBuf,
    /// Every workspace folder: wrappers are collected from all of them.
    folders: Vec<PathBuf>,
    catalog: Catalog,
    settings: Settings,
    wrappers: Vec<Wrapper>,
    docs: HashMap<Url, Arc<str>>,
    /// The last analysis that parsed, per document: diagnostics, hover and actions use it.
    last: HashMap<Url, FileResult>,
}

/// Runs the server on stdin/stdout until the client says `exit`.
pub fn run() -> Result<(), String> {
    let (connection, io) = Connection::stdio();
    let caps = ServerCapabilities {
        text_document_sync: Some(TextDocumentSyncCapability::Options(
            TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(TextDocumentSyncKind::FULL),
                save: Some(TextDocumentSyncSaveOptions::Supported(true)),
                ..Default::default()
            },
        )),
        hover_provider: Some(lsp_types::HoverProviderCapability::Simple(true)),
        code_action_provider: Some(lsp_types::CodeActionProviderCapability::Simple(true)),
        ..Default::default()
    };
    let caps = serde_json::to_value(caps).map_err(|e| e.to_string())?;
    let params = connection.initialize(caps).map_err(|e| e.to_string())?;
    let params: InitializeParams = serde_json::from_value(params).map_err(|e| e.to_string())?;
    let folders = workspace_folders(&params);
    let mut server = Server::new(folders, &connection)?;
    server.log(
        &connection,
        &format!("lock-audit lsp: workspace {}", server.root.display()),
    );
    server.main_loop(&connection)?;
    drop(connection);
    io.join().map_err(|e| e.to_string())
}

#[allow(deprecated)] // `root_uri`: older clients send only that.
fn workspace_folders(params: &InitializeParams) -> Vec<PathBuf> {
    let uris: Vec<Url> = match &params.workspace_folders {
        Some(folders) if !folders.is_empty() => folders.iter().map(|f| f.uri.clone()).collect(),
        _ => params.root_uri.iter().cloned().collect(),
    };
    let folders: Vec<PathBuf> = uris.iter().filter_map(|u| u.to_file_path().ok()).collect();
    if folders.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        folders
    }
}

impl Server {
    fn new(folders: Vec<PathBuf>, conn: &Connection) -> Result<Server, String> {
        let root = folders[0].clone();
        let (catalog, settings, problem) = load(&root)?;
        let mut server = Server {
            root,
            folders,
            catalog,
            settings,
            wrappers: Vec::new(),
            docs: HashMap::new(),
            last: HashMap::new(),
        };
        if let Some(problem) = problem {
            server.log(conn, &problem);
        }
        server.wrappers =
            scan::workspace_wrappers(&server.folders, &server.catalog, &server.settings);
        Ok(server)
    }

    fn main_loop(&mut self, conn: &Connection) -> Result<(), String> {
        let mut dirty: HashSet<Url> = HashSet::new();
        while let Ok(msg) = conn.receiver.recv() {
            if self.handle(conn, msg, &mut dirty)? {
                return Ok(());
            }
            // Coalesce whatever else is already queued before analysing.
            while let Ok(msg) = conn.receiver.try_recv() {
                if self.handle(conn, msg, &mut dirty)? {
                    return Ok(());
                }
            }
            for uri in std::mem::take(&mut dirty) {
                self.publish(conn, &uri);
            }
        }
        Ok(())
    }

    /// Handles one message; `true` once the client has shut the server down.
    fn handle(
        &mut self,
        conn: &Connection,
        msg: Message,
        dirty: &mut HashSet<Url>,
    ) -> Result<bool, String> {
        match msg {
            Message::Request(r) => {
                if conn.handle_shutdown(&r).map_err(|e| e.to_string())? {
                    return Ok(true);
                }
                let resp = self.request(r);
                conn.sender
                    .send(Message::Response(resp))
                    .map_err(|e| e.to_string())?;
            }
            Message::Notification(n) => self.notification(conn, n, dirty),
            Message::Response(_) => {}
        }
        Ok(false)
    }

    fn request(&self, r: Request) -> Response {
        let result = match r.method.as_str() {
            req::HoverRequest::METHOD => serde_json::from_value::<HoverParams>(r.params)
                .map(|p| serde_json::to_value(self.hover(&p)).unwrap_or_default()),
            req::CodeActionRequest::METHOD => serde_json::from_value::<CodeActionParams>(r.params)
                .map(|p| serde_json::to_value(self.actions(&p)).unwrap_or_default()),
            other => {
                return Response::new_err(
                    r.id,
                    lsp_server::ErrorCode::MethodNotFound as i32,
                    format!("lock-audit lsp does not handle {other}"),
                )
            }
        };
        match result {
            Ok(v) => Response::new_ok(r.id, v),
            Err(e) => Response::new_err(
                r.id,
                lsp_server::ErrorCode::InvalidParams as i32,
                e.to_string(),
            ),
        }
    }

    fn notification(&mut self, conn: &Connection, n: Notification, dirty: &mut HashSet<Url>) {
        match n.method.as_str() {
            note::DidOpenTextDocument::METHOD => {
                if let Ok(p) =
                    serde_json::from_value::<lsp_types::DidOpenTextDocumentParams>(n.params)
                {
                    self.docs
                        .insert(p.text_document.uri.clone(), p.text_document.text.into());
                    dirty.insert(p.text_document.uri);
                }
            }
            note::DidChangeTextDocument::METHOD => {
                if let Ok(p) =
                    serde_json::from_value::<lsp_types::DidChangeTextDocumentParams>(n.params)
                {
                    // Full sync: the last change holds the whole text.
                    if let Some(change) = p.content_changes.into_iter().last() {
                        self.docs
                            .insert(p.text_document.uri.clone(), change.text.into());
                        dirty.insert(p.text_document.uri);
                    }
                }
            }
            note::DidSaveTextDocument::METHOD => {
                if let Ok(p) =
                    serde_json::from_value::<lsp_types::DidSaveTextDocumentParams>(n.params)
                {
                    self.saved(conn, &p.text_document.uri, dirty);
                }
            }
            note::DidChangeWatchedFiles::METHOD => {
                if let Ok(p) =
                    serde_json::from_value::<lsp_types::DidChangeWatchedFilesParams>(n.params)
                {
                    for change in p.changes {
                        self.saved(conn, &change.uri, dirty);
                    }
                }
            }
            note::DidCloseTextDocument::METHOD => {
                if let Ok(p) =
                    serde_json::from_value::<lsp_types::DidCloseTextDocumentParams>(n.params)
                {
                    let uri = p.text_document.uri;
                    self.docs.remove(&uri);
                    self.last.remove(&uri);
                    dirty.remove(&uri);
                    send_diagnostics(conn, uri, Vec::new());
                }
            }
            _ => {}
        }
    }

    /// A saved file may change the config, the catalog or a wrapper: reload
    /// what depends on it and re-analyse every open document.
    fn saved(&mut self, conn: &Connection, uri: &Url, dirty: &mut HashSet<Url>) {
        let Ok(path) = uri.to_file_path() else {
            return;
        };
        let is_yaml = path.extension().is_some_and(|e| e == "yaml" || e == "yml")
            || path.file_name().is_some_and(|n| n == "Cargo.toml");
        if is_yaml {
            match load(&self.root) {
                Ok((catalog, settings, None)) => {
                    self.catalog = catalog;
                    self.settings = settings;
                }
                // Keep working with the last good configuration.
                Ok((.., Some(problem))) | Err(problem) => {
                    self.log(conn, &problem);
                    return;
                }
            }
        }
        if is_yaml {
            self.wrappers = scan::workspace_wrappers(&self.folders, &self.catalog, &self.settings);
        } else if let (Some(language), Ok(text)) =
            (lang::detect(&path, b""), std::fs::read_to_string(&path))
        {
            // Only this file's wrappers can have changed.
            let file = SourceFile {
                rel: path.display().to_string(),
                path: path.clone(),
                language,
            };
            let found = scan::analyse_source(
                &file,
                text.into(),
                &self.catalog,
                &self.settings,
                &self.wrappers,
            );
            self.replace_wrappers(&path, found.wrappers);
        }
        dirty.extend(self.docs.keys().cloned());
    }

    fn replace_wrappers(&mut self, path: &Path, defined: Vec<Wrapper>) {
        self.wrappers.retain(|w| w.path != path);
        self.wrappers.extend(defined);
    }

    /// Analyses one open document and publishes its diagnostics.
    fn publish(&mut self, conn: &Connection, uri: &Url) {
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

    /// The audit row of the lock site under the cursor.
    fn hover(&self, p: &HoverParams) -> Option<Hover> {
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

    /// Suppress a finding, or annotate its lock's class, with a comment above the line.
    fn actions(&self, p: &CodeActionParams) -> Vec<CodeActionOrCommand> {
        let uri = &p.text_document.uri;
        let Some(result) = self.last.get(uri) else {
            return Vec::new();
        };
        let lines = Lines::new(&result.text);
        let mark = match result.language {
            Language::Python | Language::Ruby => "#",
            _ => "//",
        };
        // Whole lines: a cursor anywhere on a finding's line offers its actions.
        let from = lines.start(p.range.start.line).unwrap_or(result.text.len());
        let to = lines.offset(Position::new(p.range.end.line + 1, 0));
        let mut out = Vec::new();
        let mut annotated = HashSet::new();
        for f in &result.findings {
            if f.span.end < from || f.span.start >= to {
                continue;
            }
            let insert = |at: usize, comment: String| {
                let line = lines.position(at).line;
                let start = lines.start(line).unwrap_or(at);
                let indent: String = result.text[start..]
                    .chars()
                    .take_while(|c| *c == ' ' || *c == '\t')
                    .collect();
                let edit = TextEdit {
                    range: Range::new(Position::new(line, 0), Position::new(line, 0)),
                    new_text: format!("{indent}{mark} {comment}\n"),
                };
                one_edit(uri, edit)
            };
            out.push(CodeActionOrCommand::CodeAction(CodeAction {
                title: format!("Suppress {} ({}) on this line", f.rule.code, f.rule.name),
                kind: Some(CodeActionKind::QUICKFIX),
                edit: Some(insert(
                    f.span.start,
                    format!("lock-audit: allow({}, reason=\"...\")", f.rule.code),
                )),
                is_preferred: Some(false),
                ..Default::default()
            }));
            let call = &result.text[f.span.start..f.span.end];
            let fix = match f.rule.code {
                "LA101" => fixes::add_ttl(result.language, call)
                    .map(|t| ("Add a 30 s expiry (PX) to the acquisition", t)),
                "LA201" => fixes::owner_checked_release(result.language, call).map(|t| {
                    (
                        "Release with compare-and-delete (set `token` to the owner value)",
                        t,
                    )
                }),
                _ => None,
            };
            if let Some((title, new_text)) = fix {
                let edit = TextEdit {
                    range: lines.range(f.span.start, f.span.end),
                    new_text,
                };
                out.push(CodeActionOrCommand::CodeAction(CodeAction {
                    title: title.to_string(),
                    kind: Some(CodeActionKind::QUICKFIX),
                    edit: Some(one_edit(uri, edit)),
                    // It changes what the code does: the user decides.
                    is_preferred: Some(false),
                    ..Default::default()
                }));
            }
            let site = f.site_span.unwrap_or(f.span);
            if annotated.insert(site.start) {
                for class in ["correctness", "efficiency"] {
                    out.push(CodeActionOrCommand::CodeAction(CodeAction {
                        title: format!("Mark this lock as {class}"),
                        kind: Some(CodeActionKind::REFACTOR),
                        edit: Some(insert(site.start, format!("lock-audit: {class}"))),
                        is_preferred: Some(false),
                        ..Default::default()
                    }));
                }
            }
        }
        out
    }

    fn log(&self, conn: &Connection, message: &str) {
        let params = lsp_types::LogMessageParams {
            typ: lsp_types::MessageType::LOG,
            message: message.to_string(),
        };
        let n = Notification::new(note::LogMessage::METHOD.to_string(), params);
        let _ = conn.sender.send(Message::Notification(n));
    }
}

/// The workspace's catalog and settings; a broken config or rule folder falls
/// back to the defaults and says why.
type Loaded = (Catalog, Settings, Option<String>);

fn load(root: &Path) -> Result<Loaded, String> {
    let (config, mut problem) = match config::find(root) {
        None => (Config::default(), None),
        Some(path) => match config::load(&path) {
            Ok(c) => (c, None),
            Err(e) => (
                Config::default(),
                Some(format!("{:?}", miette::Report::new(*e))),
            ),
        },
    };
    let catalog = match Catalog::load(&config.rules) {
        Ok(c) => c,
        Err(e) => {
            problem = Some(format!("{:?}", miette::Report::new(*e)));
            Catalog::builtin().map_err(|e| format!("{:?}", miette::Report::new(*e)))?
        }
    };
    let rules = config::rule_set(&config.select, &config.ignore);
    let mut settings = config::settings_from(config, false);
    match rules {
        Ok(rules) => settings.rules = rules,
        Err(e) => problem = Some(e),
    }
    Ok((catalog, settings, problem))
}

fn one_edit(uri: &Url, edit: TextEdit) -> WorkspaceEdit {
    WorkspaceEdit {
        changes: Some(HashMap::from([(uri.clone(), vec![edit])])),
        ..Default::default()
    }
}

fn send_diagnostics(conn: &Connection, uri: Url, diagnostics: Vec<Diagnostic>) {
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

/// Byte offsets <-> LSP positions: the lines of [`LineIndex`] (`\n`, `\r\n`
/// and lone `\r`, as LSP counts them), columns in UTF-16 units.
struct Lines<'t> {
    text: &'t str,
    index: LineIndex,
}

impl<'t> Lines<'t> {
    fn new(text: &'t str) -> Self {
        Lines {
            text,
            index: LineIndex::new(text),
        }
    }

    /// The byte offset where 0-based `line` starts.
    fn start(&self, line: u32) -> Option<usize> {
        self.index.line_start(line as usize + 1)
    }

    fn position(&self, offset: usize) -> Position {
        let offset = offset.min(self.text.len());
        let (line, col) = self.index.line_col(offset);
        let start = offset - (col - 1);
        let units = self
            .text
            .get(start..offset)
            .map_or(0, |s| s.encode_utf16().count());
        Position::new(line as u32 - 1, units as u32)
    }

    fn range(&self, start: usize, end: usize) -> Range {
        Range::new(self.position(start), self.position(end))
    }

    fn offset(&self, p: Position) -> usize {
        let Some(start) = self.start(p.line) else {
            return self.text.len();
        };
        let mut units = 0;
        for (i, c) in self.text[start..].char_indices() {
            if units >= p.character as usize || c == '\n' || c == '\r' {
                return start + i;
            }
            units += c.len_utf16();
        }
        self.text.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_count_utf16_units() {
        let lines = Lines::new("ab\n\u{1F512}x = 1\n");
        assert_eq!(lines.position(3 + 4), Position::new(1, 2));
        assert_eq!(lines.offset(Position::new(1, 2)), 7);
        assert_eq!(lines.offset(Position::new(9, 0)), lines.text.len());
        // A lone CR ends a line for LSP clients too.
        let cr = Lines::new("a\rb\r\nc");
        assert_eq!(cr.position(2), Position::new(1, 0));
        assert_eq!(cr.offset(Position::new(2, 0)), 5);
    }
}
