//! Go as a [`NodeTable`].

use tree_sitter::Node;

use super::treesitter::{AssignShape, CallShape, NodeTable};
use super::{node_text, push_import, simple_params};
use crate::model::{ExitKind, Import, Language};

pub static TABLE: NodeTable = NodeTable {
    language: Language::Go,
    grammar: || tree_sitter_go::LANGUAGE.into(),
    calls: &[CallShape {
        kind: "call_expression",
        function: Some("function"),
        receiver: None,
        name: None,
        arguments: "arguments",
        constructor: false,
        block: None,
    }],
    arguments: &["argument_list"],
    members: &[("selector_expression", "operand", "field")],
    keyword_args: &[],
    pairs: &[("keyed_element", "key", "value")],
    identifiers: &[
        "identifier",
        "field_identifier",
        "package_identifier",
        "type_identifier",
    ],
    strings: &["interpreted_string_literal", "raw_string_literal"],
    string_content: &[
        "interpreted_string_literal_content",
        "raw_string_literal_content",
        "escape_sequence",
    ],
    interpolation: &[],
    symbols: &[],
    numbers: &["int_literal", "float_literal"],
    true_: &["true"],
    false_: &["false"],
    null: &["nil"],
    maps: &[],
    lists: &["literal_value"],
    wrappers: &[
        "parenthesized_expression",
        "unary_expression",
        "expression_list",
        "literal_element",
    ],
    field_wrappers: &[
        ("composite_literal", "body"),
        ("index_expression", "operand"),
    ],
    binaries: &["binary_expression"],
    functions: &["function_declaration", "method_declaration"],
    classes: &[],
    guarded_bodies: &[],
    guard_items: &[],
    finally: &[],
    handlers: &[],
    defer: &["defer_statement"],
    closures: &["func_literal"],
    named_closures: &[],
    expression_statements: &["expression_statement"],
    statement_lists: &[],
    implicit_return: false,
    bare_identifier_calls: false,
    decorated: &[],
    assignments: &[
        AssignShape {
            kind: "short_var_declaration",
            target: "left",
            value: Some("right"),
            ty: None,
        },
        // `for _, lock := range results`: the loop variables read the results.
        AssignShape {
            kind: "range_clause",
            target: "left",
            value: Some("right"),
            ty: None,
        },
        AssignShape {
            kind: "assignment_statement",
            target: "left",
            value: Some("right"),
            ty: None,
        },
        AssignShape {
            kind: "var_spec",
            target: "name",
            value: Some("value"),
            ty: Some("type"),
        },
        AssignShape {
            kind: "const_spec",
            target: "name",
            value: Some("value"),
            ty: Some("type"),
        },
        AssignShape {
            kind: "field_declaration",
            target: "name",
            value: None,
            ty: Some("type"),
        },
    ],
    alias_bindings: &[],
    conditionals: &["if_statement"],
    exits: &[
        ("return_statement", ExitKind::Return),
        ("break_statement", ExitKind::Break),
    ],
    comments: &["comment"],
    comment_text: strip_c_comment,
    import_kinds: &["import_spec"],
    imports,
    import_calls: &[],
    params: simple_params,
    heredoc: None,
    mend: None,
    delegations: &[],
};

/// `// text` / `/* text */` → `text`.
pub(crate) fn strip_c_comment(s: &str) -> &str {
    let s = s.trim_start_matches("//");
    let s = s.strip_prefix("/*").unwrap_or(s);
    s.strip_suffix("*/").unwrap_or(s)
}

/// `import name "path"`: the path, aliased by `name` when given.
fn imports(node: Node, src: &str, out: &mut Vec<Import>) {
    let Some(path) = node.child_by_field_name("path") else {
        return;
    };
    let path = node_text(path, src).trim_matches(['"', '`']).to_string();
    let alias = node
        .child_by_field_name("name")
        .map(|n| node_text(n, src).to_string());
    push_import(out, node, path, alias);
}
