//! SQL a class hands its base class's constructor and runs as a parameter or
//! field: quartz's `StdRowLockSemaphore` passes `super(PREFIX, null,
//! SELECT_FOR_LOCK, INSERT_LOCK)`, the base keeps the texts and gives them
//! back to the class's `executeSQL(conn, lockName, expandedSQL,
//! expandedInsertSQL)`, where `conn.prepareStatement(expandedSQL)` runs the
//! lock. Following the text through the base would need the base's file;
//! within the class, a statement call whose text is a parameter or field runs
//! the lock statement handed over, unless its name (or its function's) names
//! another statement handed over (`expandedInsertSQL`, `lockViaInsert` for
//! `INSERT_LOCK`).

use super::built_sql::takes_statement;
use super::sql::{acquired, sql_text};
use super::sql_text::{reads_as_sql, squeeze};
use super::{resolve, wrapper::class_of};
use crate::catalog::{Catalog, SqlLock};
use crate::model::{Arg, Call, CallId, ExprKind, FileModel};

/// One text a class hands its base class's constructor.
pub(super) struct Handed<'c> {
    /// The delegating call (`super(..)`, `super().__init__(..)`).
    pub call: CallId,
    class: String,
    /// The words of the argument's name (`select`, `for`, `lock`).
    words: Vec<String>,
    /// The squeezed, uppercase text.
    pub text: String,
    /// The catalog lock it takes, if any.
    lock: Option<&'c SqlLock>,
    /// The constant as written, for evidence.
    pub name: String,
}

/// Does `call` hand its arguments to the base class's constructor: Java and
/// JavaScript `super(..)` / `this(..)`, Python `super().__init__(..)`?
pub(super) fn delegates(call: &Call) -> bool {
    match call.receiver.as_deref() {
        None => matches!(call.name.as_str(), "super" | "this"),
        Some(r) => call.name == "__init__" && r.text.starts_with("super("),
    }
}

/// The texts this file's classes hand their bases, when one of them takes a
/// lock (else none: nothing to follow).
pub(super) fn handed<'c>(model: &FileModel, catalog: &'c Catalog) -> Vec<Handed<'c>> {
    let mut out = Vec::new();
    for call in model.calls.iter().filter(|c| delegates(c)) {
        let Some(class) = call.func.and_then(|f| class_of(&model.functions[f].name)) else {
            continue;
        };
        for arg in &call.args {
            let Some(text) = sql_text(model, &arg.value, call.func)
                .map(|t| squeeze(&t))
                .filter(|t| reads_as_sql(t))
            else {
                continue;
            };
            out.push(Handed {
                call: call.id,
                class: class.to_string(),
                words: resolve::words(&arg.value.text),
                lock: acquired(catalog, &text, false),
                text,
                name: arg.value.text.clone(),
            });
        }
    }
    if out.iter().all(|h| h.lock.is_none()) {
        out.clear();
    }
    out
}

/// Which handed lock statement `call` runs, given its `index`th argument
/// `arg`: the first argument of a statement call in a method of the class,
/// naming a parameter or field this file gives no value.
pub(super) fn run_by(
    model: &FileModel,
    handed: &[Handed],
    call: &Call,
    index: usize,
    arg: &Arg,
) -> Option<usize> {
    if handed.is_empty() || index != 0 || !takes_statement(call) {
        return None;
    }
    let func = &model.functions[call.func?];
    let class = class_of(&func.name)?;
    let ExprKind::Name(name) = &resolve::resolve(model, &arg.value, call.func).kind else {
        return None;
    };
    let field = name
        .split_once('.')
        .is_some_and(|(root, _)| resolve::is_self(model, call.func, root));
    if !field && model.function_param(call.func, name).is_none() {
        return None;
    }
    let own: Vec<usize> = (0..handed.len())
        .filter(|&i| handed[i].class == class)
        .collect();
    // Words some handed names have and others lack (`select`, `insert`; not
    // the `lock` of `SELECT_FOR_LOCK` and `INSERT_LOCK`).
    let telling = |w: &String| {
        let with = own.iter().filter(|&&i| handed[i].words.contains(w)).count();
        with > 0 && with < own.len()
    };
    let said: Vec<String> = resolve::words(name)
        .into_iter()
        .chain(resolve::words(
            func.name.rsplit(['.', ':']).next().unwrap_or_default(),
        ))
        .filter(|w| telling(w))
        .collect();
    let named = own
        .iter()
        .copied()
        .find(|&i| handed[i].words.iter().any(|w| said.contains(w)));
    match named {
        Some(i) => handed[i].lock.is_some().then_some(i),
        None => {
            let mut locks = own.iter().copied().filter(|&i| handed[i].lock.is_some());
            let first = locks.next()?;
            locks.next().is_none().then_some(first)
        }
    }
}
