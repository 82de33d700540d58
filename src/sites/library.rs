//! Library locks (redis-py `Lock`, Redisson `RLock`, redsync, etcd, ShedLock...)
//! → lock sites and releases.
//!
//! A catalog `lock:` API either acquires when called (`acquires: now`:
//! `Obtain`, `redlock.acquire`, `@SchedulerLock`) or returns a lock object
//! (`acquires: on-use`) that is acquired by an `acquire-methods` call on it
//! (`lock.acquire()`, `m.Lock(ctx)`, `rlock.tryLock(1, 10, SECONDS)`) or by a
//! guard (`with r.lock(..)`, a Ruby block). The TTL and wait bound come from
//! the acquire call, then the factory call, then the catalog default.

use std::collections::HashMap;

use super::command::{chain_end, match_api, match_subclass};
use super::grant;
use super::lock_durations::{as_of, null_wait_param, ttl_of, wait_of};
use super::slots::slot_values;
use super::{resolve, LockObject, LockSite, ObjectMethods, Release, SiteKind, Wait};
use crate::catalog::{AcquireMethod, Acquires, ApiKind, Catalog, Library, LockSpec};
use crate::lang::profile::profile;
use crate::manifest::{Used, Versions};
use crate::model::{mentions, Call, CallId, FileModel, FuncId, Span, Usage};

/// Is `recv` the field `var` (`this.mutex`) named without `this.` in a
/// language that allows it, and not shadowed by a local of `c`'s function?
fn implicit_field(model: &FileModel, c: &Call, var: &str, recv: &str) -> bool {
    let language = profile(model.language);
    language.implicit_fields
        && language
            .self_names
            .iter()
            .any(|s| var.strip_prefix(s).and_then(|v| v.strip_prefix('.')) == Some(recv))
        && model
            .lookup(recv, c.func, c.span.start)
            .is_none_or(|a| a.func.is_none())
        && model.function_param(c.func, recv).is_none()
}

/// Is `name` a field declared in a class or struct of `model` (`private final
/// InterProcessMutex mutex;`, `mutex *redsync.Mutex`), and no function's local?
fn declared_field(model: &FileModel, name: &str) -> bool {
    let mut assigns = model.assigns.iter().filter(|a| a.target == name);
    let declared = assigns.clone().any(|a| a.func.is_none() && a.ty.is_some());
    declared && !assigns.any(|a| a.func.is_some() && a.ty.is_some() && a.target == name)
}

/// Where a lock object or handle lives, to find the calls made on it.
pub(super) struct Binding {
    call: CallId,
    var: Option<String>,
    /// `var` is a field declared in a class or struct: used in any method.
    field: bool,
}

impl Binding {
    /// The object `call` is made on (`l.mutex` of `l.mutex.LockContext(ctx)`).
    pub(super) fn on(model: &FileModel, call: &Call) -> Self {
        let var = call.receiver.as_deref().and_then(|r| r.as_name());
        Self::named(model, call, var.map(str::to_string))
    }

    pub(super) fn of(model: &FileModel, call: &Call) -> Self {
        let var = match &call.usage {
            Usage::Assigned(_) => call.usage.bound().map(str::to_string),
            _ => None,
        };
        Self::named(model, call, var)
    }

    fn named(model: &FileModel, call: &Call, var: Option<String>) -> Self {
        let field = var.as_deref().is_some_and(|v| declared_field(model, v));
        Binding {
            call: call.id,
            var,
            field,
        }
    }

    /// Is `c` a call on this object (`obj.acquire()`, `r.lock(..).acquire()`)?
    pub(super) fn is_receiver_of(&self, model: &FileModel, c: &Call) -> bool {
        if c.receiver_call() == Some(self.call) {
            return true;
        }
        let Some(var) = &self.var else { return false };
        let Some(recv) = c.receiver.as_deref().and_then(|r| r.as_name()) else {
            return false;
        };
        (recv == var || implicit_field(model, c, var, recv)) && self.visible_from(model, c)
    }

    /// Is the object passed to `c` (`redlock.unlock(lock)`, `rl.unlock(&lock)`)?
    fn is_argument_of(&self, model: &FileModel, c: &Call) -> bool {
        let Some(var) = &self.var else { return false };
        c.args
            .iter()
            .any(|a| a.value.as_name() == Some(var.as_str()))
            && self.visible_from(model, c)
    }

