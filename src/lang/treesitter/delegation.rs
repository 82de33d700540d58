//! Methods defined by delegation in a class body: `def_delegator
//! :lock_manager, :lock, :acquire_lock_for` defines `acquire_lock_for(*args,
//! &block)` as `lock_manager.lock(*args, &block)`. Lowered as that method,
//! so a lock helper reached through a delegation is a wrapper like any other.

use super::table::{Delegation, DelegationForm};
use super::Lowerer;
use crate::model::{Arg, Call, Expr, Function, GuardKind, Param, Span, Usage};

impl Lowerer<'_> {
    /// The methods the class-body call `call`, one of the grammar's
    /// delegations (`d`), defines.
    pub(super) fn delegations(&mut self, d: &Delegation, call: &Call) {
        let Some(class) = self.class_stack.last().cloned() else {
            return;
        };
        let names: Vec<&str> = (call.args.iter())
            .filter(|a| a.name.is_none())
            .filter_map(|a| a.value.as_str())
            .collect();
        let triples: Vec<(&str, &str, &str)> = match d.form {
            DelegationForm::Aliased => match names[..] {
                [accessor, method] => vec![(accessor, method, method)],
                [accessor, method, alias, ..] => vec![(accessor, method, alias)],
                _ => Vec::new(),
            },
            DelegationForm::Listed => match names.split_first() {
                Some((accessor, methods)) => methods.iter().map(|m| (*accessor, *m, *m)).collect(),
                None => Vec::new(),
            },
            DelegationForm::To(key) => match call.keyword(key).and_then(Expr::as_str) {
                Some(accessor) => names.iter().map(|m| (accessor, *m, *m)).collect(),
                None => Vec::new(),
            },
        };
        // `delegate :lock, to: :manager, prefix: true` defines `manager_lock`
        // (`prefix: :locks`: `locks_lock`).
        let prefix = call.keyword("prefix").and_then(|p| match p.text.as_str() {
            "true" => Some(String::new()),
            _ => p.as_str().map(str::to_string),
        });
        for (accessor, method, alias) in triples {
            let alias = match prefix.as_deref() {
                Some("") => format!("{}_{alias}", accessor.trim_start_matches('@')),
                Some(own) => format!("{own}_{alias}"),
                None => alias.to_string(),
            };
            self.forwarding_method(&class, (accessor, method, &alias), call.span);
        }
    }

    /// `def alias(*args, &block) = accessor.method(*args, &block)`, at `span`.
    fn forwarding_method(
        &mut self,
        class: &str,
        (accessor, method, alias): (&str, &str, &str),
        span: Span,
    ) {
        let id = self.model.functions.len();
        let parent = self.block_stack.last().copied();
        let body = self.model.add_block(GuardKind::Function, span, parent);
        let param = |name: &str| Param {
            name: name.to_string(),
            ty: None,
            default: None,
        };
        self.model.functions.push(Function {
            id,
            name: format!("{class}.{alias}"),
            params: vec![param("args"), param("block")],
            receiver: false,
            returns: None,
            span,
            body,
            ends_with: None,
        });
        let arg = |text: &str| Arg {
            name: None,
            value: Expr::other(text, span),
        };
        let receiver = Expr {
            kind: crate::model::ExprKind::Name(accessor.to_string()),
            text: accessor.to_string(),
            span,
        };
        self.model.calls.push(Call {
            id: self.model.calls.len(),
            name: method.to_string(),
            callee: format!("{accessor}.{method}"),
            receiver: Some(Box::new(receiver)),
            args: vec![arg("*args"), arg("&block")],
            span,
            name_span: span,
            func: Some(id),
            block: body,
            usage: Usage::Used,
        });
    }
}
