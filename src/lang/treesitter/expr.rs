//! Expressions: literals, names, members, collections, operators, arguments.

use tree_sitter::Node;

use super::table::{Fields, Role};
use super::text::{collapse_ws, key_name, parse_int};
use super::{exprs, span, take_expr, Children, Lowered, Lowerer};
use crate::model::{Arg, Expr, ExprKind};

/// An argument list: positionals, keywords and pairs in source order.
pub(super) fn arguments(children: Children) -> Lowered {
    let args = children
        .into_iter()
        .filter_map(|(_, l)| match l {
            Lowered::Expr(value, _) => Some(Arg { name: None, value }),
            Lowered::Arg(a) => Some(a),
            Lowered::Pair(k, value) => Some(Arg {
                name: Some(key_name(&k)),
                value,
            }),
            _ => None,
        })
        .collect();
    Lowered::Args(args)
}

impl Lowerer<'_> {
    /// `name=value` (Python), `name: value` (Ruby keyword arguments are pairs).
    pub(super) fn keyword_arg(
        &self,
        (_, name_f, value_f): Fields,
        node: Node,
        mut children: Children,
    ) -> Lowered {
        let name = node
            .child_by_field_name(name_f)
            .map(|n| self.src[n.byte_range()].to_string());
        match take_expr(&mut children, value_f) {
            Some(value) => Lowered::Arg(Arg { name, value }),
            None => Lowered::Nothing,
        }
    }

    /// A `key: value` pair of a map literal or an argument list.
    pub(super) fn pair(
        &self,
        (_, key_f, value_f): Fields,
        node: Node,
        mut children: Children,
    ) -> Lowered {
        let key = node.child_by_field_name(key_f).map(|k| {
            let text = self.src[k.byte_range()].to_string();
            match take_expr(&mut children, key_f) {
                Some(e) => e,
                None => Expr {
                    kind: ExprKind::Name(text.clone()),
                    text,
                    span: span(k),
                },
            }
        });
        match (key, take_expr(&mut children, value_f)) {
            (Some(k), Some(v)) => Lowered::Pair(k, v),
            // Ruby 3.1 shorthand `timeout_seconds:` passes the local or method
            // of that name.
            (Some(k), None) => {
                let name = k.text.trim_end_matches(':').to_string();
                let v = Expr {
                    kind: ExprKind::Name(name.clone()),
                    text: name,
                    span: k.span,
                };
                Lowered::Pair(k, v)
            }
            _ => Lowered::Nothing,
        }
    }

    /// `a.b`: a dotted name when `a` is a name, else a member of an expression.
    pub(super) fn member(
        &self,
        (_, obj_f, prop_f): Fields,
        node: Node,
        mut children: Children,
        depth: u32,
    ) -> Lowered {
        let sp = span(node);
        let prop = node
            .child_by_field_name(prop_f)
            .map(|n| self.src[n.byte_range()].to_string())
            .unwrap_or_default();
        let text = self.text(node);
        match take_expr(&mut children, obj_f) {
            Some(obj) if matches!(obj.kind, ExprKind::Name(_)) => {
                let path = format!("{}.{prop}", obj.text);
                self.expr(ExprKind::Name(path), text, sp, depth)
            }
            Some(obj) => self.expr(
                ExprKind::Member {
                    object: Box::new(obj),
                    name: prop,
                },
                text,
                sp,
                depth,
            ),
            None => self.expr(ExprKind::Name(collapse_ws(&text)), text, sp, depth),
        }
    }

    /// A leaf: a name, a string, a symbol, a number, a boolean or null.
    pub(super) fn literal(&mut self, role: Role, node: Node, depth: u32) -> Lowered {
        let sp = span(node);
        let text = self.text(node);
        let kind = match role {
            Role::Identifier => ExprKind::Name(text.clone()),
            Role::HeredocMarker => ExprKind::Str(self.heredocs.next().unwrap_or_default()),
            Role::Str => self.string_value(node),
            Role::Symbol => ExprKind::Str(
                text.trim_start_matches(':')
                    .trim_end_matches(':')
                    .to_string(),
            ),
            Role::Number => {
                let digits: String = text.chars().filter(|c| *c != '_').collect();
                match (parse_int(&digits), digits.parse::<f64>()) {
                    (Some(v), _) => ExprKind::Int(v),
                    (None, Ok(f)) => ExprKind::Float(f),
                    _ => ExprKind::Other,
                }
            }
            Role::True => ExprKind::Bool(true),
            Role::False => ExprKind::Bool(false),
            Role::Null => ExprKind::Null,
            _ => ExprKind::Other,
        };
        // A template's text is its only content: a lock clause after the
        // first lines of a long query (`${lockClause}`) must stay in it.
        let text = match kind {
            ExprKind::Template => self.src[node.byte_range()].to_string(),
            _ => text,
        };
        self.expr(kind, text, sp, depth)
    }

    /// A literal with `key: value` pairs is a map, otherwise a list (Go's
    /// `literal_value` is either); an empty one is what the table calls it.
    pub(super) fn collection(
        &self,
        map: bool,
        node: Node,
        children: Children,
        depth: u32,
    ) -> Lowered {
        let text = self.text(node);
        let mut pairs = Vec::new();
        let mut items = Vec::new();
        for (_, l) in children {
            match l {
                Lowered::Pair(k, v) => pairs.push((k, v)),
                Lowered::Expr(e, _) => items.push(e),
                _ => {}
            }
        }
        let kind = if map {
            // A shorthand entry (`{ token }`) is `token: token`; a spread adds none.
            let shorthand = items.into_iter().filter(|e| e.as_name().is_some());
            pairs.extend(shorthand.map(|e| (e.clone(), e)));
            ExprKind::Map(pairs)
        } else if !pairs.is_empty() {
            ExprKind::Map(pairs)
        } else {
            ExprKind::List(items)
        };
        self.expr(kind, text, span(node), depth)
    }

    /// Parentheses, `await`, `&`: transparent around one expression.
    pub(super) fn wrapper(&self, node: Node, children: Children, depth: u32) -> Lowered {
        let text = self.text(node);
        let mut items = exprs(children);
        let kind = match items.len() {
            1 => ExprKind::Wrapped(Box::new(items.remove(0))),
            _ => ExprKind::Other,
        };
        self.expr(kind, text, span(node), depth)
    }

    /// A node whose value is one of its fields (Go composite literal → body).
    pub(super) fn field_wrapper(
        &self,
        field: &str,
        node: Node,
        mut children: Children,
        depth: u32,
    ) -> Lowered {
        let text = self.text(node);
        let kind = match take_expr(&mut children, field) {
            Some(inner) => ExprKind::Wrapped(Box::new(inner)),
            None => ExprKind::Other,
        };
        self.expr(kind, text, span(node), depth)
    }

    /// `a op b`, with the operator's first character. The left operand of a
    /// short-circuit `&&` / `||` / `and` / `or` is tested, as an `if`'s
    /// condition is (`count == 1 && job.reload`); it is recorded as a test
    /// over itself alone: the right operand runs on success or on failure
    /// by the operator, not the branch the path checks take an `if` body for.
    pub(super) fn binary(&mut self, node: Node, mut children: Children, depth: u32) -> Lowered {
        let operator = node
            .child_by_field_name("operator")
            .map(|n| &self.src[n.byte_range()])
            .unwrap_or("?");
        let op = operator.chars().next().unwrap_or('?');
        let short_circuit = matches!(operator, "&&" | "||" | "and" | "or");
        let text = self.text(node);
        let kind = match (
            take_expr(&mut children, "left"),
            take_expr(&mut children, "right"),
        ) {
            (Some(l), Some(r)) => {
                if short_circuit {
                    self.tested(&l, l.span);
                }
                ExprKind::Binary {
                    op,
                    lhs: Box::new(l),
                    rhs: Box::new(r),
                }
            }
            _ => ExprKind::Other,
        };
        self.expr(kind, text, span(node), depth)
    }

    /// A literal's content, or `Template` when it interpolates. Handles
    /// implicitly concatenated literals (`"a" "b"`) one level deep.
    fn string_value(&self, node: Node) -> ExprKind {
        let t = self.t;
        let mut cursor = node.walk();
        let mut parts: Vec<Node> = node.children(&mut cursor).collect();
        if parts.iter().any(|p| t.strings.contains(&p.kind())) {
            let nested = std::mem::take(&mut parts);
            for n in nested {
                let mut c = n.walk();
                parts.extend(n.children(&mut c));
            }
        }
        let mut content = String::new();
        let mut found = false;
        for child in parts {
            let k = child.kind();
            if t.interpolation.contains(&k) {
                return ExprKind::Template;
            }
            if t.string_content.contains(&k) {
                found = true;
                content.push_str(&self.src[child.byte_range()]);
            }
        }
        if !found {
            // An empty literal, or a grammar without content nodes: strip the quotes.
            let raw = &self.src[node.byte_range()];
            let q = raw.chars().next().filter(|c| matches!(c, '"' | '\'' | '`'));
            if let Some(q) = q {
                content = raw.trim_start_matches(q).trim_end_matches(q).to_string();
            }
        }
        ExprKind::Str(content)
    }
}