    /// Locals only within their function; attributes (`self.lock`, `@lock`)
    /// and declared fields anywhere.
    fn visible_from(&self, model: &FileModel, c: &Call) -> bool {
        let var = self.var.as_deref().unwrap_or("");
        let attribute = var.contains('.') || var.starts_with('@');
        attribute || self.field || model.call(self.call).func == c.func
    }
}

pub(super) struct Ctx<'a> {
    pub contention_error: bool,
    pub model: &'a FileModel,
    pub lib: &'a Library,
    pub api_id: &'a str,
    pub spec: &'a LockSpec,
    pub evidence: String,
    /// The library's version the project's manifests give, if any.
    pub used: Option<&'a Used>,
}

impl Ctx<'_> {
    /// A release call `c` of this library, of the lock made by `factory` (its key), for `site`.
    pub(super) fn release(
        &self,
        c: &Call,
        factory: Option<&Call>,
        owner_checked: bool,
        site: Option<usize>,
    ) -> Release {
        let key = factory.and_then(|f| {
            let slot = self.spec.key.as_ref()?;
            slot_values(self.model, f, slot).into_iter().next()
        });
        let key_text = match (&key, factory) {
            (Some(k), Some(f)) => resolve::key_text(self.model, k, f.func),
            _ => String::new(),
        };
        Release {
            library: self.lib.name.clone(),
            call: c.id,
            span: c.span,
            command: c.name.clone(),
            key,
            key_text,
            owner_checked,
            site,
            lock_evidence: format!("a release method of {}", self.lib.name),
            func: c.func,
            script_name: None,
            racy_get: None,
        }
    }

    pub(super) fn site(
        &self,
        factory: &Call,
        acquire: &Call,
        method: Option<&AcquireMethod>,
        span: Span,
    ) -> LockSite {
        let handle = factory
            .usage
            .bound()
            .or(acquire.usage.bound())
            .map(str::to_string);
        // Named by the acquisition (`lock.acquire(key)`) or by the factory.
        let by_method = method.and_then(|m| m.key.as_ref()).map(|s| (acquire, s));
        let (keyed, slot) = match by_method {
            Some(found) => (found.0, Some(found.1)),
            None => (factory, self.spec.key.as_ref()),
        };
        let key = slot.and_then(|s| slot_values(self.model, keyed, s).into_iter().next());
        let key_text = key
            .as_ref()
            .map(|k| resolve::key_text(self.model, k, keyed.func))
            .unwrap_or_default();
        let owner = self.spec.owner.as_ref().and_then(|s| {
            slot_values(self.model, acquire, s)
                .into_iter()
                .next()
                .or_else(|| slot_values(self.model, factory, s).into_iter().next())
        });
        let older = self.used.and_then(|u| as_of(self.spec, u));
        let (spec, method) = match &older {
            Some((spec, _)) => {
                let same = |m: &&AcquireMethod| {
                    method.is_some_and(|o| o.method == m.method && o.arity == m.arity)
                };
                (spec, spec.acquire_methods.iter().find(same))
            }
            None => (self.spec, method),
        };
        let wait = wait_of(self.model, spec, factory, acquire, method);
        let (ttl, ttl_ms) = ttl_of(self.model, spec, factory, acquire, method);
        LockSite {
            library: self.lib.name.clone(),
            backend: self.lib.backend.clone(),
            api: self.api_id.to_string(),
            command: acquire.name.clone(),
            key,
            key_text,
            owner,
            ttl,
            ttl_ms,
            // redis-py `acquire()` returns False only when it may give up
            // (`blocking=False`, a `blocking_timeout`, or a bounded default
            // such as python-etcd3's 10 s).
            try_acquire: self.spec.try_acquire
                || method.is_some_and(|m| m.try_acquire)
                || (method.is_some_and(|m| m.try_when_bounded)
                    && matches!(wait, Wait::NoWait | Wait::Given(_) | Wait::Default(_))),
            // Only where no bound was given: the slots are read again.
            wait_param: (!matches!(wait, Wait::Given(_)))
                .then(|| null_wait_param(self.model, spec, factory, acquire, method))
                .flatten(),
            wait,
            redlock: self.spec.redlock,
            fencing: self.spec.fencing.clone(),
            evidence: std::iter::once(self.evidence.clone())
                .chain(older.map(|(_, why)| format!("{} {why}", self.lib.package)))
                .collect(),
            guarded: self.spec.releases_on_drop,
            contention_error: self.contention_error,
            handle,
            expects_release: !self.spec.release_methods.is_empty(),
            usual: self.spec.usual.clone(),
            held_over: held_over(self.model, self.spec, acquire),
            ..LockSite::base(acquire.id, span, acquire.func, SiteKind::Library)
        }
    }
}

