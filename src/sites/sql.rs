//! Locks inside SQL strings: `SELECT pg_advisory_lock($1)`, `GET_LOCK(?, 10)`,
//! `SELECT ... FOR UPDATE SKIP LOCKED`, passed to any driver call.
//!
//! A string argument (or a same-file constant) of any call is searched for
//! the catalog's SQL lock functions and clauses; the call running the SQL
//! is the lock site. These locks live as long as their session or
//! transaction, so they carry a scope, not a TTL.

use super::{resolve, LockSite, Release, SiteKind, Ttl, Wait};
use crate::catalog::raw::SqlWait;
use crate::catalog::{Catalog, Scope, SqlLock, SqlRole};
use std::collections::HashMap;

use super::built_sql::built_and_run;
use super::claim_release::claimed_table;
use super::handed_sql;
use super::sql_text::{literals, reads_as_sql, squeeze};
use crate::model::{mentions, Arg, Call, CallId, Expr, ExprKind, FileModel, Language, Span};

/// The SQL text an argument carries, uppercased, if it is a string.
pub(super) fn sql_text(model: &FileModel, e: &Expr, func: Option<usize>) -> Option<String> {
    sql_text_within(model, e, func, 2)
}

/// [`sql_text`], looking into calls written in place up to `depth` levels down.
fn sql_text_within(model: &FileModel, e: &Expr, func: Option<usize>, depth: u8) -> Option<String> {
    // A call written here is read one level deep; a name bound to a call is
    // that call's own site.
    let inline = matches!(e.peel().kind, ExprKind::Call(_));
    let e = resolve::resolve(model, e, func);
    match &e.kind {
        ExprKind::Str(s) => Some(s.to_ascii_uppercase()),
        // An interpolated string still shows its SQL: `f"SELECT pg_advisory_lock({k})"`.
        ExprKind::Template => Some(e.text.to_ascii_uppercase()),
        // `"SELECT pg_advisory_lock(" + id + ")"`: the literal parts.
        ExprKind::Binary { op: '+', .. } => {
            let mut parts = String::new();
            let mut stack = vec![e];
            while let Some(x) = stack.pop() {
                match &x.peel().kind {
                    ExprKind::Binary { op: '+', lhs, rhs } => {
                        stack.push(rhs);
                        stack.push(lhs);
                    }
                    ExprKind::Str(s) => parts.push_str(s),
                    // A constant part: `" SET " + CURRENT_EPOCH_OWNER + " =?"`.
                    ExprKind::Name(_) => match resolve::resolve(model, x, func).as_str() {
                        Some(s) => parts.push_str(s),
                        None => parts.push('?'),
                    },
                    _ => parts.push('?'),
                }
            }
            Some(parts.to_ascii_uppercase())
        }
        // `&self.sql_set.campaign`: a record field read, the record built in this file.
        ExprKind::Name(path) if depth > 0 && path.contains('.') => {
            record_field_text(model, path, func, depth - 1)
        }
        // Rails' array form: `find_by_sql([sql, now, worker.name])`,
        // `sanitize_sql(["UPDATE .. SET locked_by = ?", me])`.
        // A list of calls (`$transaction([db.$executeRaw(..), ..])`) runs each where written.
        ExprKind::List(items) if depth > 0 => items
            .first()
            .filter(|first| first.peel().as_call().is_none())
            .and_then(|first| sql_text_within(model, first, func, depth - 1)),
        // `text("...")`, `sqlx::query("...")`, `knex.raw("...")`, quartz's `rtp(SELECT_..)`
        // over a concatenated constant, `String.format(Locale.ROOT, UPDATE_SQL, table)`,
        // `text(qualified(schema, LOCK_SQL))`: the first argument that holds text.
        ExprKind::Call(id) if depth > 0 && inline => model
            .call(*id)
            .args
            .iter()
            .find_map(|a| sql_text_within(model, &a.value, func, depth - 1)),
        ExprKind::Call(id) => model.call(*id).args.first().and_then(|a| {
            match &resolve::resolve(model, &a.value, func).kind {
                ExprKind::Str(s) => Some(s.to_ascii_uppercase()),
                _ => None,
            }
        }),
        _ => None,
    }
}

