//! `lock-audit lsp`: a language server over stdio.
//!
//! Diagnostics come from the editor's in-memory text, analysed like a file of
//! the workspace (its config, catalog folders and in-house wrappers). Changes
//! that arrive together are coalesced: the queue is drained before anything is
//! analysed, so a burst of keystrokes costs one analysis per document.
//! Text that does not parse keeps its last diagnostics; the reason is logged.
mod actions;
mod diagnostics;
mod hover;
mod positions;
mod server;
mod workspace;

pub use server::run;
