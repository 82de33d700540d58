//! Which connection a wrapper's transaction-scoped lock runs on, seen from
//! a call: a row lock or `pg_advisory_xact_lock` lasts until its transaction
//! ends, so whether the caller holds anything depends on what it passes.

use super::shape::params_without_self;
use super::Wrapper;
use crate::catalog::Scope;
use crate::model::{Call, FileModel, Function};
use crate::sites::{resolve, LockSite, Ttl};

/// The caller argument (index among those a caller passes) the locking
/// statement of `site` runs on: `db` of `db.QueryRow(ctx, lockRow, id)` in
/// `func (q *Queries) LockRow(ctx context.Context, db DBTX, id int64)`.
pub(super) fn param(f: &Function, model: &FileModel, site: &LockSite) -> Option<usize> {
    // A site with no call of this model (a whole `.sql` file's statement)
    // runs on nothing a caller passes.
    let call = model.calls.get(site.call)?;
    let receiver = call.receiver.as_deref()?.as_name()?;
    params_without_self(f, model.language)
        .iter()
        .position(|p| *p == receiver)
}

/// What a call hands the wrapper to run its statement on.
enum Connection {
    /// A connection pool (`r.pool`): each statement commits alone.
    Pool,
    /// A transaction (`tx`, `preflightTx`) or the calling function's own
    /// parameter (whoever called it holds the transaction).
    Transaction,
    /// A handle the caller keeps in a field (`e.dbtx`): nothing shows it is
    /// a transaction.
    Unknown,
    /// None passed: the wrapper runs the statement on its own handle
    /// (`this.db`), in whatever transaction that is.
    Own,
}

fn connection(model: &FileModel, call: &Call, w: &Wrapper) -> Connection {
    let pool = |text: &str| {
        let last = text.rsplit(['.', ':']).next().unwrap_or_default();
        last.to_ascii_lowercase().ends_with("pool")
    };
    let Some(arg) = w.conn_param.and_then(|i| call.positional(i)) else {
        return match call.args.iter().any(|a| pool(&a.value.text)) {
            true => Connection::Pool,
            false => Connection::Own,
        };
    };
    let text = arg.text.as_str();
    let transaction = resolve::words(text)
        .iter()
        .any(|w| matches!(w.as_str(), "tx" | "txn" | "trx" | "transaction"));
    let handed_in = arg
        .as_name()
        .is_some_and(|n| model.function_param(call.func, n).is_some());
    if pool(text) {
        Connection::Pool
    } else if transaction || handed_in {
        Connection::Transaction
    } else {
        Connection::Unknown
    }
}

/// Does `call` of `w` leave its caller holding nothing? Only for a
/// transaction-scoped lock. On a pool the statement commits alone: a
/// blocking `FOR UPDATE` there ends with it, but a claim (`SKIP LOCKED`, a
/// try, a lock-table claim) is still taken for the caller, who goes on as
/// the holder of what it got. On a handle of the caller's that nothing shows
/// to be a transaction, a statement that locks and writes in one go (`WITH locked
/// AS (.. FOR UPDATE) UPDATE ..`) holds its lock for that statement only:
/// that statement is the site, inside the wrapper.
pub(super) fn holds_nothing(model: &FileModel, call: &Call, w: &Wrapper) -> bool {
    let site = &w.site;
    if !matches!(site.ttl, Ttl::Scoped(Scope::Transaction)) {
        return false;
    }
    match connection(model, call, w) {
        Connection::Pool => !site.statement_claims,
        Connection::Transaction | Connection::Own => false,
        Connection::Unknown => site.statement_writes && !site.statement_claims,
    }
}