/// The SQL text a record field holds when this file builds the record with
/// one initializer for it (`ElectionSqlSet { campaign: self.campaign_sql(), .. }`
/// kept in a field and read as `self.sql_set.campaign`): the initializer's
/// text, or the only `return` of the same-file function it calls.
fn record_field_text(
    model: &FileModel,
    path: &str,
    func: Option<usize>,
    depth: u8,
) -> Option<String> {
    let field = path.rsplit('.').next()?;
    let [value] = model.record_fields.get(field)?.as_slice() else {
        return None;
    };
    if value.peel().as_call().is_some() {
        let returned = resolve::helper_text(model, value, func)?;
        return Some(literals(returned)).filter(|t| !t.trim().is_empty());
    }
    sql_text_within(model, value, func, depth)
}

/// Does `sql` use `needle` as SQL? A function must start a word
/// (`try_get_lock(` is not `GET_LOCK(`); a clause must sit in a statement
/// (`"waiting for update"` in a log line is not `FOR UPDATE`).
fn uses(sql: &str, needle: &str, role: SqlRole) -> bool {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let is_clause = !needle.ends_with('(');
    // Only row-lock clauses (`FOR UPDATE`) sit inside a statement; a
    // statement clause (`LOCK TABLE`) starts one, and alone it names a
    // privilege (`GRANT LOCK TABLES`), not a table.
    if is_clause && !needle.starts_with("FOR ") {
        return sql.match_indices(needle).any(|(i, _)| {
            let head = sql[..i].trim_end();
            let rest = &sql[i + needle.len()..];
            let after = rest.trim_start();
            // `LOCK TABLE` needs a table; `UNLOCK TABLES` stands alone.
            let object = role != SqlRole::Acquire
                || rest.starts_with(char::is_whitespace)
                    && after.starts_with(|c: char| {
                        // A name, quoted or not, or a template's placeholder for one.
                        c.is_ascii_alphanumeric() || "_\"`%${#".contains(c)
                    });
            (head.is_empty() || head.ends_with(';'))
                && !rest.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
                && object
        });
    }
    // A clause in a statement, or on its own for a query builder (`.lock("FOR UPDATE")`).
    if is_clause && !(sql.contains("SELECT") || sql.trim_start().starts_with(needle)) {
        return false;
    }
    // `FOR UPDATE OF jobs SKIP LOCKED`: tables named between the strength
    // and its wait modifier.
    let of_tables = || {
        let Some((strength, modifier)) = [" SKIP LOCKED", " NOWAIT"]
            .iter()
            .find_map(|m| Some((needle.strip_suffix(m)?, *m)))
        else {
            return false;
        };
        let of = format!("{strength} OF ");
        sql.match_indices(&of).any(|(i, _)| {
            let rest = &sql[i + of.len() - 1..];
            let names = |c: char| c.is_ascii_alphanumeric() || "_.\", ".contains(c);
            let run = &rest[..rest.find(|c: char| !names(c)).unwrap_or(rest.len())];
            !sql[..i].chars().next_back().is_some_and(word)
                && run.split_once(modifier).is_some_and(|(_, after)| {
                    !after.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
                })
        })
    };
    sql.match_indices(needle).any(|(i, _)| {
        let before = sql[..i].chars().next_back();
        let after = sql[i + needle.len()..].chars().next();
        !before.is_some_and(word) && (!is_clause || !after.is_some_and(word))
    }) || (is_clause && of_tables())
}