/// The function a lock is held around when it is taken outside it: the
/// function a decorator making it decorates (`@advisory_lock("k")` above
/// `def create`), or for a declaration in a class body the first method
/// after it that `spec` says the lock is held around.
fn held_over(model: &FileModel, spec: &LockSpec, acquire: &Call) -> Option<FuncId> {
    if let Some(f) = model.decorated_by(acquire.span) {
        return Some(f);
    }
    if acquire.func.is_some() || spec.held_around.is_empty() {
        return None;
    }
    model
        .functions
        .iter()
        .filter(|f| f.span.start >= acquire.span.end)
        .filter(|f| {
            let own = super::writers::split_name(model, f.id).0;
            spec.held_around.iter().any(|m| m == own)
        })
        .min_by_key(|f| f.span.start)
        .map(|f| f.id)
}

/// How callers take and give back a lock object of `spec`.
fn object_methods(spec: &LockSpec) -> ObjectMethods {
    let names = |pick: fn(&AcquireMethod) -> bool| {
        spec.acquire_methods
            .iter()
            .filter(|m| pick(m))
            .map(|m| m.method.clone())
            .collect()
    };
    ObjectMethods {
        acquire: names(|_| true),
        trying: names(|m| m.try_acquire || m.try_when_bounded),
        release: spec.release_methods.clone(),
        statement: false,
    }
}

pub(super) fn acquire_method<'s>(spec: &'s LockSpec, c: &Call) -> Option<&'s AcquireMethod> {
    spec.acquire_methods.iter().find(|m| {
        m.method == c.name
            && m.arity.is_none_or(|a| a == c.args.len())
            && m.expects_free
                .is_none_or(|pos| c.positional(pos).is_some_and(crate::model::empty_value))
    })
}

/// Where a query built with a row-lock method (`.with_for_update()`,
/// `.for_update()`) takes its lock: the call that runs it. The chain is
/// followed to its end; a chain passed to a call (`session.execute(q..)`) runs
/// there, a chain bound to a name runs at the first later call in the same
/// function that takes the name. Otherwise the lock is where the method is
/// written (`Account.objects.select_for_update().get(..)` runs in its chain).
fn query_run(model: &FileModel, next: &HashMap<CallId, CallId>, call: &Call) -> Span {
    let end = model.call(chain_end(next, call.id));
    // The method name ends its callee (`a.b().with_for_update`): start there.
    let written = call.written_span();
    // The chain runs itself (`.get()`, `.first()`, `.load(conn)`): what a name
    // is bound to is then the row, not the query.
    const RUNS: &[&str] = &[
        "get",
        "first",
        "one",
        "one_or_none",
        "all",
        "load",
        "get_result",
        "get_results",
        "scalar",
        "scalars",
        "scalar_one",
        "execute",
        "fetch",
        "fetch_one",
        "fetch_all",
        "fetch_optional",
        "update",
        "delete",
        "count",
        "exists",
        "find",
        "findOne",
        "pluck",
        "take",
        "then",
        "iterator",
        "values",
        "values_list",
        "in_bulk",
        "latest",
        "earliest",
        "last",
    ];
    // An awaited builder (knex, Prisma, Sequelize) runs where it is awaited.
    let awaited = || {
        model.assigns.iter().any(|a| {
            a.func == call.func
                && a.value.as_call() == Some(end.id)
                && a.value.text.starts_with("await")
        })
    };
    if RUNS.contains(&end.name.as_str()) || awaited() {
        return written;
    }
    // Calls that run a query handed to them (`session.execute(q)`); passing a
    // lazy queryset to any other function does not run it there.
    const RUNNERS: &[&str] = &[
        "execute",
        "exec",
        "exec_driver_sql",
        "scalar",
        "scalars",
        "stream",
        "stream_scalars",
        "query",
        "fetch",
        "fetch_one",
        "fetch_all",
        "fetch_optional",
        "get_result",
        "get_results",
        "load",
        "run",
    ];
    let runs = |c: &&Call| RUNNERS.contains(&c.name.as_str());
    let runner = match end.usage.bound() {
        Some(name) => model.calls.iter().filter(runs).find(|c| {
            c.func == call.func
                && c.span.start > end.span.end
                && c.args.iter().any(|a| mentions(&a.value.text, name))
        }),
        None => model
            .calls
            .iter()
            .filter(runs)
            .find(|c| c.args.iter().any(|a| a.value.as_call() == Some(end.id))),
    };
    if let Some(c) = runner {
        return c.span;
    }
    subquery_run(model, call, end, &|c: &Call| {
        RUNS.contains(&c.name.as_str()) || RUNNERS.contains(&c.name.as_str())
    })
    .unwrap_or(written)
}

