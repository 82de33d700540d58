//! Lock classes: a constructor that returns with its lock held hands it to
//! the object it builds, so building the class takes the lock.

use super::{class_of, simple_name};
use crate::lang::profile::profile;
use crate::model::{Call, Function, Language};
use crate::sites::{resolve, FileAnalysis};

/// Does another method of `f`'s class release a lock without taking one
/// (`release_resources`, `unlock`)? A lock class then holds what its
/// constructor took until that method runs; a constructor that only seeds a
/// value (`SETNX key start`) leaves nothing for any method to release.
pub(super) fn released_by_another_method(fa: &FileAnalysis, f: &Function) -> bool {
    let class = class_of(&f.name);
    let model = fa.model;
    model
        .functions
        .iter()
        .filter(|g| g.id != f.id && class_of(&g.name) == class)
        .filter(|g| !fa.sites.iter().any(|s| s.func == Some(g.id)))
        .any(|g| {
            fa.releases.iter().any(|r| g.span.contains(r.span))
                || model
                    .calls_in(Some(g.id))
                    .any(|c| resolve::gives_back(&c.name))
        })
}

/// Does `call` pass on its function's arguments as they came (`*args`,
/// `**kwargs`, `...args`)?
pub(super) fn forwards_arguments(call: &Call) -> bool {
    call.args
        .iter()
        .any(|a| a.value.text.starts_with('*') || a.value.text.starts_with("..."))
}

/// The name callers build `f`'s class by, when `f` is its constructor: the
/// class's own (`TaskManager(..)`, `new Lease(..)`), or the language's
/// builder method (Ruby's `Lease.new(..)`).
pub(super) fn constructed_as(language: Language, f: &Function) -> Option<String> {
    let class = class_of(&f.name)?;
    let own = simple_name(&f.name);
    let p = profile(language);
    (p.constructors.contains(&own) || (p.class_named_constructor && own == class))
        .then(|| p.builder.unwrap_or(class).to_string())
}
