//! The language-neutral model every frontend lowers into and every later stage reads.
//!
//! Input: one parsed source file. Output: a [`FileModel`] of calls, expressions,
//! assignments, imports, functions, blocks and comments. Spans are byte ranges
//! into the decoded text; lines and columns are computed only when a finding is
//! rendered. Nothing here knows about `syn`, tree-sitter or the catalog.

use serde::Serialize;
use std::collections::HashMap;

mod handler;
mod index;
mod language;
mod literals;
mod loops;

pub use handler::Handler;
pub use index::{AssignIndex, ByFunction};
pub use language::Language;
pub use literals::{empty_value, falsy, NULL_WORDS, TRUE_WORDS};
pub use loops::Loop;

/// A byte range `[start, end)` into the file's text.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, serde::Deserialize, PartialOrd, Ord,
)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Self {
        Span { start, end }
    }
    pub fn contains(&self, other: Span) -> bool {
        self.start <= other.start && other.end <= self.end
    }
}

pub type CallId = usize;
pub type BlockId = usize;
pub type FuncId = usize;

/// What an expression is, as far as the checks care.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub enum ExprKind {
    /// A string literal without interpolation.
    Str(String),
    /// A string with interpolated parts (f-string, `format!`): only its text is known.
    Template,
    Int(i64),
    Float(f64),
    Bool(bool),
    /// `None`, `null`, `nil`.
    Null,
    /// An identifier or a dotted/`::` path (`r`, `self.redis`, `redis::cmd`).
    Name(String),
    /// A member access on something that is not a plain path (`f().x`).
    Member {
        object: Box<Expr>,
        name: String,
    },
    /// A call; the call itself is in [`FileModel::calls`].
    Call(CallId),
    /// A dict / object / map literal.
    Map(Vec<(Expr, Expr)>),
    /// A list / tuple / array / slice literal.
    List(Vec<Expr>),
    /// `a OP b` for arithmetic the constant folder understands.
    Binary {
        op: char,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    /// `&x`, `&mut x`, `await x`, `x.await`, `x?`, `(x)`: transparent wrappers.
    Wrapped(Box<Expr>),
    Other,
}

/// An expression: its kind, its normalised source text and where it is.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct Expr {
    pub kind: ExprKind,
    pub text: String,
    pub span: Span,
}

impl Expr {
    pub fn other(text: impl Into<String>, span: Span) -> Self {
        Expr {
            kind: ExprKind::Other,
            text: text.into(),
            span,
        }
    }

    /// Strips transparent wrappers (`&`, `await`, `?`, parentheses).
    pub fn peel(&self) -> &Expr {
        let mut e = self;
        while let ExprKind::Wrapped(inner) = &e.kind {
            e = inner;
        }
        e
    }

    pub fn as_str(&self) -> Option<&str> {
        match &self.peel().kind {
            ExprKind::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_call(&self) -> Option<CallId> {
        match self.peel().kind {
            ExprKind::Call(id) => Some(id),
            _ => None,
        }
    }

    pub fn as_name(&self) -> Option<&str> {
        match &self.peel().kind {
            ExprKind::Name(n) => Some(n),
            _ => None,
        }
    }

    /// A copy that refers to no file's model, for facts shown in another file:
    /// literals keep their kind; anything naming a call or a variable of its
    /// own file (whose ids and names mean nothing elsewhere) keeps only its text.
    pub fn detached(&self, span: Span) -> Expr {
        let e = self.peel();
        let kind = match &e.kind {
            k @ (ExprKind::Str(_)
            | ExprKind::Template
            | ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Bool(_)
            | ExprKind::Null) => k.clone(),
            _ => ExprKind::Other,
        };
        Expr {
            kind,
            text: e.text.clone(),
            span,
        }
    }

    /// A copy for another file's model that keeps names and structure (a
    /// constant `TTL = 30 * time.Second`) but no call ids, which would index
    /// the other model's calls; every span is `span`.
    pub fn without_calls(&self, span: Span) -> Expr {
        let kind = match &self.kind {
            ExprKind::Call(_) => ExprKind::Other,
            ExprKind::Member { object, name } => ExprKind::Member {
                object: Box::new(object.without_calls(span)),
                name: name.clone(),
            },
            ExprKind::Map(pairs) => ExprKind::Map(
                pairs
                    .iter()
                    .map(|(k, v)| (k.without_calls(span), v.without_calls(span)))
                    .collect(),
            ),
            ExprKind::List(items) => {
                ExprKind::List(items.iter().map(|x| x.without_calls(span)).collect())
            }
            ExprKind::Binary { op, lhs, rhs } => ExprKind::Binary {
                op: *op,
                lhs: Box::new(lhs.without_calls(span)),
                rhs: Box::new(rhs.without_calls(span)),
            },
            ExprKind::Wrapped(inner) => ExprKind::Wrapped(Box::new(inner.without_calls(span))),
            k => k.clone(),
        };
        Expr {
            kind,
            text: self.text.clone(),
            span,
        }
    }

    /// A string, number or boolean literal: what every caller writes alike.
    pub fn is_literal(&self) -> bool {
        matches!(
            self.peel().kind,
            ExprKind::Str(_) | ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Bool(_)
        )
    }

    /// True for a literal that is "nothing": `None`, `null`, `0`, `false`.
    pub fn is_nullish(&self) -> bool {
        matches!(
            self.peel().kind,
            ExprKind::Null | ExprKind::Bool(false) | ExprKind::Int(0)
        )
    }
}

/// One argument of a call: positional (`name == None`) or keyword.
#[derive(Debug, Clone, PartialEq)]
pub struct Arg {
    pub name: Option<String>,
    pub value: Expr,
}

/// What happens to a call's result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Usage {
    /// Evaluated as a statement and thrown away.
    Discarded,
    /// Bound to a name (`x = call()`, `let x = call()`); for a tuple
    /// (`ok, err := call()`) every name, comma-separated.
    Assigned(String),
    /// Tested by a condition (`if`, `while`, `assert`, `match`).
    Tested,
    /// Guards a scope: a `with` item, a Java resource, a call taking a Ruby block.
    Guard,
    /// Anything else: an argument, a receiver, a return value...
    Used,
}

impl Usage {
    /// The (first) name the result is bound to.
    pub fn bound(&self) -> Option<&str> {
        self.bound_names().into_iter().next()
    }

