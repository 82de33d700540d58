//! Rust → model, with `syn` (proc-macro2 `span-locations` gives byte offsets).
//!
//! Children are visited before their parent call is recorded, so a method
//! chain `cmd("SET").arg(k)` lowers with the inner call already in the model
//! and the outer call's receiver pointing at it. Expression texts come from
//! `quote`, normalised so that formatting differences do not matter. syn
//! drops comments, so they are read by a small lexer ([`comments`]). The only
//! file that sees syn types.

use std::collections::HashMap;

use proc_macro2::Span as PmSpan;
use quote::ToTokens;
use syn::spanned::Spanned;
use syn::visit::{self, Visit};

use super::rust_edges::span_of;
use crate::model::{
    Arg, Assign, Block, BlockId, Call, CallId, Comment, Conditional, Exit, ExitKind, Expr,
    ExprKind, FileModel, FuncId, Function, GuardKind, Import, Language, Param, Span, Usage,
};

/// Parses and lowers one Rust file; the error is syn's message with its position.
pub fn lower(text: &str) -> Result<FileModel, String> {
    // syn recurses once per nesting level: refuse what could exhaust the stack.
    let depth = max_nesting(text);
    if depth > MAX_NESTING {
        return Err(format!(
            "nesting {depth} levels deep is more than lock-audit analyses ({MAX_NESTING})"
        ));
    }
    let parsed = syn::parse_file(text);
    let result = match parsed {
        Ok(file) => {
            let mut lw = Lowerer {
                src: text,
                model: FileModel::new(Language::Rust, Span::new(0, text.len())),
                calls_by_span: HashMap::new(),
                blocks: vec![0],
                funcs: Vec::new(),
                impl_ty: Vec::new(),
            };
            lw.visit_file(&file);
            lw.model.comments = comments(text);
            Ok(lw.model)
        }
        Err(e) => {
            let pos = e.span().start();
            Err(format!(
                "{} at line {}, column {}",
                e,
                pos.line,
                pos.column + 1
            ))
        }
    };
    // proc-macro2 keeps every parsed file in a thread-local source map; drop it.
    proc_macro2::extra::invalidate_current_thread_spans();
    result
}

/// The deepest bracket nesting `lower` accepts.
const MAX_NESTING: usize = 2_000;

