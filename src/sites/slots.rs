//! The values an API's argument slot selects from a call: positional,
//! keyword, functional option, options-object key, and the rest of the
//! arguments with spread lists opened.

use crate::catalog::Slot;
use crate::model::{Call, Expr, ExprKind, FileModel};

/// The values a slot selects. A keyword is looked up as a named argument,
/// then as a functional option (`redsync.WithExpiry(d)` in any position), then
/// as a key of an options object / struct literal (`{lockTimeout: 10000}`,
/// `&redislock.Options{Token: t}`), also one bound to a name before the call.
pub fn slot_values(model: &FileModel, call: &Call, slot: &Slot) -> Vec<Expr> {
    if let Some(kw) = &slot.kw {
        if let Some(v) = call.keyword(kw) {
            return vec![v.clone()];
        }
        for a in call.args.iter().filter(|a| a.name.is_none()) {
            // An options object bound to a name before the call (`let options =
            // LockAcrossOptions { ttl, .. }`, `const opts = {ttl: 500}`).
            let value = match &a.value.peel().kind {
                ExprKind::Name(n) => model
                    .lookup(n, call.func, call.span.start)
                    .map(|bound| bound.value.peel())
                    .filter(|v| matches!(v.kind, ExprKind::Map(_)))
                    .unwrap_or(&a.value),
                _ => &a.value,
            };
            match &value.peel().kind {
                ExprKind::Call(id) if &model.call(*id).name == kw => {
                    return model
                        .call(*id)
                        .args
                        .first()
                        .map(|x| x.value.clone())
                        .into_iter()
                        .collect();
                }
                ExprKind::Map(pairs) => {
                    let hit = pairs
                        .iter()
                        .find(|(k, _)| k.as_str().unwrap_or(&k.text) == kw);
                    if let Some((_, v)) = hit {
                        return vec![v.clone()];
                    }
                }
                _ => {}
            }
        }
    }
    let Some(pos) = slot.pos else {
        return Vec::new();
    };
    let positional = call.args.iter().filter(|a| a.name.is_none()).skip(pos);
    if !slot.rest {
        return positional.take(1).map(|a| a.value.clone()).collect();
    }
    positional
        .flat_map(|a| spread(model, call, &a.value).unwrap_or_else(|| vec![a.value.clone()]))
        .collect()
}

/// The elements a spread argument passes (Go `args...`, Python `*args`,
/// JavaScript `...args`) when the name is bound to a list literal before the
/// call: `args := []any{key, id, "NX", "EX", ttl}` then `conn.Do("SET", args...)`.
fn spread(model: &FileModel, call: &Call, arg: &Expr) -> Option<Vec<Expr>> {
    let text = arg.text.trim();
    let name = text
        .strip_suffix("...")
        .or_else(|| text.strip_prefix("..."))
        .or_else(|| text.strip_prefix('*').filter(|n| !n.starts_with('*')))?;
    match &model
        .lookup(name.trim(), call.func, call.span.start)?
        .value
        .peel()
        .kind
    {
        ExprKind::List(items) => Some(items.clone()),
        _ => None,
    }
}