/// How many names a subquery is followed through.
const SUBQUERY_HOPS: usize = 3;

/// A query bound to a name and used inside another query (diesel
/// `insert_into(t).values(select(..).filter(not(exists(similar_jobs))))`):
/// its lock is taken where the statement holding it runs. The statement
/// is the outermost call around the first later use of the name; its chain
/// runs there (`runs`), or binds it to another name followed the same way.
fn subquery_run(
    model: &FileModel,
    call: &Call,
    end: &Call,
    runs: &dyn Fn(&Call) -> bool,
) -> Option<Span> {
    let mut name = end.usage.bound()?.to_string();
    let mut from = end.span.end;
    for _ in 0..SUBQUERY_HOPS {
        let mut later = model.calls_in(call.func).filter(|c| c.span.start > from);
        let used = later.find(|c| c.args.iter().any(|a| mentions(&a.value.text, &name)))?;
        let top = model
            .calls_in(call.func)
            .filter(|c| c.span.contains(used.span))
            .max_by_key(|c| c.span.end - c.span.start)?;
        let chain = model.chain(top.id);
        if let Some(&run) = chain.iter().find(|&&id| runs(model.call(id))) {
            return Some(model.call(run).span);
        }
        name = top.usage.bound()?.to_string();
        from = top.span.end;
    }
    None
}

