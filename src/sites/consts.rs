//! Constants from other files of the scanned tree: `from settings import
//! LOCK_TTL_MS`, `import { LOCK_TTL } from './config'`, `Config.LOCK_TTL`,
//! `use crate::config::LOCK_TTL`, or a Go constant of the same package.
//!
//! Pass 1 records which names a file's lock sites could not resolve (a
//! [`Wanted`] per name); the scan then reads the module-level constants of
//! the files that can define them, and pass 2 re-analyses the asking files
//! with those constants bound as if they were written at the import.
//!
//! Go's package scope goes further: a struct field declared in one file of
//! the package (`store storage.Storage` in worker.go) types the receiver of
//! a lock call in another (`worker.store.Lock()` in api.go), so the declared
//! type of such a receiver is wanted too.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::{resolve, FileAnalysis, Ttl};
use crate::lang::profile::profile;
use crate::model::{Assign, Expr, ExprKind, FileModel, FuncId, Span};

/// A name a file uses but does not define, and where it may come from.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Wanted {
    pub name: String,
    /// The defining module's file stem (`settings`, `config`, `Constants`).
    pub stem: Option<String>,
    /// For Go: the package folder.
    pub dir: Option<PathBuf>,
    /// A qualified name as the asking file writes it (`Config.LOCK_TTL`,
    /// `Scripts::LOCK_SCRIPT_SHA`): bound under that spelling.
    pub written: Option<String>,
    /// A field's declared type, not a constant: met by the files of the
    /// package the scan parses anyway (`ProjectConsts::add_fields`).
    #[serde(default)]
    pub field: bool,
}

/// Constants found in the tree: (file stem or folder, name) → value, and
/// qualified names as written → value.
#[derive(Debug, Default, Clone)]
pub struct ProjectConsts {
    by_stem: HashMap<(String, String), Expr>,
    by_dir: HashMap<(PathBuf, String), Expr>,
    by_written: HashMap<String, Expr>,
    /// Declared types of a Go package's fields and variables: (folder, name)
    /// → the type, or `None` where two declarations of the name disagree.
    types_by_dir: HashMap<(PathBuf, String), Option<String>>,
}

