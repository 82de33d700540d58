//! Lock factories' callers: where a caller takes the object a factory
//! returns, and the literal arguments that turn a wrapper's lock off.

use super::Wrapper;
use std::cell::OnceCell;
use std::collections::HashMap;

use crate::model::{falsy, mentions, Call, CallId, ExitKind, FileModel, TRUE_WORDS};
use crate::sites::built_sql::{built_and_run, runs};
use crate::sites::command::chain_successors;
use crate::sites::library::Binding;
use crate::sites::ObjectMethods;

/// Where a caller takes the lock object a factory wrapper's `call` returns.
pub(super) enum Taken<'m> {
    /// `with get_lock(..):`, or a name bound to it guarding a block later.
    Guard,
    /// `l = get_lock(..); l.acquire()`, `get_lock(..).acquire()`.
    By(&'m Call),
    /// Returned on: the caller is a factory too.
    Returned,
}

pub(super) fn taken<'m>(
    model: &'m FileModel,
    next: &Successors,
    call: &Call,
    methods: &ObjectMethods,
) -> Option<Taken<'m>> {
    if methods.statement {
        return run(model, next, call);
    }
    if call.usage == crate::model::Usage::Guard {
        return Some(Taken::Guard);
    }
    let object = Binding::of(model, call);
    if let Some(c) = model
        .calls_in(call.func)
        .find(|c| methods.acquire.contains(&c.name) && object.is_receiver_of(model, c))
    {
        return Some(Taken::By(c));
    }
    let bound = call.usage.bound_names();
    if model
        .guard_names
        .iter()
        .any(|(name, at)| at.start > call.span.end && bound.contains(&name.as_str()))
    {
        return Some(Taken::Guard);
    }
    model.is_returned(call).then_some(Taken::Returned)
}

/// The method chains of a file, made when a statement is first followed.
pub(super) type Successors = OnceCell<HashMap<CallId, CallId>>;

/// Where a caller runs the SQL text a statement builder's `call` returns:
/// the query call it is written into (`db.query(lockSql(id))`), the first
/// later one taking the name it is bound to (`q = plans.fetchNextJob(..)`,
/// `db.executeSql(q.text, q.values)`), the statement such a call prepares
/// (`conn.prepareStatement(lockSql())` ... `ps.executeQuery()`); or, returned
/// (in place or inside other text: `return transaction([advisoryLock(k), sql])`),
/// the caller is a builder too.
fn run<'m>(model: &'m FileModel, next: &Successors, call: &Call) -> Option<Taken<'m>> {
    let bound = call.usage.bound_names();
    let takes = |c: &Call| {
        c.args.iter().any(|a| {
            a.value.span.contains(call.span) || bound.iter().any(|n| mentions(&a.value.text, n))
        })
    };
    let taker = model
        .calls_in(call.func)
        .filter(|c| c.id != call.id && (c.span.contains(call.span) || c.span.start > call.span.end))
        .filter(|c| takes(c))
        .find_map(|c| {
            // Runs it, or prepares what a later call runs (`built_and_run` is
            // `None` for a call that runs in place).
            runs(c)
                .then_some(c)
                .or_else(|| built_and_run(model, next.get_or_init(|| chain_successors(model)), c))
        });
    if let Some(c) = taker {
        return Some(Taken::By(c));
    }
    let returned = model.exits_in(call.func).any(|e| {
        e.kind == ExitKind::Return
            && (e.span.contains(call.span) || bound.iter().any(|n| mentions(&e.value, n)))
    });
    (returned || model.is_returned(call)).then_some(Taken::Returned)
}

/// Does `call` pass the literal that turns `w`'s lock off (`global_scope=False`),
/// or, where the switch is off by default, leave it out?
pub(super) fn switched_off(call: &Call, w: &Wrapper) -> bool {
    let Some((i, name, on)) = &w.switch else {
        return false;
    };
    let Some(arg) = call.keyword(name).or_else(|| call.positional(*i)) else {
        return w.off_by_default;
    };
    let text = arg.text.trim();
    if *on {
        TRUE_WORDS.contains(&text)
    } else {
        falsy(text)
    }
}
