//! A grammar's [`NodeTable`] (written once per language in `lang/<language>.rs`)
//! and the per-kind role tables built from it: the walker looks a node's role
//! up by kind id and dispatches with one `match`.

use std::sync::Mutex;

use tree_sitter::{Node, Tree};

use crate::model::{ExitKind, Import, Language, Param};

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
    /// Exception handler clauses (`rescue`, `except_clause`, `catch_clause`):
    /// the statements before one in its `begin` / `try` are covered by it.
    pub handlers: &'static [&'static str],
    pub defer: &'static [&'static str],
    pub closures: &'static [&'static str],
    /// A closure bound to a name is a function of that name: (parent kind,
    /// the parent's name field) for `const lockUntil = async (..) => {..}`.
    pub named_closures: &'static [(&'static str, &'static str)],
    /// Statements that throw their expression's value away.
    pub expression_statements: &'static [&'static str],
    /// Statement lists whose direct child calls are statements (Ruby bodies).
    pub statement_lists: &'static [&'static str],
    /// The last statement of a list is its value (Ruby): not discarded.
    pub implicit_return: bool,
    /// A bare identifier that names no local variable calls a method of the
    /// object itself (Ruby `apply_coupon` for `self.apply_coupon()`), when it
    /// stands as a statement or as an assignment's value.
    pub bare_identifier_calls: bool,
    /// Nodes holding decorators and, in their `definition` field, the
    /// function they decorate (Python `decorated_definition`).
    pub decorated: &'static [&'static str],
    pub assignments: &'static [AssignShape],
    /// `value as name` bindings: the value child bound to the `alias` field.
    pub alias_bindings: &'static [&'static str],
    /// Statements whose `condition` field is tested.
    pub conditionals: &'static [&'static str],
    /// Loop statements and how to tell whether each repeats or iterates.
    pub loops: &'static [(&'static str, LoopForm)],
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
    /// Heredocs whose body is not inside the expression (Ruby).
    pub heredoc: Option<Heredoc>,
    /// Rewrites valid code the grammar misreads into code it reads the same
    /// way, byte for byte the same length (so every offset holds); `None`
    /// when nothing needed it.
    pub mend: Option<fn(&str) -> Option<String>>,
    /// Class-body calls that define methods forwarding to an object's
    /// (Ruby's Forwardable `def_delegator`, Rails `delegate .. to:`).
    pub delegations: &'static [Delegation],
}

/// Whether a loop kind runs until told to stop (a `while`) or once per item.
#[derive(Debug, Clone, Copy)]
pub enum LoopForm {
    Repeats,
    Iterates,
    /// Iterates when it has a child of one of these kinds (Go's `for` with a
    /// `range_clause` or `for_clause`), else repeats (`for {}`, `for cond {}`).
    IteratesWith(&'static [&'static str]),
}

/// A class-body call defining methods that forward to another object's.
pub struct Delegation {
    pub call: &'static str,
    pub form: DelegationForm,
}

/// Where a delegation names the object and its methods.
pub enum DelegationForm {
    /// `def_delegator :accessor, :method, :alias` (the alias defaults to the method).
    Aliased,
    /// `def_delegators :accessor, :a, :b`.
    Listed,
    /// `delegate :a, :b, to: :accessor` (the keyword's name).
    To(&'static str),
}

/// A string whose body follows its use (Ruby `<<~LUA`): the marker's kind,
/// and a reader of every body of a tree, in source order.
pub struct Heredoc {
    pub marker: &'static str,
    pub bodies: fn(&Tree, &str) -> Vec<String>,
}

/// What a node does when the walk enters it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Opens {
    Nothing,
    Comment,
    Import,
    Function,
    Class,
    Finally,
    Handler,
    Defer,
    Closure,
}

/// What a node's value is when the walk leaves it. The first role a table
/// gives a kind wins, in the order of [`Roles::build`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    Other,
    Comment,
    Call(usize),
    Arguments,
    KeywordArg(usize),
    Pair(usize),
    Member(usize),
    Identifier,
    HeredocMarker,
    Str,
    Symbol,
    Number,
    True,
    False,
    Null,
    /// A map or list literal; `map`: the table says map when it is empty.
    Collection {
        map: bool,
    },
    Wrapper,
    FieldWrapper(usize),
    Binary,
    /// A statement or statement list: its expressions' values are dropped.
    Statements {
        list: bool,
    },
    GuardItem,
    Assignment(usize),
    AliasBinding,
    Conditional,
    Exit(ExitKind),
}

/// Every kind of a grammar, by kind id: its name and roles.
pub(super) struct Roles {
    names: Vec<&'static str>,
    opens: Vec<Opens>,
    roles: Vec<Role>,
    loops: Vec<Option<LoopForm>>,
}

