//! Surface forms → canonical Redis commands.
//!
//! `r.set(k, v, nx=True, px=30000)`, `redis::cmd("SET").arg(k).arg(v).arg("NX")`,
//! `con.set_options(k, v, SetOptions::default().conditional_set(ExistenceCheck::NX))`
//! and `execute_command("SET", k, v, "NX")` all become one [`Command`], so the
//! Redis rules are written once. Lua scripts contribute the commands they run.

use std::collections::{BTreeMap, HashMap, HashSet};

use super::script::{defined_invocations, expand_script, flatten, script_invocations};
use super::slots::slot_values;
use super::words::{apply_words, option_tokens};
use super::{receiver, resolve};
use crate::catalog::{Api, ApiKind, ArgIs, ArgRole, Catalog, Slot};
use crate::model::{Call, CallId, Expr, ExprKind, FileModel, Span};

/// One command as the server receives it.
#[derive(Debug, Clone)]
pub struct Command {
    pub name: String,
    /// The catalog API that produced it.
    pub api: usize,
    /// The call the user wrote (the chain's root, or the script invocation).
    pub call: CallId,
    /// From the call's start to the end of its builder chain.
    pub span: Span,
    pub keys: Vec<Expr>,
    pub value: Option<Expr>,
    pub ttl: Option<Expr>,
    /// Flags present, uppercase, with their value when they take one.
    pub flags: BTreeMap<String, Option<Expr>>,
    /// Set for commands a Lua script sends: the script call, and whether an
    /// owner comparison guards the command.
    pub script: Option<ScriptOrigin>,
    /// Why this call counts as the library's (receiver evidence).
    pub evidence: String,
}

#[derive(Debug, Clone)]
pub struct ScriptOrigin {
    /// Identifies the script (its text's start) so commands of one script group together.
    pub script_span: Span,
    pub guarded: bool,
    /// The name the script source was bound to (`RELEASE_SCRIPT`), if any.
    pub source_name: Option<String>,
}

impl Command {
    pub fn has_flag(&self, flag: &str) -> bool {
        self.flags.contains_key(flag)
    }
}

/// Arguments collected for each role, from the call and its chain.
#[derive(Default)]
struct Collected {
    roles: BTreeMap<ArgRole, Vec<Expr>>,
}

impl Collected {
    fn push(&mut self, role: ArgRole, e: Expr) {
        self.roles.entry(role).or_default().push(e);
    }
    fn take(&mut self, role: ArgRole) -> Vec<Expr> {
        self.roles.remove(&role).unwrap_or_default()
    }
}

/// For every call: which call continues its chain (`x.arg(..)` after `x`).
pub fn chain_successors(model: &FileModel) -> HashMap<CallId, CallId> {
    model
        .calls
        .iter()
        .filter_map(|c| c.receiver_call().map(|r| (r, c.id)))
        .collect()
}

/// The last call of the chain `id` starts (`rdb.SetNX(..).Result()`), the one
/// whose value the code uses.
pub fn chain_end(next: &HashMap<CallId, CallId>, mut id: CallId) -> CallId {
    while let Some(&n) = next.get(&id) {
        id = n;
    }
    id
}

