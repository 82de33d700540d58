//! Model + catalog → lock sites and releases.
//!
//! Input: a file's [`FileModel`]. Output: a [`FileAnalysis`] with every lock
//! acquisition ([`LockSite`]: key, owner, TTL, the separate EXPIRE if any)
//! and every delete of a lock key ([`Release`]: owner-checked or not, and the
//! acquisition it belongs to). Checks read only these facts.

pub mod branches;
mod built_sql;
mod check_then_set;
mod claim_release;
pub mod classify;
pub mod command;
pub mod consts;
pub mod duration;
mod effect_calls;
pub mod effects;
mod grant;
mod handed_sql;
mod handles;
pub mod library;
pub mod lifecycle;
mod lock_durations;
pub mod lua;
mod marked_claim;
pub mod near_miss;
mod orm_claim;
pub mod pools;
pub mod receiver;
pub mod resolve;
mod retry_loop;
mod script;
pub mod section;
mod site;
mod slots;
pub mod sql;
mod sql_builders;
mod sql_claims;
mod sql_releases;
mod sql_text;
pub mod swallowed;
mod unique_claim;
mod words;
pub mod wrapper;
pub mod writers;

pub use site::{
    describe_key, Class, FileAnalysis, LockObject, LockSite, ObjectMethods, Release, SiteKind, Ttl,
    Wait,
};

use std::collections::{HashMap, HashSet};
use std::path::Path;

use crate::catalog::raw::DurationUnit;
use crate::catalog::{Catalog, CommandRole};
use crate::lang::profile::profile;
use crate::model::{Expr, ExprKind, FileModel, FuncId, Language, Span, Usage};
use command::Command;

/// The name other files import `path` by: its stem, or the folder's name
/// for a package's own file (`locks/__init__.py`, `locks/mod.rs`,
/// `locks/index.js`) and for Go, whose callers name the package. Wrappers and
/// constants are both found in other files by this name.
pub fn module_name(path: &Path, language: Language) -> String {
    let name = |p: Option<&std::ffi::OsStr>| p.map(|s| s.to_string_lossy().into_owned());
    let dir = || name(path.parent().and_then(Path::file_name)).unwrap_or_default();
    match name(path.file_stem()).unwrap_or_default() {
        _ if profile(language).module_is_folder => dir(),
        s if matches!(s.as_str(), "__init__" | "mod" | "index") => dir(),
        s => s,
    }
}

fn role(catalog: &Catalog, cmd: &Command) -> Option<CommandRole> {
    catalog.command(&cmd.name).map(|s| s.role)
}

fn same_script(a: &Command, b: &Command) -> bool {
    matches!((&a.script, &b.script), (Some(x), Some(y)) if x.script_span == y.script_span && a.call == b.call)
}

