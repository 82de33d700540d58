//! Functions whose bodies write, for the critical sections of other files
//! that call them: `with self.get_lock_attr('interfaces'):
//! self._db_set_attribute(..)` writes to etcd in a base class two files away.
//!
//! Each analysed file summarises its functions' strongest catalogued effect
//! ([`summarize`]); the scan collects the summaries of the project and
//! re-classifies the files whose undecided sites call one ([`Writers`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::effects::{self, Effect};
use super::{resolve, section, FileAnalysis, LockSite};
use crate::catalog::raw::{ClassName, EffectKind};
use crate::model::{Call, FileModel, FuncId, Language};

/// A function of the project whose body makes a classifying effect.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Writer {
    /// The function's own name (`_db_set_attribute`).
    pub name: String,
    /// Its class, if it is a method (`DatabaseBackedObject`).
    pub owner: Option<String>,
    pub path: PathBuf,
    /// Its language (JavaScript as TypeScript): only calls in that language reach it.
    pub language: Language,
    /// The line of the effect in `path`.
    pub line: usize,
    pub kind: EffectKind,
    /// The class the write is evidence of; none for a write that says
    /// nothing of its purpose (a record's `update({..})`, an HTTP POST).
    pub class: Option<ClassName>,
    pub weight: i32,
    pub write: bool,
    /// How the write protects itself (a conditional write in the callee).
    pub protection: Option<effects::Protection>,
    /// The effect's call (`etcd.put`).
    pub text: String,
    pub remedy: Option<String>,
}

/// The name and class of function `f`: `Instance.place` -> (`place`, `Instance`).
pub fn split_name(model: &FileModel, f: FuncId) -> (&str, Option<&str>) {
    let name = model.functions[f].name.as_str();
    match name.rsplit_once(['.', ':']) {
        // Rust's `Type::method`: the owner is `Type`, not the empty text between the colons.
        Some((owner, own)) => {
            let owner = owner.trim_end_matches(':');
            (own, Some(owner.rsplit(['.', ':']).next().unwrap_or(owner)))
        }
        None => (name, None),
    }
}

/// The class of the function `func` is, if it is a method.
pub fn owner_of(model: &FileModel, func: Option<FuncId>) -> Option<&str> {
    func.and_then(|f| split_name(model, f).1)
}

/// The writers `fa`'s file defines: each named function with its strongest
/// classifying write (its body and, one level, same-file functions it calls
/// on the object itself). Each body is looked at once: linear in the file.
pub fn summarize(fa: &FileAnalysis, path: &Path, line_of: impl Fn(usize) -> usize) -> Vec<Writer> {
    let model = fa.model;
    let direct: Vec<Option<Effect>> = model
        .functions
        .iter()
        .map(|f| {
            effects::strongest_write(
                model
                    .calls_in(Some(f.id))
                    .filter_map(|c| effects::effect_of(fa, c, (c.span, None), &[])),
            )
        })
        .collect();
    let mut out = Vec::new();
    for f in &model.functions {
        let (name, owner) = split_name(model, f.id);
        if name.starts_with('<') {
            continue;
        }
        let called = model
            .calls_in(Some(f.id))
            .filter(|c| section::on_own_object(model, c))
            .filter_map(|c| model.function_named(&c.name))
            .filter(|g| g.id != f.id)
            .filter_map(|g| direct[g.id].clone());
        let Some(e) = effects::strongest_write(direct[f.id].clone().into_iter().chain(called))
        else {
            continue;
        };
        out.push(Writer {
            name: name.to_string(),
            owner: owner.map(str::to_string),
            path: path.to_path_buf(),
            language: model.language.catalog_language(),
            line: line_of(e.span.start),
            kind: e.kind,
            class: e.class,
            weight: e.weight,
            write: e.write,
            protection: e.protection,
            text: e.text,
            remedy: e.remedy,
        });
    }
    out
}

/// The names `site`'s section calls that this file does not define: where
/// a writer of another file may be reached.
pub fn outside_calls(model: &FileModel, site: &LockSite) -> Vec<String> {
    let mut names: Vec<String> = section::section_calls(model, site)
        .into_iter()
        .map(|(c, _)| c.name.clone())
        .filter(|n| model.function_named(n).is_none())
        .collect();
    names.sort();
    names.dedup();
    names
}

/// The project's writers by name, for one file's sections.
pub struct Writers<'a> {
    by_name: HashMap<&'a str, Vec<&'a Writer>>,
}

impl<'a> Writers<'a> {
    pub fn new(all: &'a [Writer]) -> Self {
        let mut by_name: HashMap<&str, Vec<&Writer>> = HashMap::new();
        for w in all {
            by_name.entry(w.name.as_str()).or_default().push(w);
        }
        Writers { by_name }
    }