/// The call's own shape says `SET ... NX` in this API's spelling, whatever its
/// receiver (`self.redis`, `@redis`, `this.client`, an injected field): the NX
/// flag's keyword set (`nx=True`, `nx: true`), an `"NX"` word where the API takes
/// words, an `NX` key in an options object where it takes options, or a
/// put-if-absent method (`setnx`, `SetNX`, `setIfAbsent`) given a key and a
/// value. Only a lock or a put-if-absent marker sends NX, so this is evidence
/// enough; a cache's `set(k, v, timeout)` or a map's `setdefault` never is.
/// Words that start with a script command (`call("EVALSHA", sha, 1, key, ..)`)
/// are a Redis client's too: what the script sends then decides.
fn put_if_absent_shape(
    model: &FileModel,
    catalog: &Catalog,
    api: &Api,
    call: &Call,
) -> Option<String> {
    // A file that defines the method itself (an in-memory store, a fake, an
    // adapter) is calling its own code.
    if !matches!(api.kind, ApiKind::Command(_)) || model.function_named(&call.name).is_some() {
        return None;
    }
    let setnx = matches!(&api.kind, ApiKind::Command(Some(c)) if c == "SETNX");
    // Named for it (`SetNX`, `setIfAbsent`): memcached's `add` is any
    // collection's too, and needs a client to say it.
    let named_nx = || {
        resolve::words(&call.name)
            .iter()
            .any(|w| w == "nx" || w == "absent")
    };
    if (setnx || (api.fixed_flags.iter().any(|f| f == "NX") && named_nx())) && call.args.len() >= 2
    {
        return Some(format!("`{}` is a put-if-absent (SET NX)", call.name));
    }
    let nx_word = |e: &Expr| {
        resolve::string(model, e, call.func).is_some_and(|s| s.eq_ignore_ascii_case("NX"))
    };
    // `nx=True`, not `nx=nx`: a helper forwarding its caller's flag says nothing.
    let set = |e: &Expr| {
        matches!(
            resolve::resolve(model, e, call.func).kind,
            ExprKind::Bool(true) | ExprKind::Int(1)
        )
    };
    if let Some(kw) = api.flags.get("NX").and_then(|s| s.kw.as_deref()) {
        if call.keyword(kw).is_some_and(set) {
            return Some(format!("the call passes `{kw}` (SET NX)"));
        }
    }
    let from = |role: ArgRole| api.args.get(&role).and_then(|s| s.pos);
    if let Some(pos) = from(ArgRole::Words) {
        let mut positional = call.args.iter().filter(|a| a.name.is_none()).skip(pos);
        if positional.clone().any(|a| nx_word(&a.value)) {
            return Some("the call sends `NX` (SET NX)".into());
        }
        let first = positional
            .next()
            .and_then(|a| resolve::string(model, &a.value, call.func));
        let script = first.filter(|w| {
            catalog
                .command(&w.to_ascii_uppercase())
                .is_some_and(|spec| spec.runs_script())
        });
        if let Some(word) = script {
            return Some(format!("the call sends `{word}` (a Redis script)"));
        }
    }
    if let Some(pos) = from(ArgRole::Options) {
        let options = call.args.iter().filter(|a| a.name.is_none()).skip(pos);
        let has_nx = |e: &Expr| match &e.peel().kind {
            ExprKind::Map(pairs) => pairs.iter().any(|(k, v)| {
                let key = k.as_str().unwrap_or(&k.text);
                (key.eq_ignore_ascii_case("NX") && set(v)) || nx_word(v)
            }),
            _ => nx_word(e),
        };
        if options.clone().any(|a| has_nx(&a.value)) {
            return Some("the call's options say `NX` (SET NX)".into());
        }
    }
    None
}

/// Does `call` pass one of `want.one_of` where `want` says (any value when
/// it lists none; a run-time value when `or_runtime`), or nothing there
/// (unless the argument is `required`)?
fn arg_is(model: &FileModel, call: &Call, want: &ArgIs) -> bool {
    let slot = Slot {
        pos: want.pos,
        kw: want.kw.clone(),
        rest: false,
    };
    let values = slot_values(model, call, &slot);
    (values.is_empty() && !want.required)
        || values.iter().any(|v| {
            if want.one_of.is_empty() || (want.or_runtime && runtime(model, call, v)) {
                return true;
            }
            let v = v.peel();
            let word = v.as_str().or_else(|| v.as_name()).unwrap_or(&v.text);
            let last = word.rsplit(['.', ':']).next().unwrap_or(word);
            want.one_of.iter().any(|w| w == word || w == last)
        })
}

/// Is `v` a value the file leaves to run time: not a literal, nor a name
/// bound to one (`should_lock = false`)?
fn runtime(model: &FileModel, call: &Call, v: &Expr) -> bool {
    !matches!(
        resolve::resolve(model, v, call.func).peel().kind,
        ExprKind::Str(_)
            | ExprKind::Template
            | ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Bool(_)
            | ExprKind::Null
    )
}

/// Do `call`'s arguments fit `api`: their count, and the words an argument
/// must hold?
pub(super) fn fits(model: &FileModel, api: &Api, call: &Call) -> bool {
    let positional = || call.args.iter().filter(|a| a.name.is_none()).count();
    !(api.max_args.is_some_and(|n| positional() > n)
        || api.arity.is_some_and(|n| call.args.len() != n)
        || api.arg_is.as_ref().is_some_and(|a| !arg_is(model, call, a)))
}

