//! Where a syn node starts and ends, read off its first and last tokens.
//!
//! `Spanned::span` prints the whole node back into a token stream to find
//! those two tokens, so asking every expression for its span made lowering
//! quadratic in nesting depth (a function's span re-printed the function,
//! each statement re-printed itself...). These walk down the left and right
//! edges instead; leaves and small nodes (paths, literals, types) still use
//! `Spanned`, which is cheap for them.

use proc_macro2::Span as PmSpan;
use syn::spanned::Spanned;
use syn::Expr;

use crate::model::Span;

/// A node with a first and a last token.
pub trait Edges {
    fn edges(&self) -> (PmSpan, PmSpan);
}

/// The byte range from the start of the first token to the end of the last.
pub fn span_of(node: &impl Edges) -> Span {
    let (first, last) = node.edges();
    Span::new(first.byte_range().start, last.byte_range().end)
}

fn whole(node: &impl Spanned) -> (PmSpan, PmSpan) {
    let s = node.span();
    (s, s)
}

fn first(e: &Expr) -> PmSpan {
    e.edges().0
}

fn last(e: &Expr) -> PmSpan {
    e.edges().1
}

/// A loop or block label comes before its keyword.
fn labelled(label: Option<&syn::Label>, keyword: PmSpan) -> PmSpan {
    label.map_or(keyword, |l| l.name.apostrophe)
}

impl Edges for syn::Block {
    fn edges(&self) -> (PmSpan, PmSpan) {
        (self.brace_token.span.open(), self.brace_token.span.close())
    }
}

impl Edges for syn::ExprMethodCall {
    fn edges(&self) -> (PmSpan, PmSpan) {
        (first(&self.receiver), self.paren_token.span.close())
    }
}

impl Edges for syn::Macro {
    fn edges(&self) -> (PmSpan, PmSpan) {
        let close = match &self.delimiter {
            syn::MacroDelimiter::Paren(p) => p.span.close(),
            syn::MacroDelimiter::Brace(b) => b.span.close(),
            syn::MacroDelimiter::Bracket(b) => b.span.close(),
        };
        (self.path.span(), close)
    }
}

impl Edges for syn::ExprCall {
    fn edges(&self) -> (PmSpan, PmSpan) {
        (first(&self.func), self.paren_token.span.close())
    }
}

impl Edges for syn::ExprIf {
    fn edges(&self) -> (PmSpan, PmSpan) {
        let end = match &self.else_branch {
            Some((_, e)) => last(e),
            None => self.then_branch.brace_token.span.close(),
        };
        (self.if_token.span, end)
    }
}

impl Edges for syn::ExprClosure {
    fn edges(&self) -> (PmSpan, PmSpan) {
        let start = self
            .lifetimes
            .as_ref()
            .map(|l| l.for_token.span)
            .or(self.constness.map(|t| t.span))
            .or(self.movability.map(|t| t.span))
            .or(self.asyncness.map(|t| t.span))
            .or(self.capture.map(|t| t.span))
            .unwrap_or(self.or1_token.spans[0]);
        (start, last(&self.body))
    }
}

impl Edges for syn::ExprAsync {
    fn edges(&self) -> (PmSpan, PmSpan) {
        (self.async_token.span, self.block.brace_token.span.close())
    }
}

impl Edges for syn::ExprMatch {
    fn edges(&self) -> (PmSpan, PmSpan) {
        (self.match_token.span, self.brace_token.span.close())
    }
}

impl Edges for syn::ExprWhile {
    fn edges(&self) -> (PmSpan, PmSpan) {
        let start = labelled(self.label.as_ref(), self.while_token.span);
        (start, self.body.brace_token.span.close())
    }
}

impl Edges for syn::ExprLoop {
    fn edges(&self) -> (PmSpan, PmSpan) {
        let start = labelled(self.label.as_ref(), self.loop_token.span);
        (start, self.body.brace_token.span.close())
    }
}

impl Edges for syn::ExprForLoop {
    fn edges(&self) -> (PmSpan, PmSpan) {
        let start = labelled(self.label.as_ref(), self.for_token.span);
        (start, self.body.brace_token.span.close())
    }
}

impl Edges for syn::ExprReturn {
    fn edges(&self) -> (PmSpan, PmSpan) {
        let start = self.return_token.span;
        (start, self.expr.as_deref().map_or(start, last))
    }
}

