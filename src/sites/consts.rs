//! Constants from other files of the scanned tree: `from settings import
//! LOCK_TTL_MS`, `import { LOCK_TTL } from './config'`, `Config.LOCK_TTL`,
//! `use crate::config::LOCK_TTL`, or a Go constant of the same package.
//!
//! Pass 1 records which names a file's lock sites could not resolve (a
//! [`Wanted`] per name); the scan then reads the module-level constants of
//! the files that can define them, and pass 2 re-analyses the asking files
//! with those constants bound as if they were written at the import.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::{resolve, FileAnalysis, Ttl};
use crate::lang::profile::profile;
use crate::model::{Assign, Expr, ExprKind, FileModel, Span};

/// A name a file uses but does not define, and where it may come from.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Wanted {
    pub name: String,
    /// The defining module's file stem (`settings`, `config`, `Constants`).
    pub stem: Option<String>,
    /// For Go: the package folder.
    pub dir: Option<PathBuf>,
}

/// Constants found in the tree: (file stem or folder, name) → value.
#[derive(Debug, Default, Clone)]
pub struct ProjectConsts {
    by_stem: HashMap<(String, String), Expr>,
    by_dir: HashMap<(PathBuf, String), Expr>,
}

impl ProjectConsts {
    pub fn is_empty(&self) -> bool {
        self.by_stem.is_empty() && self.by_dir.is_empty()
    }

    /// Records the module-level constants of `model` (file `path`) that are wanted.
    pub fn collect(&mut self, model: &FileModel, path: &Path, wanted: &[Wanted]) {
        let stem = super::module_name(path, model.language);
        for a in model
            .assigns
            .iter()
            .filter(|a| a.func.is_none() && is_constant(&a.value))
        {
            for w in wanted.iter().filter(|w| w.name == a.target) {
                if w.stem
                    .as_deref()
                    .is_some_and(|s| s.eq_ignore_ascii_case(&stem))
                {
                    self.by_stem
                        .insert((stem.to_ascii_lowercase(), w.name.clone()), a.value.clone());
                }
                if w.dir.as_deref().is_some_and(|d| Some(d) == path.parent()) {
                    self.by_dir.insert(
                        (w.dir.clone().unwrap_or_default(), w.name.clone()),
                        a.value.clone(),
                    );
                }
            }
        }
    }

    /// Was a value found for `w`? (Otherwise re-analysing its file changes nothing.)
    pub fn provides(&self, w: &Wanted) -> bool {
        let by_stem = w.stem.as_ref().is_some_and(|s| {
            self.by_stem
                .contains_key(&(s.to_ascii_lowercase(), w.name.clone()))
        });
        let by_dir = w
            .dir
            .as_ref()
            .is_some_and(|d| self.by_dir.contains_key(&(d.clone(), w.name.clone())));
        by_stem || by_dir
    }

    /// The constants in a stable order, serialised: part of the cache key of
    /// the files that import them (`None` if a value cannot be serialised).
    pub fn fingerprint(&self) -> Option<Vec<u8>> {
        let mut stems: Vec<_> = self.by_stem.iter().collect();
        stems.sort_by(|a, b| a.0.cmp(b.0));
        let mut dirs: Vec<_> = self.by_dir.iter().collect();
        dirs.sort_by(|a, b| a.0.cmp(b.0));
        serde_json::to_vec(&(stems, dirs)).ok()
    }

    /// Adds `other`'s constants; `other` wins where both define one.
    pub fn extend(&mut self, other: ProjectConsts) {
        self.by_stem.extend(other.by_stem);
        self.by_dir.extend(other.by_dir);
    }

    /// Binds the constants `model` imports (file `path`) as module-level
    /// assignments at the import, so the usual resolution finds them.
    pub fn bind(&self, model: &mut FileModel, path: &Path) {
        let mut extra = Vec::new();
        for i in &model.imports {
            let (module, name) = split_path(&i.path);
            let local = i.alias.clone().unwrap_or_else(|| name.to_string());
            let stem = module
                .rsplit(['.', '/', ':'])
                .find(|s| !s.is_empty())
                .unwrap_or("")
                .to_ascii_lowercase();
            if let Some(v) = self.by_stem.get(&(stem, name.to_string())) {
                extra.push(binding(local, v, i.span));
            }
        }
        if profile(model.language).package_scope {
            if let Some(dir) = path.parent() {
                for ((d, name), v) in &self.by_dir {
                    if d == dir
                        && !model
                            .assigns
                            .iter()
                            .any(|a| &a.target == name && a.func.is_none())
                    {
                        extra.push(binding(name.clone(), v, Span::default()));
                    }
                }
            }
        }
        // `Config.LOCK_TTL` / `settings.LOCK_TTL`: bound under the qualified name.
        for ((stem, name), v) in &self.by_stem {
            let qualified = model
                .imports
                .iter()
                .any(|i| i.path.to_ascii_lowercase().ends_with(stem.as_str()))
                || profile(model.language).qualified_constants;
            if qualified {
                extra.push(binding(format!("{stem}.{name}"), v, Span::default()));
            }
        }
        model.assigns.extend(extra);
        model.assigns_by_name = Default::default();
        model.by_function = Default::default();
    }
}