    /// Every name the result is bound to: `ok, err`, `[rows]`, `{ data }`, `mut x`.
    pub fn bound_names(&self) -> Vec<&str> {
        const KEYWORDS: &[&str] = &["mut", "ref", "let", "const", "var"];
        match self {
            Usage::Assigned(names) => names
                .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.' || c == '@'))
                .filter(|n| !n.is_empty() && !KEYWORDS.contains(n))
                .collect(),
            _ => Vec::new(),
        }
    }
}

/// A call or method call.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub id: CallId,
    /// The method or function name: `set` for `r.set(..)`, `cmd` for `redis::cmd(..)`.
    pub name: String,
    /// The full callee text as written: `r.set`, `redis::cmd`, `Script::new`.
    pub callee: String,
    /// What the method is called on; `None` for a free function call.
    pub receiver: Option<Box<Expr>>,
    pub args: Vec<Arg>,
    /// The whole call expression (receiver included).
    pub span: Span,
    /// Where the callee name is (where a finding on this call points).
    pub name_span: Span,
    pub func: Option<FuncId>,
    pub block: BlockId,
    pub usage: Usage,
}

impl Call {
    /// From the method's name to the call's end (`a.b()\n.query(..)` is at `query`).
    pub fn written_span(&self) -> Span {
        let start = (self.name_span.end.saturating_sub(self.name.len()))
            .clamp(self.span.start, self.span.end);
        Span::new(start, self.span.end)
    }
    pub fn positional(&self, index: usize) -> Option<&Expr> {
        self.args
            .iter()
            .filter(|a| a.name.is_none())
            .nth(index)
            .map(|a| &a.value)
    }
    pub fn keyword(&self, name: &str) -> Option<&Expr> {
        self.args
            .iter()
            .find(|a| a.name.as_deref() == Some(name))
            .map(|a| &a.value)
    }
    /// The receiver as a call, for method chains (`cmd("SET").arg(k)`).
    pub fn receiver_call(&self) -> Option<CallId> {
        self.receiver.as_ref().and_then(|r| r.as_call())
    }
}

/// How a block relates to the code around it: what guarantees its exit path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum GuardKind {
    /// The file itself.
    Module,
    /// A function or method body.
    Function,
    /// An ordinary nested block (if/loop/match arm body).
    Plain,
    /// `with` / `using` / `async with`: the manager's exit runs on every path.
    With,
    /// A `finally` / `ensure` clause.
    Finally,
    /// A `defer`red statement.
    Defer,
    /// A closure / lambda / block argument.
    Closure,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    pub id: BlockId,
    pub kind: GuardKind,
    pub span: Span,
    pub parent: Option<BlockId>,
}

/// A function parameter, with its type annotation if it has one.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    pub name: String,
    pub ty: Option<String>,
    /// The default value's text (`shared=False`), where the language has one.
    pub default: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Function {
    pub id: FuncId,
    /// Qualified name (`Billing.run`, `settle`).
    pub name: String,
    pub params: Vec<Param>,
    /// The first parameter is the method's receiver (Go `(q *Queries)`),
    /// which callers do not pass.
    pub receiver: bool,
    /// The declared return type's text (`Result<Lock, LockError>`), if any.
    pub returns: Option<String>,
    pub span: Span,
    pub body: BlockId,
    /// The name whose value the body's last statement gives back, where
    /// that is the function's result (Ruby `def lock .. token end`).
    pub ends_with: Option<Expr>,
}

