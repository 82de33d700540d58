//! Loop statements, and what a later turn of one can reach.

use super::{FileModel, FuncId, GuardKind, Span};

/// A loop statement. `repeats` when it runs until something in it says
/// stop (`while`, `loop`, Go's `for {}` / `for cond {}`), not once per item
/// of a collection or a counted range (`for x in xs`, `for (i = 0; ..)`).
/// `head`: its text before the body (`while (!acquired && !stopped)`),
/// which starts at `body`.
#[derive(Debug, Clone, PartialEq)]
pub struct Loop {
    pub span: Span,
    pub head: String,
    pub body: usize,
    pub func: Option<FuncId>,
    pub repeats: bool,
}

impl FileModel {
    /// Can `later`, written after `span` in a loop that starts at or after
    /// `from`, run on a turn that did not run `span`? It can when `span` sits
    /// in a branch of the loop's body that `later` is not in (`loop { match
    /// work() { Ok(r) => { unlock(); return r } Err(_) => extend()? } }`).
    pub fn on_another_turn(
        &self,
        span: Span,
        later: Span,
        func: Option<FuncId>,
        from: usize,
    ) -> bool {
        if later.start < span.end {
            return false;
        }
        let Some(l) = (self.loops.iter()).find(|l| {
            l.func == func
                && l.span.start >= from
                && l.span.contains(span)
                && l.span.contains(later)
        }) else {
            return false;
        };
        let apart =
            |b: Span| l.span.contains(b) && b != l.span && b.contains(span) && !b.contains(later);
        let block = (self.blocks.iter()).any(|b| b.kind == GuardKind::Plain && apart(b.span));
        block || (self.conditionals_in(func)).any(|c| apart(c.stmt) && !c.cond.contains(span))
    }
}
