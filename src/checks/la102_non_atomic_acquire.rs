use super::declare_rule;
use crate::checks::Finding;
use crate::sites::FileAnalysis;

declare_rule! {
    /// ## What it flags
    /// `SETNX` (or `SET ... NX` without an expiry) followed by a separate
    /// `EXPIRE`/`PEXPIRE` on the same key.
    ///
    /// ## Why it breaks
    /// The two commands are two round trips. A process that crashes, is
    /// killed by a deploy, or loses its connection between them leaves a lock
    /// key with no TTL: it never expires, and the job it guards stops running
    /// everywhere until someone deletes the key by hand.
    ///
    /// ## Example
    /// ```python
    /// if r.setnx("lock:nightly-billing", token):
    ///     r.expire("lock:nightly-billing", 300)
    /// ```
    ///
    /// ## Use instead
    /// ```python
    /// if r.set("lock:nightly-billing", token, nx=True, ex=300):
    ///     ...
    /// ```
    ///
    /// ## Not flagged
    /// `SETNX` and `EXPIRE` inside one Lua script (a script runs atomically);
    /// an `EXPIRE` on a different key.
    RULE {
        code: "LA102",
        name: "non-atomic-acquire",
        severity: Error,
        summary: "SETNX (or SET NX without TTL) followed by a separate EXPIRE",
        label: "acquired here, without an expiry",
        help: "acquire and set the expiry in one command: SET key owner NX PX <ms>",
        check: check,
    }
}

fn check(fa: &FileAnalysis, out: &mut Vec<Finding>) {
    for site in &fa.sites {
        // A cache entry or counter written if absent is no lock.
        if crate::sites::classify::written_value(fa, site).is_some() {
            continue;
        }
        // A wrapper's call: the acquisition is checked once, inside the wrapper.
        if site.via.is_some() {
            continue;
        }
        let Some(expire) = site.separate_expire else {
            continue;
        };
        let key = site.key_display();
        let f = Finding::new(
            &RULE,
            site.span,
            format!("lock {key} gets its expiry in a separate command after {}", site.command),
        )
        .site(site)
        .label(expire, "expiry set here, in a second round trip: a crash before it leaves a lock that never expires");
        out.push(f);
    }
}