/// The catalog API a call matches, with the evidence that it is that library's.
/// When several libraries fit (`redis.NewScript` is both go-redis and redigo),
/// the one the file imports wins.
pub fn match_api(model: &FileModel, catalog: &Catalog, call: &Call) -> Option<(usize, String)> {
    // A constructor or a type in an imported library beats a name in one.
    let mut named = None;
    let mut fallback = None;
    // `from redis.asyncio.lock import Lock as AsyncLock`: `AsyncLock(..)` is a `Lock(..)`.
    let aliased = call
        .receiver
        .is_none()
        .then(|| model.unaliased(&call.name).next())
        .flatten()
        .filter(|real| *real != call.name);
    let candidates = catalog.candidates(model.language, &call.name).iter().chain(
        aliased
            .map(|real| catalog.candidates(model.language, real))
            .unwrap_or_default(),
    );
    for &api_id in candidates {
        let api = &catalog.apis[api_id];
        let lib = catalog.library_of(api);
        if !fits(model, api, call) {
            continue;
        }
        let own = || format!("`{}` is {}'s own method", call.name, lib.name);
        let evidence = if api.methods.contains(&call.name) && call.receiver.is_some() {
            receiver::evidence(model, lib, call)
                .or_else(|| api.any_receiver.then(own))
                .or_else(|| put_if_absent_shape(model, catalog, api, call))
        } else if api.any_receiver && api.methods.contains(&call.name) {
            // A model's own `with_lock { }` / `lock!`: an implicit receiver.
            Some(own())
        } else {
            // A bare name (`unique`, a class-body DSL) is called bare: `Faker::Job.unique`
            // is another library's method.
            api.functions
                .iter()
                .filter(|f| f.contains(['.', ':']) || call.receiver.is_none())
                .find(|f| receiver::path_matches(model, &call.callee, f))
                .map(|f| format!("call of `{f}`"))
        };
        let Some(evidence) = evidence else { continue };
        if !receiver::imported(model, lib) {
            fallback = fallback.or(Some((api_id, evidence)));
        } else if receiver::name_only(&evidence) {
            named = named.or(Some((api_id, evidence)));
        } else {
            return Some((api_id, evidence));
        }
    }
    named.or(fallback)
}

/// The construction of a class of this file that extends a catalog lock
/// class (`class ActualLock(Lock)` over `from etcd3gw.lock import Lock`):
/// the library's lock, made through the subclass.
pub fn match_subclass(
    model: &FileModel,
    catalog: &Catalog,
    call: &Call,
) -> Option<(usize, String)> {
    if call.receiver.is_some() {
        return None;
    }
    let bases = model.supers.get(&call.name)?;
    if null_object(model, &call.name) {
        return None;
    }
    bases.iter().find_map(|base| {
        catalog
            .candidates(model.language, base)
            .iter()
            .find_map(|&api_id| {
                let api = &catalog.apis[api_id];
                let f = api
                    .functions
                    .iter()
                    .find(|f| f.contains('.') && receiver::path_matches(model, base, f))?;
                Some((api_id, format!("`{}` extends `{f}`", call.name)))
            })
    })
}

/// Does class `class` define a constructor that never calls its base's
/// (`class NoopLock(Lock): def __init__(self, *a, **kw): pass`)? A null
/// object standing in for the lock, not the lock.
fn null_object(model: &FileModel, class: &str) -> bool {
    let own = crate::lang::profile::profile(model.language).constructors;
    model.functions.iter().any(|f| {
        f.name
            .strip_prefix(class)
            .and_then(|m| m.strip_prefix(['.', ':']))
            .is_some_and(|m| m == class || own.contains(&m))
            && !model
                .calls_in(Some(f.id))
                .any(|c| c.callee.starts_with("super") || c.name == "super")
    })
}

