//! Python as a [`NodeTable`] for the generic tree-sitter lowering.

use tree_sitter::Node;

use super::treesitter::NodeTable;
use crate::model::{Import, Language, Param, Span};

pub static TABLE: NodeTable = NodeTable {
    language: Language::Python,
    grammar: || tree_sitter_python::LANGUAGE.into(),
    call: &["call"],
    call_function: "function",
    call_arguments: "arguments",
    arguments: &["argument_list"],
    member: &["attribute"],
    member_object: "object",
    member_property: "attribute",
    keyword_argument: &["keyword_argument"],
    identifier: &["identifier"],
    string: &["string", "concatenated_string"],
    string_content: &["string_content"],
    interpolation: &["interpolation"],
    integer: &["integer"],
    float: &["float"],
    true_: &["true"],
    false_: &["false"],
    null: &["none"],
    map: &["dictionary"],
    pair: &["pair"],
    list: &["list", "tuple", "set", "expression_list"],
    wrapper: &["parenthesized_expression", "await"],
    binary: &["binary_operator"],
    functions: &["function_definition"],
    classes: &["class_definition"],
    with: &["with_statement"],
    finally: &["finally_clause"],
    defer: &[],
    closure: &["lambda"],
    expression_statement: &["expression_statement"],
    assignment: &["assignment"],
    alias_binding: &["as_pattern"],
    conditional: &["if_statement", "elif_clause", "while_statement"],
    comment: &["comment"],
    comment_text: |s| s.trim_start_matches('#'),
    imports,
    import_kinds: &["import_statement", "import_from_statement"],
    params,
};

fn text<'s>(node: Node, src: &'s str) -> &'s str {
    &src[node.byte_range()]
}

/// `import a.b as c` → (a.b, c); `from a import b as c` → (a.b, c).
fn imports(node: Node, src: &str, out: &mut Vec<Import>) {
    let span = Span::new(node.start_byte(), node.end_byte());
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
        out.push(Import { path, alias, span });
    }
    if let (Some(m), true) = (&module, text(node, src).trim_end().ends_with('*')) {
        out.push(Import {
            path: format!("{m}.*"),
            alias: None,
            span,
        });
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
            });
        }
    }
    out
}
