//! A library lock's TTL and wait, read from its catalog slots: the method's
//! own slot first, then the factory's, each as the version of the library the
//! project uses reads it (`before:`).

use super::slots::slot_values;
use super::{duration, resolve, Ttl, Wait};
use crate::catalog::raw::{DurationDefault, DurationUnit, RawBefore};
use crate::catalog::{AcquireMethod, DurationSlot, LockSpec, Scope, Slot};
use crate::manifest::{Used, Version};
use crate::model::{Call, Expr, FileModel, NULL_WORDS};

fn slot_of(
    model: &FileModel,
    call: &Call,
    pos: Option<usize>,
    kw: Option<&String>,
) -> Option<Expr> {
    let slot = Slot {
        pos,
        kw: kw.cloned(),
        rest: false,
    };
    slot_values(model, call, &slot).into_iter().next()
}

/// A duration argument as written. For a TTL, `0` / `None` mean "absent"
/// (redis-py, go-redis); for a wait only `None` does: `tryLock(0, ..)` waits zero.
/// The value is looked through names: `timeout=NO_EXPIRY` with `NO_EXPIRY = None`.
fn duration_arg(
    model: &FileModel,
    call: &Call,
    d: &DurationSlot,
    zero_is_absent: bool,
) -> Option<Expr> {
    slot_of(model, call, d.pos, d.kw.as_ref()).filter(|e| {
        let value = resolve::resolve(model, e, call.func);
        if null_parameter(model, call, value) {
            return false;
        }
        if zero_is_absent {
            !value.is_nullish()
        } else {
            !matches!(value.kind, crate::model::ExprKind::Null)
        }
    })
}

/// A parameter of the calling function that defaults to null and is not
/// reassigned before the call (`blocking_timeout=acquire_timeout` with
/// `acquire_timeout=None`): a caller that omits it passes nothing, and the
/// library's default applies.
pub(super) fn null_parameter(model: &FileModel, call: &Call, value: &Expr) -> bool {
    let (Some(name), Some(f)) = (value.peel().as_name(), call.func) else {
        return false;
    };
    model.functions[f].params.iter().any(|p| {
        p.name == name
            && p.default
                .as_deref()
                .is_some_and(|d| NULL_WORDS.contains(&d.trim()))
    })
}

/// The parameter of the calling function that the wait bound is given as
/// and that defaults to null (`blocking_timeout=timeout` in `def
/// wait_for_lock(self, key, timeout=None)`): the library's default wait
/// applies only because a caller may leave it out.
pub(super) fn null_wait_param(
    model: &FileModel,
    spec: &LockSpec,
    factory: &Call,
    acquire: &Call,
    method: Option<&AcquireMethod>,
) -> Option<String> {
    let slots = [
        (method.and_then(|m| m.wait.as_ref()), acquire),
        (spec.wait.as_ref(), factory),
    ];
    slots.into_iter().find_map(|(slot, call)| {
        let given = slot_of(model, call, slot?.pos, slot?.kw.as_ref())?;
        let value = resolve::resolve(model, &given, call.func);
        let name = value.peel().as_name()?;
        null_parameter(model, call, value).then(|| name.to_string())
    })
}

/// A duration slot's resolution: the value written (and the slot it was
/// found in), and the default that applies when none was.
struct Picked<'s> {
    given: Option<(Expr, &'s DurationSlot, &'s Call)>,
    default: Option<&'s DurationDefault>,
}

/// The acquire method's own slot first, then the factory's; `None` when
/// neither the method nor the factory has a slot for this duration.
fn pick<'s>(
    model: &FileModel,
    zero_is_absent: bool,
    method_slot: Option<&'s DurationSlot>,
    factory_slot: Option<&'s DurationSlot>,
    factory: &'s Call,
    acquire: &'s Call,
) -> Option<Picked<'s>> {
    if method_slot.is_none() && factory_slot.is_none() {
        return None;
    }
    let given = method_slot
        .and_then(|s| duration_arg(model, acquire, s, zero_is_absent).map(|v| (v, s, acquire)))
        .or_else(|| {
            factory_slot.and_then(|s| {
                duration_arg(model, factory, s, zero_is_absent).map(|v| (v, s, factory))
            })
        });
    let default = method_slot
        .and_then(|s| s.default.as_ref())
        .or(factory_slot.and_then(|s| s.default.as_ref()));
    Some(Picked { given, default })
}