/// A module name compared across spellings: `Scripts` is `scripts.rb`,
/// `OrderConfig` is `order_config.rb`.
pub fn module_key(name: &str) -> String {
    name.chars()
        .filter(|c| *c != '_')
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

impl ProjectConsts {
    pub fn is_empty(&self) -> bool {
        self.by_stem.is_empty() && self.by_dir.is_empty() && self.by_written.is_empty()
    }

    /// Records the module-level constants of `model` (file `path`) that are
    /// wanted. A digest of a script (`LOCK_SCRIPT_SHA = Digest::SHA1.hexdigest(
    /// LOCK_SCRIPT)`) is recorded as the script it digests.
    pub fn collect(&mut self, model: &FileModel, path: &Path, wanted: &[Wanted]) {
        let stem = module_key(&super::module_name(path, model.language));
        for a in model
            .assigns
            .iter()
            .filter(|a| a.func.is_none() && is_constant(&a.value))
        {
            let value = super::script::digested(model, a.value.peel(), None).unwrap_or(&a.value);
            for w in wanted.iter().filter(|w| w.name == a.target) {
                if w.stem.as_deref().is_some_and(|s| module_key(s) == stem) {
                    self.by_stem
                        .insert((stem.clone(), w.name.clone()), value.clone());
                    if let Some(written) = &w.written {
                        self.by_written.insert(written.clone(), value.clone());
                    }
                }
                if !w.field && w.dir.as_deref().is_some_and(|d| Some(d) == path.parent()) {
                    self.by_dir.insert(
                        (w.dir.clone().unwrap_or_default(), w.name.clone()),
                        value.clone(),
                    );
                }
            }
        }
    }

    /// Records the declared types `fields` (of a file in `dir`) that a
    /// field want of that package asks for.
    pub fn add_fields(&mut self, dir: &Path, fields: &[(String, String)], wanted: &[&Wanted]) {
        for (name, ty) in fields {
            if wanted
                .iter()
                .any(|w| w.field && &w.name == name && w.dir.as_deref() == Some(dir))
            {
                self.add_type((dir.to_path_buf(), name.clone()), Some(ty.clone()));
            }
        }
    }

    /// Records a declared type; two that disagree leave the name untyped.
    fn add_type(&mut self, key: (PathBuf, String), ty: Option<String>) {
        let entry = self.types_by_dir.entry(key).or_insert_with(|| ty.clone());
        if *entry != ty {
            *entry = None;
        }
    }

    /// Was a value found for `w`? (Otherwise re-analysing its file changes nothing.)
    pub fn provides(&self, w: &Wanted) -> bool {
        let by_stem = w
            .stem
            .as_ref()
            .is_some_and(|s| self.by_stem.contains_key(&(module_key(s), w.name.clone())));
        let by_dir = w.dir.as_ref().is_some_and(|d| {
            let key = (d.clone(), w.name.clone());
            self.by_dir.contains_key(&key)
                || self.types_by_dir.get(&key).is_some_and(Option::is_some)
        });
        by_stem || by_dir
    }

    /// The constants in a stable order, serialised: part of the cache key of
    /// the files that import them (`None` if a value cannot be serialised).
    pub fn fingerprint(&self) -> Option<Vec<u8>> {
        let mut stems: Vec<_> = self.by_stem.iter().collect();
        stems.sort_by(|a, b| a.0.cmp(b.0));
        let mut dirs: Vec<_> = self.by_dir.iter().collect();
        dirs.sort_by(|a, b| a.0.cmp(b.0));
        let mut written: Vec<_> = self.by_written.iter().collect();
        written.sort_by(|a, b| a.0.cmp(b.0));
        let mut types: Vec<_> = self.types_by_dir.iter().collect();
        types.sort();
        serde_json::to_vec(&(stems, dirs, written, types)).ok()
    }

    /// Adds `other`'s constants; `other` wins where both define one.
    pub fn extend(&mut self, other: ProjectConsts) {
        self.by_stem.extend(other.by_stem);
        self.by_dir.extend(other.by_dir);
        self.by_written.extend(other.by_written);
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
                .unwrap_or("");
            if let Some(v) = self.by_stem.get(&(module_key(stem), name.to_string())) {
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
                let declared = |name: &str| {
                    (model.assigns.iter()).any(|a| a.target == name && a.func.is_none())
                };
                for ((d, name), ty) in &self.types_by_dir {
                    if let (true, Some(ty), false) = (d == dir, ty, declared(name)) {
                        extra.push(Assign {
                            target: name.clone(),
                            ty: Some(ty.clone()),
                            value: Expr::other("", Span::default()),
                            span: Span::default(),
                            func: None,
                        });
                    }
                }
            }
        }
        // `Config.LOCK_TTL` / `settings.LOCK_TTL` / `Scripts::LOCK_SCRIPT_SHA`:
        // bound under the qualified name as the asking files write it.
        // Where the module is imported, or a class's constants need no import.
        for (written, v) in &self.by_written {
            let (qualifier, _) = split_path(written);
            let stem = module_key(qualifier.rsplit(['.', ':']).next().unwrap_or(qualifier));
            let qualified = profile(model.language).qualified_constants
                || model
                    .imports
                    .iter()
                    .any(|i| module_key(&i.path).ends_with(&stem));
            if qualified {
                extra.push(binding(written.clone(), v, Span::default()));
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

/// The names this file's lock sites use but cannot resolve here, and the
/// names of the scripts it sends but cannot read (which may be another file's
/// locks: `EVALSHA` of `Scripts::LOCK_SCRIPT_SHA`).
pub fn wanted(fa: &FileAnalysis, path: &Path) -> Vec<Wanted> {
    let model = fa.model;
    let mut used: Vec<(&Expr, Option<FuncId>)> = Vec::new();
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
            used.push((resolve::resolve(model, e, site.func), site.func));
        }
    }
    let scripts = super::script::unread_scripts(model, fa.catalog);
    used.extend(scripts.iter().map(|(e, func)| (e, *func)));
    let mut out: Vec<Wanted> = Vec::new();
    for (e, func) in used {
        let mut names = Vec::new();
        collect_names(e, &mut names);
        let params = func.map_or(&[][..], |f| &model.functions[f].params[..]);
        for n in names {
            // A local or a parameter is not another file's constant.
            if model.lookup(&n, func, usize::MAX).is_some() || params.iter().any(|p| p.name == n) {
                continue;
            }
            let w = source_of(model, path, &n);
            if let Some(w) = w.filter(|w| !out.contains(w)) {
                out.push(w);
            }
        }
    }
    if let (true, Some(dir)) = (profile(model.language).package_scope, path.parent()) {
        for name in untyped_receivers(fa) {
            let w = Wanted {
                name: name.to_string(),
                stem: None,
                dir: Some(dir.to_path_buf()),
                written: None,
                field: true,
            };
            if !out.contains(&w) {
                out.push(w);
            }
        }
    }
    out
}

/// The typed package-level declarations `model` writes itself (Go struct
/// fields and variables; not those [`ProjectConsts::bind`] brought in), for
/// the other files of its package.
pub fn package_fields(model: &FileModel) -> Vec<(String, String)> {
    if !profile(model.language).package_scope {
        return Vec::new();
    }
    (model.assigns.iter())
        .filter(|a| a.func.is_none() && a.span != Span::default())
        .filter_map(|a| Some((a.target.clone(), a.ty.clone()?)))
        .collect()
}

/// The fields this file does not declare that receive a call named for a
/// lock (`worker.store.Lock()`, `store` declared in another file of the Go
/// package): their declared type may make the call a wrapper's.
fn untyped_receivers<'m>(fa: &FileAnalysis<'m>) -> Vec<&'m str> {
    let model = fa.model;
    let declared: std::collections::HashSet<&str> = (model.assigns.iter())
        .filter(|a| a.func.is_none())
        .map(|a| a.target.as_str())
        .collect();
    let mut out: Vec<&str> = model
        .calls
        .iter()
        .filter(|c| super::lock_words(fa.catalog, &[&c.name]).is_some())
        .filter_map(|c| {
            let (_, field) = c.receiver.as_deref()?.text.rsplit_once('.')?;
            let ident =
                !field.is_empty() && field.chars().all(|ch| ch.is_alphanumeric() || ch == '_');
            (ident && !declared.contains(field)).then_some(field)
        })
        .collect();
    out.sort_unstable();
    out.dedup();
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
    if let Some(i) = name.rfind(['.', ':']) {
        let (qualifier, member) = (name[..i].trim_end_matches(':'), &name[i + 1..]);
        let stem = qualifier.rsplit(['.', ':']).next().unwrap_or(qualifier);
        return (!stem.is_empty()).then(|| Wanted {
            name: member.to_string(),
            stem: Some(stem.to_string()),
            dir: None,
            written: Some(name.to_string()),
            field: false,
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
                written: None,
                field: false,
            })
        }
        None if profile(model.language).package_scope => Some(Wanted {
            name: name.to_string(),
            stem: None,
            dir: path.parent().map(Path::to_path_buf),
            written: None,
            field: false,
        }),
        None => None,
    }
}
