//! A lock-table row claimed with an ORM: `session.execute(sa.update(Node)
//! .where(Node.reservation == None).values(reservation=tag))` then `if
//! res.rowcount != 1`, `Job.where(locked_by: nil).update_all(locked_by: me)`,
//! Django `.filter(owner__isnull=True).update(owner=me)`, Prisma `updateMany({
//! where: {lockedBy: null}, data: {lockedBy: me}})`.
//!
//! The SQL row claim's shape, with the catalog's claimant stems and update
//! methods: the call writes a claimant column (not to null), its query requires
//! that column free (null, or an expiry in the past), and the result is read —
//! the affected-row count decides who holds the row. A backfill that fills the
//! same column and throws the result away is an ordinary write.

use std::collections::HashMap;

use super::command::chain_end;
use super::sql_claims::{claimant_column, claimant_pair};
use super::{LockSite, SiteKind, Ttl, Wait};
use crate::catalog::{Catalog, Scope, SqlLock};
use crate::model::{mentions, Call, CallId, Expr, ExprKind, FileModel, Usage};

pub fn analyze(
    model: &FileModel,
    catalog: &Catalog,
    next: &HashMap<CallId, CallId>,
    sites: &mut Vec<LockSite>,
) {
    let Some(claim) = catalog.row_claim(|q| !q.update_methods.is_empty()) else {
        return;
    };
    let updates: Vec<&Call> = model
        .calls
        .iter()
        .filter(|c| claim.update_methods.contains(&c.name))
        .collect();
    if updates.is_empty() {
        return;
    }
    // The call a chain is handed to (`session.execute(chain)`) runs it.
    let mut taker: HashMap<CallId, CallId> = HashMap::new();
    for c in &model.calls {
        for a in &c.args {
            if let Some(id) = a.value.peel().as_call() {
                taker.entry(id).or_insert(c.id);
            }
        }
    }
    for call in updates {
        let Some(how) = claimed(model, claim, call, next) else {
            continue;
        };
        let end = chain_end(next, call.id);
        let run = model.call(taker.get(&end).copied().unwrap_or(end));
        if !read(model, run) || sites.iter().any(|s| s.span == run.span) {
            continue;
        }
        sites.push(LockSite {
            library: claim.library.clone(),
            backend: claim.backend.clone(),
            api: claim.id.clone(),
            command: "UPDATE".into(),
            ttl: Ttl::Scoped(claim.scope.unwrap_or(Scope::Row)),
            wait: Wait::NoWait,
            try_acquire: true,
            usual: claim.usual.clone(),
            evidence: vec![format!("`{}` {how}", call.name)],
            ..LockSite::base(run.id, run.span, run.func, SiteKind::Sql)
        });
    }
}

/// How `call` claims: the claimant column it writes on rows its chain
/// requires free, or who and when of a claim written together.
fn claimed(
    model: &FileModel,
    claim: &SqlLock,
    call: &Call,
    next: &HashMap<CallId, CallId>,
) -> Option<String> {
    // A query builder's `update()` takes its columns from the `set(..)` after it
    // (TypeORM `.update().set({ lockedAt: new Date() }).where(..)`).
    let set = next
        .get(&call.id)
        .map(|&n| model.call(n))
        .filter(|c| call.args.is_empty() && c.name == "set");
    let written = assignments(set.unwrap_or(call));
    let chain = chain_of(model, call, next);
    // Who and when written (`update_all(locked_at: now, locked_by: worker.name)` on a
    // scope passed in), unless the chain tests who holds it (a renewal).
    let constant = |v: &Expr| {
        matches!(
            v.peel().kind,
            ExprKind::Str(_) | ExprKind::Int(_) | ExprKind::Bool(_) | ExprKind::Null
        )
    };
    let columns = written
        .iter()
        .map(|(c, v)| (c.as_str(), !constant(v), v.is_nullish()));
    if let Some(by) = claimant_pair(columns, &claim.claimants, |_| false) {
        let tested = chain.iter().any(|c| {
            c.id != call.id
                && c.args.iter().any(|a| {
                    a.name
                        .as_deref()
                        .is_some_and(|n| n.starts_with(by.as_str()))
                        || mentions(&a.value.text, &by)
                })
        });
        if !tested {
            return Some(format!("writes who and when of a claim (`{by}`)"));
        }
    }
    written
        .into_iter()
        .filter(|(col, value)| claimant_column(col, &claim.claimants) && !value.is_nullish())
        .map(|(col, _)| col)
        .find(|col| {
            chain.iter().any(|c| {
                c.args.iter().any(|a| {
                    // Prisma's `updateMany({where, data})`: the condition is under `where`.
                    let cond = c.id != call.id || a.name.as_deref() == Some("where");
                    (cond && frees(a.name.as_deref(), &a.value, col))
                        || (c.id == call.id && under_where(&a.value, col))
                })
            })
        })
        .map(|col| format!("sets claimant column `{col}` where it is free"))
}