/// All canonical commands of a file.
pub fn commands(
    model: &FileModel,
    catalog: &Catalog,
    next: &HashMap<CallId, CallId>,
) -> Vec<Command> {
    let mut out = Vec::new();
    let matched: Vec<Option<(usize, String)>> = model
        .calls
        .iter()
        .map(|call| match_api(model, catalog, call))
        .collect();
    // A receiver the file already shows sending a library's commands is that
    // library's client for its other commands too (`$redis.set(k, t, nx:
    // true)` then `$redis.del(k)` in a Ruby file that Bundler, not a
    // `require`, gave its client).
    // A plain name is a local or a parameter: proven in its function only.
    let scope = |call: &Call, recv: &str| {
        let attribute = recv.contains(['.', ':']) || recv.starts_with(['@', '$']);
        if attribute {
            None
        } else {
            call.func
        }
    };
    // A local bound to a factory's result (`client = redis_instance()`): once
    // one such result sends a library's commands, the factory's results in the
    // file's other functions are that library's clients too.
    let factory = |call: &Call, recv: &str| -> Option<&str> {
        scope(call, recv)?;
        let bound = model.lookup(recv, call.func, call.span.start)?;
        let made = model.call(bound.value.peel().as_call()?);
        Some(made.callee.as_str())
    };
    let mut proven: HashSet<(&str, usize, Option<usize>)> = HashSet::new();
    let mut factories: HashSet<(&str, usize)> = HashSet::new();
    for (call, m) in model.calls.iter().zip(&matched) {
        let Some((api_id, _)) = m.as_ref() else {
            continue;
        };
        let api = &catalog.apis[*api_id];
        let Some(recv) = call.receiver.as_deref().map(|r| r.text.as_str()) else {
            continue;
        };
        if !matches!(api.kind, ApiKind::Command(_)) {
            continue;
        }
        proven.insert((recv, api.library, scope(call, recv)));
        if let Some(f) = factory(call, recv) {
            factories.insert((f, api.library));
        }
    }
    for (call, m) in model.calls.iter().zip(matched) {
        let found = m.or_else(|| {
            let recv = call.receiver.as_deref()?.text.as_str();
            catalog
                .candidates(model.language, &call.name)
                .iter()
                .copied()
                .find_map(|id| {
                    let api = &catalog.apis[id];
                    if !api.methods.contains(&call.name) || !matches!(api.kind, ApiKind::Command(_))
                    {
                        return None;
                    }
                    let lib = &catalog.library_of(api).name;
                    if proven.contains(&(recv, api.library, scope(call, recv))) {
                        return Some((id, format!("`{recv}` sends {lib} commands elsewhere in this file")));
                    }
                    let f = factory(call, recv).filter(|f| factories.contains(&(*f, api.library)))?;
                    Some((id, format!("`{recv}` comes from `{f}()`, whose result sends {lib} commands elsewhere in this file")))
                })
        });
        let Some((api_id, evidence)) = found else {
            continue;
        };
        if matches!(catalog.apis[api_id].kind, ApiKind::Command(_)) {
            build(model, catalog, api_id, call, next, evidence, &mut out);
        }
    }
    out
}

/// Follows `start`'s builder chain (`.arg(x).arg(y)`), collecting each link's
/// argument under its role: the last link and where it ends.
fn follow_chain(
    model: &FileModel,
    api: &Api,
    next: &HashMap<CallId, CallId>,
    start: CallId,
    got: &mut Collected,
) -> (CallId, usize) {
    let mut cur = start;
    let mut end = model.call(start).span.end;
    while let Some(&n) = next.get(&cur) {
        let c = model.call(n);
        let Some(role) = api.chain.get(&c.name) else {
            break;
        };
        if let Some(a) = c.args.first() {
            got.push(*role, a.value.clone());
        }
        end = c.span.end;
        cur = n;
    }
    (cur, end)
}

