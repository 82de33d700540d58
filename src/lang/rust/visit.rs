//! The syn visitor: one method per item, statement or expression kind the
//! model records.

use syn::visit::{self, Visit};

use super::edges::span_of;
use super::{sp, test_only, use_paths, Lowerer};
use syn::spanned::Spanned;

use crate::model::{Arg, Assign, ExitKind, Expr, GuardKind, Span, Usage};

impl<'ast> Visit<'ast> for Lowerer<'_> {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if test_only(&m.attrs) {
            self.model.test_regions.push(span_of(m));
        }
        visit::visit_item_mod(self, m);
    }

    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        let span = span_of(f);
        if test_only(&f.attrs) {
            self.model.test_regions.push(span);
        }
        self.function(f.sig.ident.to_string(), &f.sig, span, |lw| {
            visit::visit_item_fn(lw, f);
            lw.tail_exit(&f.block);
        });
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        let span = span_of(f);
        self.function(f.sig.ident.to_string(), &f.sig, span, |lw| {
            visit::visit_impl_item_fn(lw, f);
            lw.tail_exit(&f.block);
        });
    }

    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        let span = span_of(f);
        self.function(f.sig.ident.to_string(), &f.sig, span, |lw| {
            visit::visit_trait_item_fn(lw, f)
        });
    }

    fn visit_item_impl(&mut self, i: &'ast syn::ItemImpl) {
        // `impl<'a> SqlFactory<'a>` is `SqlFactory`'s: methods are named after the
        // type, not its generic arguments.
        let ty = match &*i.self_ty {
            syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
            _ => None,
        };
        self.impl_ty
            .push(ty.unwrap_or_else(|| self.text_of(&i.self_ty)));
        visit::visit_item_impl(self, i);
        self.impl_ty.pop();
    }

    fn visit_item_struct(&mut self, s: &'ast syn::ItemStruct) {
        // Typed fields are receiver evidence: `manager: LockManager` makes `self.manager` one.
        for f in &s.fields {
            if let Some(ident) = &f.ident {
                let span = sp(f.span());
                let value = Expr::other("", span);
                let (target, ty) = (ident.to_string(), Some(self.text_of(&f.ty)));
                self.model.assigns.push(Assign {
                    target,
                    ty,
                    value,
                    span,
                    func: None,
                });
            }
        }
        visit::visit_item_struct(self, s);
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        use_paths(
            &u.tree,
            String::new(),
            sp(u.span()),
            &mut self.model.imports,
        );
    }

    fn visit_item_const(&mut self, c: &'ast syn::ItemConst) {
        visit::visit_item_const(self, c);
        self.constant(&c.ident, &c.ty, &c.expr, sp(c.span()));
    }

    fn visit_item_static(&mut self, s: &'ast syn::ItemStatic) {
        visit::visit_item_static(self, s);
        self.constant(&s.ident, &s.ty, &s.expr, sp(s.span()));
    }

    fn visit_local(&mut self, l: &'ast syn::Local) {
        visit::visit_local(self, l);
        let Some(init) = &l.init else { return };
        if init.diverge.is_some() {
            // `let Some(x) = f() else { return }`: a branch on the value.
            self.conditional(span_of(l), &init.expr);
        }
        let (name, ty) = match &l.pat {
            syn::Pat::Ident(pi) => (pi.ident.to_string(), None),
            syn::Pat::Type(pt) => match &*pt.pat {
                syn::Pat::Ident(pi) => (pi.ident.to_string(), Some(self.text_of(&pt.ty))),
                // `let _: () = ...`: the reply is typed away.
                syn::Pat::Wild(_) => {
                    self.set_usage(&init.expr, Usage::Discarded);
                    return;
                }
                _ => return,
            },
            syn::Pat::Wild(_) => {
                self.set_usage(&init.expr, Usage::Discarded);
                return;
            }
            _ => return,
        };
        self.set_usage(&init.expr, Usage::Assigned(name.clone()));
        let value = self.expr(&init.expr);
        let span = span_of(l);
        self.model.assigns.push(Assign {
            target: name,
            ty,
            value,
            span,
            func: self.func(),
        });
    }

    fn visit_stmt(&mut self, s: &'ast syn::Stmt) {
        visit::visit_stmt(self, s);
        if let syn::Stmt::Expr(e, Some(_)) = s {
            self.set_usage(e, Usage::Discarded);
        }
    }

    fn visit_expr_if(&mut self, i: &'ast syn::ExprIf) {
        visit::visit_expr_if(self, i);
        let cond = match &*i.cond {
            syn::Expr::Let(l) => &*l.expr,
            c => c,
        };
        self.set_usage(cond, Usage::Tested);
        self.conditional(span_of(i), &i.cond);
    }

    fn visit_expr_return(&mut self, r: &'ast syn::ExprReturn) {
        visit::visit_expr_return(self, r);
        let value = r
            .expr
            .as_deref()
            .map(|e| self.text_at(span_of(e), e))
            .unwrap_or_default();
        self.exit(ExitKind::Return, span_of(r), value, Span::default());
    }

    fn visit_expr_try(&mut self, t: &'ast syn::ExprTry) {
        visit::visit_expr_try(self, t);
        let mut operand = &*t.expr;
        while let syn::Expr::Await(a) = operand {
            operand = &a.base;
        }
        self.exit(
            ExitKind::Try,
            sp(t.question_token.span),
            String::new(),
            span_of(operand),
        );
    }

    fn visit_expr_break(&mut self, b: &'ast syn::ExprBreak) {
        visit::visit_expr_break(self, b);
        self.exit(ExitKind::Break, span_of(b), String::new(), Span::default());
    }

    fn visit_expr_loop(&mut self, l: &'ast syn::ExprLoop) {
        self.open_loop(span_of(l), "loop".into(), &l.body, true);
        visit::visit_expr_loop(self, l);
    }

    fn visit_expr_while(&mut self, w: &'ast syn::ExprWhile) {
        let head = format!("while {}", self.text_at(span_of(&*w.cond), &w.cond));
        self.open_loop(span_of(w), head, &w.body, true);
        visit::visit_expr_while(self, w);
        self.set_usage(&w.cond, Usage::Tested);
        self.conditional(span_of(w), &w.cond);
    }

    /// `for row in rows { .. }`: the body runs once per item, so the rows a
    /// `SKIP LOCKED` query returned are tested like a `match` tests a value.
    fn visit_expr_for_loop(&mut self, f: &'ast syn::ExprForLoop) {
        let head = format!("for {}", self.text_at(span_of(&*f.expr), &f.expr));
        self.open_loop(span_of(f), head, &f.body, false);
        visit::visit_expr_for_loop(self, f);
        self.set_usage(&f.expr, Usage::Tested);
        self.conditional(span_of(f), &f.expr);
    }

    fn visit_expr_match(&mut self, m: &'ast syn::ExprMatch) {
        visit::visit_expr_match(self, m);
        self.set_usage(&m.expr, Usage::Tested);
        self.conditional(span_of(m), &m.expr);
    }

    fn visit_expr_closure(&mut self, c: &'ast syn::ExprClosure) {
        let span = span_of(c);
        self.with_block(GuardKind::Closure, span, |lw| {
            visit::visit_expr_closure(lw, c)
        });
    }

    /// An `async { .. }` block is a future of its own: a `?` or `return` in
    /// it ends the block, not the function.
    fn visit_expr_async(&mut self, a: &'ast syn::ExprAsync) {
        let span = span_of(a);
        self.with_block(GuardKind::Closure, span, |lw| {
            visit::visit_expr_async(lw, a)
        });
    }

    fn visit_block(&mut self, b: &'ast syn::Block) {
        let span = span_of(b);
        self.with_block(GuardKind::Plain, span, |lw| visit::visit_block(lw, b));
    }

    fn visit_expr_struct(&mut self, s: &'ast syn::ExprStruct) {
        visit::visit_expr_struct(self, s);
        for f in &s.fields {
            if let syn::Member::Named(name) = &f.member {
                let value = self.expr(&f.expr);
                let inits = self.model.record_fields.entry(name.to_string());
                inits.or_default().push(value);
            }
        }
    }

    fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
        visit::visit_expr_call(self, c);
        let callee = self.text_at(span_of(&*c.func), &c.func);
        let name = match &*c.func {
            syn::Expr::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
            _ => None,
        }
        .unwrap_or_default();
        let args = self.positional(&c.args);
        let name_span = span_of(&*c.func);
        self.record_call(span_of(c), name, callee, None, args, name_span);
    }

    fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
        visit::visit_expr_method_call(self, m);
        let receiver = self.expr(&m.receiver);
        let name = m.method.to_string();
        let callee = format!("{}.{}", receiver.text, name);
        let args = self.positional(&m.args);
        let name_span = sp(m.method.span());
        self.record_call(span_of(m), name, callee, Some(receiver), args, name_span);
        // `.query::<()>(..)`: the reply is converted to `()`, i.e. thrown away.
        let unit = m
            .turbofish
            .as_ref()
            .is_some_and(|t| t.args.len() == 1 && self.text_of(&t.args) == "()");
        if unit {
            if let Some(last) = self.model.calls.last_mut() {
                last.usage = Usage::Discarded;
            }
        }
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.macro_body(mac);
    }
}

impl Lowerer<'_> {
    /// A call's arguments (Rust has no keyword arguments).
    pub(super) fn positional<'e>(&self, args: impl IntoIterator<Item = &'e syn::Expr>) -> Vec<Arg> {
        args.into_iter()
            .map(|a| Arg {
                name: None,
                value: self.expr(a),
            })
            .collect()
    }

    /// A `const` or `static`: an assignment of its value to its name.
    fn constant(&mut self, name: &syn::Ident, ty: &syn::Type, value: &syn::Expr, span: Span) {
        let value = self.expr(value);
        let (target, ty) = (name.to_string(), Some(self.text_of(ty)));
        self.model.assigns.push(Assign {
            target,
            ty,
            value,
            span,
            func: self.func(),
        });
    }
}