/// Adds the library-lock sites and releases of one file.
pub fn analyze(
    model: &FileModel,
    catalog: &Catalog,
    next: &HashMap<CallId, CallId>,
    versions: &Versions,
    (sites, releases, objects): (&mut Vec<LockSite>, &mut Vec<Release>, &mut Vec<LockObject>),
) {
    // One site per acquiring call: `lock.Lock()` where `lock` came from
    // `LockOpts(..)` on one branch and `LockKey(k)` on the other is one
    // acquisition (the first factory's, given the other's key if it has none).
    let mut on_use: HashMap<Span, usize> = HashMap::new();
    for call in &model.calls {
        // A subclass's constructor has positional parameters of its own: only
        // its keyword arguments are the library's (`ttl=ttl`); the key it
        // builds from them is its own business, unknown here.
        let keywords;
        let mut subclass = None;
        let (call, (api_id, evidence)) = match match_api(model, catalog, call) {
            Some(m) => (call, m),
            None => match match_subclass(model, catalog, call) {
                Some(m) => {
                    subclass = Some(call.name.as_str());
                    keywords = Call {
                        args: call
                            .args
                            .iter()
                            .filter(|a| a.name.is_some())
                            .cloned()
                            .collect(),
                        ..call.clone()
                    };
                    (&keywords, m)
                }
                None => continue,
            },
        };
        let api = &catalog.apis[api_id];
        let ApiKind::Lock(spec) = &api.kind else {
            continue;
        };
        let cx = Ctx {
            contention_error: api.contention_error,
            model,
            lib: catalog.library_of(api),
            api_id: &api.id,
            spec,
            evidence,
            used: versions.get(&catalog.library_of(api).package),
        };
        let object = Binding::of(model, call);
        let first = sites.len();
        let now =
            spec.acquires == Acquires::Now || call.usage == Usage::Guard && spec.guard_acquires;
        if now {
            let span = if api.any_receiver {
                query_run(model, next, call)
            } else {
                call.span
            };
            let mut site = cx.site(call, call, None, span);
            if spec.future {
                grant::awaited(model, next, call, &mut site);
            }
            sites.push(site);
        }
        if spec.acquires == Acquires::OnUse {
            for c in &model.calls {
                if let Some(m) = acquire_method(spec, c).filter(|_| object.is_receiver_of(model, c))
                {
                    let site = cx.site(call, c, Some(m), c.span);
                    match on_use.get(&c.span) {
                        Some(&i) if sites[i].key.is_none() => {
                            sites[i].key = site.key;
                            sites[i].key_text = site.key_text;
                        }
                        Some(_) => {}
                        None => {
                            on_use.insert(c.span, sites.len());
                            sites.push(site);
                        }
                    }
                }
            }
            for (name, span) in &model.guard_names {
                if object.var.as_deref() == Some(name.as_str())
                    && model.call(call.id).span.start < span.start
                {
                    sites.push(cx.site(call, call, None, *span));
                }
            }
        }
        // Made and returned untaken (`return r.lock(name, timeout=ttl)`): the
        // function is a lock factory; its callers take the lock.
        if spec.acquires == Acquires::OnUse && sites.len() == first && model.is_returned(call) {
            objects.push(LockObject {
                site: cx.site(call, call, None, call.span),
                methods: object_methods(spec),
            });
        }
        // A subclass of the library's lock (`class ActualLock(Lock)`) takes and
        // frees it in its own methods (`res = self.acquire()` in `__enter__`).
        let own_method = |c: &Call| {
            subclass.is_some_and(|class| {
                c.receiver
                    .as_deref()
                    .is_some_and(|r| resolve::is_self(model, c.func, &r.text))
                    && c.func.is_some_and(|f| {
                        let name = model.functions[f].name.strip_prefix(class);
                        name.is_some_and(|m| m.starts_with(['.', ':']))
                    })
            })
        };
        if spec.acquires == Acquires::OnUse {
            for c in model.calls.iter().filter(|c| own_method(c)) {
                let Some(m) = acquire_method(spec, c) else {
                    continue;
                };
                if let std::collections::hash_map::Entry::Vacant(e) = on_use.entry(c.span) {
                    e.insert(sites.len());
                    sites.push(cx.site(call, c, Some(m), c.span));
                }
            }
        }
        // Releases: on the object / handle, or the handle passed to the manager.
        // A release with no acquisition in sight (`getLock(k).forceUnlock()`) still counts.
        let handles: Vec<Binding> = std::iter::once(object)
            .chain(
                sites[first..]
                    .iter()
                    .map(|s| Binding::of(model, model.call(s.call))),
            )
            .collect();
        let site = (sites.len() > first).then_some(first);
        let renewed = model.calls.iter().any(|c| {
            spec.renew_methods.contains(&c.name)
                && handles
                    .iter()
                    .any(|h| h.is_receiver_of(model, c) || h.is_argument_of(model, c))
        });
        for s in &mut sites[first..] {
            s.renews = renewed;
        }
        for c in &model.calls {
            let checked = spec.release_methods.contains(&c.name);
            let unchecked = spec.unchecked_release_methods.contains(&c.name);
            if !(checked || unchecked) {
                continue;
            }
            // `rl.lock(..)` ... `rl.unlock(&lock)`: a manager release in the same
            // function pairs even when the handle came through a `match`.
            // In another function (`lockIginx()` / `releaseIginx()`), it must
            // also name the same key, and the manager may be reached another
            // way (`l.client.KV()`, `l.leaser.client.KV()`).
            let written = |call: &Call, read: fn(&str) -> String| {
                call.receiver.as_deref().map(|r| read(&r.text))
            };
            let same_manager = spec.acquires == Acquires::Now
                && c.receiver.is_some()
                && if c.func == call.func {
                    written(c, grant::squeezed) == written(call, grant::squeezed)
                        && c.span.start > call.span.end
                } else {
                    written(c, grant::manager) == written(call, grant::manager)
                        && grant::same_key(model, spec, call, c)
                };
            if !same_manager
                && !own_method(c)
                && !handles
                    .iter()
                    .any(|h| h.is_receiver_of(model, c) || h.is_argument_of(model, c))
            {
                continue;
            }
            // Every acquisition of the object owns its releases (`tryLock` then `lock`).
            for s in &mut sites[first..] {
                s.releases.push(releases.len());
            }
            let owner_checked = checked && !unchecked && spec.owner_checked_release;
            releases.push(cx.release(c, Some(call), owner_checked, site));
        }
    }
}
