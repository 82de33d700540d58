use super::declare_rule;
use crate::checks::Finding;
use crate::model::ExprKind;
use crate::sites::{resolve, FileAnalysis, SiteKind};

declare_rule! {
    /// ## What it flags
    /// A lock whose owner value is a constant: `SET lock:x "1" NX PX 30000`,
    /// `set(key, "locked", nx=True, ...)`, `redis.set(key, nil, nx: true, px: ttl)`
    /// (every holder stores the same empty value), a fixed `token=` / `id=` /
    /// `WithValue("worker")` / `identifier` passed to a lock library. For raw
    /// commands it fires when the key is also released in the file (a
    /// dedup marker that is never deleted has no owner to tell apart).
    ///
    /// ## Why it breaks
    /// The owner value is how a release tells *its own* lease from a
    /// successor's. When every holder writes the same value, a compare-and-
    /// delete compares equal for everyone: a holder whose lease expired
    /// deletes the next holder's lock, exactly as a blind `DEL` would. With
    /// a library, a shared constant token also makes the lock re-entrant
    /// across processes: two workers both "acquire" it.
    ///
    /// ## Example
    /// ```python
    /// r.set("lock:invoices", "1", nx=True, px=30_000)
    /// ```
    ///
    /// ## Use instead
    /// ```python
    /// token = secrets.token_hex(16)
    /// r.set("lock:invoices", token, nx=True, px=30_000)
    /// ```
    ///
    /// ## Not flagged
    /// Random or generated tokens (UUIDs, `secrets`, library-generated
    /// owners), values computed at run time, parameters; constant values of
    /// dedup markers that are never released.
    /// De-duplication markers (class `marker`: a `SET NX` key such as
    /// `trace:{id}:seen` that records that something happened, not a lock).
    RULE {
        code: "LA103",
        name: "constant-lock-owner",
        severity: Warning,
        summary: "the value stored as the lock owner is a constant",
        label: "acquired with a constant owner",
        help: "store a random token per acquisition (uuid4, secrets.token_hex) and release by comparing it",
        check: check,
    }
}

fn check(fa: &FileAnalysis, out: &mut Vec<Finding>) {
    for site in fa.locks() {
        // A wrapper's call: the acquisition is checked once, inside the wrapper.
        if site.via.is_some() {
            continue;
        }
        let Some(owner) = &site.owner else { continue };
        let value = resolve::resolve(fa.model, owner, site.func);
        // `nil` / `null` too: stored as the same empty or `null` string by every holder.
        let literal = value.is_literal() || matches!(value.peel().kind, ExprKind::Null);
        if !literal {
            continue;
        }
        // A raw marker that nobody deletes has no successor to confuse.
        let released = !site.releases.is_empty()
            || fa
                .releases
                .iter()
                .any(|r| !r.key_text.is_empty() && r.key_text == site.key_text);
        if site.kind == SiteKind::Command && !released {
            continue;
        }
        let f = Finding::new(
            &RULE,
            site.span,
            format!("lock {} stores the constant owner `{}`: a release cannot tell its lease from a successor's", site.key_display(), value.text),
        )
        .site(site)
        .label(owner.span, "the same value for every holder");
        out.push(f);
    }
}
