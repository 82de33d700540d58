//! A table row used as the lock, claimed in SQL text: an `UPDATE` that writes
//! a claimant into rows whose claimant says "free", or an insert into a lock
//! table that leaves a row already there alone (`ON CONFLICT DO NOTHING`,
//! `INSERT IGNORE`) or takes it over only when its lease has run out. The
//! statement's result (the affected rows, the returned row) decides who holds
//! the row. The catalog's row-claim entry gives the name stems.

use crate::catalog::SqlLock;

/// Does the (squeezed, uppercase) text `sql` claim a row as `claim` (the
/// catalog's row-claim entry) describes?
pub(super) fn claims(sql: &str, claim: &SqlLock) -> bool {
    update_claim(sql, claim) || insert_claim(sql, claim)
}

/// Does one of `stems` (lowercase) start `name` or one of its `_` parts
/// (`owner`, `locked_by`, `worker_id` for `own`, `lock`, `worker`)?
pub(super) fn claimant_column(name: &str, stems: &[String]) -> bool {
    let name = name.to_ascii_lowercase();
    name.split('_')
        .any(|part| stems.iter().any(|s| part.starts_with(s.as_str())))
}

/// A table or column name as written: its last `.` segment without quotes.
pub(super) fn ident(s: &str) -> String {
    let s = s
        .trim()
        .rsplit('.')
        .next()
        .unwrap_or("")
        .trim_matches(['"', '`', '[', ']']);
    s.to_string()
}

/// `UPDATE jobs SET owner = $1, locked_at = now() WHERE id = $2 AND owner IS NULL`:
/// a claim writes a *claimant* (a column naming who holds the row) into rows
/// whose claimant column says "free" (`IS NULL`, `= FALSE`, `= 0`, or an expired
/// lease `< now()`). A backfill (`SET role = 'member' WHERE role IS NULL`), a
/// soft delete or a monotonic timestamp (`SET last_used = ? WHERE last_used < ?`)
/// writes no claimant and is an ordinary write.
fn update_claim(sql: &str, claim: &SqlLock) -> bool {
    let stems = &claim.claimants;
    // An interpolated string keeps its quotes and prefix (`f"`, `"`, `` ` ``).
    let sql = sql.trim_start();
    let Some(i) = sql.find("UPDATE ") else {
        return false;
    };
    let head = &sql[..i];
    if head.len() > 3
        || head
            .chars()
            .any(|c| c.is_alphanumeric() && !"FRB".contains(c))
    {
        return false;
    }
    let rest = &sql[i + "UPDATE ".len()..];
    let Some((_, after_set)) = rest.split_once(" SET ") else {
        return false;
    };
    let Some((assignments, condition)) = after_set.split_once(" WHERE ") else {
        return false;
    };
    let written: Vec<(String, &str)> = assignments
        .split(',')
        .filter_map(|a| a.split_once('='))
        .map(|(col, value)| (ident(col), value.trim()))
        .collect();
    let pair = claimant_pair(
        written
            .iter()
            .map(|(c, v)| (c.as_str(), runtime_value(v), *v == "NULL")),
        stems,
        |stem| tests_column(condition, stem),
    );
    if pair.is_some_and(|by| !condition.contains(by.as_str())) {
        return true;
    }
    // A versioned compare-and-set: a claimant given at run time, on the row
    // version the caller read (kylin's epoch `SET current_epoch_owner = ?, ..,
    // mvcc = ? WHERE epoch_target = ? AND mvcc = ?`). Optimistic locking of
    // data (`SET balance = ?, version = ? WHERE .. AND version = ?`) writes no
    // claimant; a state change (`SET owner = ?, status = ? WHERE status = ?`)
    // tests no version.
    let given = |(c, v): &(String, &str)| claimant_column(c, stems) && runtime_value(v);
    let versioned = |(c, v): &(String, &str)| {
        claimant_column(c, &claim.version_columns) && runtime_value(v) && tests_column(condition, c)
    };
    if written.iter().any(given) && written.iter().any(versioned) {
        return true;
    }
    let claimants: Vec<String> = written
        .into_iter()
        .map(|(col, _)| col)
        .filter(|c| claimant_column(c, stems))
        .collect();
    const FREE: &[&str] = &[
        " IS NULL", " = FALSE", "=FALSE", " = 0", "=0", " < ", " <= ",
    ];
    FREE.iter().any(|free| {
        condition.match_indices(free).any(|(i, _)| {
            let col = condition[..i].rsplit([' ', '(']).next().unwrap_or("");
            claimants.contains(&ident(col))
        })
    })
}

