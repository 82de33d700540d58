//! Where a row claimed in SQL text is given back: a `DELETE FROM` the claimed
//! table, or an `UPDATE` of it that clears a claimant column (`SET owner =
//! NULL`). The release is owner-checked when its condition compares a
//! claimant column (`WHERE id = $1 AND owner = $2`); one by id alone deletes
//! whatever claim holds the row, a successor's too (LA201).

use super::sql::sql_text;
use super::sql_claims::{claimant_column, ident};
use super::sql_text::squeeze;
use super::{LockSite, Release};
use crate::catalog::SqlLock;
use crate::model::{Call, FileModel};

/// The table a (squeezed, uppercase) claim statement writes: `UPDATE t SET ..`,
/// `INSERT [OR IGNORE | IGNORE] INTO t ..`.
pub(super) fn claimed_table(sql: &str) -> Option<String> {
    let rest = match after(sql, "INSERT ") {
        Some(rest) => {
            let rest = (rest.strip_prefix("OR IGNORE "))
                .or_else(|| rest.strip_prefix("IGNORE "))
                .unwrap_or(rest);
            rest.strip_prefix("INTO ")?
        }
        None => after(sql, "UPDATE ")?,
    };
    table_at(rest)
}

/// The text after the statement keyword `word` where it starts a word (a
/// comment may come first: `-- name: ReleaseLeases :many DELETE FROM ..`).
fn after<'s>(sql: &'s str, word: &str) -> Option<&'s str> {
    (sql.match_indices(word))
        .find(|(at, _)| *at == 0 || sql[..*at].ends_with([' ', '\n', '(']))
        .map(|(at, _)| &sql[at + word.len()..])
}

/// Does `sql` give back a claim on `table`, and does it check the claimant
/// (or the version it read) doing so? `None` when it is no such release. A
/// `DELETE` gives back only a lock table's row (`DELETE FROM "Lease" ..`): a
/// job row deleted is a job done.
pub(super) fn release_of(sql: &str, table: &str, claim: &SqlLock) -> Option<bool> {
    let (rest, clearing, delete) = if let Some(rest) = after(sql, "DELETE FROM ") {
        (rest, claimant_column(table, &claim.lock_tables), true)
    } else {
        let rest = after(sql, "UPDATE ")?;
        // `SET locked_by = NULL`: a claimant cleared.
        let set = rest.split_once(" SET ")?.1;
        let set = set.split(" WHERE ").next().unwrap_or(set);
        let clears = set.split(',').any(|part| {
            part.split_once('=').is_some_and(|(col, value)| {
                claimant_column(&ident(col), &claim.claimants) && value.trim() == "NULL"
            })
        });
        (rest, clears, false)
    };
    if !clearing || table_at(rest)? != table {
        return None;
    }
    // What picks the rows: a `WITH` before the statement (River's resignation
    // selects its own `leader_id` there), and a delete's `USING` and `WHERE`
    // or an update's `WHERE` (its `SET` names the claimant it clears).
    let head = &sql[..sql.len() - rest.len()];
    let picks = match delete {
        true => rest.split_once(' ').map_or("", |(_, r)| r),
        false => rest.split_once(" WHERE ").map_or("", |(_, c)| c),
    };
    // Not what it hands back (`RETURNING id, "expiresAt"`).
    let picks = picks.split(" RETURNING ").next().unwrap_or(picks);
    // The claimant compared, the version read, or only expired claims taken
    // (`WHERE expires_at < now()`).
    let checked = (head.split(' ').chain(picks.split(' ')))
        .flat_map(|w| w.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.' || c == '"')))
        .map(ident)
        .filter(|word| word != table)
        .any(|word| {
            // `leader_id` of `river_leader`: a column named for the lock table's kind.
            claimant_column(&word, &claim.claimants)
                || claimant_column(&word, &claim.lock_tables)
                || claim
                    .version_columns
                    .iter()
                    .any(|v| word.eq_ignore_ascii_case(v))
                || word.to_ascii_lowercase().starts_with("expir")
        });
    Some(checked)
}

/// The table name a statement's text starts with (`"LEASE" L USING ..` ->
/// `LEASE`); none for one spelled at run time (`%S`, `${TABLE}`).
fn table_at(rest: &str) -> Option<String> {
    let end = rest.find(['(', ' ']).unwrap_or(rest.len());
    let table = ident(&rest[..end]);
    let plain = !table.is_empty() && table.chars().all(|c| c.is_alphanumeric() || c == '_');
    plain.then_some(table)
}

/// `call`'s statement, if it gives back a row claimed in `claimed` (a
/// `DELETE FROM` its table, an `UPDATE` clearing its claimant): a release of
/// that claim.
pub(super) fn claim_releases(
    model: &FileModel,
    (claim, claimed): (&SqlLock, &[(usize, String)]),
    call: &Call,
    sites: &mut [LockSite],
    releases: &mut Vec<Release>,
) {
    for arg in &call.args {
        let Some(text) = sql_text(model, &arg.value, call.func) else {
            continue;
        };
        let sql = squeeze(&text);
        let found = claimed
            .iter()
            .find_map(|(i, table)| Some((*i, table, release_of(&sql, table, claim)?)));
        let Some((i, table, owner_checked)) = found else {
            continue;
        };
        sites[i].releases.push(releases.len());
        releases.push(Release {
            library: claim.library.clone(),
            call: call.id,
            span: call.span,
            command: sql.split(' ').next().unwrap_or("DELETE").to_string(),
            key: None,
            key_text: String::new(),
            owner_checked,
            site: Some(i),
            lock_evidence: format!("gives back a claimed row of `{table}`"),
            func: call.func,
            script_name: None,
            racy_get: None,
        });
        return;
    }
}
