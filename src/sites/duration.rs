//! Durations as written → milliseconds, when the value is known statically.
//!
//! Handles literals with the catalog's unit (`timeout=30` in seconds), typed
//! durations (`30 * time.Second`, `Duration::from_secs(30)`,
//! `Duration.ofSeconds(30)`), ISO-8601 (`"PT10M"`) and short strings (`"15s"`),
//! through same-file constants and simple arithmetic.

use super::resolve;
use crate::catalog::duration_text;
use crate::catalog::raw::DurationUnit;
use crate::lang::profile::profile;
use crate::model::{Call, Expr, ExprKind, FileModel, FuncId};

/// The unit a bare number is in.
fn unit_ms(unit: Option<DurationUnit>) -> f64 {
    match unit {
        Some(DurationUnit::S) => 1000.0,
        // A bare Go `time.Duration` number is nanoseconds.
        Some(DurationUnit::Duration) => 1e-6,
        _ => 1.0,
    }
}

/// Milliseconds of a duration expression, if it is statically known.
pub fn to_ms(
    model: &FileModel,
    e: &Expr,
    unit: Option<DurationUnit>,
    func: Option<FuncId>,
) -> Option<i64> {
    let v = eval(model, e, unit, func, 0)?;
    (v.is_finite() && v >= 0.0).then_some(v.round() as i64)
}

fn eval(
    model: &FileModel,
    e: &Expr,
    unit: Option<DurationUnit>,
    func: Option<FuncId>,
    depth: u8,
) -> Option<f64> {
    if depth > 8 {
        return None;
    }
    let e = resolve::resolve(model, e, func);
    match &e.kind {
        ExprKind::Int(n) => Some(*n as f64 * unit_ms(unit)),
        ExprKind::Float(f) => Some(f * unit_ms(unit)),
        ExprKind::Str(s) => duration_text::parse(s),
        ExprKind::Name(n) => profile(model.language).named_duration(n),
        ExprKind::Binary { op, lhs, rhs } => {
            // In `30 * time.Second` the number is a factor, not a duration.
            let factor = |x: &Expr| match &resolve::resolve(model, x, func).kind {
                ExprKind::Int(n) => Some(*n as f64),
                ExprKind::Float(f) => Some(*f),
                _ => None,
            };
            match op {
                '*' => match (factor(lhs), factor(rhs)) {
                    (Some(a), Some(b)) => Some(a * b * unit_ms(unit)),
                    (Some(a), None) => Some(a * eval(model, rhs, unit, func, depth + 1)?),
                    (None, Some(b)) => Some(eval(model, lhs, unit, func, depth + 1)? * b),
                    (None, None) => None,
                },
                '+' => Some(
                    eval(model, lhs, unit, func, depth + 1)?
                        + eval(model, rhs, unit, func, depth + 1)?,
                ),
                '-' => Some(
                    eval(model, lhs, unit, func, depth + 1)?
                        - eval(model, rhs, unit, func, depth + 1)?,
                ),
                '/' => {
                    let d = factor(rhs)?;
                    (d != 0.0).then_some(eval(model, lhs, unit, func, depth + 1)? / d)
                }
                _ => None,
            }
        }
        ExprKind::Call(id) => {
            let call = model.call(*id);
            let arg = call.args.first().map(|a| &a.value);
            let language = profile(model.language);
            if language.duration_casts.contains(&call.name.as_str()) {
                return eval(model, arg?, Some(DurationUnit::Duration), func, depth + 1);
            }
            let scale = language.duration_call(&call.name)?;
            let v = resolve::resolve(model, arg?, func);
            match v.kind {
                ExprKind::Int(n) => Some(n as f64 * scale),
                ExprKind::Float(f) => Some(f * scale),
                _ => None,
            }
        }
        // Ruby `30.seconds`, `5.minutes` lower as calls on numbers: covered above by name.
        ExprKind::Wrapped(inner) => eval(model, inner, unit, func, depth + 1),
        _ => None,
    }
}

/// `lock(10, TimeUnit.SECONDS)`, `setIfAbsent(k, v, 30, TimeUnit.SECONDS)`: argument `v` of `call` in
/// milliseconds, when the argument after it is a `TimeUnit` saying what it counts.
pub fn before_time_unit(model: &FileModel, call: &Call, v: &Expr) -> Option<i64> {
    let i = call.args.iter().position(|a| a.value.span == v.span)?;
    let per = time_unit_ms(&call.args.get(i + 1)?.value)?;
    let n = to_ms(model, v, Some(DurationUnit::Ms), call.func)? as f64;
    Some((n * per).round() as i64)
}

/// Milliseconds per unit of a Java `TimeUnit` argument (`TimeUnit.SECONDS`).
pub fn time_unit_ms(e: &Expr) -> Option<f64> {
    let name = e
        .peel()
        .text
        .rsplit(['.', ':'])
        .next()?
        .to_ascii_uppercase();
    Some(match name.as_str() {
        "NANOSECONDS" => 1e-6,
        "MICROSECONDS" => 1e-3,
        "MILLISECONDS" => 1.0,
        "SECONDS" => 1000.0,
        "MINUTES" => 60_000.0,
        "HOURS" => 3_600_000.0,
        "DAYS" => 86_400_000.0,
        _ => return None,
    })
}
