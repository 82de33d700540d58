//! Java as a [`NodeTable`]. Annotations are lowered as calls (`@SchedulerLock(name = "x")`).

use tree_sitter::Node;

use super::go::strip_c_comment;
use super::treesitter::{AssignShape, CallShape, LoopForm, NodeTable};
use super::{node_text, push_import, simple_params};
use crate::model::{ExitKind, Import, Language};

const fn by_name(kind: &'static str, function: &'static str, constructor: bool) -> CallShape {
    CallShape {
        kind,
        function: Some(function),
        receiver: None,
        name: None,
        arguments: "arguments",
        constructor,
        block: None,
    }
}

pub static TABLE: NodeTable = NodeTable {
    language: Language::Java,
    grammar: || tree_sitter_java::LANGUAGE.into(),
    calls: &[
        CallShape {
            kind: "method_invocation",
            function: None,
            receiver: Some("object"),
            name: Some("name"),
            arguments: "arguments",
            constructor: false,
            block: None,
        },
        by_name("object_creation_expression", "type", true),
        // `super(..)` / `this(..)` in a constructor, named by its keyword.
        by_name("explicit_constructor_invocation", "constructor", false),
        by_name("annotation", "name", false),
        by_name("marker_annotation", "name", false),
    ],
    arguments: &["argument_list", "annotation_argument_list"],
    members: &[
        ("field_access", "object", "field"),
        ("scoped_identifier", "scope", "name"),
        ("scoped_type_identifier", "scope", "name"),
    ],
    keyword_args: &[("element_value_pair", "key", "value")],
    pairs: &[],
    identifiers: &["identifier", "type_identifier", "this", "super"],
    strings: &["string_literal"],
    string_content: &[
        "string_fragment",
        "multiline_string_fragment",
        "escape_sequence",
    ],
    interpolation: &["string_interpolation"],
    symbols: &[],
    numbers: &[
        "decimal_integer_literal",
        "hex_integer_literal",
        "decimal_floating_point_literal",
    ],
    true_: &["true"],
    false_: &["false"],
    null: &["null_literal"],
    maps: &[],
    lists: &["array_initializer", "element_value_array_initializer"],
    wrappers: &["parenthesized_expression"],
    field_wrappers: &[
        ("cast_expression", "value"),
        ("generic_type", "type"),
        ("array_access", "array"),
    ],
    binaries: &["binary_expression"],
    functions: &["method_declaration", "constructor_declaration"],
    classes: &[
        "class_declaration",
        "interface_declaration",
        "enum_declaration",
        "record_declaration",
    ],
    guarded_bodies: &[("try_with_resources_statement", "body")],
    guard_items: &["resource"],
    finally: &["finally_clause"],
    handlers: &["catch_clause"],
    defer: &[],
    closures: &["lambda_expression"],
    named_closures: &[],
    expression_statements: &["expression_statement"],
    statement_lists: &[],
    implicit_return: false,
    bare_identifier_calls: false,
    decorated: &[],
    assignments: &[
        AssignShape {
            kind: "variable_declarator",
            target: "name",
            value: Some("value"),
            ty: Some("type"),
        },
        AssignShape {
            kind: "assignment_expression",
            target: "left",
            value: Some("right"),
            ty: None,
        },
    ],
    alias_bindings: &[],
    conditionals: &["if_statement", "while_statement", "ternary_expression"],
    loops: &[
        ("while_statement", LoopForm::Repeats),
        ("do_statement", LoopForm::Repeats),
        ("for_statement", LoopForm::Iterates),
        ("enhanced_for_statement", LoopForm::Iterates),
    ],
    exits: &[
        ("return_statement", ExitKind::Return),
        ("throw_statement", ExitKind::Raise),
        ("break_statement", ExitKind::Break),
    ],
    comments: &["line_comment", "block_comment"],
    comment_text: strip_c_comment,
    import_kinds: &["import_declaration"],
    imports,
    import_calls: &[],
    params: simple_params,
    heredoc: None,
    mend: None,
    delegations: &[],
};

/// `import a.b.C;` / `import a.b.*;` / `import static a.b.C.m;`
fn imports(node: Node, src: &str, out: &mut Vec<Import>) {
    let text = node_text(node, src);
    let path = text
        .trim_start_matches("import")
        .trim()
        .trim_start_matches("static")
        .trim()
        .trim_end_matches(';')
        .replace(char::is_whitespace, "");
    push_import(out, node, path, None);
}