impl Edges for syn::ExprBreak {
    fn edges(&self) -> (PmSpan, PmSpan) {
        let start = self.break_token.span;
        let end = match (&self.expr, &self.label) {
            (Some(e), _) => last(e),
            (None, Some(l)) => l.ident.span(),
            (None, None) => start,
        };
        (start, end)
    }
}

impl Edges for syn::Local {
    fn edges(&self) -> (PmSpan, PmSpan) {
        (self.let_token.span, self.semi_token.spans[0])
    }
}

/// Attributes, then the visibility, then the signature.
fn fn_start(
    attrs: &[syn::Attribute],
    vis: Option<&syn::Visibility>,
    sig: &syn::Signature,
) -> PmSpan {
    if let Some(a) = attrs.first() {
        return a.pound_token.spans[0];
    }
    match vis {
        Some(syn::Visibility::Public(p)) => p.span,
        Some(syn::Visibility::Restricted(r)) => r.pub_token.span,
        _ => sig.span(),
    }
}

impl Edges for syn::ItemFn {
    fn edges(&self) -> (PmSpan, PmSpan) {
        let start = fn_start(&self.attrs, Some(&self.vis), &self.sig);
        (start, self.block.brace_token.span.close())
    }
}

impl Edges for syn::ImplItemFn {
    fn edges(&self) -> (PmSpan, PmSpan) {
        let start = fn_start(&self.attrs, Some(&self.vis), &self.sig);
        (start, self.block.brace_token.span.close())
    }
}

impl Edges for syn::ItemMod {
    fn edges(&self) -> (PmSpan, PmSpan) {
        let start = self
            .attrs
            .first()
            .map_or(self.mod_token.span, |a| a.pound_token.span);
        let end = match (&self.content, &self.semi) {
            (Some((brace, _)), _) => brace.span.close(),
            (None, Some(semi)) => semi.span,
            (None, None) => self.ident.span(),
        };
        (start, end)
    }
}

impl Edges for syn::TraitItemFn {
    fn edges(&self) -> (PmSpan, PmSpan) {
        let start = fn_start(&self.attrs, None, &self.sig);
        let end = match (&self.default, &self.semi_token) {
            (Some(b), _) => b.brace_token.span.close(),
            (None, Some(semi)) => semi.spans[0],
            (None, None) => self.sig.span(),
        };
        (start, end)
    }
}

impl Edges for Expr {
    fn edges(&self) -> (PmSpan, PmSpan) {
        match self {
            Expr::MethodCall(m) => m.edges(),
            Expr::Call(c) => c.edges(),
            Expr::If(i) => i.edges(),
            Expr::Closure(c) => c.edges(),
            Expr::Async(a) => a.edges(),
            Expr::Match(m) => m.edges(),
            Expr::While(w) => w.edges(),
            Expr::Return(r) => r.edges(),
            Expr::Break(b) => b.edges(),
            Expr::Field(f) => (first(&f.base), f.member.span()),
            Expr::Index(i) => (first(&i.expr), i.bracket_token.span.close()),
            Expr::Try(t) => (first(&t.expr), t.question_token.spans[0]),
            Expr::Await(a) => (first(&a.base), a.await_token.span),
            Expr::Binary(b) => (first(&b.left), last(&b.right)),
            Expr::Assign(a) => (first(&a.left), last(&a.right)),
            Expr::Cast(c) => (first(&c.expr), c.ty.span()),
            Expr::Reference(r) => (r.and_token.spans[0], last(&r.expr)),
            Expr::Unary(u) => (u.op.span(), last(&u.expr)),
            Expr::Let(l) => (l.let_token.span, last(&l.expr)),
            Expr::Group(g) => g.expr.edges(),
            Expr::Paren(p) => (p.paren_token.span.open(), p.paren_token.span.close()),
            Expr::Tuple(t) => (t.paren_token.span.open(), t.paren_token.span.close()),
            Expr::Array(a) => (a.bracket_token.span.open(), a.bracket_token.span.close()),
            Expr::Block(b) => {
                let start = labelled(b.label.as_ref(), b.block.brace_token.span.open());
                (start, b.block.brace_token.span.close())
            }
            Expr::Unsafe(u) => (u.unsafe_token.span, u.block.brace_token.span.close()),
            Expr::Loop(l) => l.edges(),
            Expr::ForLoop(f) => f.edges(),
            Expr::Struct(s) => (s.path.span(), s.brace_token.span.close()),
            Expr::Macro(m) => m.mac.edges(),
            // Leaves and rare shapes: small, or not worth a case.
            other => whole(other),
        }
    }
}
