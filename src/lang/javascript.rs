//! JavaScript (and JSX), TypeScript and TSX as [`NodeTable`]s: one shape,
//! three grammars.

use tree_sitter::Node;

use super::go::strip_c_comment;
use super::treesitter::{AssignShape, CallShape, LoopForm, NodeTable};
use super::{node_text, push_import, simple_params};
use crate::model::{ExitKind, Import, Language};

macro_rules! js_table {
    ($lang:expr, $grammar:expr, $mend:expr) => {
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
                "super",
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
            handlers: &["catch_clause"],
            defer: &[],
            closures: &["arrow_function", "function_expression", "function"],
            named_closures: &[
                ("variable_declarator", "name"),
                ("public_field_definition", "name"),
                ("field_definition", "property"),
                // `Order.prototype.lock = async function (..) {..}`
                ("assignment_expression", "left"),
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
            loops: &[
                ("while_statement", LoopForm::Repeats),
                ("do_statement", LoopForm::Repeats),
                ("for_statement", LoopForm::Iterates),
                ("for_in_statement", LoopForm::Iterates),
            ],
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
            mend: $mend,
            delegations: &[],
        }
    };
}

pub static JAVASCRIPT: NodeTable = js_table!(
    Language::JavaScript,
    || tree_sitter_javascript::LANGUAGE.into(),
    Some(using_call_statements)
);
pub static TYPESCRIPT: NodeTable = js_table!(
    Language::TypeScript,
    || tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
    Some(mend_typescript)
);
pub static TSX: NodeTable = js_table!(
    Language::TypeScript,
    || tree_sitter_typescript::LANGUAGE_TSX.into(),
    Some(mend_typescript)
);

/// Every TypeScript mend, one after the other (each keeps every byte offset).
fn mend_typescript(text: &str) -> Option<String> {
    let mends: [fn(&str) -> Option<String>; 3] = [
        blank_template_type_args,
        unnamed_parameter_types,
        using_identifiers,
    ];
    let mut out: Option<String> = None;
    for mend in mends {
        if let Some(m) = mend(out.as_deref().unwrap_or(text)) {
            out = Some(m);
        }
    }
    out
}

/// A statement that calls a function named `using` (`using(pool, fn);`,
/// `await using(resource, fn);`): valid JavaScript, which the grammars
/// (tree-sitter-javascript 0.25, -typescript 0.23) take for the start of a
/// `using x = ..` declaration and reject. Made an expression, same length:
/// `await` becomes `void `, else the blank before `using` becomes `!`. The
/// call, its name and arguments stay.
fn using_call_statements(text: &str) -> Option<String> {
    let b = text.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'$';
    let mut out: Option<Vec<u8>> = None;
    for (at, _) in text.match_indices("using") {
        let called = text[at + "using".len()..].trim_start().starts_with('(');
        if !called || (at > 0 && ident(b[at - 1])) {
            continue;
        }
        let head = text[..at].trim_end_matches([' ', '\t']);
        let awaited = head
            .strip_suffix("await")
            .filter(|h| h.len() < head.len() && !h.ends_with(|c: char| ident(c as u8)));
        let (mark, with): (usize, &[u8]) = match awaited {
            Some(h) if h.len() + "await".len() < at => (h.len(), b"void "),
            Some(_) => continue,
            None if at > head.len() => (at - 1, b"!"),
            None => continue,
        };
        // Only where a statement starts: after `;`, `{`, `}`, a line break or nothing.
        let before = text[..mark].trim_end_matches([' ', '\t']);
        let starts = before.is_empty()
            || before.ends_with([';', '{', '}', '\n', '\r'])
            || text[before.len()..mark].contains('\n');
        if !starts {
            continue;
        }
        let o = out.get_or_insert_with(|| b.to_vec());
        o[mark..mark + with.len()].copy_from_slice(with);
    }
    out.and_then(|o| String::from_utf8(o).ok())
}

/// A function named `using` (`async function using<T>(..)`, `await
/// using(redis, fn)`), which tree-sitter-typescript 0.23 rejects wherever the
/// name stands for a value: renamed `Using` (same length) at its definition
/// and its calls alike, so they still pair. A member (`redlock.using(..)`)
/// and a `using x = ..` declaration are untouched.
fn using_identifiers(text: &str) -> Option<String> {
    let b = text.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'$' | b'.' | b'#');
    let mut out: Option<Vec<u8>> = None;
    for (at, _) in text.match_indices("using") {
        let next = text[at + "using".len()..].trim_start();
        if (at > 0 && ident(b[at - 1])) || !next.starts_with(['(', '<']) {
            continue;
        }
        out.get_or_insert_with(|| b.to_vec())[at] = b'U';
    }
    out.and_then(|o| String::from_utf8(o).ok())
}

