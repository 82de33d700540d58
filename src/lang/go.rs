//! Go as a [`NodeTable`].

use tree_sitter::Node;

use super::treesitter::{AssignShape, CallShape, LoopForm, NodeTable};
use super::{node_text, push_import, simple_params};
use crate::model::{ExitKind, FileModel, Import, Language};

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
    loops: &[(
        "for_statement",
        LoopForm::IteratesWith(&["range_clause", "for_clause"]),
    )],
    exits: &[
        ("return_statement", ExitKind::Return),
        ("break_statement", ExitKind::Break),
        ("continue_statement", ExitKind::Continue),
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

/// Go declares no `implements`: a type's interfaces are where the code says
/// it satisfies one, by assertion (`var _ store.TaskRepository =
/// (*taskStore)(nil)`, `= &T{}`, `= new(T)`) or by a constructor handing it out
/// as one (`func NewTaskStore(..) store.TaskRepository { return &taskStore{..} }`).
/// Recorded as the type's bases, so a call through the interface
/// (`s.taskRepository.LockForUpdate(..)`) reaches the type's method.
pub(crate) fn implemented_interfaces(model: &mut FileModel) {
    let mut found: Vec<(String, String)> = Vec::new();
    for a in model
        .assigns
        .iter()
        .filter(|a| a.target == "_" && a.func.is_none())
    {
        if let (Some(ty), Some(t)) = (a.ty.as_deref(), concrete_type(&a.value.text)) {
            found.push((t.to_string(), ty.to_string()));
        }
    }
    // Each `return` against its function's results, by position
    // (`(protocol.ZookeeperClient, <-chan zk.Event, error)`): one pass over the exits.
    for e in &model.exits {
        let returns = e
            .func
            .and_then(|f| model.functions.get(f)?.returns.as_deref());
        let Some(ty) = returns.map(str::trim) else {
            continue;
        };
        let types = top_level(ty.trim_start_matches('(').trim_end_matches(')'));
        for (ty, value) in types.iter().zip(top_level(&e.value)) {
            // An interface by name (not a pointer, a slice or a channel).
            let named = ty
                .chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '.');
            if let Some(t) = concrete_type(value).filter(|_| named && *ty != "error") {
                found.push((t.to_string(), ty.to_string()));
            }
        }
    }
    for (class, iface) in found {
        if class != iface {
            let iface = last_name(&iface).to_string();
            let bases = model.supers.entry(class).or_default();
            if !bases.contains(&iface) {
                bases.push(iface);
            }
        }
    }
}

/// The comma-separated parts of `text` outside brackets, trimmed.
fn top_level(text: &str) -> Vec<&str> {
    let (mut out, mut depth, mut start) = (Vec::new(), 0usize, 0);
    for (i, c) in text.char_indices() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                out.push(text[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(text[start..].trim());
    out
}

/// `store.TaskRepository` -> `TaskRepository`.
fn last_name(ty: &str) -> &str {
    ty.rsplit('.').next().unwrap_or(ty)
}

/// The type a value makes: `(*T)(nil)`, `&T{..}`, `T{..}`, `new(T)` -> `T`.
fn concrete_type(value: &str) -> Option<&str> {
    let v = value.trim();
    let name = if let Some(rest) = v.strip_prefix("(*") {
        rest.split_once(')')?.0
    } else if let Some(rest) = v.strip_prefix("new(") {
        rest.split_once(')')?.0
    } else {
        v.trim_start_matches('&').split_once('{')?.0
    };
    let name = name.trim();
    (!name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_')).then_some(name)
}
