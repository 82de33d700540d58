//! One generic lowering from a tree-sitter tree into the [`FileModel`].
//!
//! Each tree-sitter language is a [`NodeTable`] (`lang/<language>.rs`): which
//! node kinds are calls, members, strings, blocks... [`table::Roles`] turns it
//! into one role per kind id. This walker visits the tree once, with a cursor
//! and an explicit stack (no recursion, so 10,000-deep nesting cannot overflow
//! the stack), building each node's value from its children's on the way back
//! up: `expr.rs` lowers expressions, `stmt.rs` calls and statements, `text.rs`
//! spells names. The only module that sees tree-sitter types.

mod delegation;
mod expr;
mod stmt;
mod table;
mod text;

pub use table::{
    AssignShape, CallShape, Delegation, DelegationForm, Fields, Heredoc, LoopForm, NodeTable,
};
pub use text::{abbreviate, collapse_ws, MAX_TEXT};

use tree_sitter::{Node, Parser, Tree};

use table::{Opens, Role, Roles};

use crate::model::{
    Arg, BlockId, Comment, Expr, FileModel, FuncId, Function, GuardKind, Handler, Loop, Span,
};

/// Expressions nested deeper than this are kept as opaque text: the checks
/// never need them and deep `Box` chains would cost stack on drop.
const MAX_EXPR_DEPTH: u32 = 48;

/// What a finished node hands its parent.
enum Lowered {
    Expr(Expr, u32),
    Arg(Arg),
    /// An argument list: positionals and keywords in source order.
    Args(Vec<Arg>),
    Pair(Expr, Expr),
    Nothing,
}

/// A finished child, under the field its parent holds it in.
type Children = Vec<(Option<&'static str>, Lowered)>;

struct Frame<'t> {
    node: Node<'t>,
    field: Option<&'static str>,
    children: Children,
    pushed_block: bool,
    pushed_func: bool,
    pushed_class: bool,
    /// The parent's kind (a bare identifier's place: a statement, a value).
    parent_kind: Option<&'static str>,
    /// How many block parameter names this node put on `Lowerer::block_params`.
    pushed_params: usize,
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

/// Lowers a parsed tree into the model.
pub fn lower(table: &'static NodeTable, tree: &Tree, text: &str) -> FileModel {
    let heredocs = match &table.heredoc {
        Some(h) if text.contains("<<") => (h.bodies)(tree, text),
        _ => Vec::new(),
    };
    let mut lw = Lowerer {
        t: table,
        roles: Roles::of(table),
        src: text,
        model: FileModel::new(table.language, Span::new(0, text.len())),
        block_stack: vec![0],
        func_stack: Vec::new(),
        class_stack: Vec::new(),
        block_params: Vec::new(),
        heredocs: heredocs.into_iter(),
    };
    lw.walk(tree);
    // Disjoint spans, found inner first: sorted for a binary search by place.
    lw.model.decorators.sort_by_key(|(sp, _)| sp.start);
    lw.model
}

struct Lowerer<'a> {
    t: &'a NodeTable,
    roles: &'static Roles,
    src: &'a str,
    model: FileModel,
    block_stack: Vec<BlockId>,
    func_stack: Vec<FuncId>,
    class_stack: Vec<String>,
    /// The parameter names of the blocks around the node being lowered (`do |job| .. end`).
    block_params: Vec<String>,
    /// Heredoc bodies in source order, handed to their markers in the same order.
    heredocs: std::vec::IntoIter<String>,
}

fn span(node: Node) -> Span {
    Span::new(node.start_byte(), node.end_byte())
}

/// Takes the first child lowered under `field` out of `children`.
fn take(children: &mut Children, field: &str) -> Option<Lowered> {
    let i = children.iter().position(|(f, _)| *f == Some(field))?;
    Some(children.remove(i).1)
}

fn take_expr(children: &mut Children, field: &str) -> Option<Expr> {
    match take(children, field)? {
        Lowered::Expr(e, _) => Some(e),
        _ => None,
    }
}

