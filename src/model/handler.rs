//! Exception handlers: which code a `rescue` / `except` / `catch` clause
//! covers and what it catches. A unique-index insert inside `rescue
//! ActiveRecord::RecordNotUnique` is a claim the database decides.

use super::{mentions, Call, FileModel, Span};

/// One handler clause: the code before it in its `begin` / `try` (the
/// statements it covers) and its head as written (`rescue
/// ActiveRecord::RecordNotUnique => e`, `except (IntegrityError, X):`,
/// `catch (DuplicateKeyException e)`).
#[derive(Debug, Clone, PartialEq)]
pub struct Handler {
    pub covers: Span,
    pub head: String,
    /// The clause itself, head and body.
    pub span: Span,
}

impl FileModel {
    /// The handlers that catch one of `errors` (matched as whole names:
    /// `RecordNotUnique` in `ActiveRecord::RecordNotUnique`).
    pub fn caught<'m>(&'m self, errors: &'m [String]) -> impl Iterator<Item = &'m Handler> + 'm {
        self.handlers
            .iter()
            .filter(|h| errors.iter().any(|e| mentions(&h.head, e)))
    }

    /// Does `call` run only when something failed: in an error handler's
    /// body (`except`, `catch`, `rescue`) or in a promise's `.catch(..)`
    /// callback?
    pub fn on_failure(&self, call: &Call) -> bool {
        let handled = |h: &Handler| h.span.contains(call.span) && !h.covers.contains(call.span);
        self.handlers.iter().any(handled)
            || self.calls_in(call.func).any(|c| {
                c.name == "catch" && c.args.iter().any(|a| a.value.span.contains(call.span))
            })
    }
}