/// The deepest `(`/`[`/`{` nesting of a text (strings and comments included:
/// an over-estimate is fine for a guard).
fn max_nesting(text: &str) -> usize {
    let (mut depth, mut max) = (0usize, 0usize);
    for b in text.bytes() {
        match b {
            b'(' | b'[' | b'{' => {
                depth += 1;
                max = max.max(depth);
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

struct Lowerer<'a> {
    src: &'a str,
    model: FileModel,
    calls_by_span: HashMap<Span, CallId>,
    blocks: Vec<BlockId>,
    funcs: Vec<FuncId>,
    impl_ty: Vec<String>,
}

fn sp(span: PmSpan) -> Span {
    let r = span.byte_range();
    Span::new(r.start, r.end)
}

/// Source text with comments dropped and whitespace kept only between two
/// word characters (strings untouched), so formatting does not matter:
/// `redis :: cmd ("SET")` → `redis::cmd("SET")`. Stops once the result is
/// longer than `limit` bytes: texts are abbreviated anyway, and nested
/// expressions would otherwise normalise the same bytes again and again.
fn normalize(src: &str, limit: usize) -> String {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = String::with_capacity(src.len().min(limit + 4));
    let mut chars = src.chars().peekable();
    let mut in_str = false;
    let mut space = false;
    while let Some(c) = chars.next() {
        if out.len() > limit {
            break;
        }
        if in_str {
            out.push(c);
            if c == '\\' {
                if let Some(n) = chars.next() {
                    out.push(n);
                }
            } else if c == '"' {
                in_str = false;
            }
            continue;
        }
        if c == '/' && chars.peek() == Some(&'/') {
            while chars.next_if(|n| *n != '\n').is_some() {}
            space = true;
            continue;
        }
        if c == '/' && chars.peek() == Some(&'*') {
            chars.next();
            let mut prev = ' ';
            for n in chars.by_ref() {
                if prev == '*' && n == '/' {
                    break;
                }
                prev = n;
            }
            space = true;
            continue;
        }
        if c.is_whitespace() {
            space = true;
            continue;
        }
        if space && word(c) && out.chars().next_back().is_some_and(word) {
            out.push(' ');
        }
        space = false;
        in_str = c == '"';
        out.push(c);
    }
    out
}

impl Lowerer<'_> {
    /// A small node's normalised source text (types, members, paths).
    fn text_of<T: Spanned + ToTokens>(&self, node: &T) -> String {
        let r = node.span().byte_range();
        self.text_at(Span::new(r.start, r.end), node)
    }

    /// The normalised source text at `span`; quote's tokens for `node` when
    /// the span does not point into the file.
    fn text_at(&self, span: Span, node: &impl ToTokens) -> String {
        let limit = crate::lang::treesitter::MAX_TEXT;
        let text = match self.src.get(span.start..span.end) {
            Some(s) if !s.is_empty() => normalize(s, limit),
            _ => normalize(&node.to_token_stream().to_string(), limit),
        };
        crate::lang::treesitter::abbreviate(&text)
    }

    fn func(&self) -> Option<FuncId> {
        self.funcs.last().copied()
    }

    fn with_block(&mut self, kind: GuardKind, span: Span, f: impl FnOnce(&mut Self)) {
        let id = self.model.blocks.len();
        let parent = self.blocks.last().copied();
        self.model.blocks.push(Block {
            id,
            kind,
            span,
            parent,
        });
        self.blocks.push(id);
        f(self);
        self.blocks.pop();
    }

    fn function(
        &mut self,
        name: String,
        sig: &syn::Signature,
        span: Span,
        f: impl FnOnce(&mut Self),
    ) {
        let name = match self.impl_ty.last() {
            Some(ty) => format!("{ty}::{name}"),
            None => name,
        };
        let params = sig
            .inputs
            .iter()
            .filter_map(|arg| match arg {
                syn::FnArg::Receiver(_) => Some(Param {
                    name: "self".into(),
                    ty: None,
                }),
                syn::FnArg::Typed(pt) => match &*pt.pat {
                    syn::Pat::Ident(pi) => Some(Param {
                        name: pi.ident.to_string(),
                        ty: Some(self.text_of(&pt.ty)),
                    }),
                    _ => None,
                },
            })
            .collect();
        let id = self.model.functions.len();
        let body = self.model.blocks.len();
        self.model.functions.push(Function {
            id,
            name,
            params,
            span,
            body,
        });
        self.funcs.push(id);
        self.with_block(GuardKind::Function, span, f);
        self.funcs.pop();
    }

    /// Lowers an expression whose inner calls are already recorded.
    fn expr(&self, e: &syn::Expr) -> Expr {
        let span = span_of(e);
        let text = self.text_at(span, e);
        let wrap = |inner: &syn::Expr| ExprKind::Wrapped(Box::new(self.expr(inner)));
        let kind = match e {
            syn::Expr::Lit(l) => lit(&l.lit),
            syn::Expr::Path(_) => ExprKind::Name(text.clone()),
            syn::Expr::Field(f) => {
                let base = self.expr(&f.base);
                match base.kind {
                    ExprKind::Name(_) => ExprKind::Name(text.clone()),
                    _ => ExprKind::Member {
                        object: Box::new(base),
                        name: self.text_of(&f.member),
                    },
                }
            }
            syn::Expr::Call(_) | syn::Expr::MethodCall(_) => match self.calls_by_span.get(&span) {
                Some(id) => ExprKind::Call(*id),
                None => ExprKind::Other,
            },
            syn::Expr::Reference(r) => wrap(&r.expr),
            syn::Expr::Paren(p) => wrap(&p.expr),
            syn::Expr::Group(g) => wrap(&g.expr),
            syn::Expr::Await(a) => wrap(&a.base),
            syn::Expr::Try(t) => wrap(&t.expr),
            syn::Expr::Cast(c) => wrap(&c.expr),
            syn::Expr::Binary(b) => {
                let op = match b.op {
                    syn::BinOp::Add(_) => '+',
                    syn::BinOp::Sub(_) => '-',
                    syn::BinOp::Mul(_) => '*',
                    syn::BinOp::Div(_) => '/',
                    _ => '?',
                };
                ExprKind::Binary {
                    op,
                    lhs: Box::new(self.expr(&b.left)),
                    rhs: Box::new(self.expr(&b.right)),
                }
            }
            syn::Expr::Array(a) => ExprKind::List(a.elems.iter().map(|x| self.expr(x)).collect()),
            syn::Expr::Tuple(t) => ExprKind::List(t.elems.iter().map(|x| self.expr(x)).collect()),
            syn::Expr::Struct(s) => ExprKind::Map(
                s.fields
                    .iter()
                    .map(|f| {
                        let key = self.text_of(&f.member);
                        let k = Expr {
                            kind: ExprKind::Str(key.clone()),
                            text: key,
                            span,
                        };
                        (k, self.expr(&f.expr))
                    })
                    .collect(),
            ),
            syn::Expr::Macro(m) if is_format_macro(&m.mac) => ExprKind::Template,
            _ => ExprKind::Other,
        };
        Expr { kind, text, span }
    }

    fn conditional(&mut self, stmt: Span, cond: &syn::Expr) {
        let span = span_of(cond);
        let (cond, text, func) = (span, self.text_at(span, cond), self.func());
        self.model.conditionals.push(Conditional {
            stmt,
            cond,
            text,
            func,
        });
    }

    fn exit(&mut self, kind: ExitKind, span: Span, value: String, operand: Span) {
        let func = self.func();
        self.model.exits.push(Exit {
            kind,
            span,
            func,
            value,
            operand,
        });
    }

    fn set_usage(&mut self, e: &syn::Expr, usage: Usage) {
        if let Some(id) = self.expr_call(e) {
            self.model.calls[id].usage = usage;
        }
    }

    /// The call an expression ends in, through `&`, `.await`, `?` and parentheses.
    fn expr_call(&self, e: &syn::Expr) -> Option<CallId> {
        let mut e = e;
        loop {
            e = match e {
                syn::Expr::Reference(r) => &r.expr,
                syn::Expr::Paren(p) => &p.expr,
                syn::Expr::Await(a) => &a.base,
                syn::Expr::Try(t) => &t.expr,
                syn::Expr::Call(_) | syn::Expr::MethodCall(_) => {
                    return self.calls_by_span.get(&span_of(e)).copied()
                }
                _ => return None,
            };
        }
    }

    fn record_call(
        &mut self,
        span: Span,
        name: String,
        callee: String,
        receiver: Option<Expr>,
        args: Vec<Arg>,
        name_span: Span,
    ) {
        let id = self.model.calls.len();
        self.model.calls.push(Call {
            id,
            name,
            callee,
            receiver: receiver.map(Box::new),
            args,
            span,
            name_span,
            func: self.func(),
            block: self.blocks.last().copied().unwrap_or(0),
            usage: Usage::Used,
        });
        self.calls_by_span.insert(span, id);
    }

    /// Visits the expressions inside a macro call when its tokens parse as
    /// a comma-separated expression list (`vec![..]`, `assert!(..)`, `tokio::join!(..)`).
    fn macro_body(&mut self, mac: &syn::Macro) {
        use syn::parse::Parser;
        let parser = syn::punctuated::Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated;
        if let Ok(exprs) = parser.parse2(mac.tokens.clone()) {
            for e in &exprs {
                self.visit_expr(e);
            }
        }
    }
}

fn is_format_macro(mac: &syn::Macro) -> bool {
    mac.path.segments.last().is_some_and(|s| {
        matches!(
            s.ident.to_string().as_str(),
            "format" | "concat" | "format_args"
        )
    })
}

fn lit(l: &syn::Lit) -> ExprKind {
    match l {
        syn::Lit::Str(s) => ExprKind::Str(s.value()),
        syn::Lit::ByteStr(b) => ExprKind::Str(String::from_utf8_lossy(&b.value()).into_owned()),
        syn::Lit::Int(i) => i
            .base10_parse::<i64>()
            .map_or(ExprKind::Other, ExprKind::Int),
        syn::Lit::Float(f) => f
            .base10_parse::<f64>()
            .map_or(ExprKind::Other, ExprKind::Float),
        syn::Lit::Bool(b) => ExprKind::Bool(b.value),
        _ => ExprKind::Other,
    }
}

fn use_paths(tree: &syn::UseTree, prefix: String, span: Span, out: &mut Vec<Import>) {
    let join = |p: &str, s: &str| {
        if p.is_empty() {
            s.to_string()
        } else {
            format!("{p}::{s}")
        }
    };
    match tree {
        syn::UseTree::Path(p) => use_paths(&p.tree, join(&prefix, &p.ident.to_string()), span, out),
        syn::UseTree::Name(n) => {
            let name = n.ident.to_string();
            let path = if name == "self" {
                prefix
            } else {
                join(&prefix, &name)
            };
            out.push(Import {
                path,
                alias: None,
                span,
            });
        }
        syn::UseTree::Rename(r) => out.push(Import {
            path: join(&prefix, &r.ident.to_string()),
            alias: Some(r.rename.to_string()),
            span,
        }),
        syn::UseTree::Glob(_) => out.push(Import {
            path: join(&prefix, "*"),
            alias: None,
            span,
        }),
        syn::UseTree::Group(g) => {
            for t in &g.items {
                use_paths(t, prefix.clone(), span, out);
            }
        }
    }
}

/// `#[cfg(test)]`, `#[test]`, `#[tokio::test]`: an item that exists only for tests.
fn test_only(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        let path = a.path();
        path.segments.last().is_some_and(|s| s.ident == "test")
            || (path.is_ident("cfg") && a.parse_args::<syn::Ident>().is_ok_and(|i| i == "test"))
    })
}

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
            visit::visit_item_fn(lw, f)
        });
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        let span = span_of(f);
        self.function(f.sig.ident.to_string(), &f.sig, span, |lw| {
            visit::visit_impl_item_fn(lw, f)
        });
    }

    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        let span = span_of(f);
        self.function(f.sig.ident.to_string(), &f.sig, span, |lw| {
            visit::visit_trait_item_fn(lw, f)
        });
    }

    fn visit_item_impl(&mut self, i: &'ast syn::ItemImpl) {
        self.impl_ty.push(self.text_of(&i.self_ty));
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
        let value = self.expr(&c.expr);
        let span = sp(c.span());
        let (target, ty) = (c.ident.to_string(), Some(self.text_of(&c.ty)));
        self.model.assigns.push(Assign {
            target,
            ty,
            value,
            span,
            func: self.func(),
        });
    }

    fn visit_item_static(&mut self, s: &'ast syn::ItemStatic) {
        visit::visit_item_static(self, s);
        let value = self.expr(&s.expr);
        let span = sp(s.span());
        let (target, ty) = (s.ident.to_string(), Some(self.text_of(&s.ty)));
        self.model.assigns.push(Assign {
            target,
            ty,
            value,
            span,
            func: self.func(),
        });
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

    fn visit_expr_while(&mut self, w: &'ast syn::ExprWhile) {
        visit::visit_expr_while(self, w);
        self.set_usage(&w.cond, Usage::Tested);
        self.conditional(span_of(w), &w.cond);
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

    fn visit_block(&mut self, b: &'ast syn::Block) {
        let span = span_of(b);
        self.with_block(GuardKind::Plain, span, |lw| visit::visit_block(lw, b));
    }

    fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
        visit::visit_expr_call(self, c);
        let callee = self.text_at(span_of(&*c.func), &c.func);
        let name = match &*c.func {
            syn::Expr::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
            _ => None,
        }
        .unwrap_or_default();
        let args = c
            .args
            .iter()
            .map(|a| Arg {
                name: None,
                value: self.expr(a),
            })
            .collect();
        let name_span = span_of(&*c.func);
        self.record_call(span_of(c), name, callee, None, args, name_span);
    }

    fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
        visit::visit_expr_method_call(self, m);
        let receiver = self.expr(&m.receiver);
        let name = m.method.to_string();
        let callee = format!("{}.{}", receiver.text, name);
        let args = m
            .args
            .iter()
            .map(|a| Arg {
                name: None,
                value: self.expr(a),
            })
            .collect();
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

/// The comments of a Rust source, found by a small lexer that knows strings,
/// raw strings, char literals and lifetimes.
pub fn comments(src: &str) -> Vec<Comment> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                let end = src[i..].find('\n').map_or(b.len(), |n| i + n);
                let text = src[i..end]
                    .trim_start_matches('/')
                    .trim_start_matches('!')
                    .trim();
                out.push(Comment {
                    text: text.to_string(),
                    span: Span::new(i, end),
                });
                i = end;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let (mut depth, mut j) = (1, i + 2);
                while j < b.len() && depth > 0 {
                    if b[j] == b'/' && b.get(j + 1) == Some(&b'*') {
                        depth += 1;
                        j += 2;
                    } else if b[j] == b'*' && b.get(j + 1) == Some(&b'/') {
                        depth -= 1;
                        j += 2;
                    } else {
                        j += 1;
                    }
                }
                let inner = src.get(i + 2..j.saturating_sub(2).max(i + 2)).unwrap_or("");
                out.push(Comment {
                    text: inner.trim().to_string(),
                    span: Span::new(i, j),
                });
                i = j;
            }
            b'r' if matches!(b.get(i + 1), Some(b'#') | Some(b'"'))
                && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')) =>
            {
                let hashes = b[i + 1..].iter().take_while(|c| **c == b'#').count();
                if b.get(i + 1 + hashes) != Some(&b'"') {
                    i += 1;
                    continue;
                }
                let close = format!("\"{}", "#".repeat(hashes));
                let start = i + 2 + hashes;
                i = src[start..]
                    .find(&close)
                    .map_or(b.len(), |n| start + n + close.len());
            }
            b'"' => {
                let mut j = i + 1;
                while j < b.len() && b[j] != b'"' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                i = j + 1;
            }
            b'\'' => {
                // 'x' or '\n' is a char literal; 'a (no closing quote) a lifetime.
                if b.get(i + 1) == Some(&b'\\') {
                    i = src[i + 2..].find('\'').map_or(b.len(), |n| i + 2 + n + 1);
                } else {
                    let ch_len = src[i + 1..].chars().next().map_or(1, char::len_utf8);
                    i += if b.get(i + 1 + ch_len) == Some(&b'\'') {
                        ch_len + 2
                    } else {
                        1
                    };
                }
            }
            _ => i += 1,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::normalize;

    #[test]
    fn normalized_text_ignores_layout_and_comments_but_not_strings() {
        let src =
            "redis :: cmd (\"SET  //x\")\n    // take it\n    .arg(&key) /* ttl */ .arg(\"PX\")";
        assert_eq!(
            normalize(src, 240),
            "redis::cmd(\"SET  //x\").arg(&key).arg(\"PX\")"
        );
        assert_eq!(normalize("&mut  conn", 240), "&mut conn");
        assert_eq!(normalize("f( \"a \\\" b\" ,x)", 240), "f(\"a \\\" b\",x)");
        assert!(normalize(&"x + ".repeat(1000), 240).len() <= 244);
    }
}