pub fn analyze(
    model: &FileModel,
    catalog: &Catalog,
    next: &HashMap<CallId, CallId>,
    sites: &mut Vec<LockSite>,
    releases: &mut Vec<Release>,
) {
    if catalog.sql.is_empty() {
        return;
    }
    // `text("..")` inside `execute(..)` is found once, at `execute`, which
    // reads its argument calls one level deep.
    let nested: std::collections::HashSet<usize> = model
        .calls
        .iter()
        .flat_map(|c| c.args.iter().filter_map(|a| a.value.as_call()))
        .collect();
    // Every statement, clause and function call the catalog names has a blank
    // or a parenthesis; a word alone (`"lock:job:1"`, a key) holds none of them.
    let one_word_needle = catalog
        .sql
        .iter()
        .any(|q| !q.row_claim && !q.needle.contains([' ', '(']));
    let reader = Reader {
        model,
        catalog,
        next,
        one_word_needle,
        claimed: std::cell::RefCell::new(Vec::new()),
    };
    // A lock text a class hands its base class's constructor is taken where
    // the class's methods run it; the delegation holds it only if none does.
    let handed = handed_sql::handed(model, catalog);
    let mut ran = vec![false; handed.len()];
    let mut deferred = Vec::new();
    for call in model.calls.iter().filter(|c| !nested.contains(&c.id)) {
        if handed.iter().any(|h| h.call == call.id) {
            deferred.push(call);
            continue;
        }
        reader.read(call, sites, releases, |index, arg| {
            if let Some(text) = sql_text(model, &arg.value, call.func) {
                return Some((text, None));
            }
            let i = handed_sql::run_by(model, &handed, call, index, arg)?;
            ran[i] = true;
            let h = &handed[i];
            Some((
                h.text.clone(),
                Some(format!("handed to the base class as {}", h.name)),
            ))
        });
    }
    for call in deferred {
        if !(handed.iter().zip(&ran)).any(|(h, ran)| h.call == call.id && *ran) {
            reader.read(call, sites, releases, |_, arg| {
                sql_text(model, &arg.value, call.func).map(|t| (t, None))
            });
        }
    }
    let claimed = reader.claimed.into_inner();
    if let Some(claim) = catalog.row_claim(|_| true).filter(|_| !claimed.is_empty()) {
        for call in model.calls.iter().filter(|c| !nested.contains(&c.id)) {
            super::claim_release::claim_releases(model, (claim, &claimed), call, sites, releases);
        }
    }
}

/// What reading one call's arguments for SQL needs.
struct Reader<'a> {
    model: &'a FileModel,
    catalog: &'a Catalog,
    next: &'a HashMap<CallId, CallId>,
    /// Does the catalog name an SQL word without a blank or parenthesis?
    one_word_needle: bool,
    /// The row claims found, each with the table it claims a row of.
    claimed: std::cell::RefCell<Vec<(usize, String)>>,
}

