//! One generic lowering from a tree-sitter tree into the [`FileModel`].
//!
//! Each tree-sitter language is a [`NodeTable`]: which node kinds are calls,
//! members, strings, blocks... This walker visits the tree once, with a
//! cursor and an explicit stack (no recursion, so 10,000-deep nesting cannot
//! overflow the stack), building each node's value from its children's on
//! the way back up. The only file that sees tree-sitter types.

use tree_sitter::{Node, Parser, Tree};

use crate::model::{
    Arg, Assign, Block, BlockId, Call, Comment, Conditional, Exit, ExitKind, Expr, ExprKind,
    FileModel, FuncId, Function, GuardKind, Import, Language, Param, Span, Usage,
};

/// Expressions nested deeper than this are kept as opaque text: the checks
/// never need them and deep `Box` chains would cost stack on drop.
const MAX_EXPR_DEPTH: u32 = 48;
/// Longer expression texts are abbreviated; keys and TTLs are short.
pub(crate) const MAX_TEXT: usize = 240;

/// A call node: either a `function` expression (`a.b(..)`), or a `receiver`
/// plus a `name` (Java `method_invocation`, Ruby `call`), or `new T(..)`.
pub struct CallShape {
    pub kind: &'static str,
    pub function: Option<&'static str>,
    pub receiver: Option<&'static str>,
    pub name: Option<&'static str>,
    pub arguments: &'static str,
    /// A constructor call (`new T(..)`): the callee is the type.
    pub constructor: bool,
    /// A field holding a block/closure argument (Ruby `do ... end`).
    pub block: Option<&'static str>,
}

/// `kind` with two fields: (member: object, property), (pair: key, value),
/// (keyword argument: name, value).
pub type Fields = (&'static str, &'static str, &'static str);

/// An assignment or declaration: target field, value field, type field
/// (looked up on the node, then on its parent: Java `Type x = ..`).
pub struct AssignShape {
    pub kind: &'static str,
    pub target: &'static str,
    pub value: Option<&'static str>,
    pub ty: Option<&'static str>,
}

/// The node kinds and field names of one tree-sitter grammar.
pub struct NodeTable {
    pub language: Language,
    pub grammar: fn() -> tree_sitter::Language,
    pub calls: &'static [CallShape],
    /// Argument-list nodes.
    pub arguments: &'static [&'static str],
    pub members: &'static [Fields],
    pub keyword_args: &'static [Fields],
    pub pairs: &'static [Fields],
    pub identifiers: &'static [&'static str],
    pub strings: &'static [&'static str],
    pub string_content: &'static [&'static str],
    pub interpolation: &'static [&'static str],
    /// Symbols read as strings (Ruby `:nx`, `nx:` keys).
    pub symbols: &'static [&'static str],
    pub numbers: &'static [&'static str],
    pub true_: &'static [&'static str],
    pub false_: &'static [&'static str],
    pub null: &'static [&'static str],
    pub maps: &'static [&'static str],
    pub lists: &'static [&'static str],
    /// Parenthesised / awaited / referenced expressions: transparent.
    pub wrappers: &'static [&'static str],
    /// (kind, field): the node's value is that field's (Go composite literal → body).
    pub field_wrappers: &'static [(&'static str, &'static str)],
    /// Binary operators with `left`/`operator`/`right` fields.
    pub binaries: &'static [&'static str],
    pub functions: &'static [&'static str],
    pub classes: &'static [&'static str],
    /// (statement kind, body field): the body runs under the statement's guard (`with`).
    pub guarded_bodies: &'static [(&'static str, &'static str)],
    /// Nodes whose value call becomes a guard (`with_item`, Java `resource`).
    pub guard_items: &'static [&'static str],
    pub finally: &'static [&'static str],
    pub defer: &'static [&'static str],
    pub closures: &'static [&'static str],
    /// Statements that throw their expression's value away.
    pub expression_statements: &'static [&'static str],
    /// Statement lists whose direct child calls are statements (Ruby bodies).
    pub statement_lists: &'static [&'static str],
    /// The last statement of a list is its value (Ruby): not discarded.
    pub implicit_return: bool,
    pub assignments: &'static [AssignShape],
    /// `value as name` bindings: the value child bound to the `alias` field.
    pub alias_bindings: &'static [&'static str],
    /// Statements whose `condition` field is tested.
    pub conditionals: &'static [&'static str],
    /// Early exits: (kind, exit kind); a `return`'s value is its first child.
    pub exits: &'static [(&'static str, ExitKind)],
    pub comments: &'static [&'static str],
    /// Strips the comment delimiters.
    pub comment_text: fn(&str) -> &str,
    pub import_kinds: &'static [&'static str],
    /// Lowers an import node.
    pub imports: fn(Node, &str, &mut Vec<Import>),
    /// Calls that import their string argument (`require('ioredis')`).
    pub import_calls: &'static [&'static str],
    /// Reads a function's `parameters` node.
    pub params: fn(Node, &str) -> Vec<Param>,
    /// Heredocs whose body is not inside the expression (Ruby): the kinds of
    /// (the marker where the string is used, the body that follows later).
    pub heredoc: Option<(&'static str, &'static str)>,
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
    pushed_class: bool,
}