/// Finds the lock sites and releases of one file.
/// `path` and `wrappers` come from the first pass over the tree (see
/// [`wrapper`]); `wrappers` is empty in that first pass.
pub fn analyze<'m>(
    model: &'m FileModel,
    text: &'m str,
    catalog: &'m Catalog,
    path: &std::path::Path,
    wrappers: &[wrapper::Wrapper],
    classify: &classify::UserClasses,
    versions: &crate::manifest::Versions,
) -> FileAnalysis<'m> {
    // One map of method chains for the whole file's analysis.
    let next = command::chain_successors(model);
    let cmds = command::commands(model, catalog, &next);
    let func_of = |c: &Command| model.call(c.call).func;
    let key_of = |c: &Command| -> (Option<Expr>, String) {
        let key = c.keys.first().cloned();
        let text = key
            .as_ref()
            .map(|k| resolve::key_text(model, k, func_of(c)))
            .unwrap_or_default();
        (key, text)
    };
    // Each command's role and key once, and the expiries and deletes by key:
    // every lookup below is then a map probe, not a pass over the file.
    let roles: Vec<Option<CommandRole>> = cmds.iter().map(|c| role(catalog, c)).collect();
    let keys: Vec<String> = cmds.iter().map(|c| key_of(c).1).collect();
    let mut expires: HashMap<(Option<FuncId>, &str), Vec<usize>> = HashMap::new();
    let mut deleted: HashSet<&str> = HashSet::new();
    for (i, c) in cmds.iter().enumerate() {
        match roles[i] {
            Some(CommandRole::Expire) => expires.entry((func_of(c), &keys[i])).or_default().push(i),
            Some(CommandRole::Release) => {
                deleted.insert(&keys[i]);
            }
            _ => {}
        }
    }
    let got: std::cell::OnceCell<HashSet<String>> = std::cell::OnceCell::new();
    let watches = std::cell::OnceCell::new();
    let mut sites = Vec::new();
    let discarded =
        |c: &Command| model.call(command::chain_end(&next, c.call)).usage == Usage::Discarded;
    for (ci, cmd) in cmds.iter().enumerate() {
        if roles[ci] != Some(CommandRole::Acquire) {
            continue;
        }
        let Some(spec) = catalog.command(&cmd.name) else {
            continue;
        };
        if forwards(model, cmd) {
            continue;
        }
        let (key, key_text) = key_of(cmd);
        let mut evidence = cmd.evidence.clone();
        // Contention aborts a WATCHed transaction at EXEC (redis-py `WatchError`,
        // go-redis `TxFailedErr`): the SET's own reply decides nothing.
        let mut watched = false;
        if spec
            .acquire_when
            .as_deref()
            .is_some_and(|f| !cmd.has_flag(f))
        {
            // `WATCH k`, `GET k`, then `MULTI` / `SET k`: the transaction aborts when
            // another client set the key first, a check-and-set. A lock when the key
            // names one (the same shape updates counters and balances too).
            let written = key.as_ref().map_or("", |k| k.text.as_str());
            let lock_key = lock_words(catalog, &[written, &key_text]).is_some();
            let watched_at = watches
                .get_or_init(|| watched_keys(model, catalog))
                .get(&(func_of(cmd), key_text.clone()))
                .is_some_and(|&at| at < cmd.span.start);
            if key_text.is_empty() || !lock_key || !watched_at {
                continue;
            }
            evidence =
                "the key is WATCHed before this SET: a check-and-set in a transaction".into();
            watched = true;
        }
        let given = spec
            .expiry
            .iter()
            .find_map(|f| cmd.flags.get(f).map(|v| Ttl::Given(v.clone())));
        let mut ttl = given.unwrap_or(Ttl::Absent);
        let mut separate_expire = None;
        if matches!(ttl, Ttl::Absent) {
            // An EXPIRE on the same key afterwards: atomic inside one script, otherwise not.
            let later = expires
                .get(&(func_of(cmd), key_text.as_str()))
                .and_then(|found| {
                    found
                        .iter()
                        .map(|&e| &cmds[e])
                        .find(|e| e.span.start >= cmd.span.start)
                });
            match later {
                Some(e) if same_script(e, cmd) => ttl = Ttl::Given(e.ttl.clone()),
                Some(e) => separate_expire = Some(e.span),
                None => {}
            }
        }
        // `SET watermark now NX` whose reply nobody reads, read back with `GET`
        // elsewhere in the file, with no separate expiry, no delete and no lock
        // word in the key: a default value set once (get-or-create, expiring
        // or not), not a lock.
        let released = || deleted.contains(key_text.as_str());
        // Read back on whatever client holds it (`this.redis.get(KEY)`).
        let read_back = || {
            got.get_or_init(|| {
                model
                    .calls
                    .iter()
                    .filter(|c| c.name.eq_ignore_ascii_case("get"))
                    .filter_map(|c| Some(resolve::key_text(model, c.positional(0)?, c.func)))
                    .collect()
            })
            .contains(&key_text)
        };
        let lock_key = || {
            let written = key.as_ref().map_or("", |k| k.text.as_str());
            lock_words(catalog, &[written, &key_text]).is_some()
        };
        // `add(group_key, {})`, `SET k [id] NX`: a put-if-absent of a list or
        // map literal creates a record; a lock's value names its holder.
        let record = cmd
            .value
            .as_ref()
            .is_some_and(|v| matches!(v.peel().kind, ExprKind::List(_) | ExprKind::Map(_)));
        if record && !lock_key() {
            continue;
        }
        if separate_expire.is_none()
            && cmd.script.is_none()
            && !key_text.is_empty()
            && discarded(cmd)
            && read_back()
            && !released()
            && !lock_key()
        {
            continue;
        }
        let api = &catalog.apis[cmd.api];
        let lib = catalog.library_of(api);
        let ttl_ms = match &ttl {
            Ttl::Given(Some(e)) => {
                let ms_flags = ["PX", "PEXPIRE"];
                let unit = if cmd.flags.keys().any(|f| ms_flags.contains(&f.as_str())) {
                    DurationUnit::Ms
                } else {
                    DurationUnit::S
                };
                duration::before_time_unit(model, model.call(cmd.call), e)
                    .or_else(|| duration::to_ms(model, e, Some(unit), func_of(cmd)))
            }
            _ => None,
        };
        sites.push(LockSite {
            library: lib.name.clone(),
            backend: lib.backend.clone(),
            api: api.id.clone(),
            command: cmd.name.clone(),
            key,
            key_text,
            owner: cmd.value.clone(),
            ttl,
            ttl_ms,
            separate_expire,
            try_acquire: !watched,
            contention_error: api.contention_error || watched,
            evidence: vec![evidence],
            ..LockSite::base(cmd.call, cmd.span, func_of(cmd), SiteKind::Command)
        });
    }
    let mut releases = Vec::new();
    let mut objects = Vec::new();
    library::analyze(
        model,
        catalog,
        &next,
        versions,
        (&mut sites, &mut releases, &mut objects),
    );
    handles::analyze(model, catalog, versions, (&mut sites, &mut releases));
    sql::analyze(model, catalog, &next, &mut sites, &mut releases);
    sql_builders::analyze(model, text, catalog, &sites, &mut objects);
    orm_claim::analyze(model, catalog, &next, &mut sites);
    unique_claim::analyze(model, catalog, &mut sites, &mut releases);
    marked_claim::analyze(model, catalog, &mut sites, &mut releases);
    check_then_set::analyze(model, catalog, &mut sites, &mut releases);
    // The sites by key, in order: a release pairs with the first that fits.
    let mut by_key: HashMap<String, Vec<usize>> = HashMap::new();
    // And by the same-file helper that builds their key, for a release whose
    // arguments are spelled differently (`_lock_id(q, ds_id)` vs `_lock_id(q, ds.id)`).
    let mut by_helper: HashMap<FuncId, usize> = HashMap::new();
    for (i, s) in sites.iter().enumerate() {
        by_key.entry(s.key_text.clone()).or_default().push(i);
        if let Some(h) = s
            .key
            .as_ref()
            .and_then(|k| resolve::key_family(model, k, s.func))
        {
            by_helper.entry(h.id).or_insert(i);
        }
    }
    // Deletes a shape above already took as its release (a check-then-set's).
    let taken: HashSet<_> = releases.iter().map(|r| r.call).collect();
    for (ci, cmd) in cmds.iter().enumerate() {
        if roles[ci] != Some(CommandRole::Release) || taken.contains(&cmd.call) {
            continue;
        }
        let Some(spec) = catalog.command(&cmd.name) else {
            continue;
        };
        let owner_checked = spec
            .owner_checked_when
            .iter()
            .any(|f| f == "*" || cmd.has_flag(f))
            || cmd.script.as_ref().is_some_and(|s| s.guarded);
        let script_name = cmd.script.as_ref().and_then(|s| s.source_name.clone());
        for key in &cmd.keys {
            let resolved = resolve::resolve(model, key, func_of(cmd));
            let key_text = resolved.text.clone();
            // An unbound name (a parameter) only means the same key within one
            // function; an object's field (Ruby `@key`, `self.name`) is the
            // object's in all.
            let field = |n: &str| {
                n.starts_with('@')
                    || (n.split_once('.'))
                        .is_some_and(|(o, _)| resolve::is_self(model, func_of(cmd), o))
            };
            let local_only = resolved.as_name().is_some_and(|n| !field(n));
            // The acquisition of the release's own function first: two helpers
            // may build the same key text from their own parameter.
            let paired = by_key
                .get(&key_text)
                .filter(|_| !key_text.is_empty())
                .and_then(|found| {
                    let own = found
                        .iter()
                        .copied()
                        .find(|&i| sites[i].func == func_of(cmd));
                    // Then one of the same class: `self.name` is each object's own.
                    let same_class = || {
                        let mine = writers::owner_of(model, func_of(cmd))?;
                        found
                            .iter()
                            .copied()
                            .find(|&i| writers::owner_of(model, sites[i].func) == Some(mine))
                    };
                    own.or_else(same_class)
                        .or_else(|| found.first().copied().filter(|_| !local_only))
                })
                .or_else(|| {
                    let helper = resolve::key_family(model, key, func_of(cmd))?;
                    by_helper.get(&helper.id).copied()
                })
                .or_else(|| {
                    let param = resolved.as_name().filter(|_| local_only)?;
                    let same_key = by_key.get(&key_text)?.iter().map(|&i| (i, sites[i].func));
                    resolve::sibling_of(model, func_of(cmd), param, same_key)
                });
            let lock_evidence = match paired {
                Some(i) => Some(format!("same key as the {} acquisition", sites[i].command)),
                None => lock_words(
                    catalog,
                    &[&key.text, &key_text, script_name.as_deref().unwrap_or("")],
                )
                .map(|w| format!("the key mentions \"{w}\"")),
            };
            let Some(lock_evidence) = lock_evidence else {
                continue;
            };
            let index = releases.len();
            if let Some(i) = paired {
                sites[i].releases.push(index);
            }
            let api = &catalog.apis[cmd.api];
            releases.push(Release {
                library: catalog.library_of(api).name.clone(),
                call: cmd.call,
                span: cmd.span,
                command: cmd.name.clone(),
                key: Some(key.clone()),
                key_text,
                owner_checked,
                site: paired,
                lock_evidence,
                func: func_of(cmd),
                script_name: script_name.clone(),
                racy_get: None,
            });
        }
    }
    let wrappers = (wrappers, catalog);
    wrapper::sites_for_calls(model, (path, text), wrappers, &mut sites, &mut objects);
    retry_loop::mark(model, catalog, &mut sites);
    lifecycle::complete(model, &next, catalog, &cmds, &mut sites, &mut releases);
    let mut fa = FileAnalysis {
        model,
        catalog,
        text,
        sites,
        releases,
        objects,
    };
    classify_all(&mut fa, 0, classify);
    fa
}

