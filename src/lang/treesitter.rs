//! One generic lowering from a tree-sitter tree into the [`FileModel`].
//!
//! Each tree-sitter language is a [`NodeTable`]: which node kinds are calls,
//! members, strings, blocks... This walker visits the tree once, with a
//! cursor and an explicit stack (no recursion, so 10,000-deep nesting cannot
//! overflow the stack), building each node's value from its children's on
//! the way back up. The only file that sees tree-sitter types.

use tree_sitter::{Node, Parser, Tree};

use crate::model::{
    Arg, Assign, Block, BlockId, Call, Comment, Expr, ExprKind, FileModel, FuncId, Function,
    GuardKind, Import, Language, Param, Span, Usage,
};

/// Expressions nested deeper than this are kept as opaque text: the checks
/// never need them and deep `Box` chains would cost stack on drop.
const MAX_EXPR_DEPTH: u32 = 48;
/// Longer expression texts are abbreviated; keys and TTLs are short.
const MAX_TEXT: usize = 240;

/// The node kinds and field names of one tree-sitter grammar.
pub struct NodeTable {
    pub language: Language,
    pub grammar: fn() -> tree_sitter::Language,
    /// Call nodes, with their callee and argument-list fields.
    pub call: &'static [&'static str],
    pub call_function: &'static str,
    pub call_arguments: &'static str,
    /// Argument-list nodes.
    pub arguments: &'static [&'static str],
    /// Member access (`a.b`): object and property fields.
    pub member: &'static [&'static str],
    pub member_object: &'static str,
    pub member_property: &'static str,
    /// `name=value` arguments.
    pub keyword_argument: &'static [&'static str],
    pub identifier: &'static [&'static str],
    pub string: &'static [&'static str],
    pub string_content: &'static [&'static str],
    pub interpolation: &'static [&'static str],
    pub integer: &'static [&'static str],
    pub float: &'static [&'static str],
    pub true_: &'static [&'static str],
    pub false_: &'static [&'static str],
    pub null: &'static [&'static str],
    /// Map literals and their `key: value` pairs.
    pub map: &'static [&'static str],
    pub pair: &'static [&'static str],
    pub list: &'static [&'static str],
    /// Parenthesised / awaited expressions: transparent.
    pub wrapper: &'static [&'static str],
    pub binary: &'static [&'static str],
    pub functions: &'static [&'static str],
    pub classes: &'static [&'static str],
    /// Statements whose `body` field is guarded (`with`).
    pub with: &'static [&'static str],
    pub finally: &'static [&'static str],
    pub defer: &'static [&'static str],
    pub closure: &'static [&'static str],
    /// Statements that throw their expression's value away.
    pub expression_statement: &'static [&'static str],
    /// Assignment nodes with `left`/`right`(/`type`) fields.
    pub assignment: &'static [&'static str],
    /// `value as name` bindings (`with open() as f`): first child bound to the `alias` field.
    pub alias_binding: &'static [&'static str],
    /// Statements whose `condition` field is tested.
    pub conditional: &'static [&'static str],
    pub comment: &'static [&'static str],
    /// Strips the comment delimiters.
    pub comment_text: fn(&str) -> &str,
    /// Lowers an import statement node.
    pub imports: fn(Node, &str, &mut Vec<Import>),
    pub import_kinds: &'static [&'static str],
    /// Reads a function's parameters node.
    pub params: fn(Node, &str) -> Vec<Param>,
}

/// What a finished node hands its parent.
enum Lowered {
    Expr(Expr, u32),
    Arg(Arg),
    /// An argument list: positionals and keywords in source order.
    Args(Vec<Arg>),
    Pair(Expr, Expr),
    Nothing,
}

struct Frame<'t> {
    node: Node<'t>,
    field: Option<&'static str>,
    children: Vec<(Option<&'static str>, Lowered)>,
    pushed_block: bool,
    pushed_func: bool,
}

/// Parses `text` with `table`'s grammar, reusing the thread's parser.
pub fn parse(parser: &mut Parser, table: &NodeTable, text: &str) -> Result<Tree, String> {
    parser
        .set_language(&(table.grammar)())
        .map_err(|e| format!("tree-sitter grammar error: {e}"))?;
    parser
        .parse(text, None)
        .ok_or_else(|| "the parser gave up (timeout or cancellation)".into())
}