/// Who and when of one claim, both written (`locked_by = ?, locked_at = ?`,
/// Rails `update_all(locked_at: now, locked_by: worker.name)`): the `_by` column
/// of a claimant stem given a run-time value, its `_at` column anything but
/// null. A claim even where the rows' "free" condition is out of sight (a scope
/// passed in, `WHERE id IN (#{subquery})`). Or who and whether: the stem's own
/// flag written and tested by the statement (db-scheduler's `SET picked = ?,
/// picked_by = ? .. WHERE picked = ?`, a compare-and-set of the flag;
/// `tested` says which columns the statement's condition compares). Returns
/// the `_by` column: a statement that also tests it (`.. WHERE locked_by = ?`)
/// renews a claim the caller holds. Columns come as (name, run-time value, null).
pub(super) fn claimant_pair<'c>(
    written: impl Iterator<Item = (&'c str, bool, bool)> + Clone,
    stems: &[String],
    tested: impl Fn(&str) -> bool,
) -> Option<String> {
    written.clone().find_map(|(by, runtime, _)| {
        let lower = by.to_ascii_lowercase();
        let stem = lower.strip_suffix("_by")?;
        let at = format!("{stem}_at");
        let paired = written.clone().any(|(c, _, null)| {
            (c.eq_ignore_ascii_case(&at) && !null) || (c.eq_ignore_ascii_case(stem) && tested(stem))
        });
        (runtime && paired && claimant_column(stem, stems)).then(|| by.to_string())
    })
}

/// Does the (uppercase) condition compare column `col` (`PICKED = ?`,
/// `T.PICKED=FALSE`), not a longer name ending in it?
pub(super) fn tests_column(condition: &str, col: &str) -> bool {
    let col = col.to_ascii_uppercase();
    condition.match_indices(&col).any(|(i, _)| {
        let before = condition[..i].chars().next_back();
        let after = condition[i + col.len()..].trim_start();
        before.is_none_or(|c| !(c.is_alphanumeric() || c == '_'))
            && after.starts_with('=')
            && !after.starts_with("==")
    })
}

/// `INSERT INTO river_leader (leader_id, elected_at, expires_at) VALUES (..)
/// ON CONFLICT (name) DO NOTHING RETURNING ..`, `INSERT INTO "Lease" (..) ..
/// ON CONFLICT (..) DO UPDATE SET "expiresAt" = .. WHERE "Lease"."expiresAt" <
/// now()`, MySQL `INSERT IGNORE INTO locks ..`: the row goes in only where no
/// live one holds its key, and the row returned (or the affected count) says
/// who won, and the row carries a value given at run time (who claims). The
/// table must be a lock table by name: a job table's singleton
/// insert (`heartbeat_seconds`, `expire_seconds` columns) or an idempotent
/// insert of ordinary data (`INSERT INTO events .. DO NOTHING`) claims nothing,
/// and an upsert that overwrites unconditionally (`DO UPDATE SET owner =
/// EXCLUDED.owner`) takes the row from whoever holds it.
fn insert_claim(sql: &str, claim: &SqlLock) -> bool {
    let Some(at) = sql.find("INSERT ") else {
        return false;
    };
    let rest = &sql[at + "INSERT ".len()..];
    let (ignoring, rest) = match rest
        .strip_prefix("OR IGNORE ")
        .or_else(|| rest.strip_prefix("IGNORE "))
    {
        Some(rest) => (true, rest),
        None => (false, rest),
    };
    let Some(rest) = rest.strip_prefix("INTO ") else {
        return false;
    };
    // `INSERT INTO /* TEMPLATE: SCHEMA */RIVER_LEADER(`: a comment before the name.
    let rest = match rest.strip_prefix("/*").and_then(|r| r.split_once("*/")) {
        Some((_, name)) => name.trim_start(),
        None => rest,
    };
    let end = rest.find(['(', ' ']).unwrap_or(rest.len());
    let table = ident(&rest[..end]);
    let after = &rest[end..];
    let guarded = ignoring
        || after.split_once("ON CONFLICT").is_some_and(|(_, action)| {
            action.contains("DO NOTHING")
                || action
                    .split_once("DO UPDATE SET ")
                    .is_some_and(|(_, set)| set.contains(" WHERE "))
        });
    guarded && claimant_column(&table, &claim.lock_tables) && runtime_value(after)
}

