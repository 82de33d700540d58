//! Calls and statements: assignments, statements that drop their values,
//! guards, conditions and early exits.

use tree_sitter::Node;

use super::table::{AssignShape, CallShape};
use super::text::{collapse_ws, split_callee};
use super::{exprs, span, take, take_expr, Children, Lowered, Lowerer};
use crate::model::{
    Arg, Assign, Call, Conditional, Exit, ExitKind, Expr, ExprKind, Import, Span, Usage,
};

impl Lowerer<'_> {
    pub(super) fn call(
        &mut self,
        shape: &CallShape,
        node: Node,
        mut children: Children,
        sp: Span,
    ) -> Lowered {
        let args = match take(&mut children, shape.arguments) {
            Some(Lowered::Args(args)) => args,
            Some(Lowered::Expr(e, _)) => vec![Arg {
                name: None,
                value: e,
            }],
            _ => Vec::new(),
        };
        let has_block = shape
            .block
            .is_some_and(|b| node.child_by_field_name(b).is_some());
        let (name, callee, receiver, name_span) = if let Some(f) = shape.function {
            let Some(callee) = take_expr(&mut children, f) else {
                return Lowered::Expr(Expr::other(self.text(node), sp), 1);
            };
            split_callee(callee)
        } else {
            let name_node = shape.name.and_then(|f| node.child_by_field_name(f));
            // A keyword call names no method (Ruby `yield`): its keyword is its name.
            let name = match (shape.name, name_node) {
                (_, Some(n)) => self.src[n.byte_range()].to_string(),
                (None, None) => node.kind().to_string(),
                (Some(_), None) => String::new(),
            };
            let name_span = name_node.map_or(sp, span);
            match shape.receiver.and_then(|f| take_expr(&mut children, f)) {
                Some(recv) => {
                    let callee = format!("{}.{name}", recv.text);
                    (name, callee, Some(Box::new(recv)), name_span)
                }
                None => (name.clone(), name, None, name_span),
            }
        };
        // `new redis.Client(..)`: the callee is the type; its last segment is the name.
        // Type arguments are not part of the name: `new DefaultRedisScript<>(..)`.
        let callee = match callee.find('<') {
            Some(i) if shape.constructor => callee[..i].to_string(),
            _ => callee,
        };
        let name = if shape.constructor {
            callee
                .rsplit(['.', ':'])
                .next()
                .unwrap_or(&callee)
                .to_string()
        } else {
            name
        };
        if self.t.import_calls.contains(&name.as_str()) {
            if let Some(path) = args.first().and_then(|a| a.value.as_str()) {
                self.model.imports.push(Import {
                    path: path.to_string(),
                    alias: None,
                    span: sp,
                });
            }
        }
        let text = self.text(node);
        let receiver = if shape.constructor { None } else { receiver };
        let usage = if has_block { Usage::Guard } else { Usage::Used };
        let lowered = self.push_call(
            (name, collapse_ws(&callee), receiver, args),
            (sp, name_span),
            usage,
            text,
        );
        // `Sidekiq.redis do |conn| .. end`: each block parameter is bound to
        // what the call yields, which the call's own name may say.
        let block = shape.block.and_then(|b| node.child_by_field_name(b));
        if let (Some(block), Lowered::Expr(host, _)) = (block, &lowered) {
            self.block_params(block, host);
        }
        // `def_delegator :lock_manager, :lock, :acquire_lock_for` in a class body.
        let table = self.t;
        let made = self.model.calls.last().filter(|c| c.receiver.is_none());
        let delegation = made
            .filter(|_| self.func_stack.is_empty())
            .and_then(|c| table.delegations.iter().find(|d| d.call == c.name));
        if let (Some(d), Some(call)) = (delegation, made.cloned()) {
            self.delegations(d, &call);
        }
        lowered
    }

    /// Binds each plain parameter of `block` (Ruby `|conn|`) to its `host` call.
    fn block_params(&mut self, block: Node, host: &Expr) {
        let Some(params) = block.child_by_field_name("parameters") else {
            return;
        };
        let func = self.current_func();
        let mut cursor = params.walk();
        for p in params.named_children(&mut cursor) {
            if !self.t.identifiers.contains(&p.kind()) {
                continue;
            }
            self.model.assigns.push(Assign {
                target: self.src[p.byte_range()].to_string(),
                ty: None,
                value: host.clone(),
                span: span(block),
                func,
            });
        }
    }

    /// Records a call in the current function and block; its value as an expression.
    fn push_call(
        &mut self,
        (name, callee, receiver, args): (String, String, Option<Box<Expr>>, Vec<Arg>),
        (span, name_span): (Span, Span),
        usage: Usage,
        text: String,
    ) -> Lowered {
        let id = self.model.calls.len();
        self.model.calls.push(Call {
            id,
            name,
            callee,
            receiver,
            args,
            span,
            name_span,
            func: self.current_func(),
            block: self.block_stack.last().copied().unwrap_or(0),
            usage,
        });
        Lowered::Expr(
            Expr {
                kind: ExprKind::Call(id),
                text,
                span,
            },
            1,
        )
    }

    /// Is the identifier `node` a method call without receiver or
    /// arguments: a statement of its own or an assignment's value (by its
    /// parent's kind and its field), naming no parameter of its method or of
    /// a block around it and no local assigned before it?
    pub(super) fn is_bare_call(
        &self,
        node: Node,
        parent_kind: Option<&str>,
        field: Option<&str>,
    ) -> bool {
        let Some(parent) = parent_kind else {
            return false;
        };
        let statement = self.t.statement_lists.contains(&parent);
        let value = self
            .t
            .assignments
            .iter()
            .any(|a| a.kind == parent && a.value.is_some() && a.value == field);
        if !(statement || value) {
            return false;
        }
        let name = &self.src[node.byte_range()];
        let func = self.current_func();
        let param = func.is_some_and(|f| {
            self.model.functions[f]
                .params
                .iter()
                .any(|p| p.name == name)
        });
        let local = self
            .model
            .assigns
            .iter()
            .rev()
            .take_while(|a| a.func == func)
            .any(|a| a.target == name);
        !param && !local && !self.block_params.iter().any(|p| p == name)
    }

    /// Puts the parameter names of the block `node` on `block_params`;
    /// returns how many.
    pub(super) fn push_block_params(&mut self, node: Node) -> usize {
        let Some(params) = node.child_by_field_name("parameters") else {
            return 0;
        };
        let mut cursor = params.walk();
        let names: Vec<String> = params
            .named_children(&mut cursor)
            .map(|p| self.src[p.child_by_field_name("name").unwrap_or(p).byte_range()].to_string())
            .collect();
        let n = names.len();
        self.block_params.extend(names);
        n
    }

    /// The call a bare identifier makes ([`Self::is_bare_call`]).
    pub(super) fn bare_call(&mut self, node: Node, sp: Span) -> Lowered {
        let name = self.src[node.byte_range()].to_string();
        let call = (name.clone(), name.clone(), None, Vec::new());
        self.push_call(call, (sp, sp), Usage::Used, name)
    }

    pub(super) fn assign(
        &mut self,
        shape: &AssignShape,
        node: Node,
        mut children: Children,
        sp: Span,
    ) {
        let Some(target_node) = node.child_by_field_name(shape.target) else {
            return;
        };
        let mut target = collapse_ws(&self.src[target_node.byte_range()]);
        // A value lowered as something else (a JavaScript or Java ternary is a
        // conditional) is still the name's value, as text.
        let value = shape.value.and_then(|f| {
            take_expr(&mut children, f).or_else(|| {
                let n = node.child_by_field_name(f)?;
                Some(Expr::other(self.text(n), span(n)))
            })
        });
        let ty = shape.ty.and_then(|f| {
            node.child_by_field_name(f)
                .or_else(|| node.parent().and_then(|p| p.child_by_field_name(f)))
                .map(|n| self.text(n))
        });
        // `ok, err := call()`: the call's usage names both; the assignment binds the first.
        let all_targets = target.clone();
        if let Some((first, _)) = target.split_once(',') {
            target = first.trim().to_string();
        }
        let value = match value {
            Some(v) => v,
            None if ty.is_some() => Expr::other("", sp),
            None => return,
        };
        self.destructured_require(&all_targets, &value, sp);
        if !matches!(value.kind, ExprKind::Other) || ty.is_some() {
            self.set_usage(&value, Usage::Assigned(all_targets));
        }
        let func = self.current_func();
        self.model.assigns.push(Assign {
            target,
            ty,
            value,
            span: sp,
            func,
        });
    }

    /// `const { Mutex, Semaphore: Sem } = require('redis-semaphore')` imports
    /// each name it binds, as `import { Mutex, Semaphore as Sem }` would.
    fn destructured_require(&mut self, targets: &str, value: &Expr, sp: Span) {
        let Some(names) = targets.strip_prefix('{').and_then(|t| t.strip_suffix('}')) else {
            return;
        };
        let call = value.as_call().map(|id| &self.model.calls[id]);
        let Some(module) = call
            .filter(|c| self.t.import_calls.contains(&c.name.as_str()))
            .and_then(|c| c.args.first())
            .and_then(|a| a.value.as_str())
            .map(str::to_string)
        else {
            return;
        };
        for part in names.split(',') {
            let (name, alias) = match part.split_once(':') {
                Some((n, a)) => (n.trim(), Some(a.trim().to_string())),
                None => (part.trim(), None),
            };
            let plain = |n: &str| {
                !n.is_empty()
                    && n.chars()
                        .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
            };
            // A nested pattern (`{ a: { b } }`) binds no module member by name.
            if plain(name) && alias.as_deref().is_none_or(plain) {
                self.model.imports.push(Import {
                    path: format!("{module}.{name}"),
                    alias,
                    span: sp,
                });
            }
        }
    }

    fn set_usage(&mut self, e: &Expr, usage: Usage) {
        if let Some(id) = e.as_call() {
            let call = &mut self.model.calls[id];
            // A block-taking call stays a guard whatever its statement does with the result.
            if call.usage != Usage::Guard {
                call.usage = usage;
            }
        }
    }

    /// A statement drops its expression's value; in a statement list whose
    /// last statement is its value (Ruby), that one is kept.
    pub(super) fn statements(&mut self, list: bool, node: Node, children: &Children) {
        let t = self.t;
        let last = (t.implicit_return && list)
            .then(|| {
                let mut cursor = node.walk();
                let last = node
                    .named_children(&mut cursor)
                    .filter(|c| !t.comments.contains(&c.kind()))
                    .last();
                last.map(span)
            })
            .flatten();
        for (_, l) in children {
            if let Lowered::Expr(e, _) = l {
                if Some(e.span) != last {
                    self.set_usage(e, Usage::Discarded);
                }
            }
        }
        // A method body's last statement is its result: a bare name there is
        // what the method hands back (`token`).
        let body = node
            .parent()
            .is_some_and(|p| t.functions.contains(&p.kind()));
        let returned = (children.iter()).find_map(|(_, l)| match l {
            Lowered::Expr(e, _) if Some(e.span) == last && e.as_name().is_some() => Some(e),
            _ => None,
        });
        if let (true, Some(name), Some(&f)) = (body, returned, self.func_stack.last()) {
            self.model.functions[f].ends_with = Some(name.clone());
        }
    }

    /// `with lock as l:` / Java `try (var l = ...)`: the value guards the body.
    pub(super) fn guard_item(&mut self, node: Node, children: Children, sp: Span) -> Lowered {
        // A Java resource declares its variable (`try (PreparedStatement ps = ..)`): that
        // names the guard, not its type.
        let declared = node
            .child_by_field_name("name")
            .map(|n| collapse_ws(&self.src[n.byte_range()]));
        for (_, l) in &children {
            if let Lowered::Expr(e, _) = l {
                self.set_usage(e, Usage::Guard);
                if let Some(name) = e.as_name().filter(|_| declared.is_none()) {
                    self.model.guard_names.push((name.to_string(), sp));
                }
            }
        }
        if let Some(name) = declared {
            self.model.guard_names.push((name, sp));
        }
        match children
            .into_iter()
            .find(|(_, l)| matches!(l, Lowered::Expr(..)))
        {
            Some((_, l)) => l,
            None => Lowered::Nothing,
        }
    }

    /// `value as name`: an assignment whose value is also the node's value.
    pub(super) fn alias_binding(
        &mut self,
        node: Node,
        children: Children,
        sp: Span,
        depth: u32,
    ) -> Lowered {
        let value = children.iter().find_map(|(f, l)| match (f, l) {
            (None, Lowered::Expr(e, _)) => Some(e.clone()),
            _ => None,
        });
        if let (Some(alias), Some(value)) = (node.child_by_field_name("alias"), value) {
            let target = collapse_ws(&self.src[alias.byte_range()]);
            let func = self.current_func();
            self.model.assigns.push(Assign {
                target,
                ty: None,
                value: value.clone(),
                span: sp,
                func,
            });
            return Lowered::Expr(value, depth);
        }
        Lowered::Nothing
    }

    /// A branching statement: its condition is tested.
    pub(super) fn conditional(&mut self, mut children: Children, sp: Span) {
        if let Some(cond) = take_expr(&mut children, "condition") {
            self.tested(&cond, sp);
        }
    }

    /// `cond` decides whether the rest of `stmt` runs.
    pub(super) fn tested(&mut self, cond: &Expr, stmt: Span) {
        self.set_usage(cond, Usage::Tested);
        let func = self.current_func();
        self.model.conditionals.push(Conditional {
            stmt,
            cond: cond.span,
            text: cond.text.clone(),
            func,
        });
    }

    /// `return` / `raise` / `break`; a returned call's result reaches the
    /// caller, so it is not discarded.
    pub(super) fn exit(&mut self, kind: ExitKind, children: Children, sp: Span) {
        let value = exprs(children).into_iter().next();
        let text = value.as_ref().map(|v| v.text.clone()).unwrap_or_default();
        if let Some(v) = &value {
            self.set_usage(v, Usage::Used);
        }
        let func = self.current_func();
        self.model.exits.push(Exit {
            kind,
            span: sp,
            func,
            value: text,
            operand: Span::default(),
        });
    }
}
