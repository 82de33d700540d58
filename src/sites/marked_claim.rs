//! A row lock whose transaction marks the row claimed: `sequelize.transaction(
//! async t => { const o = await Order.findByPk(id, {lock: true, transaction: t});
//! if (o.isLocked()) return false; await o.update({data: {...o.data, lockedAt:
//! new Date()}}, {transaction: t}) })`, Django `select_for_update().get(..)`
//! then `job.locked_by = me; job.save()`, Rails `lock!` then `update!(locked_by:
//! me)`.
//!
//! The row lock ends with the transaction, the mark does not: what the caller
//! holds afterwards is the claim, until a write clears the mark (its release).
//! The transaction must test the mark before writing it (who proceeds is
//! decided there); a locked row's ordinary update is no claim.

use super::orm_claim::assignments;
use super::sql_claims::{claimant_column, tests_column};
use super::{resolve, LockSite, Release, Ttl};
use crate::catalog::{Catalog, Scope, SqlLock};
use crate::model::{mentions, Call, Expr, ExprKind, FileModel, Span};

pub fn analyze(
    model: &FileModel,
    catalog: &Catalog,
    sites: &mut [LockSite],
    releases: &mut Vec<Release>,
) {
    let Some(claim) = catalog.row_claim(|q| !q.mark_methods.is_empty()) else {
        return;
    };
    for (i, site) in sites.iter_mut().enumerate() {
        if !(site.database_bound() && matches!(site.ttl, Ttl::Scoped(Scope::Transaction))) {
            continue;
        }
        let Some((mark, col, value, presence)) = marked(model, claim, site) else {
            continue;
        };
        let cleared = clearing(model, claim, site.span, mark, &col);
        // The claim is named by its mark: the row lock had no key of its own.
        let key = Expr::other(col.clone(), value.span);
        site.key.get_or_insert(key.clone());
        if site.key_text.is_empty() {
            site.key_text = col.clone();
        }
        site.ttl = Ttl::Scoped(Scope::Row);
        site.mark = Some(mark.span);
        site.never_stale = presence;
        site.owner = Some(value.clone());
        site.evidence.push(format!(
            "`{}` marks the locked row claimed (`{col}`) before its transaction ends: the claim outlives the row lock",
            mark.name
        ));
        if let Some((release, owner_checked)) = cleared {
            site.releases.push(releases.len());
            releases.push(Release {
                library: claim.library.clone(),
                call: release.id,
                span: release.span,
                command: release.name.clone(),
                key: Some(key),
                key_text: col.clone(),
                owner_checked,
                site: Some(i),
                lock_evidence: format!("clears the claim mark `{col}`"),
                func: release.func,
                script_name: None,
                racy_get: None,
            });
        }
    }
}

/// The write after `site`, in its function, that sets a claimant (not to
/// null or false) after a test of it: the call, the column, the value, and
/// whether every test reads only that the mark is there (`if (o.data?.lockedAt)`,
/// `if job.locked_by is not None`), never its age (`lockedAt < cutoff`) nor
/// through a method (`o.isLocked()`, which may): such a claim never goes stale.
fn marked<'m>(
    model: &'m FileModel,
    claim: &SqlLock,
    site: &LockSite,
) -> Option<(&'m Call, String, &'m Expr, bool)> {
    let after = |at: usize| at >= site.span.end;
    let claimant = |col: &str| mark_column(col, &claim.mark_claimants);
    // `job.locked_by = me`, for a `job.save()` after it.
    let field_set = model.assigns_in(site.func).find_map(|a| {
        let (_, field) = a.target.rsplit_once('.')?;
        (after(a.span.start) && !a.value.is_nullish() && claimant(field))
            .then_some((a.span.end, field, &a.value))
    });
    let (mark, col, value) = model
        .calls_in(site.func)
        .filter(|c| after(c.span.start) && claim.mark_methods.contains(&c.name))
        .find_map(|c| {
            let set = assignments(c)
                .into_iter()
                .find(|(col, v)| claimant(col) && !v.is_nullish());
            let set = set.or_else(|| {
                let (_, field, value) = field_set.filter(|(end, ..)| *end <= c.span.start)?;
                Some((field.to_string(), value))
            })?;
            Some((c, set.0, set.1))
        })?;
    let tests: Vec<&str> = model
        .conditionals_in(site.func)
        .filter(|t| after(t.cond.start) && t.cond.end <= mark.span.start && claimant(&t.text))
        .map(|t| t.text.as_str())
        .collect();
    let call = |t: &str| {
        t.match_indices('(')
            .any(|(i, _)| t[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_'))
    };
    let presence = tests.iter().all(|t| !t.contains(['<', '>']) && !call(t));
    (!tests.is_empty()).then_some((mark, col, value, presence))
}

/// Does a column name (or a condition's text) name a claim (`lockedAt`,
/// `is_locked`, `reserved_by`)? Its words, camel case split, against the
/// mark's stems.
fn mark_column(col: &str, stems: &[String]) -> bool {
    resolve::words(col)
        .iter()
        .any(|w| claimant_column(w, stems))
}

/// The write after `mark` in the function around the transaction that clears
/// `col` (`isLocked: false`, `omit(data, ['lockedAt'])`, `UPDATE .. SET data =
/// data - 'lockedAt'`), and whether it tests who holds the row.
fn clearing<'m>(
    model: &'m FileModel,
    claim: &SqlLock,
    site: Span,
    mark: &Call,
    col: &str,
) -> Option<(&'m Call, bool)> {
    let outer = model
        .functions
        .iter()
        .filter(|f| f.span.contains(site))
        .max_by_key(|f| f.span.end - f.span.start)?;
    model
        .calls
        .iter()
        .filter(|c| outer.span.contains(c.span) && c.span.start >= mark.span.end)
        .find_map(|c| {
            let sql = c.args.iter().find(|a| {
                matches!(a.value.peel().kind, ExprKind::Str(_) | ExprKind::Template)
                    && a.value.text.to_ascii_uppercase().contains("UPDATE")
                    && mentions(&a.value.text, col)
            });
            if let Some(sql) = sql {
                // Who holds it compared: `WHERE id = $1 AND "lockedAt" = $2`.
                let text = sql.value.text.to_ascii_uppercase().replace(['"', '`'], "");
                let condition = text.split_once("WHERE").map_or("", |(_, w)| w);
                return Some((c, tests_column(condition, col)));
            }
            // Not a second mark: the column set to null or false, or dropped.
            let kept = assignments(c)
                .into_iter()
                .any(|(k, v)| k == col && !v.is_nullish());
            let clears = claim.mark_methods.contains(&c.name)
                && !kept
                && c.args
                    .iter()
                    .any(|a| a.name.as_deref() == Some(col) || mentions(&a.value.text, col));
            // `{where: {lockedBy: me}}`, `.filter(pk=k, locked_by=me).update(..)`.
            let checked = c
                .args
                .iter()
                .any(|a| a.name.as_deref() == Some("where") && mentions(&a.value.text, col))
                || c.receiver
                    .as_deref()
                    .is_some_and(|r| mentions(&r.text, col));
            clears.then_some((c, checked))
        })
}
