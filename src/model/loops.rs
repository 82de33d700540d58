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

/// A branch of a loop that later turns can go round: what runs after it in
/// the loop, outside it, runs on those turns without it.
#[derive(Debug, Clone, Copy)]
pub struct Bypass {
    loop_span: Span,
    branch: Span,
}

impl Bypass {
    /// Can `later` run on a turn that passed the branch by?
    pub fn reaches(&self, later: Span) -> bool {
        later.start >= self.branch.end
            && self.loop_span.contains(later)
            && !self.branch.contains(later)
    }
}

impl FileModel {
    /// The innermost loop of `func` around `span` that starts at or after `from`.
    pub fn loop_around(&self, span: Span, func: Option<FuncId>, from: usize) -> Option<&Loop> {
        (self.loops.iter())
            .filter(|l| l.func == func && l.span.start >= from && l.span.contains(span))
            .min_by_key(|l| l.span.end - l.span.start)
    }

    /// The branch holding `span` in the innermost loop around it that starts
    /// at or after `from` (`loop { match work { Ok(r) => { unlock(&l); return r }
    /// Err(_) => l = extend(&l)? } }`: the `Ok` arm), if `span` is in one.
    /// Found once per statement; each later statement is then one test.
    pub fn bypass(&self, span: Span, func: Option<FuncId>, from: usize) -> Option<Bypass> {
        let l = self.loop_around(span, func, from)?;
        let inside = |b: Span| l.span.contains(b) && b != l.span && b.contains(span);
        let blocks = (self.blocks.iter())
            .filter(|b| b.kind == GuardKind::Plain)
            .map(|b| b.span);
        let branches = (self.conditionals_in(func))
            .filter(|c| !c.cond.contains(span))
            .map(|c| c.stmt);
        let branch = blocks
            .chain(branches)
            .filter(|b| inside(*b))
            .min_by_key(|b| b.end - b.start)?;
        Some(Bypass {
            loop_span: l.span,
            branch,
        })
    }
}
