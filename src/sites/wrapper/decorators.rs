//! Decorator factories: `def exclusive(lock)` returning a decorator whose
//! inner function takes the lock and runs the decorated function under it.
//! `@exclusive(CLEANUP_LOCK)` above a method is then a call of the factory
//! that puts that method under the lock.

use crate::model::{FileModel, Function};
use crate::sites::LockSite;

/// The factory `f`'s lock `site` decorates with: when `f` is nested and,
/// after taking the lock, calls a parameter of a function around it (the
/// decorated function, `f(self, *args)`), the outermost function around `f`.
pub(super) fn factory<'m>(
    model: &'m FileModel,
    f: &Function,
    site: &LockSite,
) -> Option<&'m Function> {
    let around: Vec<&Function> = (model.functions.iter())
        .filter(|g| g.id != f.id && g.span.contains(f.span) && g.span != f.span)
        .collect();
    let decorated = |name: &str| {
        !f.params.iter().any(|p| p.name == name)
            && around
                .iter()
                .any(|g| g.params.iter().any(|p| p.name == name))
    };
    let runs_decorated = model
        .calls_in(Some(f.id))
        .any(|c| c.receiver.is_none() && c.span.start > site.span.end && decorated(&c.callee));
    if !runs_decorated {
        return None;
    }
    around.into_iter().max_by_key(|g| g.span.end - g.span.start)
}