impl Reader<'_> {
    /// The lock or release `call` takes with the SQL text `text` gives for an
    /// argument (with a note for the evidence), if any.
    fn read(
        &self,
        call: &Call,
        sites: &mut Vec<LockSite>,
        releases: &mut Vec<Release>,
        mut text: impl FnMut(usize, &Arg) -> Option<(String, Option<String>)>,
    ) {
        let (model, catalog) = (self.model, self.catalog);
        let may_hold_sql =
            |s: &str| self.one_word_needle || s.contains(|c: char| c.is_whitespace() || c == '(');
        for (index, arg) in call.args.iter().enumerate() {
            let Some((sql, note)) = text(index, arg).filter(|(s, _)| may_hold_sql(s)) else {
                continue;
            };
            let sql = squeeze(&sql);
            // In a `.sql` file every text is SQL; a host language's string may
            // be an error message naming the statement.
            let prose_ok = model.language == Language::Sql;
            if let Some(unlock) = catalog
                .sql
                .iter()
                .find(|q| q.role == SqlRole::Release && uses(&sql, &q.needle, q.role))
            {
                let inline = written_key(&arg.value, &unlock.needle);
                let key = call
                    .args
                    .get(index + 1)
                    .map(|a| &a.value)
                    .or(inline.as_ref());
                super::sql_releases::release(model, sites, releases, call, key, unlock);
                break;
            }
            let Some(lock) = acquired(catalog, &sql, prose_ok) else {
                continue;
            };
            // A built statement runs later: the lock is taken where it runs.
            let run = built_and_run(model, self.next, call).unwrap_or(call);
            // `query := fmt.Sprintf(".. FOR UPDATE", ..)` then `db.Exec(query)`: the
            // run call reads the text itself and is the site, once.
            let reads_it = |a: &crate::model::Arg| {
                sql_text(model, &a.value, run.func)
                    .is_some_and(|s| acquired(catalog, &squeeze(&s), prose_ok).is_some())
            };
            if run.id != call.id && run.args.iter().any(reads_it) {
                break;
            }
            // The lock's key is the first argument after the SQL text, or
            // written in it (`pg_advisory_lock(4242)` in a .sql file).
            let key = call
                .args
                .get(index + 1)
                .map(|a| a.value.clone())
                .or_else(|| written_key(&arg.value, &lock.needle));
            // A call given the text is placed at its method (`self.pool.get().await\n
            // .query(SQL, &[])`); a statement built earlier, where its run starts.
            let span = if prose_ok || run.id != call.id {
                run.span
            } else {
                run.written_span()
            };
            let base = LockSite::base(run.id, span, run.func, SiteKind::Sql);
            let mut found = site(lock, &sql, key, base);
            found.autocommit = matches!(found.ttl, Ttl::Scoped(Scope::Transaction))
                && super::pools::commits_alone(model, catalog, run);
            found.handed = note.is_some();
            if let Some(table) = lock.row_claim.then(|| claimed_table(&sql)).flatten() {
                self.claimed.borrow_mut().push((sites.len(), table));
            }
            found.evidence.extend(note);
            sites.push(found);
            break;
        }
    }
}

/// The catalog's lock that the (squeezed, uppercase) text `sql` takes, if
/// any; `prose_ok` where every text is SQL (a `.sql` file).
/// A row claim comes first: `UPDATE tasks SET app_lock_id = %s WHERE id IN
/// (SELECT .. FOR UPDATE SKIP LOCKED)` claims the row past its transaction;
/// the row lock of its subquery only picks which row.
pub(super) fn acquired<'c>(catalog: &'c Catalog, sql: &str, prose_ok: bool) -> Option<&'c SqlLock> {
    let acquires = catalog.sql.iter().filter(|q| q.role == SqlRole::Acquire);
    (acquires.clone())
        .find(|q| q.row_claim && super::sql_claims::claims(sql, q))
        .or_else(|| {
            acquires.clone().find(|q| {
                !q.row_claim
                    && uses(sql, &q.needle, q.role)
                    && (prose_ok || !q.needle.starts_with("FOR ") || reads_as_sql(sql))
            })
        })
}

/// The site of `lock` taken by the text `sql` with `key`, at `base`'s call.
pub(super) fn site(lock: &SqlLock, sql: &str, key: Option<Expr>, base: LockSite) -> LockSite {
    let scope = lock.scope.unwrap_or(Scope::Transaction);
    // `CREATE FUNCTION ... pg_try_advisory_lock(..) ...`: the routine's
    // lock is written here and taken whenever it runs, not by this
    // statement, so nothing about this call's result, wait or release.
    let definition = defines_routine(sql, &lock.needle);
    let wait = match lock.wait {
        _ if definition => Wait::NotApplicable,
        Some(SqlWait::None) => Wait::NoWait,
        // `LOCK TABLE t IN EXCLUSIVE MODE NOWAIT`: fails at once instead.
        Some(SqlWait::Never) if mentions(sql, "NOWAIT") => Wait::NoWait,
        Some(SqlWait::Never) => Wait::Forever,
        None => Wait::NotApplicable,
    };
    LockSite {
        library: lock.library.clone(),
        backend: lock.backend.clone(),
        api: lock.id.clone(),
        command: lock.needle.trim_end_matches('(').to_string(),
        key,
        ttl: Ttl::Scoped(scope),
        wait,
        // `UPDATE .. WHERE id IN (SELECT .. FOR UPDATE SKIP LOCKED)`: the
        // statement writes exactly what it locked; no result to test.
        try_acquire: lock.try_acquire && (lock.row_claim || !writes(sql)) && !definition,
        statement_writes: writes(sql),
        statement_claims: lock.row_claim || lock.try_acquire,
        expects_release: scope == Scope::Session && !definition,
        usual: lock.usual.clone().filter(|_| !definition),
        evidence: vec![format!("SQL text {}", takes(lock))],
        ..base
    }
}

