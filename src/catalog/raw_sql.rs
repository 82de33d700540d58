//! The `sql` entries of a catalog file: locks written inside SQL text and
//! row claims, as the YAML spells them.

use schemars::JsonSchema;
use serde::Deserialize;

use super::raw::{RawUsual, Scope};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SqlRole {
    Acquire,
    Release,
}

/// A lock inside SQL text: a function call (`pg_advisory_lock(`) or a clause (`FOR UPDATE`).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawSql {
    pub id: String,
    pub function: Option<String>,
    pub clause: Option<String>,
    /// A row claim: `UPDATE t SET owner = ? WHERE id = ? AND owner IS NULL`
    /// (a column set by the statement is required to be NULL by it).
    #[serde(default)]
    pub row_claim: bool,
    /// A row claim's claimant columns: stems of the names of columns that say
    /// who holds a row (`own` for `owner`, `lock` for `locked_by`), matched at
    /// the start of a name or of one of its `_` parts.
    #[serde(default)]
    pub claimants: Vec<String>,
    /// ORM and query-builder calls that write columns (`update`, `update_all`,
    /// `values`, `updateMany`): with a row claim, such a call that sets a claimant
    /// column on rows its query requires to be unclaimed is the claim too.
    #[serde(default)]
    pub update_methods: Vec<String>,
    /// Stems of lock-table names (`lock`, `leas`), matched as `claimants` are:
    /// an insert into such a table that skips a live row or takes over only an
    /// expired one (`ON CONFLICT DO NOTHING`, `INSERT IGNORE`) is a claim too.
    #[serde(default)]
    pub lock_tables: Vec<String>,
    /// Stems of row-version column names (`version`, `mvcc`), matched as
    /// `claimants` are: an `UPDATE` that writes a claimant on the row version
    /// the caller read (`SET owner = ?, version = ? WHERE .. AND version = ?`,
    /// a compare-and-set) is a claim too.
    #[serde(default)]
    pub version_columns: Vec<String>,
    /// ORM inserts (`create!`, `objects.create`, `save`): with a row claim,
    /// such a call covered by a handler of one of `unique_errors` whose row
    /// the function deletes again (`delete_methods`) is the claim of a
    /// unique-index lock table.
    #[serde(default)]
    pub insert_methods: Vec<String>,
    /// The errors a unique index raises (`RecordNotUnique`, `IntegrityError`,
    /// `DataIntegrityViolationException`), by their last name.
    #[serde(default)]
    pub unique_errors: Vec<String>,
    /// Calls that delete a claimed row (`destroy`, `delete`): its release.
    #[serde(default)]
    pub delete_methods: Vec<String>,
    /// ORM calls that write a row (`update`, `update!`, `save`): with a row
    /// claim, such a call that sets a claimant column (not to null or false)
    /// on a row its transaction holds locked marks the row claimed, and the
    /// claim outlives the row lock (`findByPk(id, {lock: true})` then
    /// `update({lockedAt: new Date()})`); one that clears it is its release.
    #[serde(default)]
    pub mark_methods: Vec<String>,
    /// The claimant stems a mark must use (`lock`, `claim`): a narrower list
    /// than `claimants`, because a locked row's `owner` or `holder` is as often
    /// its data (an account's owner) as who processes it.
    #[serde(default)]
    pub mark_claimants: Vec<String>,
    /// For a release: the ids of the acquisitions it ends (`UNLOCK TABLES`
    /// ends `LOCK TABLES`, not `GET_LOCK`); empty, any session lock.
    #[serde(default)]
    pub releases: Vec<String>,
    pub role: SqlRole,
    pub scope: Option<Scope>,
    #[serde(default)]
    pub try_acquire: bool,
    pub wait: Option<SqlWait>,
    /// What a lock of this kind usually guards, when nothing at the site decides.
    pub usual: Option<RawUsual>,
}

/// How long a SQL lock function waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SqlWait {
    /// Blocks until granted.
    Never,
    /// Returns at once.
    None,
}
