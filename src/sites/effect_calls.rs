//! Which catalogued effect a call has: its method, receiver and arguments
//! against an effect's spelling in `rules/classification.yaml`, and whether
//! it only changes an in-memory collection.

use super::effects::sql_of;
use super::resolve;
use crate::catalog::raw::{EffectKind, RawEffect};
use crate::catalog::Catalog;
use crate::model::{Call, ExprKind, FileModel};

/// The words of `call`'s receiver (`self.repository` -> `self`, `repository`).
fn receiver_words(call: &Call) -> Vec<String> {
    call.receiver
        .as_deref()
        .map(|r| resolve::words(&r.text))
        .unwrap_or_default()
}

/// Map methods that return one of the map's own entries.
const MAP_ENTRY_METHODS: &[&str] = &[
    "computeIfAbsent",
    "computeIfPresent",
    "getOrDefault",
    "setdefault",
];

/// Is `call` made on an in-memory collection built in its function (a list
/// or map literal, `new ArrayList<>()`, `set()`, `Vec::new()`)? Then it
/// writes to memory, whatever its method is called.
pub(super) fn in_memory(catalog: &Catalog, model: &FileModel, call: &Call) -> bool {
    let Some(receiver) = call.receiver.as_deref() else {
        return false;
    };
    let value = resolve::resolve(model, receiver, call.func);
    match &value.kind {
        ExprKind::List(_) | ExprKind::Map(_) => true,
        // An entry of an in-memory map (`byId.computeIfAbsent(k, ..).add(v)`,
        // `groups.setdefault(k, []).append(v)`) lives in memory too.
        ExprKind::Call(id)
            if MAP_ENTRY_METHODS.contains(&model.call(*id).name.as_str())
                && model.call(*id).receiver.is_some() =>
        {
            in_memory(catalog, model, model.call(*id))
        }
        // A constructor or free function (`set()`, `new ArrayList<>()`,
        // `Vec::new()`: the type names it), never a method such as `r.set(..)`.
        ExprKind::Call(id) if model.call(*id).receiver.is_none() => {
            let built = model.call(*id);
            let ty = built.callee.rsplit("::").nth(1).unwrap_or(&built.name);
            catalog
                .in_memory_constructors
                .iter()
                .any(|c| *c == built.name || *c == ty)
        }
        _ => false,
    }
}

/// Does `call` have effect `e`: its method, receiver, arguments and language
/// as the entry spells them, on the locked record or a collaborator of it
/// (`locked`: the object the lock is taken through) where the entry asks?
pub(super) fn matches_effect(
    model: &FileModel,
    call: &Call,
    e: &RawEffect,
    locked: Option<&str>,
) -> bool {
    let receiver = call.receiver.as_deref().map(|r| r.text.as_str());
    if e.locked_object && (receiver.is_none() || receiver != locked) {
        return false;
    }
    // `@order.contents`, `@order&.shipments`, `order.lines`: one step or more past
    // the record.
    let through_locked = |r: &str, l: &str| {
        r.strip_prefix(l)
            .is_some_and(|rest| rest.starts_with('.') || rest.starts_with("&."))
    };
    // Or an object built around it, in place or bound to a local
    // (`CouponHandler.new(@order).apply`, `reimbursement =
    // Spree::Reimbursement.new(order: @order, ..)` then `reimbursement.return_all(..)`).
    let built_around = |l: &str| {
        let Some(r) = call.receiver.as_deref() else {
            return false;
        };
        let value = resolve::resolve(model, r, call.func);
        (value.as_call().map(|id| model.call(id))).is_some_and(|built| {
            (built.name == "new" || resolve::builds_type(built))
                && built.args.iter().any(|a| a.value.text == l)
        })
    };
    if e.locked_collaborator
        && !receiver
            .zip(locked)
            .is_some_and(|(r, l)| through_locked(r, l) || built_around(l))
    {
        return false;
    }
    if receiver.is_some_and(|r| {
        let last = r.rsplit(['.', ':']).next().unwrap_or(r);
        e.except_receivers.iter().any(|x| x == last)
    }) {
        return false;
    }
    if !e.sql.is_empty() {
        return sql_of(model, call).is_some_and(|sql| {
            let first = sql.split_whitespace().next().unwrap_or("");
            e.sql.iter().any(|k| k.eq_ignore_ascii_case(first))
        });
    }
    let verb_first = || {
        !e.method_verbs.is_empty() && {
            let words = resolve::words(&call.name);
            let last = words.last();
            let noun = last.is_some_and(|w| e.except_nouns.contains(w));
            let named = e.method_nouns.is_empty()
                || (words.len() > 1 && last.is_some_and(|w| e.method_nouns.contains(w)));
            // Words are lower case: Go's exported `kv.Put(..)` is `put`.
            words.first().is_some_and(|w| e.method_verbs.contains(w)) && !noun && named
        }
    };
    // An element of a collection (`db_data['trust'].remove(x)`) is no store client.
    if e.kind == EffectKind::StoreWrite
        && call
            .receiver
            .as_deref()
            .is_some_and(|r| r.text.ends_with(']'))
    {
        return false;
    }
    let bang = e.bang_methods && call.name.len() > 1 && call.name.ends_with('!');
    if !e.methods.contains(&call.name) && !verb_first() && !bang {
        return false;
    }
    let language = model.language.catalog_language().name();
    if !e.languages.is_empty() && !e.languages.iter().any(|l| l == language) {
        return false;
    }
    if e.first_arg_map
        && !(call.args.first()).is_some_and(|a| matches!(a.value.peel().kind, ExprKind::Map(_)))
    {
        return false;
    }
    // ORM writes are methods of a session, model or entity manager, never a
    // function imported from a module (lodash `merge(a, b)`).
    if e.kind == EffectKind::OrmWrite && import_of(model, call).is_some() {
        return false;
    }
    (e.receivers.is_empty() || {
        let words = receiver_words(call);
        e.receivers
            .iter()
            .any(|r| words.contains(&r.to_lowercase()))
    }) && (e.receiver_verbs.is_empty() || {
        let verb = receiver_name(call).and_then(|n| resolve::words(n).into_iter().next());
        verb.is_some_and(|v| e.receiver_verbs.contains(&v))
    })
}

/// The last segment of `call`'s receiver, past a constructor call:
/// `CreateService` in `Payments::CreateService`, `Payments::CreateService.new(x)`
/// and `new CreateService(x)`.
fn receiver_name(call: &Call) -> Option<&str> {
    let text = call.receiver.as_deref()?.text.as_str();
    let text = text.split('(').next().unwrap_or(text);
    let text = text.strip_suffix(".new").unwrap_or(text);
    let text = text.strip_prefix("new ").unwrap_or(text);
    text.rsplit([':', '.']).next().filter(|n| !n.is_empty())
}

/// The import that binds a bare `call`'s name, if the file imports the
/// function by name (`import { merge } from 'lodash'`, `from util import save`).
pub fn import_of<'m>(model: &'m FileModel, call: &Call) -> Option<&'m crate::model::Import> {
    if call.receiver.is_some() {
        return None;
    }
    model.imports.iter().find(|i| match &i.alias {
        Some(alias) => *alias == call.name,
        None => i.path.rsplit(['.', ':', '/']).next() == Some(call.name.as_str()),
    })
}