/// Parses `text` with `table`'s grammar, reusing the thread's parser and,
/// when given, an old tree already edited to match `text`.
pub fn parse(
    parser: &mut Parser,
    table: &NodeTable,
    text: &str,
    old: Option<&Tree>,
) -> Result<Tree, String> {
    parser
        .set_language(&(table.grammar)())
        .map_err(|e| format!("tree-sitter grammar error: {e}"))?;
    parser
        .parse(text, old)
        .ok_or_else(|| "the parser gave up (timeout or cancellation)".into())
}

/// Every node kind name of `table`'s grammar, by kind id: built once per
/// table (TypeScript has two grammars) and kept for the process.
fn kind_names(table: &'static NodeTable) -> &'static [&'static str] {
    use std::sync::Mutex;
    type Names = &'static [&'static str];
    static BUILT: Mutex<Vec<(usize, Names)>> = Mutex::new(Vec::new());
    let id = std::ptr::from_ref(table) as usize;
    let Ok(mut built) = BUILT.lock() else {
        return &[];
    };
    if let Some((_, names)) = built.iter().find(|(t, _)| *t == id) {
        return names;
    }
    let grammar = (table.grammar)();
    let names: Vec<&'static str> = (0..grammar.node_kind_count())
        .map(|id| {
            u16::try_from(id)
                .ok()
                .and_then(|id| grammar.node_kind_for_id(id))
                .unwrap_or("")
        })
        .collect();
    let names: Names = Box::leak(names.into_boxed_slice());
    built.push((id, names));
    names
}

/// Lowers a parsed tree into the model.
pub fn lower(table: &'static NodeTable, tree: &Tree, text: &str) -> FileModel {
    let mut lw = Lowerer {
        t: table,
        kinds: kind_names(table),
        src: text,
        model: FileModel::new(table.language, Span::new(0, text.len())),
        block_stack: vec![0],
        func_stack: Vec::new(),
        class_stack: Vec::new(),
        heredocs: heredoc_bodies(table, tree, text).into_iter(),
    };
    lw.walk(tree);
    lw.model
}

struct Lowerer<'a> {
    t: &'a NodeTable,
    kinds: &'static [&'static str],
    src: &'a str,
    model: FileModel,
    block_stack: Vec<BlockId>,
    func_stack: Vec<FuncId>,
    class_stack: Vec<String>,
    /// Heredoc bodies in source order, handed to their markers in the same order.
    heredocs: std::vec::IntoIter<String>,
}

