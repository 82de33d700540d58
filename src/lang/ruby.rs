//! Ruby as a [`NodeTable`]. `require 'redis'` is the import; a call with a
//! `do ... end` / `{ }` block guards that block.

use tree_sitter::{Node, Tree};

use super::node_text;
use super::treesitter::{
    AssignShape, CallShape, Delegation, DelegationForm, Heredoc, LoopForm, NodeTable,
};
use crate::model::{ExitKind, Import, Language, Param};

pub static TABLE: NodeTable = NodeTable {
    language: Language::Ruby,
    grammar: || tree_sitter_ruby::LANGUAGE.into(),
    calls: &[
        CallShape {
            kind: "call",
            function: None,
            receiver: Some("receiver"),
            name: Some("method"),
            arguments: "arguments",
            constructor: false,
            block: Some("block"),
        },
        // `yield` runs the caller's block: a call of it, named `yield`.
        CallShape {
            kind: "yield",
            function: None,
            receiver: None,
            name: None,
            arguments: "argument_list",
            constructor: false,
            block: None,
        },
    ],
    arguments: &["argument_list"],
    members: &[("scope_resolution", "scope", "name")],
    keyword_args: &[],
    pairs: &[("pair", "key", "value")],
    identifiers: &[
        "identifier",
        "constant",
        "instance_variable",
        "global_variable",
        "class_variable",
        "self",
    ],
    strings: &["string"],
    string_content: &["string_content", "escape_sequence"],
    interpolation: &["interpolation"],
    symbols: &["simple_symbol", "hash_key_symbol"],
    numbers: &["integer", "float"],
    true_: &["true"],
    false_: &["false"],
    null: &["nil"],
    maps: &["hash"],
    lists: &["array"],
    wrappers: &["parenthesized_statements"],
    field_wrappers: &[("element_reference", "object")],
    binaries: &["binary"],
    functions: &["method", "singleton_method"],
    classes: &["class", "module"],
    guarded_bodies: &[],
    guard_items: &[],
    finally: &["ensure"],
    handlers: &["rescue"],
    defer: &[],
    closures: &["block", "do_block", "lambda"],
    named_closures: &[],
    expression_statements: &[],
    statement_lists: &[
        "body_statement",
        "program",
        "then",
        "else",
        "block_body",
        "begin",
    ],
    implicit_return: true,
    bare_identifier_calls: true,
    decorated: &[],
    assignments: &[AssignShape {
        kind: "assignment",
        target: "left",
        value: Some("right"),
        ty: None,
    }],
    alias_bindings: &[],
    conditionals: &[
        "if",
        "unless",
        "while",
        "until",
        "if_modifier",
        "unless_modifier",
        "conditional",
    ],
    loops: &[
        ("while", LoopForm::Repeats),
        ("until", LoopForm::Repeats),
        ("for", LoopForm::Iterates),
    ],
    exits: &[
        ("return", ExitKind::Return),
        ("break", ExitKind::Break),
        ("next", ExitKind::Continue),
    ],
    comments: &["comment"],
    comment_text: |s| s.trim_start_matches('#'),
    import_kinds: &[],
    imports: |_: Node, _: &str, _: &mut Vec<Import>| {},
    import_calls: &["require", "require_relative"],
    params,
    heredoc: Some(Heredoc {
        marker: "heredoc_beginning",
        bodies: heredoc_bodies,
    }),
    mend: None,
    // Forwardable (ruby/forwardable: `def_delegator(accessor, method, ali = method)`,
    // `def_delegators(accessor, *methods)`) and ActiveSupport's `delegate(*methods, to:)`.
    delegations: &[
        Delegation {
            call: "def_delegator",
            form: DelegationForm::Aliased,
        },
        Delegation {
            call: "def_delegators",
            form: DelegationForm::Listed,
        },
        Delegation {
            call: "delegate",
            form: DelegationForm::To("to"),
        },
    ],
};

fn params(node: Node, src: &str) -> Vec<Param> {
    let mut out = Vec::new();
    let mut cursor = node.walk();
    for p in node.named_children(&mut cursor) {
        let name = match p.kind() {
            "identifier" => Some(p),
            _ => p.child_by_field_name("name"),
        };
        if let Some(n) = name {
            out.push(Param {
                name: node_text(n, src).to_string(),
                ty: None,
                default: p
                    .child_by_field_name("value")
                    .map(|v| node_text(v, src).to_string()),
            });
        }
    }
    out
}

/// The contents of every heredoc body, in order (one cursor pass). Ruby's
/// grammar puts a heredoc's body after the line that uses it.
fn heredoc_bodies(tree: &Tree, text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cursor = tree.walk();
    'walk: loop {
        let node = cursor.node();
        if node.kind() == "heredoc_body" {
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