/// The columns a call sets: keyword arguments (`update_all(locked_by: me)`,
/// `values(reservation=tag)`) and the entries of a map argument or of its `data`.
pub(super) fn assignments(call: &Call) -> Vec<(String, &Expr)> {
    let mut out = Vec::new();
    for a in &call.args {
        match (&a.name, &a.value.peel().kind) {
            (Some(n), _) if n != "where" && n != "data" => out.push((n.clone(), &a.value)),
            (_, ExprKind::Map(entries)) => {
                let data = entries.iter().find(|(k, _)| key(k) == "data");
                let entries = match data.map(|(_, v)| &v.peel().kind) {
                    Some(ExprKind::Map(inner)) => inner,
                    _ if data.is_some() => continue,
                    _ => entries,
                };
                out.extend(
                    entries
                        .iter()
                        .filter(|(k, _)| key(k) != "where")
                        .map(|(k, v)| (key(k), v)),
                );
            }
            (Some(_), _) | (None, _) => {}
        }
    }
    out
}

/// A map key as written, without quotes or a Ruby symbol's colon.
fn key(k: &Expr) -> String {
    k.as_str()
        .unwrap_or(&k.text)
        .trim_matches(['"', '\'', ':', '`'])
        .to_string()
}

/// The calls of `call`'s chain: the receivers before it, the calls after it.
fn chain_of<'m>(
    model: &'m FileModel,
    call: &'m Call,
    next: &HashMap<CallId, CallId>,
) -> Vec<&'m Call> {
    let mut out = vec![call];
    let mut at = call;
    while let Some(id) = at.receiver.as_deref().and_then(|r| r.peel().as_call()) {
        at = model.call(id);
        out.push(at);
    }
    let mut id = call.id;
    while let Some(&n) = next.get(&id) {
        out.push(model.call(n));
        id = n;
    }
    out
}

/// Is the argument `{where: {col: null}}` (Prisma, Sequelize)?
fn under_where(value: &Expr, col: &str) -> bool {
    let ExprKind::Map(entries) = &value.peel().kind else {
        return false;
    };
    entries
        .iter()
        .filter(|(k, _)| key(k) == "where")
        .any(|(_, v)| frees(None, v, col))
}

/// Does a condition require `col` free: null (`col == None`, `col: nil`,
/// `col__isnull=True`, `"col IS NULL"`) or past (`col < now`, `col__lt=now`)?
fn frees(name: Option<&str>, value: &Expr, col: &str) -> bool {
    if let Some(n) = name {
        let is_null = matches!(value.peel().kind, ExprKind::Null);
        let is_true = matches!(value.peel().kind, ExprKind::Bool(true));
        return (n == col && is_null)
            || (n.strip_prefix(col) == Some("__isnull") && is_true)
            || matches!(n.strip_prefix(col), Some("__lt" | "__lte"));
    }
    if let ExprKind::Map(entries) = &value.peel().kind {
        return entries
            .iter()
            .any(|(k, v)| key(k) == col && matches!(v.peel().kind, ExprKind::Null));
    }
    let text = value.text.as_str();
    mentions(text, col) && free_after(text, col)
}

/// After some mention of `col` in a condition's text: a null test or `<`.
fn free_after(text: &str, col: &str) -> bool {
    const FREE: &[&str] = &[
        "== none",
        "==none",
        ".is_(none)",
        ".is_(null())",
        "is null",
        "<",
    ];
    let lower = text.to_ascii_lowercase();
    let col = col.to_ascii_lowercase();
    lower.match_indices(&col).any(|(i, _)| {
        let rest = lower[i + col.len()..]
            .trim_start_matches(|c: char| c.is_whitespace() || "\"'`]".contains(c));
        FREE.iter().any(|f| rest.starts_with(f))
    })
}

/// Is the run's result read: tested, returned, or bound and then tested or
/// returned? (A Ruby method's last expression is its value too, but a backfill
/// written last reads nothing: only an explicit return counts.)
fn read(model: &FileModel, run: &Call) -> bool {
    match &run.usage {
        Usage::Tested => true,
        Usage::Used => {
            model.is_returned(run) || model.conditionals.iter().any(|c| c.cond.contains(run.span))
        }
        Usage::Discarded | Usage::Guard => false,
        Usage::Assigned(_) => {
            let names = run.usage.bound_names();
            let later = |at: usize| at > run.span.start;
            let reads = |text: &str| names.iter().any(|n| mentions(text, n));
            model
                .exits_in(run.func)
                .any(|e| later(e.span.start) && reads(&e.value))
                || model
                    .conditionals_in(run.func)
                    .any(|c| later(c.cond.start) && reads(&c.text))
        }
    }
}