/// `target = value` / `let target = value` / `const TARGET: T = value`.
#[derive(Debug, Clone, PartialEq)]
pub struct Assign {
    /// The bound name (`lock_key`, `self.redis`, `TTL_MS`).
    pub target: String,
    pub ty: Option<String>,
    pub value: Expr,
    pub span: Span,
    /// `None` for module-level (constants).
    pub func: Option<FuncId>,
}

/// An import: the module path and the local names it binds.
#[derive(Debug, Clone, PartialEq)]
pub struct Import {
    /// `redis`, `redis.asyncio`, `redis::Commands`.
    pub path: String,
    /// Local name the import binds (`aioredis` for `import redis.asyncio as aioredis`).
    pub alias: Option<String>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Comment {
    /// The comment's text without its delimiters.
    pub text: String,
    pub span: Span,
}

/// How control leaves a block early.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitKind {
    Return,
    /// `raise` / `throw`.
    Raise,
    Break,
    /// `continue` / Ruby `next`: leaves the loop's turn, not the loop.
    Continue,
    /// Rust's `?`.
    Try,
}

/// An early exit: where it is and, for a `return`, the text of its value.
#[derive(Debug, Clone, PartialEq)]
pub struct Exit {
    pub kind: ExitKind,
    pub span: Span,
    pub func: Option<FuncId>,
    pub value: String,
    /// For a `?`: the expression it applies to, `.await`s peeled
    /// (`set_nx(k, v).await?` → the call). Empty for other exits.
    pub operand: Span,
}

impl Exit {
    /// Is this the `?` applied to the expression ending at `end` (an
    /// acquisition whose error is propagated)?
    pub fn propagates(&self, end: usize) -> bool {
        self.kind == ExitKind::Try && self.operand.end == end && self.operand != Span::default()
    }
}

/// A branching statement (`if`, `while`, `match`, ternary): the whole
/// statement, its condition, and the condition's text.
#[derive(Debug, Clone, PartialEq)]
pub struct Conditional {
    pub stmt: Span,
    pub cond: Span,
    pub text: String,
    pub func: Option<FuncId>,
}

/// Everything the later stages know about one file.
#[derive(Debug, Clone)]
pub struct FileModel {
    pub language: Language,
    pub calls: Vec<Call>,
    pub blocks: Vec<Block>,
    pub functions: Vec<Function>,
    pub assigns: Vec<Assign>,
    pub imports: Vec<Import>,
    pub comments: Vec<Comment>,
    /// Parse problems that did not stop lowering (tree-sitter error nodes).
    pub syntax_errors: Vec<Span>,
    /// Names used as a guard (`with lock:`), with the guard's span.
    pub guard_names: Vec<(String, Span)>,
    pub exits: Vec<Exit>,
    pub conditionals: Vec<Conditional>,
    pub loops: Vec<Loop>,
    pub handlers: Vec<Handler>,
    /// The statements a `finally` / `ensure` belongs to (`try` to its end).
    pub tries: Vec<Span>,
    /// Code that exists only for tests inside a production file (Rust
    /// `#[cfg(test)]` modules, `#[test]` functions): findings there are test findings.
    pub test_regions: Vec<Span>,
    /// Each class's declared bases by last name (`EmailDeletionJob` ->
    /// `ApplicationJob`; `ActualLock(Lock)` -> `Lock`; `extends`, `implements`).
    pub supers: HashMap<String, Vec<String>>,
    /// The decorators above a function (their span, the function), sorted
    /// by place: a lock taken by one (`@advisory_lock("k")`) is held around
    /// the function.
    pub decorators: Vec<(Span, FuncId)>,
    /// Field initializers of record literals by field name (Rust
    /// `ElectionSqlSet { campaign: self.campaign_sql(), .. }`). A field read
    /// whose record is built in this file (`self.sql_set.campaign`) holds one
    /// of them; by name, so each read is one lookup.
    pub record_fields: HashMap<String, Vec<Expr>>,
    /// `assigns` by target name, built on first [`FileModel::lookup`]: lookups
    /// run per argument, so a linear search would make dense files quadratic.
    /// Reset it after changing `assigns`.
    pub assigns_by_name: std::sync::OnceLock<AssignIndex>,
    /// Are `blocks` in pre-order (starts never decrease)? The lowerings record
    /// them so; checked once, on the first [`FileModel::inside`].
    pub blocks_in_order: std::sync::OnceLock<bool>,
    /// Calls, exits, conditionals and assignments by enclosing function,
    /// built on first use: a question about one function looks at its own
    /// statements only. Reset it after changing those lists.
    pub by_function: std::sync::OnceLock<ByFunction>,
    /// The first function of each simple name (`render` for `Report.render`),
    /// built on first [`FileModel::function_named`].
    pub functions_by_name: std::sync::OnceLock<HashMap<String, FuncId>>,
}

