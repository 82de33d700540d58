//! Lock factories' callers: where a caller takes the object a factory
//! returns, and the literal arguments that turn a wrapper's lock off.

use super::Wrapper;
use crate::model::{falsy, Call, FileModel, TRUE_WORDS};
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
    call: &Call,
    methods: &ObjectMethods,
) -> Option<Taken<'m>> {
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

/// Does `call` pass the literal that turns `w`'s lock off (`global_scope=False`)?
pub(super) fn switched_off(call: &Call, w: &Wrapper) -> bool {
    let Some((i, name, on)) = &w.switch else {
        return false;
    };
    let Some(arg) = call.keyword(name).or_else(|| call.positional(*i)) else {
        return false;
    };
    let text = arg.text.trim();
    if *on {
        TRUE_WORDS.contains(&text)
    } else {
        falsy(text)
    }
}