/// An adapter's, proxy's or fake's method that hands its own parameters to
/// the client's method of the same name (`def setnx(self, key, value): return
/// self.client.setnx(key, value)`, Go `func (c *Cache) SetNX(ctx, k, v, ttl)
/// { return c.rdb.SetNX(ctx, k, v, ttl) }`): no lock of its own; its callers'
/// calls are the locks.
fn forwards(model: &FileModel, cmd: &Command) -> bool {
    let call = model.call(cmd.call);
    let Some(func) = call.func.map(|f| &model.functions[f]) else {
        return false;
    };
    let squeeze = |s: &str| s.replace('_', "").to_ascii_lowercase();
    let own = func.name.rsplit(['.', ':']).next().unwrap_or(&func.name);
    let key_is_param = cmd
        .keys
        .first()
        .and_then(|k| k.peel().as_name())
        .is_some_and(|k| func.params.iter().any(|p| p.name == k));
    key_is_param && squeeze(own) == squeeze(&call.name)
}

/// Where each (function, key) is first WATCHed (`pipe.watch(k)`, `rdb.Watch(ctx, fn, k)`
/// takes its keys after the callback: any argument that resolves to a key counts).
fn watched_keys(model: &FileModel, catalog: &Catalog) -> HashMap<(Option<FuncId>, String), usize> {
    let mut out: HashMap<(Option<FuncId>, String), usize> = HashMap::new();
    for c in model
        .calls
        .iter()
        .filter(|c| catalog.watch_methods.contains(&c.name))
    {
        for a in &c.args {
            let text = resolve::key_text(model, &a.value, c.func);
            let at = out.entry((c.func, text)).or_insert(c.span.start);
            *at = (*at).min(c.span.start);
        }
    }
    out
}

