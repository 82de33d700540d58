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
    // Bare calls after the lock of names that are not `f`'s own parameters:
    // looked at first, so the functions around `f` are listed only for them.
    let mut candidates = (model.calls_in(Some(f.id)))
        .filter(|c| c.receiver.is_none() && c.span.start > site.span.end)
        .filter(|c| !f.params.iter().any(|p| p.name == c.callee))
        .peekable();
    candidates.peek()?;
    let around: Vec<&Function> = (model.functions_around(f.span))
        .filter(|g| g.id != f.id && g.span != f.span)
        .collect();
    let decorated = |name: &str| (around.iter()).any(|g| g.params.iter().any(|p| p.name == name));
    if !candidates.any(|c| decorated(&c.callee)) {
        return None;
    }
    around.into_iter().max_by_key(|g| g.span.end - g.span.start)
}
