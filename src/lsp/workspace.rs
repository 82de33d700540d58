//! The workspace: its folders, its config and catalog, and the wrappers its
//! files define, reloaded when a file they come from is saved.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use lsp_server::Connection;
use lsp_types::{InitializeParams, Url};

use super::server::Server;
use crate::catalog::Catalog;
use crate::config::{self, Config, Settings};
use crate::discover::SourceFile;
use crate::sites::wrapper::Wrapper;
use crate::{lang, scan};

#[allow(deprecated)] // `root_uri`: older clients send only that.
pub(super) fn workspace_folders(params: &InitializeParams) -> Vec<PathBuf> {
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
    /// A saved file may change the config, the catalog or a wrapper: reload
    /// what depends on it and re-analyse every open document.
    pub(super) fn saved(&mut self, conn: &Connection, uri: &Url, dirty: &mut HashSet<Url>) {
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

    pub(super) fn replace_wrappers(&mut self, path: &Path, defined: Vec<Wrapper>) {
        self.wrappers.retain(|w| w.path != path);
        self.wrappers.extend(defined);
    }
}

/// The workspace's catalog and settings; a broken config or rule folder falls
/// back to the defaults and says why.
type Loaded = (Catalog, Settings, Option<String>);

pub(super) fn load(root: &Path) -> Result<Loaded, String> {
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
    let config_path = config.path.clone();
    let mut settings = config::settings_from(config, false);
    settings.paths.root = crate::discover::project_root(config_path.as_deref(), root);
    match rules {
        Ok(rules) => settings.rules = rules,
        Err(e) => problem = Some(e),
    }
    Ok((catalog, settings, problem))
}