/// Names of predefined types, which tree-sitter-typescript 0.23 will not take
/// as parameter names.
const PREDEFINED: &[&str] = &[
    "string", "number", "boolean", "any", "unknown", "object", "symbol", "bigint",
];

/// A function type whose parameters are unnamed (`(string) => any`, `(string,
/// number) => void`: valid TypeScript, each a parameter named after a type),
/// which tree-sitter-typescript 0.23 rejects: each such name's first letter
/// becomes `_` (`(_tring) => any`), same length.
fn unnamed_parameter_types(text: &str) -> Option<String> {
    let b = text.as_bytes();
    let mut out: Option<Vec<u8>> = None;
    for (arrow, _) in text.match_indices("=>") {
        let before = text[..arrow].trim_end();
        let Some(inside) = before.strip_suffix(')') else {
            continue;
        };
        let Some(open) = inside.rfind(['(', ')', '\n']).filter(|&o| b[o] == b'(') else {
            continue;
        };
        let params = &inside[open + 1..];
        let names: Vec<&str> = params.split(',').map(str::trim).collect();
        let all = names.iter().all(|n| PREDEFINED.contains(n));
        if !all || params.trim().is_empty() {
            continue;
        }
        let o = out.get_or_insert_with(|| b.to_vec());
        let mut at = open + 1;
        for part in params.split(',') {
            let lead = part.len() - part.trim_start().len();
            o[at + lead] = b'_';
            at += part.len() + 1;
        }
    }
    out.and_then(|o| String::from_utf8(o).ok())
}

/// Longest type argument list [`blank_template_type_args`] looks back over.
const MAX_TYPE_ARGS: usize = 400;

/// Type arguments of a tagged template (`` tx.$queryRaw<Row[]>`SELECT ..` ``,
/// valid TypeScript since 2.9), which tree-sitter-typescript 0.23 reads as
/// comparisons (`a < Row[] > `..``) or patches with a missing `!`, losing
/// the call: blanked to spaces (newlines kept) so the tag is called with the
/// template. Only a `<..>` right after a name and before a backtick, whose
/// first character may start a type, is touched.
fn blank_template_type_args(text: &str) -> Option<String> {
    let b = text.as_bytes();
    let mut out: Option<Vec<u8>> = None;
    for (tick, _) in text.match_indices('`') {
        let spaces = (b[..tick].iter().rev())
            .take_while(|c| c.is_ascii_whitespace())
            .count();
        let end = tick - spaces;
        // `>` but not an arrow's `=>`.
        if end < 2 || b[end - 1] != b'>' || b[end - 2] == b'=' {
            continue;
        }
        let close = end - 1;
        let mut depth = 0usize;
        // Object types hold `;` between members (`Array<{ id: string; n: number }>`).
        let mut braces = 0usize;
        let mut open = None;
        for k in (close.saturating_sub(MAX_TYPE_ARGS)..=close).rev() {
            match b[k] {
                b'>' if k == 0 || b[k - 1] != b'=' => depth += 1,
                b'<' => {
                    depth -= 1;
                    if depth == 0 {
                        open = Some(k);
                        break;
                    }
                }
                b'}' => braces += 1,
                b'{' if braces > 0 => braces -= 1,
                b'{' => break,
                b';' if braces > 0 => {}
                b'`' | b';' => break,
                _ => {}
            }
        }
        let Some(open) = open.filter(|&o| o > 0) else {
            continue;
        };
        let named = b[open - 1].is_ascii_alphanumeric() || matches!(b[open - 1], b'_' | b'$');
        // The first character of the type, after any line comments.
        let mut inner = &text[open + 1..close];
        while let Some(rest) = inner.trim_start().strip_prefix("//") {
            inner = rest.split_once('\n').map_or("", |(_, r)| r);
        }
        let first = inner.bytes().find(|c| !c.is_ascii_whitespace());
        let first = first.as_ref();
        let typed = first.is_some_and(|c| c.is_ascii_alphabetic() || b"{[('\"".contains(c));
        if !(named && typed) {
            continue;
        }
        let o = out.get_or_insert_with(|| b.to_vec());
        for c in &mut o[open..=close] {
            if !matches!(*c, b'\n' | b'\r') {
                *c = b' ';
            }
        }
    }
    out.and_then(|o| String::from_utf8(o).ok())
}

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
