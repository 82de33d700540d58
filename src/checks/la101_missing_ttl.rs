use super::{declare_rule, fix, Fix};
use crate::checks::Finding;
use crate::sites::{FileAnalysis, LockSite, SiteKind, Ttl};

declare_rule! {
    /// ## What it flags
    /// A lock acquired with no expiry, where nothing ever sets one: Redis
    /// `SET key owner NX` without `EX`/`PX`/`EXAT`/`PXAT`, or `SETNX`, with no
    /// later `EXPIRE` on that key (with a separate later `EXPIRE` it is LA102
    /// instead). A row marked claimed under a row lock (`findByPk(id, {lock:
    /// true})`, then `update({lockedAt: now})` when `if (row.lockedAt)` found
    /// it free) whose test reads only that the mark is there, never its age,
    /// never expires either.
    ///
    /// ## Why it breaks
    /// A lock without a TTL is released only by its holder. When the holder
    /// crashes, is OOM-killed or loses its network between acquire and release,
    /// the key stays forever and every later caller waits or skips the work
    /// until someone deletes the key by hand.
    ///
    /// ## Example
    /// ```python
    /// r.set("lock:billing", token, nx=True)            # never expires
    /// ```
    ///
    /// ## Use instead
    /// ```python
    /// r.set("lock:billing", token, nx=True, px=30_000)  # expires after 30 s
    /// ```
    /// In Rust: `redis::cmd("SET").arg(key).arg(token).arg("NX").arg("PX").arg(30_000)`
    /// or `SetOptions::default().conditional_set(ExistenceCheck::NX).with_expiration(SetExpiry::PX(30_000))`.
    ///
    /// ## Not flagged
    /// `SET ... NX` with an expiry option; `SETNX` + `EXPIRE` inside one Lua
    /// script (atomic); session-bound locks (Postgres advisory, etcd sessions,
    /// ZooKeeper ephemeral nodes) and renewed leases.
    RULE {
        code: "LA101",
        name: "missing-ttl",
        severity: Error,
        summary: "a lock is acquired with no expiry and nothing ever sets one",
        label: "acquired here, with no expiry",
        help: "set the expiry in the acquisition itself (SET key owner NX PX <ms>)",
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
        let expires = !matches!(site.ttl, Ttl::Absent) && !site.never_stale;
        if expires || site.separate_expire.is_some() {
            continue;
        }
        let key = site.key_display();
        let mut f = Finding::new(
            &RULE,
            site.span,
            format!(
                "lock {key} is acquired with {} but never expires",
                site.command
            ),
        )
        .site(site);
        if let Some(help) = expiry_help(&site.backend) {
            f = f.help(help);
        }
        if let Some(k) = &site.key {
            f = f.label(k.span, "lock key: stays forever if the holder dies");
        }
        out.push(f.fix(add_expiry(fa, site)));
    }
}

/// How a lock of another store than Redis gets an expiry.
fn expiry_help(backend: &str) -> Option<&'static str> {
    Some(match backend {
        "zookeeper" => "hold the lock in an ephemeral znode, which ZooKeeper deletes when the holder's session ends (Curator `InterProcessMutex`)",
        "etcd" => "attach the lock's key to a lease the holder keeps alive (etcd `concurrency.NewSession` / `Lease.Grant`)",
        "postgres" | "mysql" | "database" => "write an expiry with the claim (`locked_until = now() + interval '5 minutes'`) and let a claimant take over a row whose expiry has passed",
        _ => return None,
    })
}

/// The acquisition rebuilt by the library's `expiry` template: only a plain
/// `SET key value NX` / `SETNX key value` whose every argument the template
/// writes again (the key, the value, the NX flag). Safe when the key names a
/// lock: a counter or marker set with NX must not start to expire unasked.
fn add_expiry(fa: &FileAnalysis, site: &LockSite) -> Option<Fix> {
    let template = fa.catalog.library(&site.library)?.fixes.expiry.as_deref()?;
    let (key, value) = (site.key.as_ref()?, site.owner.as_ref()?);
    let call = fa.model.call(site.call);
    let receiver = call.receiver.as_deref()?;
    let nx = |t: &str| t.eq_ignore_ascii_case("nx") || t.to_ascii_uppercase().contains("NX");
    let rewritten = call.args.iter().all(|a| {
        a.value.span == key.span
            || a.value.span == value.span
            || a.name.as_deref().is_some_and(nx)
            || nx(&a.value.text)
    });
    if site.kind != SiteKind::Command || !rewritten {
        return None;
    }
    let text = fix::fill(
        template,
        &[
            ("receiver", &receiver.text),
            ("key", &key.text),
            ("value", &value.text),
        ],
    );
    let safe = fix::names_a_lock(fa.catalog, key, &site.key_text);
    Some(Fix::replace(
        "Add a 30 s expiry to the acquisition (adjust it to the work's duration)",
        call.span,
        text,
        safe,
    ))
}
