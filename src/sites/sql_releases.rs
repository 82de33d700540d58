//! The release of a session SQL lock written in SQL text
//! (`pg_advisory_unlock(..)`, `RELEASE_LOCK(..)`), paired with the lock it ends.

use super::{resolve, LockSite, Release, SiteKind, Ttl};
use crate::catalog::{Scope, SqlLock};
use crate::model::{Call, Expr, FileModel};

/// `pg_advisory_unlock(..)` / `RELEASE_LOCK(..)`: releases the session lock
/// taken earlier in the same function; from another function (a lock class's
/// `release()` method), every session lock of the file on the same key —
/// `acquire()` may take it blocking or with a try, and one unlock serves both.
pub(super) fn release(
    model: &FileModel,
    sites: &mut [LockSite],
    releases: &mut Vec<Release>,
    call: &Call,
    key: Option<&Expr>,
    unlock: &SqlLock,
) {
    let session = |s: &LockSite| {
        s.kind == SiteKind::Sql
            && matches!(s.ttl, Ttl::Scoped(Scope::Session))
            && (unlock.releases.is_empty() || unlock.releases.contains(&s.api))
    };
    let earlier: Vec<usize> = (0..sites.len())
        .filter(|&i| session(&sites[i]) && sites[i].span.start < call.span.start)
        .collect();
    let key_text = key.map(|k| resolve::key_text(model, k, call.func));
    let paired: Vec<usize> = match earlier
        .iter()
        .filter(|&&i| sites[i].func == call.func)
        .max_by_key(|&&i| sites[i].span.start)
    {
        Some(&i) => vec![i],
        None => earlier
            .iter()
            .copied()
            .filter(|&i| {
                let site_key = sites[i]
                    .key
                    .as_ref()
                    .map(|k| resolve::key_text(model, k, sites[i].func));
                // `GET_LOCK(%s, %s)` with `(self.name, timeout)`, unlocked with `self.name`.
                match (&site_key, &key_text) {
                    (Some(a), Some(b)) => a.contains(b.as_str()) || b.contains(a.as_str()),
                    _ => true,
                }
            })
            .collect(),
    };
    for &i in &paired {
        sites[i].releases.push(releases.len());
    }
    let paired = paired.first().copied();
    releases.push(Release {
        library: unlock.library.clone(),
        call: call.id,
        span: call.span,
        command: "unlock".into(),
        key: None,
        key_text: String::new(),
        owner_checked: true,
        site: paired,
        lock_evidence: "SQL unlock function".into(),
        func: call.func,
        script_name: None,
        racy_get: None,
    });
}