impl FileModel {
    pub fn new(language: Language, file_span: Span) -> Self {
        FileModel {
            language,
            calls: Vec::new(),
            blocks: vec![Block {
                id: 0,
                kind: GuardKind::Module,
                span: file_span,
                parent: None,
            }],
            functions: Vec::new(),
            assigns: Vec::new(),
            assigns_by_name: Default::default(),
            blocks_in_order: Default::default(),
            by_function: Default::default(),
            functions_by_name: Default::default(),
            imports: Vec::new(),
            comments: Vec::new(),
            syntax_errors: Vec::new(),
            guard_names: Vec::new(),
            exits: Vec::new(),
            conditionals: Vec::new(),
            loops: Vec::new(),
            handlers: Vec::new(),
            tries: Vec::new(),
            test_regions: Vec::new(),
            supers: HashMap::new(),
            decorators: Vec::new(),
            record_fields: HashMap::new(),
        }
    }

    /// Does class `class` of this file name `base` among its declared bases?
    pub fn extends(&self, class: &str, base: &str) -> bool {
        self.supers
            .get(class)
            .is_some_and(|b| b.iter().any(|s| self.names_class(s, base)))
    }

    /// Does the name `written` in a class's bases stand for `class`: the
    /// class itself, or an import of it under another name (`from
    /// shakenfist.baseobject import DatabaseBackedObject as dbo`)?
    pub fn names_class(&self, written: &str, class: &str) -> bool {
        written == class
            || self.imports.iter().any(|i| {
                i.alias.as_deref() == Some(written)
                    && i.path.rsplit(['.', ':', '/']).next() == Some(class)
            })
    }

    /// Records a block under `parent`; returns its id.
    pub fn add_block(&mut self, kind: GuardKind, span: Span, parent: Option<BlockId>) -> BlockId {
        let id = self.blocks.len();
        self.blocks.push(Block {
            id,
            kind,
            span,
            parent,
        });
        id
    }

    pub fn call(&self, id: CallId) -> &Call {
        &self.calls[id]
    }

    /// The root of a method chain: `cmd("SET")` for `cmd("SET").arg(k).arg(v)`.
    pub fn chain(&self, last: CallId) -> Vec<CallId> {
        let mut chain = vec![last];
        let mut cur = last;
        while let Some(prev) = self.calls[cur].receiver_call() {
            chain.push(prev);
            cur = prev;
        }
        chain.reverse();
        chain
    }

    /// Does any import path start with `prefix` (`redis` matches `redis.asyncio`)?
    pub fn imports_module(&self, prefix: &str) -> bool {
        self.imports.iter().any(|i| {
            let p = i.path.as_str();
            p == prefix
                || p.strip_prefix(prefix).is_some_and(|rest| {
                    rest.starts_with('.') || rest.starts_with("::") || rest.starts_with('/')
                })
        })
    }

    /// The declared type of the field named `last` (its last segment), bound
    /// outside any function (`private RedissonClient redisson;`, Go `db
    /// *sqlx.DB`, `this.redis: Redis`).
    pub fn field_type(&self, last: &str) -> Option<&str> {
        (self.assigns.iter())
            .find(|a| {
                a.func.is_none()
                    && a.ty.is_some()
                    && a.target.rsplit(['.', ':']).next() == Some(last)
            })
            .and_then(|a| a.ty.as_deref())
    }

    /// Where function `func` ends by giving back `name` as its last value
    /// (Ruby `def lock .. token end`).
    pub fn ends_with_name(&self, func: Option<FuncId>, name: &str) -> Option<Span> {
        let f = &self.functions[func?];
        (f.ends_with.as_ref())
            .filter(|e| e.as_name() == Some(name))
            .map(|e| e.span)
    }

    pub fn function_param(&self, func: Option<FuncId>, name: &str) -> Option<&Param> {
        let f = &self.functions[func?];
        f.params.iter().find(|p| p.name == name)
    }
}

/// Does `text` mention `name` as a whole word (`ok`, not `token`)?
pub fn mentions(text: &str, name: &str) -> bool {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    !name.is_empty()
        && text.match_indices(name).any(|(i, _)| {
            !text[..i].chars().next_back().is_some_and(word)
                && !text[i + name.len()..].chars().next().is_some_and(word)
        })
}
