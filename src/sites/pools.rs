//! Writes run on a connection pool. A session-level database lock
//! (`pg_try_advisory_lock`, `GET_LOCK`) lives on the one connection that took
//! it; a write the section runs through the pool (`sqlx::query(..).execute(pool)`,
//! `pool.query(..)`) goes out on whatever connection the pool lends, so the
//! database does not end lock and write together.

use std::collections::HashMap;

use super::command::chain_successors;
use super::{resolve, LockSite, Ttl};
use crate::catalog::{Catalog, Scope};
use crate::model::{Call, CallId, FileModel, Span};

/// A file's call chains and its calls by place: built once for all the
/// writes of all the file's sites.
pub struct Chains {
    next: HashMap<CallId, CallId>,
    by_span: HashMap<Span, CallId>,
}

impl Chains {
    pub fn new(model: &FileModel) -> Self {
        let mut by_span = HashMap::new();
        for c in &model.calls {
            by_span.entry(c.span).or_insert(c.id);
        }
        Chains {
            next: chain_successors(model),
            by_span,
        }
    }
}

/// Does a write at `span` in `site`'s section run on a pool while `site` is
/// a session lock taken on a connection of its own (not the pool itself)?
pub fn write_beside_session(
    model: &FileModel,
    chains: &Chains,
    site: &LockSite,
    span: Span,
) -> bool {
    if !matches!(site.ttl, Ttl::Scoped(Scope::Session)) || on_pool(model.call(site.call)) {
        return false;
    }
    let Some(&write) = chains.by_span.get(&span) else {
        return false;
    };
    // The write's chain: `sqlx::query(..).bind(k).execute(pool)`.
    let mut id = write;
    loop {
        if on_pool(model.call(id)) {
            return true;
        }
        match chains.next.get(&id) {
            Some(&n) => id = n,
            None => return false,
        }
    }
}

/// Is the statement `call` runs committed alone: made on a pool or given one
/// (see [`on_pool`]), or made on a handle declared with a pool's type (Go
/// `s.db.QueryRowContext(..)` with the field `db *sqlx.DB`)?
pub fn commits_alone(model: &FileModel, catalog: &Catalog, call: &Call) -> bool {
    if on_pool(call) {
        return true;
    }
    let Some(name) = (call.receiver.as_deref()).and_then(|r| r.peel().as_name()) else {
        return false;
    };
    let last = name.rsplit(['.', ':']).next().unwrap_or(name);
    // A local or parameter is what it is declared as (`db := dbtx.GetAccessor(ctx,
    // s.db)` declares nothing); a field (`s.db`) is declared once, outside any function.
    let local = model.lookup(name, call.func, call.span.start);
    let param = model.function_param(call.func, name);
    let declared = match (local, param) {
        (Some(a), _) => a.ty.as_deref(),
        (None, Some(p)) => p.ty.as_deref(),
        (None, None) if name.contains(['.', ':']) => model.field_type(last),
        (None, None) => None,
    };
    declared.is_some_and(|ty| {
        let ty = ty.trim_start_matches(['*', '&']).trim();
        catalog.pool_types.iter().any(|p| p == ty) || resolve::words(ty).iter().any(|w| w == "pool")
    })
}

/// Is `call` made on a pool or given one (`pool.query(..)`, `.execute(&self.pool)`)?
fn on_pool(call: &Call) -> bool {
    let root = (call.receiver.as_deref())
        .filter(|r| r.as_call().is_none())
        .map(|r| r.text.as_str());
    root.into_iter()
        .chain(call.args.iter().map(|a| a.value.text.as_str()))
        .any(|t| resolve::words(t).iter().any(|w| w == "pool"))
}
