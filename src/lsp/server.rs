//! The server: its state, the message loop and the dispatch of requests and
//! notifications to the other modules.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;

use lsp_server::{Connection, Message, Notification, Request, Response};
use lsp_types::notification::{self as note, Notification as _};
use lsp_types::request::{self as req, Request as _};
use lsp_types::{
    CodeActionParams, HoverParams, InitializeParams, ServerCapabilities,
    TextDocumentSyncCapability, TextDocumentSyncKind, TextDocumentSyncOptions,
    TextDocumentSyncSaveOptions, Url,
};

use super::diagnostics::send_diagnostics;
use super::workspace::{load, workspace_folders};
use crate::catalog::Catalog;
use crate::config::Settings;
use crate::outcome::FileResult;
use crate::scan;
use crate::sites::wrapper::Wrapper;

/// What the server knows about the workspace and the open documents.
pub(super) struct Server {
    /// The first workspace folder: its `lock-audit.yaml` configures the server.
    pub(super) root: PathBuf,
    /// Every workspace folder: wrappers are collected from all of them.
    pub(super) folders: Vec<PathBuf>,
    pub(super) catalog: Catalog,
    pub(super) settings: Settings,
    pub(super) wrappers: Vec<Wrapper>,
    pub(super) docs: HashMap<Url, Arc<str>>,
    /// The last analysis that parsed, per document: diagnostics, hover and actions use it.
    pub(super) last: HashMap<Url, FileResult>,
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

    pub(super) fn log(&self, conn: &Connection, message: &str) {
        let params = lsp_types::LogMessageParams {
            typ: lsp_types::MessageType::LOG,
            message: message.to_string(),
        };
        let n = Notification::new(note::LogMessage::METHOD.to_string(), params);
        let _ = conn.sender.send(Message::Notification(n));
    }
}