pub(super) fn ttl_of(
    model: &FileModel,
    spec: &LockSpec,
    factory: &Call,
    acquire: &Call,
    method: Option<&AcquireMethod>,
) -> (Ttl, Option<i64>) {
    let Some(Picked { given, default }) = pick(
        model,
        true,
        method.and_then(|m| m.ttl.as_ref()),
        spec.ttl.as_ref(),
        factory,
        acquire,
    ) else {
        return match spec.scope {
            Some(scope) => (Ttl::Scoped(scope), None),
            None => (Ttl::Default("library default".into()), None),
        };
    };
    if let Some((v, slot, call)) = given {
        let ms = match slot.unit {
            Some(DurationUnit::Timeunit) => duration::before_time_unit(model, call, &v),
            unit => duration::to_ms(model, &v, unit, call.func),
        };
        return (Ttl::Given(Some(v)), ms);
    }
    match (default, spec.scope) {
        (Some(DurationDefault::Renewed), _) => (Ttl::Renewed, None),
        (Some(DurationDefault::Session), _) => (Ttl::Scoped(Scope::Session), None),
        (_, Some(scope)) => (Ttl::Scoped(scope), None),
        (Some(DurationDefault::Never | DurationDefault::None) | None, None) => (Ttl::Absent, None),
        (Some(DurationDefault::After(d, ms)), None) => (Ttl::Default(d.clone()), Some(*ms)),
    }
}

pub(super) fn wait_of(
    model: &FileModel,
    spec: &LockSpec,
    factory: &Call,
    acquire: &Call,
    method: Option<&AcquireMethod>,
) -> Wait {
    // `blocking=False`: one attempt, whatever the wait bound says.
    let slots = [method.and_then(|m| m.wait.as_ref()), spec.wait.as_ref()];
    let off = slots
        .iter()
        .flatten()
        .filter_map(|w| w.blocking_kw.as_ref())
        .any(|kw| {
            [acquire, factory].iter().any(|c| {
                c.keyword(kw)
                    .is_some_and(|v| matches!(v.peel().kind, crate::model::ExprKind::Bool(false)))
            })
        });
    if off {
        return Wait::NoWait;
    }
    let Some(Picked { given, default }) = pick(
        model,
        false,
        method.and_then(|m| m.wait.as_ref()),
        spec.wait.as_ref(),
        factory,
        acquire,
    ) else {
        return Wait::NotApplicable;
    };
    match (given, default) {
        // A context without a deadline bounds nothing.
        (Some((v, slot, _)), _)
            if slot.unit == Some(DurationUnit::Context) && is_background(&v) =>
        {
            Wait::Forever
        }
        (Some((v, _, _)), _) => Wait::Given(v),
        (None, Some(DurationDefault::Never)) => Wait::Forever,
        (None, Some(DurationDefault::None)) => Wait::NoWait,
        (None, Some(DurationDefault::After(d, _))) => Wait::Default(d.clone()),
        (None, Some(DurationDefault::Renewed | DurationDefault::Session)) => Wait::NotApplicable,
        (None, None) => Wait::NotApplicable,
    }
}

/// `context.Background()` / `context.TODO()`: a context that never expires.
fn is_background(e: &Expr) -> bool {
    let t = e.peel().text.as_str();
    t.ends_with("Background()") || t.ends_with("TODO()")
}

/// The lock spec as an older version of the library reads it: each duration
/// slot with a `before:` entry above the version in use takes that entry's
/// unit and default. `None` when nothing changes; else the spec and why.
pub(super) fn as_of(spec: &LockSpec, used: &Used) -> Option<(LockSpec, String)> {
    let mut changed: Vec<String> = Vec::new();
    let mut adjust = |slot: &mut Option<DurationSlot>| {
        let Some(s) = slot.as_mut() else {
            return;
        };
        let older =
            |b: &&RawBefore| Version::parse(&b.version).is_some_and(|v| used.older_than(&v));
        let Some(b) = s.before.iter().find(older).cloned() else {
            return;
        };
        s.unit = b.unit.or(s.unit);
        s.default = b.default.or(s.default.take());
        let name = s.kw.clone().unwrap_or_else(|| "the duration".into());
        changed.push(format!("`{name}` read as before {}", b.version));
    };
    let mut out = spec.clone();
    adjust(&mut out.ttl);
    adjust(&mut out.wait);
    for m in &mut out.acquire_methods {
        adjust(&mut m.ttl);
        adjust(&mut m.wait);
    }
    let why = format!("{} ({}): {}", used.text, used.source, changed.join(" and "));
    (!changed.is_empty()).then_some((out, why))
}