/// Does the (uppercase) text pass a value in at run time: a placeholder
/// (`$1`, `?`, `:name`, `%s`, `@p`) or an interpolation (`${me}`, `{me}`)?
/// A claim writes who claims; a migration seeding a lock table's rows
/// (`VALUES ('TRIGGER_ACCESS') ON CONFLICT DO NOTHING`) writes constants.
fn runtime_value(sql: &str) -> bool {
    let b = sql.as_bytes();
    let next_is = |i: usize, f: fn(&u8) -> bool| b.get(i + 1).is_some_and(f);
    b.iter().enumerate().any(|(i, c)| match c {
        b'?' | b'{' => true,
        b'$' => next_is(i, |n| n.is_ascii_digit() || *n == b'{'),
        b'%' => next_is(i, |n| matches!(n, b'S' | b'(')),
        b'@' => next_is(i, u8::is_ascii_alphabetic),
        // `:name`, not a cast's `::TEXT`.
        b':' => {
            next_is(i, u8::is_ascii_alphabetic) && i.checked_sub(1).is_none_or(|p| b[p] != b':')
        }
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use super::claims;

    /// `claims` with the built-in catalog's row-claim entry.
    fn claim(sql: &str) -> bool {
        let catalog = crate::catalog::Catalog::builtin().expect("the built-in catalog compiles");
        let entry = catalog.row_claim(|_| true);
        claims(sql, entry.expect("a row-claim entry"))
    }

    #[test]
    fn update_claims() {
        assert!(claim(
            "UPDATE JOBS SET OWNER = $1, LOCKED_AT = NOW() WHERE ID = $2 AND OWNER IS NULL"
        ));
        assert!(!claim(
            "UPDATE JOBS SET STATUS = 'DONE' WHERE ID = $1 AND DELETED_AT IS NULL"
        ));
        assert!(!claim("SELECT * FROM JOBS WHERE OWNER IS NULL"));
        // Claims: a flag, an expired lease, a reservation column.
        assert!(claim(
            "UPDATE TASKS SET PICKED = TRUE, PICKED_BY = ? WHERE NAME = ? AND PICKED = FALSE"
        ));
        assert!(claim(
            "UPDATE LEASES SET LEASED_BY = $1, LEASE_UNTIL = NOW() + $2 WHERE NAME = $3 AND LEASE_UNTIL < NOW()"
        ));
        assert!(claim(
            "UPDATE NODES SET RESERVATION = :TAG WHERE ID = :ID AND RESERVATION IS NULL"
        ));
        // A versioned compare-and-set of the claimant (kylin's epoch row); near
        // miss: optimistic locking of data, which writes no claimant.
        assert!(claim(
            "UPDATE %S SET EPOCH_ID =?, CURRENT_EPOCH_OWNER =?, MVCC =? WHERE EPOCH_TARGET =? AND MVCC =?"
        ));
        assert!(!claim(
            "UPDATE ACCOUNTS SET BALANCE = ?, VERSION = ? WHERE ID = ? AND VERSION = ?"
        ));
        // Near misses: backfills, soft deletes, monotonic timestamps.
        assert!(!claim(
            "UPDATE USERS SET ROLE = 'MEMBER' WHERE ROLE IS NULL"
        ));
        assert!(!claim(
            "UPDATE BLOCKED SET IGNORE_AFTER = CURRENT_TIMESTAMP, IGNORED_BY = %(BY)S WHERE ADDRESS = %(A)S AND (IGNORE_AFTER IS NULL OR IGNORE_AFTER > CURRENT_TIMESTAMP)"
        ));
        assert!(!claim(
            "UPDATE APIKEY SET LAST_USED = ? WHERE ID = ? AND (LAST_USED IS NULL OR LAST_USED < ?)"
        ));
        assert!(!claim(
            "UPDATE ATTRIBUTION SET DELETED_AT = NOW() WHERE FINDING_ID = ? AND DELETED_AT IS NULL"
        ));
        assert!(!claim(
            "UPDATE ITEMS SET BLOCKED = TRUE WHERE BLOCKED = FALSE"
        ));
        // Who and when written, the free condition out of sight (delayed_job's
        // `WHERE id IN (#{subquery})`); near misses: a release to null, a
        // renewal by the holder, constants.
        assert!(claim(
            "UPDATE JOBS SET LOCKED_AT = ?, LOCKED_BY = ? WHERE ID IN (#{SUBQUERY_SQL})"
        ));
        assert!(!claim(
            "UPDATE JOBS SET LOCKED_AT = NULL, LOCKED_BY = NULL WHERE LOCKED_BY = ?"
        ));
        assert!(!claim(
            "UPDATE JOBS SET LOCKED_AT = NOW(), LOCKED_BY = ? WHERE ID = ? AND LOCKED_BY = ?"
        ));
        assert!(!claim(
            "UPDATE REVIEWS SET UPDATED_AT = NOW(), UPDATED_BY = ? WHERE ID = ?"
        ));
        // Who and whether: the flag compared and set with its claimant (db-scheduler's
        // pick); near misses: the flag not tested, a longer column ending in it.
        assert!(claim(
            "UPDATE ? SET PICKED = ?, PICKED_BY = ?, LAST_HEARTBEAT = ?, VERSION = VERSION + 1 WHERE PICKED = ? AND TASK_NAME = ? AND VERSION = ?"
        ));
        assert!(!claim(
            "UPDATE T SET PICKED = ?, PICKED_BY = ? WHERE ID = ?"
        ));
        assert!(!claim(
            "UPDATE T SET PICKED = ?, PICKED_BY = ? WHERE ID = ? AND UNPICKED = ?"
        ));
        // Template text keeps its quotes.
        assert!(claim(
            "F\"UPDATE T SET OWNER = {ME} WHERE ID = 1 AND OWNER IS NULL\""
        ));
        assert!(!claim(
            "\"NOT AN UPDATE SET OWNER = 1 WHERE OWNER IS NULL\""
        ));
    }

    #[test]
    fn insert_claims() {
        // A lock table, by name: skip a held row, or take over an expired one.
        assert!(claim(
            "`-- NAME: LEADERATTEMPTELECT :ONE INSERT INTO /* TEMPLATE: SCHEMA */RIVER_LEADER(LEADER_ID, ELECTED_AT, EXPIRES_AT) VALUES ($1, NOW(), NOW() + $2) ON CONFLICT(NAME) DO NOTHING RETURNING *`"
        ));
        assert!(claim(
            "INSERT INTO \"LEASE\"(\"EXPIRESAT\", \"RESOURCEID\") SELECT NOW() + $1, X FROM Y ON CONFLICT(\"RESOURCEID\") DO UPDATE SET \"EXPIRESAT\" = EXCLUDED.\"EXPIRESAT\" WHERE \"LEASE\".\"EXPIRESAT\" < NOW() RETURNING ID"
        ));
        assert!(claim(
            "INSERT IGNORE INTO APP_LOCKS(NAME, OWNER) VALUES (?, ?)"
        ));
        assert!(claim(
            "INSERT OR IGNORE INTO MUTEXES(NAME, HOLDER) VALUES (?, ?)"
        ));
        assert!(claim(
            "WITH CTE AS (INSERT INTO DEX_LEASE(NAME, ACQUIRED_BY, EXPIRES_AT) VALUES (:NAME, :ME, NOW() + :D) ON CONFLICT(NAME) DO UPDATE SET ACQUIRED_BY = EXCLUDED.ACQUIRED_BY WHERE DEX_LEASE.EXPIRES_AT <= NOW() RETURNING ACQUIRED_BY) SELECT * FROM CTE"
        ));
        // Near misses: an unconditional upsert, ordinary data (a job table's
        // singleton insert names a heartbeat and an expiry), no guard.
        assert!(!claim(
            "INSERT INTO LOCKS(NAME, OWNER) VALUES ($1, $2) ON CONFLICT(NAME) DO UPDATE SET OWNER = EXCLUDED.OWNER"
        ));
        assert!(!claim(
            "INSERT INTO EVENTS(ID, PAYLOAD) VALUES ($1, $2) ON CONFLICT DO NOTHING"
        ));
        assert!(!claim(
            "INSERT INTO JOBS(NAME, HEARTBEAT_SECONDS, EXPIRE_SECONDS) SELECT * FROM X ON CONFLICT DO NOTHING"
        ));
        assert!(!claim(
            "INSERT INTO BLOCKS(HASH, OWNER_ID) VALUES ($1, $2) ON CONFLICT DO NOTHING"
        ));
        assert!(!claim("INSERT INTO LOCKS(NAME, OWNER) VALUES ($1, $2)"));
        // A migration seeding a lock table's rows writes no claimant.
        assert!(!claim(
            "INSERT INTO QRTZ_LOCKS(SCHED_NAME, LOCK_NAME) VALUES ('S', 'TRIGGER_ACCESS') ON CONFLICT DO NOTHING"
        ));
        assert!(!claim(
            "INSERT INTO APP_LOCKS(NAME) VALUES ('JOBS'::TEXT) ON CONFLICT DO NOTHING"
        ));
    }
}
