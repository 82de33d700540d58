//! Callback registrations: `around_action :lock_order, only: [:update]` runs
//! the controller's actions inside `lock_order`, so it calls that method with
//! the action as its block. Each symbol it names becomes a call of that name
//! at the registration, matched to a wrapper of this class or of a base class
//! the file's classes extend (the registration runs in the class body, no
//! method around it). A method passed by reference (`retry(m.applier.LockTable)`,
//! a Go method value) is called by what it is passed to: a call of it there.
//! A function passed by name to a wrapper that runs its callback
//! (`runCronJob('x', run)`) is that call's critical section.

use std::collections::HashSet;
use std::path::Path;

use super::{class_of, resolve, simple_name, Wrapper};
use crate::catalog::Catalog;
use crate::lang::profile::profile;
use crate::model::{Call, Expr, ExprKind, FileModel, FuncId};

/// The calls the registrations of this file make (`registrations`: the
/// catalog's `callback-registrations`), one per method named.
pub(super) fn registered(model: &FileModel, registrations: &[String]) -> Vec<Call> {
    model
        .calls
        .iter()
        .filter(|c| c.receiver.is_none() && registrations.contains(&c.name))
        .flat_map(|c| {
            c.args
                .iter()
                .filter(|a| a.name.is_none())
                .filter_map(|a| a.value.as_str())
                .map(|method| Call {
                    name: method.to_string(),
                    args: Vec::new(),
                    ..c.clone()
                })
        })
        .collect()
}

/// The methods a registration runs inside the method it names, when the
/// catalog says it runs the class's actions (`callback-actions`): those its
/// `only:` names, else every method of the class but those its `except:`
/// names. The class is the one of the first method after the registration.
pub(super) fn actions(model: &FileModel, catalog: &Catalog, registration: &Call) -> Vec<FuncId> {
    if !catalog.callback_actions.contains(&registration.name) {
        return Vec::new();
    }
    let names = |key: &str| {
        registration.keyword(key).map(|v| match &v.kind {
            ExprKind::List(items) => items.iter().filter_map(Expr::as_str).collect(),
            _ => v.as_str().into_iter().collect::<Vec<_>>(),
        })
    };
    let (only, except) = (names("only"), names("except").unwrap_or_default());
    let class = (model.functions.iter())
        .filter(|f| f.span.start >= registration.span.end)
        .min_by_key(|f| f.span.start)
        .and_then(|f| class_of(&f.name));
    let Some(class) = class else {
        return Vec::new();
    };
    (model.functions.iter())
        .filter(|f| class_of(&f.name) == Some(class))
        .filter(|f| {
            let name = simple_name(&f.name);
            only.as_ref()
                .map_or(!except.contains(&name), |only| only.contains(&name))
        })
        .map(|f| f.id)
        .collect()
}

/// The calls that methods passed by reference stand for: an argument that
/// names an object's method without calling it (`mgtr.applier.LockOriginalTable`),
/// a call with that receiver and no arguments, placed at the argument. Only
/// names among `wrappers` are looked at: most files pass no helper along.
pub(super) fn referenced(model: &FileModel, wrappers: &HashSet<&str>) -> Vec<Call> {
    if !profile(model.language).method_references || wrappers.is_empty() {
        return Vec::new();
    }
    model
        .calls
        .iter()
        .flat_map(|c| c.args.iter().map(move |a| (c, a)))
        .filter_map(|(c, a)| {
            let ExprKind::Name(path) = &a.value.peel().kind else {
                return None;
            };
            let (receiver, method) = path.rsplit_once('.')?;
            wrappers.contains(method).then(|| Call {
                id: c.id,
                name: method.to_string(),
                callee: path.clone(),
                receiver: Some(Box::new(Expr {
                    kind: ExprKind::Name(receiver.to_string()),
                    text: receiver.to_string(),
                    span: a.value.span,
                })),
                args: Vec::new(),
                span: a.value.span,
                name_span: a.value.span,
                func: c.func,
                block: c.block,
                usage: c.usage.clone(),
            })
        })
        .collect()
}

/// Is `w` the method a registration names: in this file, or a method of a
/// class one of this file's classes extends?
pub(super) fn registers(model: &FileModel, path: &Path, call: &Call, w: &Wrapper) -> Option<u8> {
    if call.name != w.name || w.inherited {
        return None;
    }
    if path == w.path {
        return Some(3);
    }
    let class = w.class.as_deref()?;
    model
        .supers
        .keys()
        .any(|own| model.extends(own, class))
        .then_some(2)
}

/// The key a caller passes in an options object (`{ label: 'refunds', .. }`
/// for a wrapper keyed `lease:${data.label}`): the entry the key reads, else
/// the whole argument.
pub(super) fn options_entry<'a>(arg: &'a Expr, param: &str, key_text: &str) -> &'a Expr {
    let ExprKind::Map(entries) = &arg.peel().kind else {
        return arg;
    };
    let read = |k: &Expr| crate::model::mentions(key_text, &format!("{param}.{}", entry_name(k)));
    entries
        .iter()
        .find(|(k, _)| read(k))
        .map_or(arg, |(_, v)| v)
}

/// The value of the options entry `w` runs as its callback (`run:
/// evaluateHealth` of `runWithLease({ key, run: evaluateHealth })`).
pub(super) fn callback_entry<'c>(call: &'c Call, w: &Wrapper) -> Option<&'c Expr> {
    let wanted = w.callback_entry.as_deref()?;
    call.args.iter().find_map(|a| match &a.value.peel().kind {
        ExprKind::Map(entries) => (entries.iter())
            .find(|(k, _)| entry_name(k) == wanted)
            .map(|(_, v)| v),
        _ => None,
    })
}

/// An options entry's key as written: a string, a name, a property or a
/// symbol (`run:`).
fn entry_name(key: &Expr) -> &str {
    key.as_str()
        .unwrap_or(&key.text)
        .trim_matches([':', '"', '\''])
}

/// The function of this file that `call` hands `w` by name to run under its
/// lock (`lockUntilOrThrow(key, cancelStaleCharges, ttl)`, or as the options
/// entry it runs, `entry`), when `w` runs its caller's callback: a bare name, or a
/// method of the object itself (`this.flush`), other than the calling function.
pub(super) fn named_callback(
    model: &FileModel,
    call: &Call,
    w: &Wrapper,
    entry: Option<&Expr>,
) -> Option<FuncId> {
    if !w.guard {
        return None;
    }
    let values: Vec<&Expr> = match entry {
        Some(v) => vec![v],
        None => call.args.iter().map(|a| &a.value).collect(),
    };
    values.into_iter().find_map(|v| {
        let name = v.peel().as_name()?;
        let own = match name.rsplit_once('.') {
            Some((recv, own)) if resolve::is_self(model, call.func, recv) => own,
            Some(_) => return None,
            None => name,
        };
        let f = model.function_named(own)?;
        (Some(f.id) != call.func && !f.span.contains(call.span)).then_some(f.id)
    })
}