/// What text taking `lock` does, for evidence: `calls FOR UPDATE`,
/// `claims a lock-table row`.
pub(super) fn takes(lock: &SqlLock) -> String {
    match lock.row_claim {
        true => "claims a lock-table row".to_string(),
        false => format!("calls {}", lock.needle.trim_end_matches('(')),
    }
}

/// [`inline_key`] of a string argument.
fn written_key(sql: &Expr, needle: &str) -> Option<Expr> {
    inline_key(sql.as_str()?, sql.span, needle)
}

/// The arguments written inside a lock function call in SQL text:
/// `p_batch` of `PERFORM pg_try_advisory_xact_lock(p_batch)`. Only for
/// function needles (`PG_ADVISORY_LOCK(`) and when the text is at hand.
pub(super) fn inline_key(text: &str, span: Span, needle: &str) -> Option<Expr> {
    let name = needle.strip_suffix('(')?.to_ascii_lowercase();
    let lower = text.to_ascii_lowercase();
    let open = lower
        .match_indices(&format!("{name}("))
        .map(|(i, _)| i + name.len())
        .find(|&i| {
            !lower[..i - name.len()]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        })?;
    let mut depth = 0usize;
    let close = text[open..].char_indices().find_map(|(i, c)| {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(open + i);
                }
            }
            _ => {}
        }
        None
    })?;
    let inside = text[open + 1..close].trim();
    // `pg_advisory_lock($1)` / `(%s)` / `(?)`: a placeholder names nothing.
    let placeholder = inside.is_empty()
        || inside.starts_with('$') && inside[1..].chars().all(|c| c.is_ascii_digit())
        || matches!(inside, "?" | "%s" | "%d");
    (!placeholder).then(|| Expr::other(inside, span))
}

/// Is the lock `needle` written in the body of a routine the (uppercase)
/// text creates (`CREATE [OR REPLACE] FUNCTION|PROCEDURE ... AS $$ ... $$`)?
pub(super) fn defines_routine(sql: &str, needle: &str) -> bool {
    let at = sql
        .find(needle)
        .filter(|_| !needle.is_empty())
        .unwrap_or(sql.len());
    ["FUNCTION", "PROCEDURE"].iter().any(|kind| {
        sql[..at].match_indices(kind).any(|(i, _)| {
            let head = sql[..i].trim_end();
            head.ends_with("CREATE") || head.ends_with("CREATE OR REPLACE")
        })
    })
}

/// Does the (uppercase) statement also write rows (`UPDATE .. SET`,
/// `DELETE FROM`, `INSERT INTO`)?
fn writes(sql: &str) -> bool {
    (mentions(sql, "UPDATE") && mentions(sql, "SET"))
        || sql.contains("DELETE FROM")
        || sql.contains("INSERT INTO")
}

#[cfg(test)]
mod tests {
    use super::{reads_as_sql, squeeze, uses, SqlRole};