fn exprs(children: Children) -> Vec<Expr> {
    children
        .into_iter()
        .filter_map(|(_, l)| match l {
            Lowered::Expr(e, _) => Some(e),
            _ => None,
        })
        .collect()
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
                // Punctuation and statements hand their parent nothing; only a
                // field's place can matter (`take` finds the first under it).
                let kept = field.is_some() || !matches!(lowered, Lowered::Nothing);
                if let Some(parent) = stack.last_mut().filter(|_| kept) {
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

    fn current_func(&self) -> Option<FuncId> {
        self.func_stack.last().copied()
    }

    fn push_block(&mut self, kind: GuardKind, span: Span) {
        let id = self
            .model
            .add_block(kind, span, self.block_stack.last().copied());
        self.block_stack.push(id);
    }

    fn name_of(&self, node: Node) -> Option<String> {
        node.child_by_field_name("name")
            .map(|n| self.src[n.byte_range()].to_string())
    }

    /// The bases a class declaration names between its name and its body
    /// (`< ApplicationJob`, `(Lock)`, `extends MyLock implements Closeable`),
    /// each by its last name segment, type arguments left out.
    fn bases(&self, node: Node) -> Vec<String> {
        let Some(name) = node.child_by_field_name("name") else {
            return Vec::new();
        };
        let end = node
            .child_by_field_name("body")
            .map(|b| b.start_byte())
            .unwrap_or_else(|| {
                let rest = self.src.get(name.end_byte()..node.end_byte()).unwrap_or("");
                name.end_byte() + rest.find('\n').unwrap_or(rest.len())
            });
        // Comments between the name and the body are no bases (a Ruby
        // module's body starts after the comment above its first class).
        let mut header = String::new();
        let mut at = name.end_byte();
        let mut cursor = node.walk();
        for c in node.children(&mut cursor) {
            if c.kind().contains("comment") && c.start_byte() >= at && c.end_byte() <= end {
                header.push_str(self.src.get(at..c.start_byte()).unwrap_or(""));
                header.push(' ');
                at = c.end_byte();
            }
        }
        header.push_str(self.src.get(at..end).unwrap_or(""));
        let mut out = Vec::new();
        let mut word = String::new();
        // Type arguments (`Base<T>`, `Handler[T]`) open right after a name.
        let mut depth = 0usize;
        let mut prev = ' ';
        for c in header.chars().chain(std::iter::once(' ')) {
            if c.is_alphanumeric() || matches!(c, '_' | '.' | ':') {
                word.push(c);
            } else {
                let last = word.rsplit(['.', ':']).next().unwrap_or("");
                let keyword = matches!(last, "extends" | "implements" | "object" | "metaclass");
                if depth == 0 && !keyword && last.starts_with(char::is_alphabetic) {
                    out.push(last.to_string());
                }
                word.clear();
                if matches!(c, '<' | '[') && (prev.is_alphanumeric() || prev == '_') {
                    depth += 1;
                } else if matches!(c, '>' | ']') {
                    depth = depth.saturating_sub(1);
                }
            }
            prev = c;
        }
        out
    }

    fn text(&self, node: Node) -> String {
        abbreviate(&self.src[node.byte_range()])
    }

    /// Called when the walk first reaches `node`: opens scopes, records comments and imports.
    fn enter<'t>(
        &mut self,
        node: Node<'t>,
        field: Option<&'static str>,
        parent: Option<Node<'t>>,
    ) -> Frame<'t> {
        let mut frame = Frame {
            node,
            field,
            children: Vec::new(),
            pushed_block: false,
            pushed_func: false,
            pushed_class: false,
            parent_kind: parent.map(|p| p.kind()),
            pushed_params: 0,
        };
        if node.is_error() || node.is_missing() {
            self.model.syntax_errors.push(span(node));
        }
        // Punctuation and keywords open nothing (about half of all nodes).
        if !node.is_named() {
            return frame;
        }
        let t = self.t;
        if let Some(form) = self.roles.loop_form(node) {
            self.open_loop(node, form);
        }
        let opens = self.roles.opens(node);
        match opens {
            Opens::Comment => {
                let raw = &self.src[node.byte_range()];
                let text = (t.comment_text)(raw).trim().to_string();
                self.model.comments.push(Comment {
                    text,
                    span: span(node),
                });
            }
            Opens::Import => (t.imports)(node, self.src, &mut self.model.imports),
            Opens::Function => {
                self.open_function(node);
                frame.pushed_block = true;
                frame.pushed_func = true;
            }
            Opens::Class => {
                let name = self.name_of(node).unwrap_or_default();
                let bases = self.bases(node);
                if !name.is_empty() && !bases.is_empty() {
                    self.model.supers.insert(name.clone(), bases);
                }
                self.class_stack.push(name);
                frame.pushed_class = true;
            }
            Opens::Closure
                if matches!(field, Some("value" | "right"))
                    && self.named_closure(parent).is_some() =>
            {
                let name = self.named_closure(parent);
                self.open_named_function(node, name);
                frame.pushed_block = true;
                frame.pushed_func = true;
            }
            Opens::Handler => self.handler(node, parent),
            Opens::Finally | Opens::Defer | Opens::Closure => {
                let kind = match opens {
                    Opens::Finally => GuardKind::Finally,
                    Opens::Defer => GuardKind::Defer,
                    _ => GuardKind::Closure,
                };
                if let (Opens::Finally, Some(p)) = (opens, parent) {
                    self.model.tries.push(span(p));
                }
                self.push_block(kind, span(node));
                frame.pushed_block = true;
                if t.bare_identifier_calls {
                    frame.pushed_params = self.push_block_params(node);
                }
            }
            Opens::Nothing => {
                let guarded = parent.is_some_and(|p| {
                    let parent_kind = self.roles.name(p);
                    t.guarded_bodies
                        .iter()
                        .any(|(k, f)| *k == parent_kind && field == Some(*f))
                });
                if guarded {
                    self.push_block(GuardKind::With, span(node));
                    frame.pushed_block = true;
                }
            }
        }
        frame
    }

    /// A loop: whether it repeats, and its head (the text before its body).
    fn open_loop(&mut self, node: Node, form: LoopForm) {
        let repeats = match form {
            LoopForm::Repeats => true,
            LoopForm::Iterates => false,
            LoopForm::IteratesWith(kinds) => {
                let mut cursor = node.walk();
                let iterates =
                    (node.named_children(&mut cursor)).any(|c| kinds.contains(&c.kind()));
                !iterates
            }
        };
        let body = node
            .child_by_field_name("body")
            .map_or(node.end_byte(), |b| b.start_byte());
        let head = self.src.get(node.start_byte()..body).unwrap_or_default();
        self.model.loops.push(Loop {
            span: span(node),
            head: text::collapse_ws(head),
            body,
            func: self.current_func(),
            repeats,
        });
    }

    /// A `rescue` / `except` / `catch` clause covers what comes before it in
    /// its `begin` / `try`; its head is what it catches.
    fn handler(&mut self, node: Node, parent: Option<Node>) {
        let Some(parent) = parent else { return };
        let text = &self.src[node.byte_range()];
        let head = text.split(['\n', '{']).next().unwrap_or_default();
        self.model.handlers.push(Handler {
            covers: Span {
                start: parent.start_byte(),
                end: node.start_byte(),
            },
            head: head.trim().to_string(),
            span: span(node),
        });
    }

    /// The name a closure is bound to, when `parent` binds one outside any
    /// function (module constants, class fields). A closure inside a function
    /// stays part of it: its locks are that function's.
    fn named_closure(&self, parent: Option<Node>) -> Option<String> {
        if !self.func_stack.is_empty() {
            return None;
        }
        let parent = parent?;
        let kind = parent.kind();
        let (_, field) = self.t.named_closures.iter().find(|(k, _)| *k == kind)?;
        let name = &self.src[parent.child_by_field_name(field)?.byte_range()];
        // A method set on a prototype is the class's (`Order.prototype.lock`
        // is `Order.lock`); one set on the exports is the module's function.
        let name = name.replacen(".prototype.", ".", 1);
        let name = ["module.exports.", "exports."]
            .iter()
            .find_map(|p| name.strip_prefix(p))
            .unwrap_or(&name);
        Some(name.to_string())
    }

    /// A function: its qualified name, parameters (and Go receiver) and body block.
    fn open_function(&mut self, node: Node) {
        let name = self.name_of(node);
        self.open_named_function(node, name);
    }

    fn open_named_function(&mut self, node: Node, name: Option<String>) {
        let name = name.unwrap_or_else(|| "<anonymous>".into());
        let mut params = Vec::new();
        for f in ["receiver", "parameters"] {
            if let Some(p) = node.child_by_field_name(f) {
                params.extend((self.t.params)(p, self.src));
            }
        }
        // A Go method is its receiver type's: `(q *Queries) Lock` is `Queries.Lock`.
        let receiver_type = node
            .child_by_field_name("receiver")
            .and(params.first())
            .and_then(|p| p.ty.as_deref())
            .and_then(|ty| {
                ty.trim_start_matches(['*', '&', ' '])
                    .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .next()
            })
            .filter(|ty| !ty.is_empty())
            .map(str::to_string);
        let qualified = match self.class_stack.last().or(receiver_type.as_ref()) {
            Some(class) => format!("{class}.{name}"),
            None => name,
        };
        let id = self.model.functions.len();
        let body = self.model.blocks.len();
        self.push_block(GuardKind::Function, span(node));
        self.model.functions.push(Function {
            id,
            name: qualified,
            params,
            receiver: receiver_type.is_some(),
            // TS and Python `return_type`, Go `result`, Java's method `type`.
            returns: ["return_type", "result", "type"]
                .iter()
                .find_map(|f| node.child_by_field_name(f))
                .map(|t| self.text(t)),
            span: span(node),
            body,
            ends_with: None,
        });
        self.func_stack.push(id);
    }

    /// Called when all of `node`'s children are finished: builds its value.
    fn finish(&mut self, frame: Frame) -> Lowered {
        let Frame {
            node,
            children,
            pushed_block,
            pushed_func,
            pushed_class,
            parent_kind,
            field,
            pushed_params,
        } = frame;
        self.block_params
            .truncate(self.block_params.len() - pushed_params);
        if pushed_block {
            self.block_stack.pop();
        }
        if pushed_func {
            self.func_stack.pop();
        }
        if pushed_class {
            self.class_stack.pop();
        }
        let role = self.roles.role(node);
        if !node.is_named() || role == Role::Comment {
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
        let t = self.t;
        if t.decorated.contains(&node.kind()) {
            self.decorated(node);
        }
        match role {
            Role::Call(i) => self.call(&t.calls[i], node, children, sp),
            Role::Arguments => expr::arguments(children),
            Role::KeywordArg(i) => self.keyword_arg(t.keyword_args[i], node, children),
            Role::Pair(i) => self.pair(t.pairs[i], node, children),
            Role::Member(i) => self.member(t.members[i], node, children, depth),
            Role::Identifier
                if t.bare_identifier_calls && self.is_bare_call(node, parent_kind, field) =>
            {
                self.bare_call(node, sp)
            }
            Role::Identifier
            | Role::HeredocMarker
            | Role::Str
            | Role::Symbol
            | Role::Number
            | Role::True
            | Role::False
            | Role::Null => self.literal(role, node, depth),
            Role::Collection { map } => self.collection(map, node, children, depth),
            Role::Wrapper => self.wrapper(node, children, depth),
            Role::FieldWrapper(i) => {
                let (_, f) = t.field_wrappers[i];
                self.field_wrapper(f, node, children, depth)
            }
            Role::Binary => self.binary(node, children, depth),
            Role::Statements { list } => {
                self.statements(list, node, &children);
                Lowered::Nothing
            }
            Role::GuardItem => self.guard_item(node, children, sp),
            Role::Assignment(i) => {
                self.assign(&t.assignments[i], node, children, sp);
                Lowered::Nothing
            }
            Role::AliasBinding => self.alias_binding(node, children, sp, depth),
            Role::Conditional => {
                self.conditional(children, sp);
                Lowered::Nothing
            }
            Role::Exit(kind) => {
                self.exit(kind, children, sp);
                Lowered::Nothing
            }
            Role::Comment | Role::Other => {
                if node.child_count() == 0 || text::is_expression_like(self.roles.name(node)) {
                    self.expr(crate::model::ExprKind::Other, self.text(node), sp, depth)
                } else {
                    Lowered::Nothing
                }
            }
        }
    }

    /// Records the decorators of a decorated function (already lowered: its
    /// function is the last one with the definition's span).
    fn decorated(&mut self, node: Node) {
        let Some(def) = node.child_by_field_name("definition") else {
            return;
        };
        let def_span = span(def);
        let func = self
            .model
            .functions
            .iter()
            .rev()
            .find(|f| f.span == def_span);
        if let Some(f) = func {
            let decorators = Span::new(node.start_byte(), def.start_byte());
            self.model.decorators.push((decorators, f.id));
        }
    }

    /// An expression value for the node at `sp`.
    fn expr(&self, kind: crate::model::ExprKind, text: String, sp: Span, depth: u32) -> Lowered {
        Lowered::Expr(
            Expr {
                kind,
                text,
                span: sp,
            },
            depth,
        )
    }
}
