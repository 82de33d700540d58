use super::{declare_rule, fix, Fix};
use crate::checks::Finding;
use crate::model::mentions;
use crate::sites::{FileAnalysis, Release};

declare_rule! {
    /// ## What it flags
    /// A lock released without checking that the caller still owns it: the
    /// lock key deleted with `DEL`/`UNLINK` (redis-py `delete`/`unlink`,
    /// redis-rs `del`/`unlink`, `GETDEL`), or by a Lua script that deletes
    /// without first comparing the stored value with the caller's token; a
    /// row claimed in SQL text given back by a `DELETE` from its lock table or
    /// an `UPDATE` clearing its claimant (`SET locked_by = NULL`) that
    /// compares neither the claimant, the version read, nor the expiry.
    ///
    /// ## Why it breaks
    /// A holder that pauses (GC stop, VM migration, a slow query) past its TTL
    /// loses the lock to a successor. When it wakes and deletes the key, it
    /// deletes the *successor's* lock, and a third process acquires while the
    /// second is still working: two holders at once, caused by the release.
    ///
    /// ## Example
    /// ```python
    /// r.set(key, token, nx=True, px=30_000)
    /// try:
    ///     work()
    /// finally:
    ///     r.delete(key)                       # may delete someone else's lock
    /// ```
    ///
    /// ## Use instead
    /// A compare-and-delete script (or `DELEX key IFEQ token` on Redis 8.4+):
    /// ```python
    /// RELEASE = """
    /// if redis.call("get", KEYS[1]) == ARGV[1] then
    ///     return redis.call("del", KEYS[1])
    /// end
    /// return 0
    /// """
    /// r.eval(RELEASE, 1, key, token)
    /// ```
    ///
    /// ## Not flagged
    /// Deletes of keys that are not locks (cache keys, counters): a key counts
    /// as a lock when it is the key of an acquisition in the same file or its
    /// name says so (`lock`, `mutex`, `leader`, `lease`...). Library releases
    /// that check ownership (redis-py `Lock.release()`, Redisson `unlock()`).
    /// A delete that runs only when a condition read the same key first
    /// (`if conn.call("HLEN", k).zero?`: it deletes what it checked; an owner
    /// compare done apart from the delete is LA202's).
    /// A delete in a function named for breaking the lock (`break_()`,
    /// `steal_lock`; not `force_release`, often the normal path's): the
    /// override is meant to ignore the holder.
    /// De-duplication markers (class `marker`: a `SET NX` key such as
    /// `trace:{id}:seen` that records that something happened, not a lock).
    RULE {
        code: "LA201",
        name: "unchecked-release",
        severity: Error,
        summary: "a lock is released without checking that the caller still owns it",
        label: "deletes the lock whoever owns it",
        help: "release with a compare-and-delete script (GET == token, then DEL) or DELEX key IFEQ token",
        check: check,
    }
}

fn check(fa: &FileAnalysis, out: &mut Vec<Finding>) {
    for rel in fa.lock_releases() {
        // A GET-compare-DEL is LA202's, not this rule's.
        if rel.owner_checked
            || rel.racy_get.is_some()
            || breaks_on_purpose(fa, rel)
            || tested_first(fa, rel)
        {
            continue;
        }
        let key = rel.key_display();
        let how = match &rel.script_name {
            Some(name) => format!("by script `{name}`, which does not compare the owner first"),
            None => format!("with {}", rel.command),
        };
        let mut f = Finding::new(
            &RULE,
            rel.span,
            format!("lock {key} is released {how}: it can delete another holder's lock"),
        );
        f = f.evidence(rel.lock_evidence.clone());
        let backend = fa.catalog.library(&rel.library).map(|l| l.backend.as_str());
        if backend.is_some_and(|b| b != "redis") {
            f = f.help("compare the owner in the release itself: a compare-and-set from your own id, a delete conditioned on the version or revision you were granted, or `UPDATE .. SET owner = NULL WHERE id = $1 AND owner = $2`");
        }
        if let Some(site) = rel.site.map(|i| &fa.sites[i]) {
            f = f.site(site).label(site.span, "acquired here");
        }
        out.push(f.fix(compare_and_delete(fa, rel)));
    }
}

/// Does `rel` run only when a condition read the same key first (`if
/// conn.call("HLEN", key.locked).zero? then UNLINK key.locked`): it deletes
/// what it checked, not blindly; whether the check is atomic is LA202's
/// question for an owner compare.
fn tested_first(fa: &FileAnalysis, rel: &Release) -> bool {
    let key = rel.key.as_ref().map_or("", |k| k.text.as_str());
    !key.is_empty()
        && (fa.model.conditionals_in(rel.func)).any(|c| {
            c.stmt.contains(rel.span)
                && !c.cond.contains(rel.span)
                && mentions(&c.text, key)
                // Not the acquisition itself (`if r.set(k, 1, nx=True): .. r.delete(k)`).
                && !fa.sites.iter().any(|s| c.cond.contains(s.span))
        })
}

/// Is `rel` made by a function named for breaking the lock (`break_()`,
/// `steal_lock`): an override of whoever holds it, meant to be unchecked?
fn breaks_on_purpose(fa: &FileAnalysis, rel: &Release) -> bool {
    rel.func.is_some_and(|f| {
        let own = crate::sites::writers::split_name(fa.model, f).0;
        (crate::sites::resolve::words(own).iter()).any(|w| fa.catalog.break_words.contains(w))
    })
}

/// The release rewritten by the library's `owner-checked-release` template.
/// Safe when the key names a lock and the owner value it was taken with can
/// be named again here (a variable or field, acquired in the same function);
/// otherwise the placeholder `token` may be left for the user to replace,
/// and the fix is only offered in the editor.
fn compare_and_delete(fa: &FileAnalysis, rel: &Release) -> Option<Fix> {
    let library = fa.catalog.library(&rel.library)?;
    let template = library.fixes.owner_checked_release.as_deref()?;
    let key = rel.key.as_ref()?;
    let call = fa.model.call(rel.call);
    let receiver = call.receiver.as_deref()?;
    // One key, passed as the call's only argument.
    if rel.script_name.is_some() || call.args.len() != 1 || call.args[0].value.span != key.span {
        return None;
    }
    let owner = rel
        .site
        .map(|i| &fa.sites[i])
        .filter(|s| s.func == rel.func)
        .and_then(|s| s.owner.as_ref())
        .filter(|o| fix::repeatable(o));
    let text = fix::fill(
        template,
        &[
            ("receiver", &receiver.text),
            ("key", &key.text),
            ("owner", owner.map_or(fix::OWNER_PLACEHOLDER, |o| &o.text)),
            ("script", fix::COMPARE_AND_DELETE),
        ],
    );
    let title = match owner {
        Some(o) => format!(
            "Release with compare-and-delete against the owner `{}`",
            o.text
        ),
        None => "Release with compare-and-delete (replace `token` with the owner value)".into(),
    };
    let safe = owner.is_some() && fix::names_a_lock(fa.catalog, key, &rel.key_text);
    Some(Fix::replace(title, call.span, text, safe))
}