    /// The writer `call` (in a section of function `func`) runs, if one is
    /// certain: a method of the calling class or one of its bases (`self.`,
    /// `this.`, a bare call), or a function defined once in the project
    /// under a name of two words or more (`store.createExecutionSnapshot(..)`);
    /// never one of this file's own functions (those are followed in place).
    pub fn reached(
        &self,
        model: &FileModel,
        call: &Call,
        func: Option<FuncId>,
    ) -> Option<&'a Writer> {
        let language = model.language.catalog_language();
        let candidates: Vec<&'a Writer> = (self.by_name.get(call.name.as_str())?.iter())
            .filter(|w| w.language == language)
            .copied()
            .collect();
        if model.function_named(&call.name).is_some() {
            return None;
        }
        let receiver = call.receiver.as_deref();
        if receiver.is_none_or(|r| resolve::is_self(model, func, &r.text)) {
            // A method of the calling class or one of its bases (Ruby and
            // Java call their own methods bare).
            let class = owner_of(model, func);
            let bases = class.map(|c| ancestors(model, c)).unwrap_or_default();
            let inherited = candidates.iter().find(|w| {
                w.owner
                    .as_deref()
                    .is_some_and(|o| bases.iter().any(|b| b == o))
            });
            // With no base declared, `self.m()` is a method no file of the
            // project defines for this class; with one, a base's base may.
            if inherited.is_some() || (receiver.is_some() && bases.len() <= 1) {
                return inherited.copied();
            }
        }
        if resolve::words(&call.name).len() < 2 {
            return None;
        }
        // Defined in several classes: the one the receiver is named for
        // (`this.executionSnapshotSystem.createExecutionSnapshot(..)`).
        let named_for = |w: &&Writer| {
            let last = receiver.map(|r| r.text.rsplit(['.', ':']).next().unwrap_or(&r.text));
            (w.owner.as_deref().zip(last))
                .is_some_and(|(o, r)| super::wrapper::related(r, o) == Some(2))
        };
        let one_of = |ws: &[&'a Writer]| {
            let first = *ws.first()?;
            ws.iter()
                .all(|w| w.path == first.path && w.owner == first.owner)
                .then_some(first)
        };
        let named: Vec<&Writer> = candidates.iter().copied().filter(named_for).collect();
        let first = one_of(&candidates).or_else(|| one_of(&named))?;
        // A bare call reaches another file's function only through an import
        // of it from that file's module (`from jobs.render import render_tiles`).
        let reachable = receiver.is_some() || {
            let module = super::module_name(&first.path, model.language);
            super::effect_calls::import_of(model, call)
                .is_some_and(|i| i.path.split(['.', ':', '/']).any(|part| part == module))
        };
        reachable.then_some(first)
    }
}

/// `class` and the bases this file declares for it, transitively, each also
/// by the name it is imported under.
fn ancestors(model: &FileModel, class: &str) -> Vec<String> {
    let mut out = vec![class.to_string()];
    let mut i = 0;
    while i < out.len() && out.len() < 16 {
        for base in model.supers.get(&out[i]).into_iter().flatten() {
            // `from shakenfist.baseobject import DatabaseBackedObject as dbo`.
            let imported = model.unaliased(base);
            for name in std::iter::once(base.as_str()).chain(imported) {
                if !out.iter().any(|o| o == name) {
                    out.push(name.to_string());
                }
            }
        }
        i += 1;
    }
    out
}

/// The effect a section's `call` has through `writer` (the write happens in
/// another file; the grant's token reaching the call's arguments fences it).
pub fn effect_through(writer: &Writer, call: &Call, fenced: bool) -> Effect {
    Effect {
        kind: writer.kind,
        span: call.span,
        reached: call.span,
        write: writer.write,
        class: writer.class,
        weight: writer.weight,
        protection: if fenced {
            Some(effects::Protection::Fencing)
        } else {
            writer.protection
        },
        text: format!(
            "{} -> {} at {}:{}",
            call.callee,
            writer.text,
            writer.path.display(),
            writer.line
        ),
        remedy: writer.remedy.clone(),
    }
}

/// The modules a file's functions reach beyond itself, as [`module_key`]s:
/// every segment of what it imports (`shakenfist.baseobject`,
/// `./executionSnapshotSystem`), its classes' bases (a Java class lives in
/// the file of its name) and its own module (Go's package, Python's siblings).
pub fn neighbours(model: &FileModel, path: &Path) -> Vec<String> {
    let imported = model
        .imports
        .iter()
        .flat_map(|i| i.path.split(['.', ':', '/', '\\']));
    let bases = model.supers.values().flatten().map(String::as_str);
    let own = super::module_name(path, model.language);
    let mut out: Vec<String> = imported
        .chain(bases)
        .chain([own.as_str()])
        .filter(|s| !s.is_empty())
        .map(module_key)
        .collect();
    out.sort();
    out.dedup();
    out
}

/// A module name as files and imports spell it alike:
/// `execution_snapshot_system`, `executionSnapshotSystem` -> `executionsnapshotsystem`.
pub fn module_key(name: &str) -> String {
    name.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::split_name;
    use crate::lang::{detect, lower};

    /// A Rust method's owner is its type: two types' methods do not share an
    /// empty owner (which made greptimedb's `Arc::new(..)` in an election reach
    /// `MetasrvInstance::new`'s write as an inherited method).
    #[test]
    fn a_rust_methods_owner_is_its_type() {
        let rust = detect(std::path::Path::new("election.rs"), b"").expect("a Rust path");
        let model = lower(
            rust,
            "impl EtcdElection { fn campaign(&self) {} }\nfn free() {}\n",
            false,
        )
        .expect("parses");
        let names: Vec<_> = (0..model.functions.len())
            .map(|f| split_name(&model, f))
            .collect();
        assert!(
            names.contains(&("campaign", Some("EtcdElection"))),
            "{names:?}"
        );
        assert!(names.contains(&("free", None)), "{names:?}");
    }
}