/// Lowers a parsed tree into the model.
pub fn lower(table: &NodeTable, tree: &Tree, text: &str) -> FileModel {
    let mut lw = Lowerer {
        t: table,
        src: text,
        model: FileModel::new(table.language, Span::new(0, text.len())),
        block_stack: vec![0],
        func_stack: Vec::new(),
        class_stack: Vec::new(),
    };
    lw.walk(tree);
    lw.model
}

struct Lowerer<'a> {
    t: &'a NodeTable,
    src: &'a str,
    model: FileModel,
    block_stack: Vec<BlockId>,
    func_stack: Vec<FuncId>,
    class_stack: Vec<String>,
}

fn has(kinds: &[&str], kind: &str) -> bool {
    kinds.contains(&kind)
}

fn span(node: Node) -> Span {
    Span::new(node.start_byte(), node.end_byte())
}

impl<'a> Lowerer<'a> {
    fn walk(&mut self, tree: &Tree) {
        let mut cursor = tree.walk();
        let mut stack: Vec<Frame> = Vec::new();
        let root = cursor.node();
        stack.push(self.enter(root, None, None));
        'outer: loop {
            if cursor.goto_first_child() {
                let parent = stack.last().map(|f| f.node);
                stack.push(self.enter(cursor.node(), cursor.field_name(), parent));
                continue;
            }
            loop {
                // The current node has no more children: finish it.
                let Some(frame) = stack.pop() else {
                    break 'outer;
                };
                let field = frame.field;
                let lowered = self.finish(frame);
                if let Some(parent) = stack.last_mut() {
                    parent.children.push((field, lowered));
                }
                if cursor.goto_next_sibling() {
                    let parent = stack.last().map(|f| f.node);
                    stack.push(self.enter(cursor.node(), cursor.field_name(), parent));
                    continue 'outer;
                }
                if !cursor.goto_parent() {
                    // Finish whatever is left (the root).
                    while let Some(frame) = stack.pop() {
                        let field = frame.field;
                        let lowered = self.finish(frame);
                        if let Some(parent) = stack.last_mut() {
                            parent.children.push((field, lowered));
                        }
                    }
                    break 'outer;
                }
            }
        }
    }

    fn current_func(&self) -> Option<FuncId> {
        self.func_stack.last().copied()
    }

    fn push_block(&mut self, kind: GuardKind, span: Span) {
        let id = self.model.blocks.len();
        let parent = self.block_stack.last().copied();
        self.model.blocks.push(Block {
            id,
            kind,
            span,
            parent,
        });
        self.block_stack.push(id);
    }

    /// Called when the walk first reaches `node`: opens scopes.
    fn enter<'t>(
        &mut self,
        node: Node<'t>,
        field: Option<&'static str>,
        parent: Option<Node<'t>>,
    ) -> Frame<'t> {
        let kind = node.kind();
        let t = self.t;
        let mut frame = Frame {
            node,
            field,
            children: Vec::new(),
            pushed_block: false,
            pushed_func: false,
        };
        if node.is_error() || node.is_missing() {
            self.model.syntax_errors.push(span(node));
        }
        if has(t.comment, kind) {
            let raw = &self.src[node.byte_range()];
            let text = (t.comment_text)(raw).trim().to_string();
            self.model.comments.push(Comment {
                text,
                span: span(node),
            });
        } else if has(t.import_kinds, kind) {
            (t.imports)(node, self.src, &mut self.model.imports);
        } else if has(t.functions, kind) {
            let name = node
                .child_by_field_name("name")
                .map(|n| self.src[n.byte_range()].to_string())
                .unwrap_or_else(|| "<anonymous>".into());
            let qualified = match self.class_stack.last() {
                Some(class) => format!("{class}.{name}"),
                None => name,
            };
            let params = node
                .child_by_field_name("parameters")
                .map(|p| (t.params)(p, self.src))
                .unwrap_or_default();
            let id = self.model.functions.len();
            let body = self.model.blocks.len();
            self.push_block(GuardKind::Function, span(node));
            self.model.functions.push(Function {
                id,
                name: qualified,
                params,
                span: span(node),
                body,
            });
            self.func_stack.push(id);
            frame.pushed_block = true;
            frame.pushed_func = true;
        } else if has(t.classes, kind) {
            let name = node
                .child_by_field_name("name")
                .map(|n| self.src[n.byte_range()].to_string())
                .unwrap_or_default();
            self.class_stack.push(name);
        } else if has(t.finally, kind) {
            self.push_block(GuardKind::Finally, span(node));
            frame.pushed_block = true;
        } else if has(t.defer, kind) {
            self.push_block(GuardKind::Defer, span(node));
            frame.pushed_block = true;
        } else if has(t.closure, kind) {
            self.push_block(GuardKind::Closure, span(node));
            frame.pushed_block = true;
        } else if field == Some("body") && parent.is_some_and(|p| has(t.with, p.kind())) {
            self.push_block(GuardKind::With, span(node));
            frame.pushed_block = true;
        }
        frame
    }

    fn text(&self, node: Node) -> String {
        abbreviate(&self.src[node.byte_range()])
    }

    /// Called when all of `node`'s children are finished: builds its value.
    fn finish(&mut self, frame: Frame) -> Lowered {
        let Frame {
            node,
            children,
            pushed_block,
            pushed_func,
            ..
        } = frame;
        let kind = node.kind();
        let t = self.t;
        if pushed_block {
            self.block_stack.pop();
        }
        if pushed_func {
            self.func_stack.pop();
        }
        if has(t.classes, kind) {
            self.class_stack.pop();
        }
        if !node.is_named() || has(t.comment, kind) {
            return Lowered::Nothing;
        }
        let field = |name: &str| {
            children
                .iter()
                .find(|(f, _)| *f == Some(name))
                .map(|(_, l)| l)
        };
        let expr_of = |l: Option<&Lowered>| match l {
            Some(Lowered::Expr(e, d)) => Some((e.clone(), *d)),
            _ => None,
        };
        let sp = span(node);
        let depth = children
            .iter()
            .map(|(_, l)| if let Lowered::Expr(_, d) = l { *d } else { 0 })
            .max()
            .unwrap_or(0)
            + 1;
        if depth > MAX_EXPR_DEPTH {
            return Lowered::Expr(Expr::other(self.text(node), sp), depth);
        }
        let mk = |kind: ExprKind, text: String| {
            Lowered::Expr(
                Expr {
                    kind,
                    text,
                    span: sp,
                },
                depth,
            )
        };

        if has(t.call, kind) {
            let args = match field(t.call_arguments) {
                Some(Lowered::Args(args)) => args.clone(),
                Some(Lowered::Expr(e, _)) => vec![Arg {
                    name: None,
                    value: e.clone(),
                }],
                _ => Vec::new(),
            };
            return match expr_of(field(t.call_function)) {
                Some((callee, _)) => self.add_call(callee, args, sp, node),
                None => mk(ExprKind::Other, self.text(node)),
            };
        }
        if has(t.arguments, kind) {
            let args = children
                .into_iter()
                .filter_map(|(_, l)| match l {
                    Lowered::Expr(value, _) => Some(Arg { name: None, value }),
                    Lowered::Arg(a) => Some(a),
                    _ => None,
                })
                .collect();
            return Lowered::Args(args);
        }
        if has(t.keyword_argument, kind) {
            let name = node
                .child_by_field_name("name")
                .map(|n| self.src[n.byte_range()].to_string());
            let Some((value, _)) = expr_of(field("value")) else {
                return Lowered::Nothing;
            };
            return Lowered::Arg(Arg { name, value });
        }
        if has(t.member, kind) {
            let prop = node
                .child_by_field_name(t.member_property)
                .map(|n| self.src[n.byte_range()].to_string())
                .unwrap_or_default();
            let text = self.text(node);
            return match expr_of(field(t.member_object)) {
                Some((obj, _)) if matches!(obj.kind, ExprKind::Name(_)) => {
                    mk(ExprKind::Name(collapse_ws(&text)), text)
                }
                Some((obj, _)) => mk(
                    ExprKind::Member {
                        object: Box::new(obj),
                        name: prop,
                    },
                    text,
                ),
                None => mk(ExprKind::Other, text),
            };
        }
        if has(t.identifier, kind) {
            let text = self.text(node);
            return mk(ExprKind::Name(text.clone()), text);
        }
        if has(t.string, kind) {
            let text = self.text(node);
            return mk(self.string_value(node), text);
        }
        if has(t.integer, kind) {
            let text = self.text(node);
            let digits: String = text.chars().filter(|c| *c != '_').collect();
            return match parse_int(&digits) {
                Some(v) => mk(ExprKind::Int(v), text),
                None => mk(ExprKind::Other, text),
            };
        }
        if has(t.float, kind) {
            let text = self.text(node);
            let v = text.replace('_', "").parse().unwrap_or(0.0);
            return mk(ExprKind::Float(v), text);
        }
        if has(t.true_, kind) {
            return mk(ExprKind::Bool(true), self.text(node));
        }
        if has(t.false_, kind) {
            return mk(ExprKind::Bool(false), self.text(node));
        }
        if has(t.null, kind) {
            return mk(ExprKind::Null, self.text(node));
        }
        if has(t.pair, kind) {
            return match (expr_of(field("key")), expr_of(field("value"))) {
                (Some((k, _)), Some((v, _))) => Lowered::Pair(k, v),
                _ => Lowered::Nothing,
            };
        }
        if has(t.map, kind) {
            let pairs = children
                .into_iter()
                .filter_map(|(_, l)| match l {
                    Lowered::Pair(k, v) => Some((k, v)),
                    _ => None,
                })
                .collect();
            return mk(ExprKind::Map(pairs), self.text(node));
        }
        if has(t.list, kind) {
            let items = exprs(children);
            return mk(ExprKind::List(items), self.text(node));
        }
        if has(t.wrapper, kind) {
            let text = self.text(node);
            let mut items = exprs(children);
            return match items.len() {
                1 => mk(ExprKind::Wrapped(Box::new(items.remove(0))), text),
                _ => mk(ExprKind::Other, text),
            };
        }
        if has(t.binary, kind) {
            let op = node
                .child_by_field_name("operator")
                .map(|n| self.src[n.byte_range()].chars().next().unwrap_or('?'))
                .unwrap_or('?');
            let text = self.text(node);
            return match (expr_of(field("left")), expr_of(field("right"))) {
                (Some((l, _)), Some((r, _))) => mk(
                    ExprKind::Binary {
                        op,
                        lhs: Box::new(l),
                        rhs: Box::new(r),
                    },
                    text,
                ),
                _ => mk(ExprKind::Other, text),
            };
        }
        if has(t.expression_statement, kind) {
            for (_, l) in &children {
                if let Lowered::Expr(e, _) = l {
                    self.set_usage(e, Usage::Discarded);
                }
            }
            return Lowered::Nothing;
        }
        if has(t.assignment, kind) {
            if let (Some(left), Some((value, _))) =
                (node.child_by_field_name("left"), expr_of(field("right")))
            {
                let target = collapse_ws(&self.src[left.byte_range()]);
                let ty = node.child_by_field_name("type").map(|n| self.text(n));
                self.set_usage(&value, Usage::Assigned(target.clone()));
                let func = self.current_func();
                self.model.assigns.push(Assign {
                    target,
                    ty,
                    value,
                    span: sp,
                    func,
                });
            }
            return Lowered::Nothing;
        }
        if has(t.alias_binding, kind) {
            let value = children.iter().find_map(|(f, l)| match (f, l) {
                (None, Lowered::Expr(e, _)) => Some(e.clone()),
                _ => None,
            });
            if let (Some(alias), Some(value)) = (node.child_by_field_name("alias"), value) {
                let target = collapse_ws(&self.src[alias.byte_range()]);
                let func = self.current_func();
                self.model.assigns.push(Assign {
                    target,
                    ty: None,
                    value: value.clone(),
                    span: sp,
                    func,
                });
                return Lowered::Expr(value, depth);
            }
            return Lowered::Nothing;
        }
        if has(t.conditional, kind) {
            if let Some((cond, _)) = expr_of(field("condition")) {
                self.set_usage(&cond, Usage::Tested);
            }
            return Lowered::Nothing;
        }
        if node.child_count() == 0 || is_expression_like(kind) {
            return mk(ExprKind::Other, self.text(node));
        }
        Lowered::Nothing
    }

    fn add_call(&mut self, callee: Expr, args: Vec<Arg>, sp: Span, node: Node) -> Lowered {
        let (name, receiver, name_span) = match &callee.kind {
            ExprKind::Name(path) => match path.rfind('.') {
                Some(dot) => {
                    let recv_text = path[..dot].to_string();
                    let recv = Expr {
                        kind: ExprKind::Name(recv_text.clone()),
                        text: recv_text,
                        span: Span::new(callee.span.start, callee.span.start + dot),
                    };
                    (
                        path[dot + 1..].to_string(),
                        Some(Box::new(recv)),
                        callee.span,
                    )
                }
                None => (path.clone(), None, callee.span),
            },
            ExprKind::Member { object, name } => (name.clone(), Some(object.clone()), callee.span),
            _ => (String::new(), None, callee.span),
        };
        let id = self.model.calls.len();
        let text = self.text(node);
        self.model.calls.push(Call {
            id,
            name,
            callee: collapse_ws(&callee.text),
            receiver,
            args,
            span: sp,
            name_span,
            func: self.current_func(),
            block: self.block_stack.last().copied().unwrap_or(0),
            usage: Usage::Used,
        });
        Lowered::Expr(
            Expr {
                kind: ExprKind::Call(id),
                text,
                span: sp,
            },
            1,
        )
    }

    fn set_usage(&mut self, e: &Expr, usage: Usage) {
        if let Some(id) = e.as_call() {
            self.model.calls[id].usage = usage;
        }
    }

    /// A literal's content, or `Template` when it interpolates. Handles
    /// implicitly concatenated literals (`"a" "b"`) one level deep.
    fn string_value(&self, node: Node) -> ExprKind {
        let t = self.t;
        let mut content = String::new();
        let mut cursor = node.walk();
        let mut parts: Vec<Node> = node.children(&mut cursor).collect();
        if parts.iter().any(|p| has(t.string, p.kind())) {
            let nested = std::mem::take(&mut parts);
            for n in nested {
                let mut c = n.walk();
                parts.extend(n.children(&mut c));
            }
        }
        for child in parts {
            let k = child.kind();
            if has(t.interpolation, k) {
                return ExprKind::Template;
            }
            if has(t.string_content, k) {
                content.push_str(&self.src[child.byte_range()]);
            }
        }
        ExprKind::Str(content)
    }
}

