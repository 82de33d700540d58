//! lock-audit: a linter and static analyzer for distributed locks.
//!
//! The data flow, one module per stage:
//! `discover` → `prefilter` → `lang` (parse + lower into `model`) → `sites`
//! (catalog matches → lock sites) → `checks` → `report`. [`check`] runs it all
//! and is what the CLI, the tests and the benchmark call.

pub mod baseline;
pub mod cache;
pub mod catalog;
pub mod checks;
pub mod cli;
pub mod config;
pub mod digest;
pub mod discover;
pub mod error;
pub mod lang;
pub mod lines;
pub mod lsp;
pub mod manifest;
pub mod model;
pub mod outcome;
pub mod prefilter;
pub mod report;
pub mod scan;
pub mod sites;
pub mod suppress;

pub use config::Settings;
pub use outcome::{FileResult, Notice, NoticeKind, Report, SiteInfo, Summary};
pub use scan::check;
