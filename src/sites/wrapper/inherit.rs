//! Wrappers a subclass inherits from a base class in another file.

use std::path::Path;

use super::{class_of, simple_name, Wrapper};
use crate::model::FileModel;

/// The wrappers a file's classes inherit from other files' (`class
/// LockService < BaseLockService` inherits `BaseLockService#call`), unless
/// the class defines the method itself: callers reach them through the
/// subclass (`Customers::LockService.call(..) { }`). Each is placed at the
/// subclass's first method (or line 1).
pub fn inherited(
    model: &FileModel,
    path: &Path,
    wrappers: &[Wrapper],
    line_of: impl Fn(usize) -> usize,
) -> Vec<Wrapper> {
    let mut out = Vec::new();
    for (class, bases) in &model.supers {
        let methods = || {
            model
                .functions
                .iter()
                .filter(|f| class_of(&f.name) == Some(class.as_str()))
        };
        for w in wrappers {
            let base = w
                .class
                .as_deref()
                .is_some_and(|c| bases.iter().any(|b| model.names_class(b, c)));
            if !base
                || w.path == path
                || w.language != model.language.catalog_language()
                || methods().any(|f| simple_name(&f.name) == w.name)
                || out
                    .iter()
                    .any(|o: &Wrapper| o.name == w.name && o.class.as_ref() == Some(class))
            {
                continue;
            }
            out.push(Wrapper {
                path: path.to_path_buf(),
                stem: crate::sites::module_name(path, model.language),
                dir: path.parent().map(Path::to_path_buf).unwrap_or_default(),
                class: Some(class.clone()),
                line: methods().next().map_or(1, |f| line_of(f.span.start)),
                inherited: true,
                ..w.clone()
            });
        }
    }
    out
}