impl Roles {
    /// The roles of `table`'s grammar: built once per table (TypeScript has
    /// two grammars) and kept for the process.
    pub(super) fn of(table: &'static NodeTable) -> &'static Roles {
        static BUILT: Mutex<Vec<(usize, &'static Roles)>> = Mutex::new(Vec::new());
        let id = std::ptr::from_ref(table) as usize;
        let mut built = match BUILT.lock() {
            Ok(b) => b,
            Err(poisoned) => poisoned.into_inner(),
        };
        if let Some((_, roles)) = built.iter().find(|(t, _)| *t == id) {
            return roles;
        }
        let roles: &'static Roles = Box::leak(Box::new(Roles::build(table)));
        built.push((id, roles));
        roles
    }

    fn build(t: &NodeTable) -> Roles {
        let grammar = (t.grammar)();
        let names: Vec<&'static str> = (0..grammar.node_kind_count())
            .map(|id| {
                u16::try_from(id)
                    .ok()
                    .and_then(|id| grammar.node_kind_for_id(id))
                    .unwrap_or("")
            })
            .collect();
        let opens = names.iter().map(|k| opens(t, k)).collect();
        let roles = names.iter().map(|k| role(t, k)).collect();
        let loops = (names.iter())
            .map(|k| t.loops.iter().find(|l| l.0 == *k).map(|l| l.1))
            .collect();
        Roles {
            names,
            opens,
            roles,
            loops,
        }
    }

    /// The kind name: tree-sitter's own `kind()` measures and validates the
    /// C string on every call, and the walk asks for every node.
    pub(super) fn name(&self, node: Node) -> &'static str {
        self.names
            .get(usize::from(node.kind_id()))
            .copied()
            .filter(|k| !k.is_empty())
            .unwrap_or_else(|| node.kind())
    }

    pub(super) fn opens(&self, node: Node) -> Opens {
        self.opens
            .get(usize::from(node.kind_id()))
            .copied()
            .unwrap_or(Opens::Nothing)
    }

    pub(super) fn loop_form(&self, node: Node) -> Option<LoopForm> {
        self.loops
            .get(usize::from(node.kind_id()))
            .copied()
            .flatten()
    }

    pub(super) fn role(&self, node: Node) -> Role {
        self.roles
            .get(usize::from(node.kind_id()))
            .copied()
            .unwrap_or(Role::Other)
    }
}

fn has(kinds: &[&str], kind: &str) -> bool {
    kinds.contains(&kind)
}

fn opens(t: &NodeTable, k: &str) -> Opens {
    if has(t.comments, k) {
        Opens::Comment
    } else if has(t.import_kinds, k) {
        Opens::Import
    } else if has(t.functions, k) {
        Opens::Function
    } else if has(t.classes, k) {
        Opens::Class
    } else if has(t.finally, k) {
        Opens::Finally
    } else if has(t.handlers, k) {
        Opens::Handler
    } else if has(t.defer, k) {
        Opens::Defer
    } else if has(t.closures, k) {
        Opens::Closure
    } else {
        Opens::Nothing
    }
}

fn role(t: &NodeTable, k: &str) -> Role {
    let index = |found: Option<usize>, role: fn(usize) -> Role| found.map(role);
    if has(t.comments, k) {
        return Role::Comment;
    }
    let by_index = index(t.calls.iter().position(|c| c.kind == k), Role::Call)
        .or_else(|| has(t.arguments, k).then_some(Role::Arguments))
        .or_else(|| {
            index(
                t.keyword_args.iter().position(|f| f.0 == k),
                Role::KeywordArg,
            )
        })
        .or_else(|| index(t.pairs.iter().position(|f| f.0 == k), Role::Pair))
        .or_else(|| index(t.members.iter().position(|f| f.0 == k), Role::Member));
    if let Some(role) = by_index {
        return role;
    }
    let simple = [
        (t.identifiers, Role::Identifier),
        (
            t.heredoc
                .as_ref()
                .map_or(&[][..], |h| std::slice::from_ref(&h.marker)),
            Role::HeredocMarker,
        ),
        (t.strings, Role::Str),
        (t.symbols, Role::Symbol),
        (t.numbers, Role::Number),
        (t.true_, Role::True),
        (t.false_, Role::False),
        (t.null, Role::Null),
    ];
    if let Some((_, role)) = simple.iter().find(|(kinds, _)| has(kinds, k)) {
        return *role;
    }
    if has(t.maps, k) || has(t.lists, k) {
        return Role::Collection {
            map: has(t.maps, k),
        };
    }
    if has(t.wrappers, k) {
        return Role::Wrapper;
    }
    if let Some(i) = t.field_wrappers.iter().position(|w| w.0 == k) {
        return Role::FieldWrapper(i);
    }
    if has(t.binaries, k) {
        return Role::Binary;
    }
    if has(t.expression_statements, k) || has(t.statement_lists, k) {
        return Role::Statements {
            list: has(t.statement_lists, k),
        };
    }
    if has(t.guard_items, k) {
        return Role::GuardItem;
    }
    if let Some(i) = t.assignments.iter().position(|a| a.kind == k) {
        return Role::Assignment(i);
    }
    if has(t.alias_bindings, k) {
        return Role::AliasBinding;
    }
    if has(t.conditionals, k) {
        return Role::Conditional;
    }
    if let Some((_, exit)) = t.exits.iter().find(|e| e.0 == k) {
        return Role::Exit(*exit);
    }
    Role::Other
}
