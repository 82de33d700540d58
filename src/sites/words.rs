//! A command's words and option objects read as what they set: the key,
//! value and TTL in their positions, and the flags (`"NX"`, `"PX", 30000`,
//! `SetOptions::default().conditional_set(ExistenceCheck::NX)`, `{NX: true}`).

use super::command::Command;
use super::resolve;
use crate::catalog::CommandSpec;
use crate::model::{Call, Expr, ExprKind, FileModel};

/// Positional command words after the command name: `k, v, "NX", "PX", 30000`.
pub(super) fn apply_words(
    model: &FileModel,
    spec: &CommandSpec,
    words: &[Expr],
    call: &Call,
    cmd: &mut Command,
) {
    let mut rest = words.iter();
    // When the key came from its own slot, the words are only options (`'PX', ms, 'NX'`).
    let positional: &[String] = if cmd.keys.is_empty() { &spec.args } else { &[] };
    for role in positional {
        match role.as_str() {
            "keys..." => {
                cmd.keys.extend(rest.by_ref().cloned());
                return;
            }
            _ => {
                let Some(w) = rest.next() else { return };
                match role.as_str() {
                    "key" => cmd.keys.push(w.clone()),
                    "value" => cmd.value = Some(w.clone()),
                    "ttl" => cmd.ttl = Some(w.clone()),
                    _ => {}
                }
            }
        }
    }
    let mut rest = rest.peekable();
    while let Some(w) = rest.next() {
        let Some(word) = resolve::string(model, w, call.func) else {
            continue;
        };
        if spec.is_option(word) {
            let value = if spec.takes_value(word) {
                rest.next().cloned()
            } else {
                None
            };
            cmd.flags.insert(word.to_ascii_uppercase(), value);
        }
    }
}

/// Calls every (name, first argument) pair in an options expression:
/// `SetOptions::default().conditional_set(ExistenceCheck::NX).with_expiration(SetExpiry::PX(ms))`
/// yields `default`, `conditional_set`, `NX`, `with_expiration`, `PX(ms)`;
/// `{NX: true, PX: 30000}` yields `NX`, `PX(30000)`.
pub(super) fn option_tokens(model: &FileModel, e: &Expr, f: &mut dyn FnMut(&str, Option<&Expr>)) {
    let mut stack = vec![e];
    while let Some(e) = stack.pop() {
        match &e.peel().kind {
            ExprKind::Call(id) => {
                let c = model.call(*id);
                f(&c.name, c.args.first().map(|a| &a.value));
                stack.extend(c.args.iter().map(|a| &a.value));
                if let Some(r) = &c.receiver {
                    stack.push(r);
                }
            }
            ExprKind::Name(path) => f(path.rsplit(['.', ':']).next().unwrap_or(path), None),
            ExprKind::Member { object, name } => {
                f(name, None);
                stack.push(object);
            }
            ExprKind::Map(pairs) => {
                for (k, v) in pairs {
                    let key = k
                        .as_str()
                        .map(str::to_string)
                        .unwrap_or_else(|| k.text.clone());
                    if !v.is_nullish() {
                        f(&key, Some(v));
                    }
                }
            }
            _ => {}
        }
    }
}
