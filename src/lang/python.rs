//! Python as a [`NodeTable`] for the generic tree-sitter lowering.

use tree_sitter::Node;

use super::treesitter::{AssignShape, CallShape, LoopForm, NodeTable};
use super::{node_text as text, push_import};
use crate::model::{ExitKind, Import, Language, Param};

pub static TABLE: NodeTable = NodeTable {
    language: Language::Python,
    grammar: || tree_sitter_python::LANGUAGE.into(),
    calls: &[CallShape {
        kind: "call",
        function: Some("function"),
        receiver: None,
        name: None,
        arguments: "arguments",
        constructor: false,
        block: None,
    }],
    arguments: &["argument_list"],
    members: &[("attribute", "object", "attribute")],
    keyword_args: &[("keyword_argument", "name", "value")],
    pairs: &[("pair", "key", "value")],
    identifiers: &["identifier"],
    strings: &["string", "concatenated_string"],
    string_content: &["string_content"],
    interpolation: &["interpolation"],
    symbols: &[],
    numbers: &["integer", "float"],
    true_: &["true"],
    false_: &["false"],
    null: &["none"],
    maps: &["dictionary"],
    lists: &["list", "tuple", "set"],
    wrappers: &["parenthesized_expression", "await", "expression_list"],
    field_wrappers: &[("subscript", "value")],
    binaries: &["binary_operator", "boolean_operator"],
    functions: &["function_definition"],
    classes: &["class_definition"],
    guarded_bodies: &[("with_statement", "body")],
    guard_items: &["with_item"],
    finally: &["finally_clause"],
    handlers: &["except_clause"],
    defer: &[],
    closures: &["lambda"],
    named_closures: &[],
    expression_statements: &["expression_statement"],
    statement_lists: &[],
    implicit_return: false,
    bare_identifier_calls: false,
    decorated: &["decorated_definition"],
    assignments: &[AssignShape {
        kind: "assignment",
        target: "left",
        value: Some("right"),
        ty: Some("type"),
    }],
    alias_bindings: &["as_pattern"],
    conditionals: &["if_statement", "elif_clause", "while_statement"],
    loops: &[
        ("while_statement", LoopForm::Repeats),
        ("for_statement", LoopForm::Iterates),
    ],
    exits: &[
        ("return_statement", ExitKind::Return),
        ("raise_statement", ExitKind::Raise),
        ("break_statement", ExitKind::Break),
    ],
    comments: &["comment"],
    comment_text: |s| s.trim_start_matches('#'),
    import_kinds: &["import_statement", "import_from_statement"],
    imports,
    import_calls: &["__import__", "import_module"],
    params,
    heredoc: None,
    mend: None,
    delegations: &[],
};

/// `import a.b as c` → (a.b, c); `from a import b as c` → (a.b, c).
fn imports(node: Node, src: &str, out: &mut Vec<Import>) {
    let module = node
        .child_by_field_name("module_name")
        .map(|m| text(m, src).to_string());
    let mut cursor = node.walk();
    for name in node.children_by_field_name("name", &mut cursor) {
        let (path, alias) = match name.kind() {
            "aliased_import" => (
                name.child_by_field_name("name")
                    .map_or("", |n| text(n, src)),
                name.child_by_field_name("alias")
                    .map(|a| text(a, src).to_string()),
            ),
            _ => (text(name, src), None),
        };
        let path = match &module {
            Some(m) => format!("{m}.{path}"),
            None => path.to_string(),
        };
        push_import(out, node, path, alias);
    }
    if let (Some(m), true) = (&module, text(node, src).trim_end().ends_with('*')) {
        push_import(out, node, format!("{m}.*"), None);
    }
}

fn params(node: Node, src: &str) -> Vec<Param> {
    let mut out = Vec::new();
    let mut cursor = node.walk();
    for p in node.named_children(&mut cursor) {
        let (name, ty) = match p.kind() {
            "identifier" => (Some(text(p, src)), None),
            "typed_parameter" => {
                let mut c = p.walk();
                let name = p.named_children(&mut c).find(|n| n.kind() == "identifier");
                (name.map(|n| text(n, src)), p.child_by_field_name("type"))
            }
            // `*args` / `**kwargs`: a caller's arguments from here on, by position or name.
            "list_splat_pattern" | "dictionary_splat_pattern" => {
                let mut c = p.walk();
                let name = p.named_children(&mut c).find(|n| n.kind() == "identifier");
                (name.map(|n| text(n, src)), None)
            }
            "default_parameter" | "typed_default_parameter" => (
                p.child_by_field_name("name").map(|n| text(n, src)),
                p.child_by_field_name("type"),
            ),
            _ => (None, None),
        };
        if let Some(name) = name {
            out.push(Param {
                name: name.to_string(),
                ty: ty.map(|t| text(t, src).to_string()),
                default: p
                    .child_by_field_name("value")
                    .map(|v| text(v, src).to_string()),
            });
        }
    }
    out
}
