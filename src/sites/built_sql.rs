//! Where a SQL statement built apart from its run is run: `ps =
//! conn.prepareStatement(sql)` then `ps.executeQuery()`, squirrel's
//! `stmt.ToSql()` then `db.GetContext(..)`, JDBI's `handle.createQuery(..)`
//! then `query.bind(..).list()`. The lock is taken where the statement runs.

use std::collections::HashMap;

use super::command::chain_end;
use super::resolve;
use crate::model::{mentions, Call, CallId, ExprKind, FileModel, Usage};

/// Methods that turn a query builder into SQL text (squirrel `ToSql()`,
/// jOOQ `getSQL()`, a Java builder's `build()` / `toString()`).
const BUILD_METHODS: &[&str] = &[
    "ToSql", "ToSQL", "toSql", "toSQL", "Build", "build", "getSQL", "getSql", "toString",
];

/// Words of a method that runs a query (`GetContext`, `QueryRowContext`,
/// `execute`, `fetch_one`, `queryForObject`; asyncpg's `fetchrow`, `fetchval`).
const RUN_WORDS: &[&str] = &[
    "exec", "execute", "query", "get", "select", "fetch", "fetchrow", "fetchval", "run",
];

/// First words of a method that makes a statement to run later (JDBI
/// `createQuery`, JDBC `prepareStatement`).
const BUILD_WORDS: &[&str] = &["create", "prepare", "new"];

/// Does `c` run a query? `createQuery` / `prepareStatement` build a
/// statement; `executeQuery` runs one.
pub(super) fn runs(c: &Call) -> bool {
    let words = resolve::words(&c.name);
    !words
        .first()
        .is_some_and(|w| BUILD_WORDS.contains(&w.as_str()))
        && words.iter().any(|w| RUN_WORDS.contains(&w.as_str()))
}

/// Does `c` take a statement's text, to run it or to make one to run
/// (`executeQuery`, `prepareStatement`, `createQuery`)?
pub(super) fn takes_statement(c: &Call) -> bool {
    let words = resolve::words(&c.name);
    runs(c) || (words.len() > 1 && BUILD_WORDS.contains(&words[0].as_str()))
}

/// Where a statement built with a lock clause runs, when the call that holds
/// the text does not run it: `stmt := sq.Select(..).Suffix("FOR UPDATE")`, then
/// `query, args, err := stmt.ToSql()`, then `db.GetContext(ctx, dst, query,
/// args...)`; `ps = conn.prepareStatement(sql)`, then `ps.executeQuery()`. The
/// value, bound to a name, is followed to the first later call of its function
/// that uses it: a query method taking it or called on it, or a build method
/// on it, then the first later call taking what that returned.
pub(super) fn built_and_run<'m>(
    model: &'m FileModel,
    next: &HashMap<CallId, CallId>,
    call: &Call,
) -> Option<&'m Call> {
    // `db.QueryRow("... FOR UPDATE")` runs where it is written.
    if runs(call) {
        return None;
    }
    let end = model.call(chain_end(next, call.id));
    // Bound to a name, or to a Java resource (`try (PreparedStatement ps = ..)`).
    let name = end.usage.bound().or_else(|| {
        (end.usage == Usage::Guard)
            .then(|| {
                model
                    .guard_names
                    .iter()
                    .find(|(_, at)| at.contains(end.span))
            })
            .flatten()
            .map(|(n, _)| n.as_str())
    })?;
    // An argument that reads the name (not a message that says "query").
    let takes = |c: &Call, name: &str| {
        c.args.iter().any(|a| {
            !matches!(a.value.peel().kind, ExprKind::Str(_) | ExprKind::Template)
                && mentions(&a.value.text, name)
        })
    };
    let on = |c: &Call, name: &str| c.receiver.as_deref().is_some_and(|r| r.text == name);
    let after = |at: usize| model.calls_in(call.func).filter(move |c| c.span.start > at);
    let mut chained = None;
    let first = after(end.span.end).find(|c| {
        if takes(c, name) || on(c, name) && (runs(c) || BUILD_METHODS.contains(&c.name.as_str())) {
            return true;
        }
        // A parameter bound on the statement (`ps.setLong(1, id)`) runs nothing; a
        // fluent chain that binds and then runs it (JDBI `query.bind(..).mapTo(..).list()`)
        // is where it runs.
        let end = chain_end(next, c.id);
        if on(c, name) && end != c.id {
            chained = Some(end);
            return true;
        }
        false
    })?;
    if let Some(end) = chained {
        return Some(model.call(end));
    }
    // Taken by a query method, or run itself (`ps = conn.prepareStatement(..)`,
    // then `ps.executeQuery()`).
    if runs(first) {
        return Some(first);
    }
    if takes(first, name) || !BUILD_METHODS.contains(&first.name.as_str()) {
        return None;
    }
    let built = first.usage.bound()?;
    after(first.span.end).find(|c| takes(c, built))
}