    #[test]
    fn sql_tokens_not_substrings() {
        let acquire = SqlRole::Acquire;
        assert!(uses(
            &squeeze("SELECT PG_ADVISORY_LOCK ($1)"),
            "PG_ADVISORY_LOCK(",
            acquire
        ));
        assert!(!uses("SELECT TRY_GET_LOCK(?)", "GET_LOCK(", acquire));
        assert!(!uses("WAITING FOR UPDATE", "FOR UPDATE", acquire));
        // Error messages name the statement they wrap.
        assert!(!reads_as_sql(
            "FAILED TO CONVERT SELECT FOR UPDATE QUERY TO SQL: %W"
        ));
        assert!(!reads_as_sql("THE SELECT FOR UPDATE QUERY FAILED"));
        // SQL after a comment, a template's quote, or a parenthesis.
        assert!(reads_as_sql(
            "-- NAME: CLAIMJOB :ONE\nSELECT * FROM JOBS FOR UPDATE SKIP LOCKED"
        ));
        assert!(reads_as_sql("`\n  SELECT * FROM T FOR UPDATE`"));
        assert!(reads_as_sql(
            "F\"SELECT * FROM T WHERE ID = {ID} FOR UPDATE\""
        ));
        assert!(reads_as_sql("(SELECT ID FROM T WHERE ID = ? FOR UPDATE)"));
        assert!(uses(
            "SELECT * FROM JOBS FOR UPDATE SKIP LOCKED",
            "FOR UPDATE",
            acquire
        ));
        assert!(!uses("SELECT * FROM T FOR UPDATES", "FOR UPDATE", acquire));
    }

    #[test]
    fn wait_modifiers_after_named_tables() {
        let acquire = SqlRole::Acquire;
        let skip = "FOR UPDATE SKIP LOCKED";
        assert!(uses(
            "SELECT * FROM C JOIN T ON X FOR UPDATE OF C SKIP LOCKED",
            skip,
            acquire
        ));
        assert!(uses(
            "SELECT 1 FROM A, B FOR UPDATE OF A, \"B\" SKIP LOCKED)",
            skip,
            acquire
        ));
        assert!(uses(
            "SELECT 1 FROM A FOR UPDATE OF A NOWAIT",
            "FOR UPDATE NOWAIT",
            acquire
        ));
        // Near misses: no modifier, another strength, a longer word.
        assert!(!uses("SELECT * FROM C FOR UPDATE OF C", skip, acquire));
        assert!(!uses(
            "SELECT * FROM C FOR SHARE OF C SKIP LOCKED",
            skip,
            acquire
        ));
        assert!(!uses(
            "SELECT 1 FROM A FOR UPDATE OF A NOWAITING",
            "FOR UPDATE NOWAIT",
            acquire
        ));
    }

    #[test]
    fn statement_clauses_start_a_statement() {
        let acquire = SqlRole::Acquire;
        assert!(uses(
            "LOCK TABLE JOBS IN EXCLUSIVE MODE",
            "LOCK TABLE",
            acquire
        ));
        assert!(uses("BEGIN; LOCK TABLE JOBS", "LOCK TABLE", acquire));
        assert!(!uses("LOCK TABLES", "LOCK TABLES", acquire));
        assert!(!uses("LOCK TABLES T WRITE", "LOCK TABLE", acquire));
        assert!(!uses(
            "GRANT SELECT, LOCK TABLES ON DB.* TO U",
            "LOCK TABLES",
            acquire
        ));
        assert!(uses("UNLOCK TABLES", "UNLOCK TABLES", SqlRole::Release));
        // A comment between the words, a template's placeholder for the table.
        let commented = squeeze("LOCK /* GH-OST */ TABLES %S.%S WRITE");
        assert_eq!(commented, "LOCK TABLES %S.%S WRITE");
        assert!(uses(&commented, "LOCK TABLES", acquire));
        assert!(uses("LOCK TABLES `T` WRITE", "LOCK TABLES", acquire));
        assert!(!uses(
            &squeeze("LOCK /* T */ TABLES"),
            "LOCK TABLES",
            acquire
        ));
    }
}