fn exprs(children: Vec<(Option<&'static str>, Lowered)>) -> Vec<Expr> {
    children
        .into_iter()
        .filter_map(|(_, l)| match l {
            Lowered::Expr(e, _) => Some(e),
            _ => None,
        })
        .collect()
}

fn is_expression_like(kind: &str) -> bool {
    !kind.ends_with("statement") && !kind.ends_with("definition") && kind != "block"
}

fn parse_int(s: &str) -> Option<i64> {
    let lower = s.to_ascii_lowercase();
    if let Some(hex) = lower.strip_prefix("0x") {
        return i64::from_str_radix(hex, 16).ok();
    }
    lower.trim_end_matches(['l', 'u']).parse().ok()
}

/// Collapses whitespace runs so `a . b` and `a.b` compare equal.
pub fn collapse_ws(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut space = false;
    for c in s.chars() {
        if c.is_whitespace() {
            space = true;
        } else {
            if space && !out.is_empty() && needs_space(out.chars().last(), c) {
                out.push(' ');
            }
            space = false;
            out.push(c);
        }
    }
    out
}

fn needs_space(prev: Option<char>, next: char) -> bool {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    prev.is_some_and(word) && word(next)
}

pub fn abbreviate(s: &str) -> String {
    if s.len() <= MAX_TEXT {
        return s.to_string();
    }
    let mut cut = MAX_TEXT;
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}…", &s[..cut])
}
