//! A lock table whose unique index is the lock: `order_mutex = create!(order:)`
//! inside `rescue ActiveRecord::RecordNotUnique`, then `order_mutex&.destroy`
//! in an `ensure`; Django `Lock.objects.create(name=k)` under `except
//! IntegrityError` with `lock.delete()` after the work; Spring Data
//! `repo.save(lock)` under `catch (DataIntegrityViolationException e)`.
//!
//! The insert either adds the one row for its key or fails, so the error
//! decides who proceeds; deleting the same row later is the release. A
//! find-or-create (`create!` rescued, then `find_by`) keeps its row and is no
//! lock: without the delete there is no site.

use super::swallowed::leaves;
use super::{LockSite, Release, SiteKind, Ttl, Wait};
use crate::catalog::{Catalog, Scope};
use crate::model::{mentions, Call, FileModel, Handler};

pub fn analyze(
    model: &FileModel,
    catalog: &Catalog,
    sites: &mut Vec<LockSite>,
    releases: &mut Vec<Release>,
) {
    let Some(claim) = catalog.row_claim(|q| !q.unique_errors.is_empty()) else {
        return;
    };
    // The handlers of a unique index's error, found once: most files have none.
    let caught: Vec<&Handler> = model.caught(&claim.unique_errors).collect();
    if caught.is_empty() {
        return;
    }
    for call in model
        .calls
        .iter()
        .filter(|c| claim.insert_methods.contains(&c.name))
    {
        let Some(handler) = caught.iter().find(|h| h.covers.contains(call.span)) else {
            continue;
        };
        if !leaves(model, call, handler.span) || sites.iter().any(|s| s.span == call.span) {
            continue;
        }
        let held = held_rows(call);
        let Some(delete) = model.calls_in(call.func).find(|d| {
            d.span.start >= call.span.end
                && claim.delete_methods.contains(&d.name)
                && deletes(d, &held)
        }) else {
            continue;
        };
        releases.push(Release {
            library: claim.library.clone(),
            call: delete.id,
            span: delete.span,
            command: delete.name.clone(),
            key: None,
            key_text: String::new(),
            // The claimed row itself, by its identity: a successor's row is another.
            owner_checked: true,
            site: Some(sites.len()),
            lock_evidence: "deletes the row its unique insert claimed".into(),
            func: delete.func,
            script_name: None,
            racy_get: None,
        });
        sites.push(LockSite {
            library: claim.library.clone(),
            backend: claim.backend.clone(),
            api: claim.id.clone(),
            command: "INSERT".into(),
            key: call.args.first().map(|a| a.value.clone()),
            key_text: call.args.first().map(|a| a.value.text.clone()).unwrap_or_default(),
            ttl: Ttl::Scoped(claim.scope.unwrap_or(Scope::Row)),
            wait: Wait::NoWait,
            // Contention raises: the handler or the caller sees it, no result to check.
            try_acquire: false,
            usual: claim.usual.clone(),
            releases: vec![releases.len() - 1],
            evidence: vec![format!(
                "`{}` is a unique insert: the handler of its duplicate error decides who proceeds, `{}` deletes the row again",
                call.name, delete.name
            )],
            ..LockSite::base(call.id, call.span, call.func, SiteKind::Sql)
        });
    }
}

/// The names the claimed row goes by: what the insert's result is bound to
/// (`order_mutex = create!(..)`) and a record it saves (`repo.save(lock)`).
fn held_rows(call: &Call) -> Vec<&str> {
    let mut out = call.usage.bound_names();
    out.extend(call.args.iter().filter_map(|a| a.value.peel().as_name()));
    out
}

/// Does `delete` remove one of `held`: called on it (`order_mutex&.destroy`,
/// `lock.delete()`) or given it (`repo.delete(lock)`, `deleteById(lock.getId())`)?
fn deletes(delete: &Call, held: &[&str]) -> bool {
    let on = delete.receiver.as_deref().and_then(|r| r.peel().as_name());
    held.iter()
        .any(|h| on == Some(*h) || delete.args.iter().any(|a| mentions(&a.value.text, h)))
}