/// Classifies the sites from `first` on (see [`classify`]).
fn classify_all(fa: &mut FileAnalysis, first: usize, user: &classify::UserClasses) {
    let (rules, path) = (user.rules, user.path);
    let index = crate::lines::LineIndex::new(fa.text);
    let by_config = |site: &LockSite, fa: &FileAnalysis| {
        let function = site.func.map(|f| fa.model.functions[f].name.as_str());
        let key = site.key.as_ref().map_or("", |k| k.peel().text.as_str());
        let resolved = site.key_text.as_str();
        rules
            .iter()
            .find(|r| r.matches(key, path, function) || r.matches(resolved, path, function))
            .map(|r| (r.class, r.why.clone()))
    };
    let writers = writers::Writers::new(user.writers);
    let decided: Vec<_> = fa.sites[first..]
        .iter()
        .map(|s| classify::classify(fa, &index, s, Some(&by_config), (path, &writers)))
        .collect();
    let classes: Vec<Class> = decided.iter().map(|d| d.0).collect();
    let shared = classify::by_same_lock(fa, first, &classes, |s| index.line_col(s.span.start).0);
    for ((site, (mut class, mut evidence, effects)), shared) in
        fa.sites[first..].iter_mut().zip(decided).zip(shared)
    {
        if let Some((same, why)) = shared {
            (class, evidence) = (same, vec![why]);
        }
        let line = index.line_col(site.span.start).0;
        site.classed_by_callers =
            class == Class::Unclassified && user.by_callers.iter().any(|(l, ..)| *l == line);
        site.class = user.settle(class, line, &mut evidence);
        site.class_evidence = evidence;
        site.effects = effects;
    }
    marked_writes(fa, first);
}