fn binding(target: String, value: &Expr, span: Span) -> Assign {
    // The value's spans and call ids belong to the other file's model: pin it
    // to the import and keep its calls as text.
    let value = value.without_calls(span);
    Assign {
        target,
        ty: None,
        value,
        span,
        func: None,
    }
}

/// `settings.LOCK_TTL` → (`settings`, `LOCK_TTL`); `crate::config::TTL` → (`crate::config`, `TTL`).
fn split_path(path: &str) -> (&str, &str) {
    match path.rfind(['.', ':']) {
        Some(i) => (path[..i].trim_end_matches(':'), &path[i + 1..]),
        None => ("", path),
    }
}

/// Literal values and arithmetic / duration expressions over them.
fn is_constant(e: &Expr) -> bool {
    match &e.peel().kind {
        ExprKind::Str(_)
        | ExprKind::Int(_)
        | ExprKind::Float(_)
        | ExprKind::Bool(_)
        | ExprKind::Null => true,
        ExprKind::Binary { lhs, rhs, .. } => is_constant(lhs) || is_constant(rhs),
        ExprKind::Call(_) => e.text.len() < 80,
        ExprKind::Name(n) => n.contains('.'),
        _ => false,
    }
}

/// The names this file's lock sites use but cannot resolve here.
pub fn wanted(fa: &FileAnalysis, path: &Path) -> Vec<Wanted> {
    let model = fa.model;
    let mut out: Vec<Wanted> = Vec::new();
    for site in &fa.sites {
        let ttl = match &site.ttl {
            Ttl::Given(Some(e)) => Some(e),
            _ => None,
        };
        for e in ttl
            .into_iter()
            .chain(site.key.as_ref())
            .chain(site.owner.as_ref())
        {
            let mut names = Vec::new();
            collect_names(resolve::resolve(model, e, site.func), &mut names);
            let params = site
                .func
                .map_or(&[][..], |f| &model.functions[f].params[..]);
            for n in names {
                // A local or a parameter is not another file's constant.
                if model.lookup(&n, site.func, usize::MAX).is_some()
                    || params.iter().any(|p| p.name == n)
                {
                    continue;
                }
                let w = source_of(model, path, &n);
                if let Some(w) = w.filter(|w| !out.contains(w)) {
                    out.push(w);
                }
            }
        }
    }
    out
}

/// Plain and qualified names inside an expression (through arithmetic).
fn collect_names(e: &Expr, out: &mut Vec<String>) {
    match &e.peel().kind {
        ExprKind::Name(n) => out.push(n.clone()),
        ExprKind::Binary { lhs, rhs, .. } => {
            collect_names(lhs, out);
            collect_names(rhs, out);
        }
        _ => {}
    }
}

/// Where an unresolved name may be defined.
fn source_of(model: &FileModel, path: &Path, name: &str) -> Option<Wanted> {
    if let Some((qualifier, member)) = name.rsplit_once('.') {
        let stem = qualifier
            .rsplit(['.', ':'])
            .next()
            .unwrap_or(qualifier)
            .to_string();
        return Some(Wanted {
            name: member.to_string(),
            stem: Some(stem),
            dir: None,
        });
    }
    let import = model
        .imports
        .iter()
        .find(|i| i.alias.as_deref() == Some(name) || split_path(&i.path).1 == name);
    match import {
        Some(i) => {
            let (module, _) = split_path(&i.path);
            let stem = module
                .rsplit(['.', '/', ':'])
                .find(|s| !s.is_empty())?
                .to_string();
            Some(Wanted {
                name: name.to_string(),
                stem: Some(stem),
                dir: None,
            })
        }
        None if profile(model.language).package_scope => Some(Wanted {
            name: name.to_string(),
            stem: None,
            dir: path.parent().map(Path::to_path_buf),
        }),
        None => None,
    }
}
