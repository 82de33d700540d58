//! JavaScript (and JSX), TypeScript and TSX as [`NodeTable`]s: one shape,
//! three grammars.

use tree_sitter::Node;

use super::go::strip_c_comment;
use super::treesitter::{AssignShape, CallShape, NodeTable};
use super::{node_text, push_import, simple_params};
use crate::model::{ExitKind, Import, Language};

macro_rules! js_table {
    ($lang:expr, $grammar:expr) => {
        NodeTable {
            language: $lang,
            grammar: $grammar,
            calls: &[
                CallShape {
                    kind: "call_expression",
                    function: Some("function"),
                    receiver: None,
                    name: None,
                    arguments: "arguments",
                    constructor: false,
                    block: None,
                },
                CallShape {
                    kind: "new_expression",
                    function: Some("constructor"),
                    receiver: None,
                    name: None,
                    arguments: "arguments",
                    constructor: true,
                    block: None,
                },
            ],
            arguments: &["arguments"],
            members: &[("member_expression", "object", "property")],
            keyword_args: &[],
            pairs: &[("pair", "key", "value")],
            identifiers: &[
                "identifier",
                "property_identifier",
                "shorthand_property_identifier",
                "this",
                "type_identifier",
            ],
            strings: &["string", "template_string"],
            string_content: &["string_fragment", "escape_sequence"],
            interpolation: &["template_substitution"],
            symbols: &[],
            numbers: &["number"],
            true_: &["true"],
            false_: &["false"],
            null: &["null", "undefined"],
            maps: &["object"],
            lists: &["array"],
            wrappers: &[
                "parenthesized_expression",
                "await_expression",
                "non_null_expression",
            ],
            field_wrappers: &[("subscript_expression", "object")],
            binaries: &["binary_expression"],
            functions: &[
                "function_declaration",
                "method_definition",
                "generator_function_declaration",
            ],
            classes: &["class_declaration", "abstract_class_declaration", "class"],
            guarded_bodies: &[],
            guard_items: &[],
            finally: &["finally_clause"],
            defer: &[],
            closures: &["arrow_function", "function_expression", "function"],
            named_closures: &[
                ("variable_declarator", "name"),
                ("public_field_definition", "name"),
                ("field_definition", "property"),
            ],
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
                AssignShape {
                    kind: "public_field_definition",
                    target: "name",
                    value: Some("value"),
                    ty: Some("type"),
                },
                AssignShape {
                    kind: "field_definition",
                    target: "property",
                    value: Some("value"),
                    ty: None,
                },
            ],
            alias_bindings: &[],
            conditionals: &["if_statement", "while_statement", "ternary_expression"],
            exits: &[
                ("return_statement", ExitKind::Return),
                ("throw_statement", ExitKind::Raise),
                ("break_statement", ExitKind::Break),
            ],
            comments: &["comment"],
            comment_text: strip_c_comment,
            import_kinds: &["import_statement"],
            imports,
            import_calls: &["require"],
            params: simple_params,
            heredoc: None,
        }
    };
}

pub static JAVASCRIPT: NodeTable =
    js_table!(Language::JavaScript, || tree_sitter_javascript::LANGUAGE
        .into());
pub static TYPESCRIPT: NodeTable = js_table!(Language::TypeScript, || {
    tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into()
});
pub static TSX: NodeTable = js_table!(Language::TypeScript, || {
    tree_sitter_typescript::LANGUAGE_TSX.into()
});

/// `import X, { a as b } from 'mod'`: `mod` bound to `X`, `mod.a` bound to `b`.
fn imports(node: Node, src: &str, out: &mut Vec<Import>) {
    let Some(source) = node.child_by_field_name("source") else {
        return;
    };
    let module = node_text(source, src)
        .trim_matches(['"', '\'', '`'])
        .to_string();
    let mut pending = vec![node];
    let mut any = false;
    while let Some(n) = pending.pop() {
        let mut c = n.walk();
        for child in n.named_children(&mut c) {
            match child.kind() {
                "import_clause" | "named_imports" => pending.push(child),
                "identifier" => {
                    any = true;
                    push_import(
                        out,
                        node,
                        module.clone(),
                        Some(node_text(child, src).to_string()),
                    );
                }
                "namespace_import" => {
                    any = true;
                    let mut cc = child.walk();
                    let alias = child
                        .named_children(&mut cc)
                        .next()
                        .map(|a| node_text(a, src).to_string());
                    push_import(out, node, module.clone(), alias);
                }
                "import_specifier" => {
                    any = true;
                    let name = child
                        .child_by_field_name("name")
                        .map_or("", |x| node_text(x, src));
                    let alias = child
                        .child_by_field_name("alias")
                        .map(|a| node_text(a, src).to_string());
                    push_import(out, node, format!("{module}.{name}"), alias);
                }
                _ => {}
            }
        }
    }
    if !any {
        push_import(out, node, module, None);
    }
}