/// A de-duplication marker set under a lock before a write
/// (`SET payout:{id}:sent 1 NX EX 86400`, pay only if it was set) is the
/// write's idempotency key: a second holder finds it and writes nothing.
fn marked_writes(fa: &mut FileAnalysis, first: usize) {
    let mut markers: HashMap<Option<FuncId>, Vec<Span>> = HashMap::new();
    for m in fa.sites.iter().filter(|m| m.class == Class::Marker) {
        if classify::written_value(fa, m).is_none() {
            markers.entry(m.func).or_default().push(m.span);
        }
    }
    if markers.is_empty() {
        return;
    }
    for spans in markers.values_mut() {
        spans.sort_by_key(|s| s.start);
    }
    for site in fa.sites[first..].iter_mut() {
        let Some(spans) = markers.get(&site.func) else {
            continue;
        };
        // The first marker inside the section; it ends before a write or none does.
        let at = spans.partition_point(|s| s.start < site.section.start);
        let Some(marker) = spans.get(at).filter(|s| site.section.contains(**s)) else {
            continue;
        };
        for e in site.effects.iter_mut() {
            if e.write && e.protection.is_none() && marker.end <= e.span.start {
                e.protection = Some(effects::Protection::IdempotencyKey);
            }
        }
    }
}

/// Adds the sites of calls to `wrappers` that the file itself defines (found
/// by [`wrapper::summarize`] after the first analysis), without analysing again.
pub fn add_wrapper_calls(
    fa: &mut FileAnalysis,
    path: &std::path::Path,
    wrappers: &[wrapper::Wrapper],
    classify: &classify::UserClasses,
) {
    let first = fa.sites.len();
    wrapper::sites_for_calls(
        fa.model,
        (path, fa.text),
        (wrappers, fa.catalog),
        &mut fa.sites,
        &mut fa.objects,
    );
    retry_loop::mark(fa.model, fa.catalog, &mut fa.sites[first..]);
    let next = command::chain_successors(fa.model);
    lifecycle::complete(
        fa.model,
        &next,
        fa.catalog,
        &[],
        &mut fa.sites[first..],
        &mut [],
    );
    classify_all(fa, first, classify);
}

/// The first catalog lock word found in any of `texts`.
pub fn lock_words(catalog: &Catalog, texts: &[&str]) -> Option<String> {
    first_word(&catalog.lock_words, texts)
}

/// The first whole word of `texts` that is in `vocabulary`.
pub fn first_word(vocabulary: &[String], texts: &[&str]) -> Option<String> {
    texts
        .iter()
        .flat_map(|t| resolve::words(t))
        .find(|w| vocabulary.iter().any(|l| l == w))
}