fn build(
    model: &FileModel,
    catalog: &Catalog,
    api_id: usize,
    call: &Call,
    next: &HashMap<CallId, CallId>,
    evidence: String,
    out: &mut Vec<Command>,
) {
    let api = &catalog.apis[api_id];
    let mut got = Collected::default();
    for (role, slot) in &api.args {
        for v in slot_values(model, call, slot) {
            got.push(*role, v);
        }
    }
    // Builder chain: `.arg(x)` / `.key(k)` calls that follow this one.
    let (cur, end) = follow_chain(model, api, next, call.id, &mut got);
    let mut sent = (call.id, Span::new(call.span.start, end));
    // A builder bound to a local grows in later statements (`let mut cmd =
    // redis::Cmd::set(k, v); cmd.arg("PX").arg(ms); cmd.arg("NX");`) and is
    // sent by the first other call on it (`cmd.query_async(&mut con)`).
    // (A script object's keys and arguments go with each invocation instead.)
    let bound = model
        .call(cur)
        .usage
        .bound()
        .filter(|_| !api.chain.is_empty() && !api.args.contains_key(&ArgRole::Script));
    if let Some(name) = bound {
        let later = model
            .calls_in(call.func)
            .filter(|c| c.span.start >= end && c.receiver.as_ref().is_some_and(|r| r.text == name));
        for c in later {
            match api.chain.get(&c.name) {
                Some(role) => {
                    if let Some(a) = c.args.first() {
                        got.push(*role, a.value.clone());
                    }
                    follow_chain(model, api, next, c.id, &mut got);
                }
                None => {
                    sent = (c.id, c.span);
                    break;
                }
            }
        }
    }
    let mut flags = BTreeMap::new();
    for (flag, slot) in &api.flags {
        if let Some(v) = slot_values(model, call, slot).into_iter().next() {
            let v = resolve::resolve(model, &v, call.func).clone();
            if !v.is_nullish() {
                let value = (!matches!(v.kind, ExprKind::Bool(true))).then_some(v);
                flags.insert(flag.to_ascii_uppercase(), value);
            }
        }
    }
    for f in &api.fixed_flags {
        flags.insert(f.clone(), None);
    }
    let mut words = got.take(ArgRole::Words);
    let name = match &api.kind {
        ApiKind::Lock(_) => return,
        ApiKind::Command(Some(n)) => n.clone(),
        ApiKind::Command(None) => {
            if words.is_empty() {
                return;
            }
            let first = words.remove(0);
            match resolve::string(model, &first, call.func) {
                Some(s) => s.to_ascii_uppercase(),
                None => return,
            }
        }
    };
    let Some(spec) = catalog.command(&name) else {
        return;
    };
    // `call("EVAL", script, 1, key, token, ttl)`: the words hold the script,
    // its key count and keys, run as the script's own slots would be.
    if spec.runs_script() && !words.is_empty() {
        let script = words.remove(0);
        let count = (!words.is_empty()).then(|| words.remove(0));
        let count = count.and_then(|n| match resolve::resolve(model, &n, call.func).kind {
            ExprKind::Int(n) => usize::try_from(n).ok(),
            _ => None,
        });
        let keys = words.len().min(count.unwrap_or(words.len()));
        got.push(ArgRole::Script, script);
        for k in words.drain(..keys) {
            got.push(ArgRole::ScriptKeys, k);
        }
        words.clear();
    }
    let mut cmd = Command {
        name: name.clone(),
        api: api_id,
        call: sent.0,
        span: sent.1,
        keys: got.take(ArgRole::Key),
        value: got.take(ArgRole::Value).into_iter().next(),
        ttl: got.take(ArgRole::Ttl).into_iter().next(),
        flags,
        script: None,
        evidence,
    };
    if !words.is_empty() {
        apply_words(model, spec, &words, call, &mut cmd);
    }
    let options = got.take(ArgRole::Options);
    // Option words as separate arguments (Jedis 2 `set(k, v, "NX", "PX", ms)`).
    if options
        .first()
        .is_some_and(|o| resolve::string(model, o, call.func).is_some())
    {
        apply_words(model, spec, &options, call, &mut cmd);
    }
    for opt in &options {
        let opt = resolve::resolve(model, opt, call.func);
        option_tokens(model, opt, &mut |word, value| {
            let word = api.option_aliases.get(word).map_or(word, String::as_str);
            if spec.is_option(word) {
                let value = if spec.takes_value(word) {
                    value.cloned()
                } else {
                    None
                };
                cmd.flags.insert(word.to_ascii_uppercase(), value);
            } else if let Some(v) = value.and_then(|v| v.as_str()).filter(|v| spec.is_option(v)) {
                // `Mode: "NX"`: the value is the option word.
                cmd.flags.insert(v.to_ascii_uppercase(), None);
            }
        });
    }
    let script_src = got.take(ArgRole::Script).into_iter().next();
    if let Some(src) = script_src {
        if let Some(slot) = &api.defines {
            // A defined command runs only where it is called.
            for (keys, at) in defined_invocations(model, call, slot) {
                expand_script(model, catalog, &cmd, &src, &keys, Some(at), out);
            }
            return;
        }
        let keys = flatten(got.take(ArgRole::ScriptKeys));
        let invocations = script_invocations(model, api, call, next);
        // The script runs where it is invoked, with that invocation's keys:
        // one set of commands per invocation (or one, at the call, if none is seen).
        if keys.is_empty() && !invocations.is_empty() {
            for (keys, at) in invocations {
                expand_script(model, catalog, &cmd, &src, &keys, Some(at), out);
            }
        } else {
            expand_script(model, catalog, &cmd, &src, &keys, None, out);
        }
        return;
    }
    out.push(cmd);
}
