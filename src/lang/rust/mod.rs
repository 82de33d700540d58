//! Rust → model, with `syn` (proc-macro2 `span-locations` gives byte offsets).
//!
//! Children are visited before their parent call is recorded, so a method
//! chain `cmd("SET").arg(k)` lowers with the inner call already in the model
//! and the outer call's receiver pointing at it. Expression texts come from
//! `quote`, normalised so that formatting differences do not matter. syn
//! drops comments, so they are read by a small lexer ([`comments`]). The only
//! file that sees syn types.

mod comments;
mod edges;
mod text;
mod visit;

pub use comments::comments;
use text::{max_nesting, normalize, MAX_NESTING};

use std::collections::HashMap;

use proc_macro2::Span as PmSpan;
use quote::ToTokens;
use syn::spanned::Spanned;
use syn::visit::Visit;

use crate::model::{
    Arg, BlockId, Call, CallId, Conditional, Exit, ExitKind, Expr, ExprKind, FileModel, FuncId,
    Function, GuardKind, Import, Language, Loop, Param, Span, Usage,
};
use edges::span_of;

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
        let id = self
            .model
            .add_block(kind, span, self.blocks.last().copied());
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
            .map(|arg| match arg {
                syn::FnArg::Receiver(_) => Param {
                    name: "self".into(),
                    ty: None,
                    default: None,
                },
                // A pattern (`_`, `(a, b)`) is named by its text: callers
                // still pass an argument for it.
                syn::FnArg::Typed(pt) => Param {
                    name: match &*pt.pat {
                        syn::Pat::Ident(pi) => pi.ident.to_string(),
                        other => self.text_of(other),
                    },
                    ty: Some(self.text_of(&pt.ty)),
                    default: None,
                },
            })
            .collect();
        let id = self.model.functions.len();
        let body = self.model.blocks.len();
        self.model.functions.push(Function {
            id,
            name,
            params,
            receiver: false,
            returns: match &sig.output {
                syn::ReturnType::Type(_, ty) => Some(self.text_of(ty)),
                syn::ReturnType::Default => None,
            },
            span,
            body,
            ends_with: None,
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
            syn::Expr::Macro(_) => match self.calls_by_span.get(&span) {
                Some(id) => ExprKind::Call(*id),
                None => ExprKind::Other,
            },
            _ => ExprKind::Other,
        };
        Expr { kind, text, span }
    }

    fn open_loop(&mut self, span: Span, head: String, body: &syn::Block, repeats: bool) {
        let func = self.func();
        self.model.loops.push(Loop {
            span,
            head,
            body: span_of(body).start,
            func,
            repeats,
        });
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

    /// A body's tail expression is what the function returns (`Ok(granted)`).
    fn tail_exit(&mut self, body: &syn::Block) {
        if let Some(syn::Stmt::Expr(e, None)) = body.stmts.last() {
            let value = self.text_at(span_of(e), e);
            self.exit(ExitKind::Return, span_of(e), value, Span::default());
        }
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
                syn::Expr::Call(_) | syn::Expr::MethodCall(_) | syn::Expr::Macro(_) => {
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
    /// a comma-separated expression list (`vec![..]`, `assert!(..)`, `tokio::join!(..)`),
    /// and records the invocation as a call of the macro with those arguments
    /// unless it only formats, prints, asserts or builds: `sqlx::query_scalar!("select
    /// pg_try_advisory_xact_lock($1)", key)` runs its SQL like `sqlx::query_scalar(..)`.
    fn macro_body(&mut self, mac: &syn::Macro) {
        use syn::parse::Parser;
        let parser = syn::punctuated::Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated;
        let Ok(exprs) = parser.parse2(mac.tokens.clone()) else {
            return;
        };
        for e in &exprs {
            self.visit_expr(e);
        }
        let Some(name) = mac.path.segments.last().map(|s| s.ident.to_string()) else {
            return;
        };
        if NOT_CALL_MACROS.contains(&name.as_str()) {
            return;
        }
        let callee = self.text_of(&mac.path);
        let args = self.positional(&exprs);
        let span = span_of(mac);
        self.record_call(span, name, callee, None, args, sp(mac.path.span()));
    }
}

/// Standard and logging macros that format, print, assert, build a value or
/// join futures: none of them is a call that does something to a store.
const NOT_CALL_MACROS: &[&str] = &[
    "format",
    "format_args",
    "concat",
    "stringify",
    "print",
    "println",
    "eprint",
    "eprintln",
    "write",
    "writeln",
    "panic",
    "assert",
    "assert_eq",
    "assert_ne",
    "debug_assert",
    "debug_assert_eq",
    "debug_assert_ne",
    "unreachable",
    "todo",
    "unimplemented",
    "dbg",
    "vec",
    "matches",
    "trace",
    "debug",
    "info",
    "warn",
    "error",
    "event",
    "bail",
    "ensure",
    "anyhow",
    "join",
    "try_join",
    "select",
    "pin",
    "env",
    "option_env",
    "include_str",
    "include_bytes",
    "json",
];

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