/// The contents of every heredoc body, in order (one cursor pass; only when
/// the grammar has split heredocs and the text has a `<<`).
fn heredoc_bodies(table: &NodeTable, tree: &Tree, text: &str) -> Vec<String> {
    let Some((_, body)) = table.heredoc else {
        return Vec::new();
    };
    if !text.contains("<<") {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut cursor = tree.walk();
    'walk: loop {
        let node = cursor.node();
        if node.kind() == body {
            // The body's text ends with its terminator line (`LUA`): drop it.
            let raw = &text[node.byte_range()];
            let content = raw.trim_end().rsplit_once('\n').map_or("", |(c, _)| c);
            out.push(content.to_string());
        } else if cursor.goto_first_child() {
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                break 'walk;
            }
        }
    }
    out
}

fn has(kinds: &[&str], kind: &str) -> bool {
    kinds.contains(&kind)
}

fn span(node: Node) -> Span {
    Span::new(node.start_byte(), node.end_byte())
}

/// Takes the first child lowered under `field` out of `children`.
fn take(children: &mut Vec<(Option<&'static str>, Lowered)>, field: &str) -> Option<Lowered> {
    let i = children.iter().position(|(f, _)| *f == Some(field))?;
    Some(children.remove(i).1)
}

fn take_expr(children: &mut Vec<(Option<&'static str>, Lowered)>, field: &str) -> Option<Expr> {
    match take(children, field)? {
        Lowered::Expr(e, _) => Some(e),
        _ => None,
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

/// A keyword's name as written: `nx:` → `nx`, `"PX"` → `PX`.
fn key_name(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Str(s) => s.clone(),
        _ => e
            .text
            .trim_end_matches(':')
            .trim_matches(['"', '\''])
            .to_string(),
    }
}

impl<'a> Lowerer<'a> {
    fn walk(&mut self, tree: &Tree) {
        let mut cursor = tree.walk();
        let mut stack: Vec<Frame> = vec![self.enter(cursor.node(), None, None)];
        loop {
            if cursor.goto_first_child() {
                let parent = stack.last().map(|f| f.node);
                stack.push(self.enter(cursor.node(), cursor.field_name(), parent));
                continue;
            }
            // The current node has no more children: finish it and its
            // finished ancestors until a sibling is found.
            loop {
                let Some(frame) = stack.pop() else { return };
                let field = frame.field;
                let lowered = self.finish(frame);
                if let Some(parent) = stack.last_mut() {
                    parent.children.push((field, lowered));
                }
                if stack.is_empty() {
                    return;
                }
                if cursor.goto_next_sibling() {
                    let parent = stack.last().map(|f| f.node);
                    stack.push(self.enter(cursor.node(), cursor.field_name(), parent));
                    break;
                }
                if !cursor.goto_parent() {
                    return;
                }
            }
        }
    }

    /// `node.kind()` from a table: tree-sitter's own measures and validates
    /// the C string on every call, and the walk asks for every node.
    fn kind(&self, node: Node) -> &'static str {
        self.kinds
            .get(usize::from(node.kind_id()))
            .copied()
            .filter(|k| !k.is_empty())
            .unwrap_or_else(|| node.kind())
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

    fn name_of(&self, node: Node) -> Option<String> {
        node.child_by_field_name("name")
            .map(|n| self.src[n.byte_range()].to_string())
    }

    /// Called when the walk first reaches `node`: opens scopes, records comments and imports.
    fn enter<'t>(
        &mut self,
        node: Node<'t>,
        field: Option<&'static str>,
        parent: Option<Node<'t>>,
    ) -> Frame<'t> {
        let kind = self.kind(node);
        let t = self.t;
        let mut frame = Frame {
            node,
            field,
            children: Vec::new(),
            pushed_block: false,
            pushed_func: false,
            pushed_class: false,
        };
        if node.is_error() || node.is_missing() {
            self.model.syntax_errors.push(span(node));
        }
        // Punctuation and keywords open nothing (about half of all nodes).
        if !node.is_named() {
            return frame;
        }
        if has(t.comments, kind) {
            let raw = &self.src[node.byte_range()];
            let text = (t.comment_text)(raw).trim().to_string();
            self.model.comments.push(Comment {
                text,
                span: span(node),
            });
        } else if has(t.import_kinds, kind) {
            (t.imports)(node, self.src, &mut self.model.imports);
        } else if has(t.functions, kind) {
            let name = self.name_of(node).unwrap_or_else(|| "<anonymous>".into());
            let qualified = match self.class_stack.last() {
                Some(class) => format!("{class}.{name}"),
                None => name,
            };
            let mut params = Vec::new();
            for f in ["receiver", "parameters"] {
                if let Some(p) = node.child_by_field_name(f) {
                    params.extend((t.params)(p, self.src));
                }
            }
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
            self.class_stack
                .push(self.name_of(node).unwrap_or_default());
            frame.pushed_class = true;
        } else if has(t.finally, kind) {
            self.push_block(GuardKind::Finally, span(node));
            frame.pushed_block = true;
        } else if has(t.defer, kind) {
            self.push_block(GuardKind::Defer, span(node));
            frame.pushed_block = true;
        } else if has(t.closures, kind) {
            self.push_block(GuardKind::Closure, span(node));
            frame.pushed_block = true;
        } else if parent.is_some_and(|p| {
            t.guarded_bodies
                .iter()
                .any(|(k, f)| *k == self.kind(p) && field == Some(*f))
        }) {
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
            mut children,
            pushed_block,
            pushed_func,
            pushed_class,
            ..
        } = frame;
        let kind = self.kind(node);
        let t = self.t;
        if pushed_block {
            self.block_stack.pop();
        }
        if pushed_func {
            self.func_stack.pop();
        }
        if pushed_class {
            self.class_stack.pop();
        }
        if !node.is_named() || has(t.comments, kind) {
            return Lowered::Nothing;
        }
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

        if let Some(shape) = t.calls.iter().find(|c| c.kind == kind) {
            return self.call(shape, node, children, sp);
        }
        if has(t.arguments, kind) {
            let args = children
                .into_iter()
                .filter_map(|(_, l)| match l {
                    Lowered::Expr(value, _) => Some(Arg { name: None, value }),
                    Lowered::Arg(a) => Some(a),
                    Lowered::Pair(k, value) => Some(Arg {
                        name: Some(key_name(&k)),
                        value,
                    }),
                    _ => None,
                })
                .collect();
            return Lowered::Args(args);
        }
        if let Some((_, name_f, value_f)) = t.keyword_args.iter().find(|k| k.0 == kind) {
            let name = node
                .child_by_field_name(name_f)
                .map(|n| self.src[n.byte_range()].to_string());
            return match take_expr(&mut children, value_f) {
                Some(value) => Lowered::Arg(Arg { name, value }),
                None => Lowered::Nothing,
            };
        }
        if let Some((_, key_f, value_f)) = t.pairs.iter().find(|k| k.0 == kind) {
            let key = node.child_by_field_name(key_f).map(|k| {
                let text = self.src[k.byte_range()].to_string();
                match take_expr(&mut children, key_f) {
                    Some(e) => e,
                    None => Expr {
                        kind: ExprKind::Name(text.clone()),
                        text,
                        span: span(k),
                    },
                }
            });
            return match (key, take_expr(&mut children, value_f)) {
                (Some(k), Some(v)) => Lowered::Pair(k, v),
                _ => Lowered::Nothing,
            };
        }
        if let Some((_, obj_f, prop_f)) = t.members.iter().find(|m| m.0 == kind) {
            let prop = node
                .child_by_field_name(prop_f)
                .map(|n| self.src[n.byte_range()].to_string())
                .unwrap_or_default();
            let text = self.text(node);
            return match take_expr(&mut children, obj_f) {
                Some(obj) if matches!(obj.kind, ExprKind::Name(_)) => {
                    let path = format!("{}.{prop}", obj.text);
                    mk(ExprKind::Name(path), text)
                }
                Some(obj) => mk(
                    ExprKind::Member {
                        object: Box::new(obj),
                        name: prop,
                    },
                    text,
                ),
                None => mk(ExprKind::Name(collapse_ws(&text)), text),
            };
        }
        if has(t.identifiers, kind) {
            let text = self.text(node);
            return mk(ExprKind::Name(text.clone()), text);
        }
        if t.heredoc.is_some_and(|(marker, _)| marker == kind) {
            let text = self.text(node);
            let body = self.heredocs.next().unwrap_or_default();
            return mk(ExprKind::Str(body), text);
        }
        if has(t.strings, kind) {
            let text = self.text(node);
            return mk(self.string_value(node), text);
        }
        if has(t.symbols, kind) {
            let text = self.text(node);
            let name = text
                .trim_start_matches(':')
                .trim_end_matches(':')
                .to_string();
            return mk(ExprKind::Str(name), text);
        }
        if has(t.numbers, kind) {
            let text = self.text(node);
            let digits: String = text.chars().filter(|c| *c != '_').collect();
            return match (parse_int(&digits), digits.parse::<f64>()) {
                (Some(v), _) => mk(ExprKind::Int(v), text),
                (None, Ok(f)) => mk(ExprKind::Float(f), text),
                _ => mk(ExprKind::Other, text),
            };
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
        if has(t.maps, kind) || has(t.lists, kind) {
            // A literal with `key: value` pairs is a map, otherwise a list
            // (Go's `literal_value` is either).
            let text = self.text(node);
            let mut pairs = Vec::new();
            let mut items = Vec::new();
            for (_, l) in children {
                match l {
                    Lowered::Pair(k, v) => pairs.push((k, v)),
                    Lowered::Expr(e, _) => items.push(e),
                    _ => {}
                }
            }
            return if !pairs.is_empty() || (has(t.maps, kind) && items.is_empty()) {
                mk(ExprKind::Map(pairs), text)
            } else {
                mk(ExprKind::List(items), text)
            };
        }
        if has(t.wrappers, kind) {
            let text = self.text(node);
            let mut items = exprs(children);
            return match items.len() {
                1 => mk(ExprKind::Wrapped(Box::new(items.remove(0))), text),
                _ => mk(ExprKind::Other, text),
            };
        }
        if let Some((_, f)) = t.field_wrappers.iter().find(|w| w.0 == kind) {
            let text = self.text(node);
            return match take_expr(&mut children, f) {
                Some(inner) => mk(ExprKind::Wrapped(Box::new(inner)), text),
                None => mk(ExprKind::Other, text),
            };
        }
        if has(t.binaries, kind) {
            let op = node
                .child_by_field_name("operator")
                .and_then(|n| self.src[n.byte_range()].chars().next())
                .unwrap_or('?');
            let text = self.text(node);
            return match (
                take_expr(&mut children, "left"),
                take_expr(&mut children, "right"),
            ) {
                (Some(l), Some(r)) => mk(
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
        if has(t.expression_statements, kind) || has(t.statement_lists, kind) {
            // Ruby: the last statement (not comment) of a body is its value.
            let last = (t.implicit_return && has(t.statement_lists, kind))
                .then(|| {
                    let mut cursor = node.walk();
                    let last = node
                        .named_children(&mut cursor)
                        .filter(|c| !has(t.comments, c.kind()))
                        .last();
                    last.map(span)
                })
                .flatten();
            for (_, l) in &children {
                if let Lowered::Expr(e, _) = l {
                    if Some(e.span) != last {
                        self.set_usage(e, Usage::Discarded);
                    }
                }
            }
            return Lowered::Nothing;
        }
        if has(t.guard_items, kind) {
            for (_, l) in &children {
                if let Lowered::Expr(e, _) = l {
                    self.set_usage(e, Usage::Guard);
                    if let Some(name) = e.as_name() {
                        self.model.guard_names.push((name.to_string(), sp));
                    }
                }
            }
            return match children
                .into_iter()
                .find(|(_, l)| matches!(l, Lowered::Expr(..)))
            {
                Some((_, l)) => l,
                None => Lowered::Nothing,
            };
        }
        if let Some(shape) = t.assignments.iter().find(|a| a.kind == kind) {
            self.assign(shape, node, children, sp);
            return Lowered::Nothing;
        }
        if has(t.alias_bindings, kind) {
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
        if has(t.conditionals, kind) {
            if let Some(cond) = take_expr(&mut children, "condition") {
                self.set_usage(&cond, Usage::Tested);
                let func = self.current_func();
                let text = cond.text.clone();
                self.model.conditionals.push(Conditional {
                    stmt: sp,
                    cond: cond.span,
                    text,
                    func,
                });
            }
            return Lowered::Nothing;
        }
        if let Some((_, exit)) = t.exits.iter().find(|e| e.0 == kind) {
            let value = exprs(children).into_iter().next();
            let text = value.as_ref().map(|v| v.text.clone()).unwrap_or_default();
            if let Some(v) = &value {
                // A returned call's result reaches the caller: it is not discarded.
                self.set_usage(v, Usage::Used);
            }
            let func = self.current_func();
            self.model.exits.push(Exit {
                kind: *exit,
                span: sp,
                func,
                value: text,
                operand: Span::default(),
            });
            return Lowered::Nothing;
        }
        if node.child_count() == 0 || is_expression_like(kind) {
            return mk(ExprKind::Other, self.text(node));
        }
        Lowered::Nothing
    }

    fn call(
        &mut self,
        shape: &CallShape,
        node: Node,
        mut children: Vec<(Option<&'static str>, Lowered)>,
        sp: Span,
    ) -> Lowered {
        let args = match take(&mut children, shape.arguments) {
            Some(Lowered::Args(args)) => args,
            Some(Lowered::Expr(e, _)) => vec![Arg {
                name: None,
                value: e,
            }],
            _ => Vec::new(),
        };
        let has_block = shape
            .block
            .is_some_and(|b| node.child_by_field_name(b).is_some());
        let (name, callee, receiver, name_span) = if let Some(f) = shape.function {
            let Some(callee) = take_expr(&mut children, f) else {
                return Lowered::Expr(Expr::other(self.text(node), sp), 1);
            };
            split_callee(callee)
        } else {
            let name_node = shape.name.and_then(|f| node.child_by_field_name(f));
            let name = name_node
                .map(|n| self.src[n.byte_range()].to_string())
                .unwrap_or_default();
            let name_span = name_node.map_or(sp, span);
            match shape.receiver.and_then(|f| take_expr(&mut children, f)) {
                Some(recv) => {
                    let callee = format!("{}.{name}", recv.text);
                    (name, callee, Some(Box::new(recv)), name_span)
                }
                None => (name.clone(), name, None, name_span),
            }
        };
        // `new redis.Client(..)`: the callee is the type; its last segment is the name.
        // Type arguments are not part of the name: `new DefaultRedisScript<>(..)`.
        let callee = match callee.find('<') {
            Some(i) if shape.constructor => callee[..i].to_string(),
            _ => callee,
        };
        let name = if shape.constructor {
            callee
                .rsplit(['.', ':'])
                .next()
                .unwrap_or(&callee)
                .to_string()
        } else {
            name
        };
        if has(self.t.import_calls, &name) {
            if let Some(path) = args.first().and_then(|a| a.value.as_str()) {
                self.model.imports.push(Import {
                    path: path.to_string(),
                    alias: None,
                    span: sp,
                });
            }
        }
        let id = self.model.calls.len();
        let text = self.text(node);
        self.model.calls.push(Call {
            id,
            name,
            callee: collapse_ws(&callee),
            receiver: if shape.constructor { None } else { receiver },
            args,
            span: sp,
            name_span,
            func: self.current_func(),
            block: self.block_stack.last().copied().unwrap_or(0),
            usage: if has_block { Usage::Guard } else { Usage::Used },
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

    fn assign(
        &mut self,
        shape: &AssignShape,
        node: Node,
        mut children: Vec<(Option<&'static str>, Lowered)>,
        sp: Span,
    ) {
        let Some(target_node) = node.child_by_field_name(shape.target) else {
            return;
        };
        let mut target = collapse_ws(&self.src[target_node.byte_range()]);
        let value = shape.value.and_then(|f| take_expr(&mut children, f));
        let ty = shape.ty.and_then(|f| {
            node.child_by_field_name(f)
                .or_else(|| node.parent().and_then(|p| p.child_by_field_name(f)))
                .map(|n| self.text(n))
        });
        // `ok, err := call()`: the call's usage names both; the assignment binds the first.
        let all_targets = target.clone();
        if let Some((first, _)) = target.split_once(',') {
            target = first.trim().to_string();
        }
        let value = match value {
            Some(v) => v,
            None if ty.is_some() => Expr::other("", sp),
            None => return,
        };
        if !matches!(value.kind, ExprKind::Other) || ty.is_some() {
            self.set_usage(&value, Usage::Assigned(all_targets));
        }
        let func = self.current_func();
        self.model.assigns.push(Assign {
            target,
            ty,
            value,
            span: sp,
            func,
        });
    }

    fn set_usage(&mut self, e: &Expr, usage: Usage) {
        if let Some(id) = e.as_call() {
            let call = &mut self.model.calls[id];
            // A block-taking call stays a guard whatever its statement does with the result.
            if call.usage != Usage::Guard {
                call.usage = usage;
            }
        }
    }

    /// A literal's content, or `Template` when it interpolates. Handles
    /// implicitly concatenated literals (`"a" "b"`) one level deep.
    fn string_value(&self, node: Node) -> ExprKind {
        let t = self.t;
        let mut cursor = node.walk();
        let mut parts: Vec<Node> = node.children(&mut cursor).collect();
        if parts.iter().any(|p| has(t.strings, p.kind())) {
            let nested = std::mem::take(&mut parts);
            for n in nested {
                let mut c = n.walk();
                parts.extend(n.children(&mut c));
            }
        }
        let mut content = String::new();
        let mut found = false;
        for child in parts {
            let k = child.kind();
            if has(t.interpolation, k) {
                return ExprKind::Template;
            }
            if has(t.string_content, k) {
                found = true;
                content.push_str(&self.src[child.byte_range()]);
            }
        }
        if !found {
            // An empty literal, or a grammar without content nodes: strip the quotes.
            let raw = &self.src[node.byte_range()];
            let q = raw.chars().next().filter(|c| matches!(c, '"' | '\'' | '`'));
            if let Some(q) = q {
                content = raw.trim_start_matches(q).trim_end_matches(q).to_string();
            }
        }
        ExprKind::Str(content)
    }
}

/// `a.b.c` → (`c`, `a.b.c`, receiver `a.b`); `f().g` → (`g`, .., receiver `f()`).
fn split_callee(callee: Expr) -> (String, String, Option<Box<Expr>>, Span) {
    let name_span = callee.span;
    match callee.kind {
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
                    path,
                    Some(Box::new(recv)),
                    name_span,
                )
            }
            None => (path.clone(), path, None, name_span),
        },
        ExprKind::Member { object, name } => {
            let callee_text = format!("{}.{name}", object.text);
            (name, callee_text, Some(object), name_span)
        }
        _ => (String::new(), callee.text, None, name_span),
    }
}

fn is_expression_like(kind: &str) -> bool {
    !kind.ends_with("statement")
        && !kind.ends_with("definition")
        && !kind.ends_with("declaration")
        && kind != "block"
}

fn parse_int(s: &str) -> Option<i64> {
    let lower = s.to_ascii_lowercase();
    if let Some(hex) = lower.strip_prefix("0x") {
        return i64::from_str_radix(hex, 16).ok();
    }
    lower.trim_end_matches(['l', 'u', 'n']).parse().ok()
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
