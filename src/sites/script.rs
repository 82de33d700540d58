//! Lua scripts sent by a call: where they run (the call itself, a returned
//! script object's invocations, a defined command's calls) and the commands
//! they send, each a [`Command`] of its own.

use std::collections::{BTreeMap, HashMap};

use super::command::{Command, ScriptOrigin};
use super::lua::{self, LuaArg};
use super::resolve;
use super::slots::slot_values;
use super::words::apply_words;
use crate::catalog::{Api, ArgRole, Catalog, Slot};
use crate::model::{Call, CallId, Expr, ExprKind, FileModel, FuncId, Usage};

/// `[k1, k2]` / `[]string{k}` → `k1, k2`; anything else stays itself.
pub(super) fn flatten(values: Vec<Expr>) -> Vec<Expr> {
    values
        .into_iter()
        .flat_map(|e| match e.peel().kind.clone() {
            ExprKind::List(items) => items,
            _ => vec![e],
        })
        .collect()
}

/// Where the client method that `define` names is called, with the keys it
/// passes: the first `numberOfKeys` arguments (all of them when the count is
/// not a literal). Calls in this file only.
pub(super) fn defined_invocations(
    model: &FileModel,
    define: &Call,
    slot: &Slot,
) -> Vec<(Vec<Expr>, CallId)> {
    let Some(name) = slot_values(model, define, slot)
        .first()
        .and_then(|v| resolve::string(model, v, define.func).map(str::to_string))
    else {
        return Vec::new();
    };
    let count = define.args.iter().find_map(|a| match &a.value.peel().kind {
        ExprKind::Map(pairs) => pairs.iter().find_map(|(k, v)| {
            (k.as_str().unwrap_or(&k.text) == "numberOfKeys")
                .then(|| match resolve::resolve(model, v, define.func).kind {
                    ExprKind::Int(n) => usize::try_from(n).ok(),
                    _ => None,
                })
                .flatten()
        }),
        _ => None,
    });
    model
        .calls
        .iter()
        .filter(|c| c.name == name && c.receiver.is_some() && c.id != define.id)
        .map(|c| {
            let args = c
                .args
                .iter()
                .filter(|a| a.name.is_none())
                .map(|a| a.value.clone());
            let keys = match count {
                Some(n) => args.take(n).collect(),
                None => args.collect(),
            };
            (keys, c.id)
        })
        .collect()
}

/// Where a script object returned by `call` is run with its keys:
/// `release = r.register_script(S); release(keys=[k])`, `script.Run(ctx, rdb, keys)`,
/// `redis.NewScript(S).Run(..)`, or a builder `Script::new(S).key(k).invoke(..)`.
pub(super) fn script_invocations(
    model: &FileModel,
    api: &Api,
    call: &Call,
    next: &HashMap<CallId, CallId>,
) -> Vec<(Vec<Expr>, CallId)> {
    let var = match &call.usage {
        Usage::Assigned(_) => call.usage.bound(),
        _ => None,
    };
    // A local (`script = r.register_script(S)` in a function) is not another
    // function's same-named local; a field (`this.script`, or a name the
    // class or module declares) is shared.
    let declared_outside = |v: &str| model.lookup(v, None, 0).is_some();
    let local =
        call.func.is_some() && var.is_some_and(|v| !v.contains('.') && !declared_outside(v));
    let candidates: Vec<&Call> = if local {
        model.calls_in(call.func).collect()
    } else {
        model.calls.iter().collect()
    };
    let mut out = Vec::new();
    for c in candidates {
        let on_var = var.is_some() && c.receiver.as_deref().and_then(Expr::as_name) == var;
        let called = var.is_some() && c.receiver.is_none() && Some(c.callee.as_str()) == var;
        let chained = c.receiver_call() == Some(call.id);
        if !(on_var || called || chained) {
            continue;
        }
        if api.chain.contains_key(&c.name) {
            // A builder: `.key(k).arg(t).invoke(..)`.
            let mut keys = Vec::new();
            let mut cur = c.id;
            loop {
                let cc = model.call(cur);
                match api.chain.get(&cc.name) {
                    Some(ArgRole::ScriptKeys) => {
                        keys.extend(cc.args.first().map(|a| a.value.clone()))
                    }
                    Some(_) => {}
                    None => break,
                }
                match next.get(&cur) {
                    Some(&n) => cur = n,
                    None => break,
                }
            }
            out.push((keys, c.id));
        } else if let Some(slot) = api.invoke.get(&ArgRole::ScriptKeys) {
            out.push((flatten(slot_values(model, c, slot)), c.id));
        }
    }
    out
}

/// Functions whose one argument a precomputed script digest is made of.
const DIGESTS: &[&str] = &["hexdigest", "sha1", "sha1_hex"];

/// The script `src` holds: its text, or for a digest computed once
/// (`LOCK_SCRIPT_SHA = Digest::SHA1.hexdigest(LOCK_SCRIPT)`, then sent with
/// EVALSHA) the script it digests.
fn script_source<'m>(model: &'m FileModel, src: &'m Expr, func: Option<FuncId>) -> &'m Expr {
    let e = resolve::resolve(model, src, func);
    digested(model, e, func).unwrap_or(e)
}

/// What a one-argument digest call (`Digest::SHA1.hexdigest(LOCK_SCRIPT)`)
/// digests, followed to its value: the script an EVALSHA of the digest runs.
pub(super) fn digested<'m>(
    model: &'m FileModel,
    e: &'m Expr,
    func: Option<FuncId>,
) -> Option<&'m Expr> {
    let c = model.call(e.as_call()?);
    match c.args.as_slice() {
        [only] if DIGESTS.contains(&c.name.as_str()) => {
            Some(resolve::resolve(model, &only.value, func))
        }
        _ => None,
    }
}

/// The scripts this file sends by a name it does not bind
/// (`call("EVALSHA", Scripts::LOCK_SCRIPT_SHA, 1, key, ..)`, `evalsha(SHA, ..)`):
/// names another file's constants may hold, with the sending call's function.
pub(super) fn unread_scripts(model: &FileModel, catalog: &Catalog) -> Vec<(Expr, Option<FuncId>)> {
    let mut out = Vec::new();
    for call in &model.calls {
        for &api_id in catalog.candidates(model.language, &call.name) {
            let api = &catalog.apis[api_id];
            let src = if let Some(slot) = api.args.get(&ArgRole::Script) {
                slot_values(model, call, slot).into_iter().next()
            } else if let Some(slot) = api.args.get(&ArgRole::Words) {
                // The words form: `EVAL` / `EVALSHA`, then the script.
                let mut words = slot_values(model, call, slot).into_iter();
                let first = words.next();
                let word = first
                    .as_ref()
                    .and_then(|w| resolve::string(model, w, call.func));
                let spec = word.and_then(|w| catalog.command(&w.to_ascii_uppercase()));
                spec.filter(|s| s.runs_script()).and_then(|_| words.next())
            } else {
                None
            };
            let Some(src) = src else { continue };
            let script = script_source(model, &src, call.func);
            if matches!(script.kind, ExprKind::Name(_)) {
                out.push((script.clone(), call.func));
            }
        }
    }
    out
}

pub(super) fn expand_script(
    model: &FileModel,
    catalog: &Catalog,
    eval: &Command,
    src: &Expr,
    keys: &[Expr],
    invocation: Option<CallId>,
    out: &mut Vec<Command>,
) {
    let func = model.call(eval.call).func;
    // The script's name, for the lock-word test: its constant, or what the
    // script object is bound to (`FORCE_UNLOCK = new DefaultRedisScript<>(..)`).
    let eval_call = model.call(eval.call);
    let source_name = src
        .peel()
        .as_name()
        .map(str::to_string)
        .or_else(|| match &eval_call.usage {
            Usage::Assigned(_) => eval_call.usage.bound().map(str::to_string),
            // ioredis `defineCommand('forceUnlock', {lua})`: the command's own name.
            _ => eval_call.args.iter().find_map(|a| {
                a.value
                    .as_str()
                    .filter(|s| s.len() < 64)
                    .map(str::to_string)
            }),
        });
    let script = script_source(model, src, func);
    let Some(text) = script.as_str() else {
        return;
    };
    let script_span = script.span;
    for lc in lua::analyze(text) {
        let Some(spec) = catalog.command(&lc.name) else {
            continue;
        };
        let arg = |a: &LuaArg| -> Expr {
            match a {
                LuaArg::Key(n) => keys
                    .get(n.wrapping_sub(1))
                    .cloned()
                    .unwrap_or_else(|| Expr::other(format!("KEYS[{n}]"), eval.span)),
                LuaArg::Str(s) => Expr {
                    kind: ExprKind::Str(s.clone()),
                    text: format!("{s:?}"),
                    span: eval.span,
                },
                LuaArg::Argv(n) => Expr::other(format!("ARGV[{n}]"), eval.span),
                LuaArg::Other(t) => Expr::other(t.clone(), eval.span),
            }
        };
        let words: Vec<Expr> = lc.args.iter().map(arg).collect();
        let mut cmd = Command {
            name: lc.name.clone(),
            keys: Vec::new(),
            value: None,
            ttl: None,
            flags: BTreeMap::new(),
            script: Some(ScriptOrigin {
                script_span,
                guarded: lc.guarded,
                source_name: source_name.clone(),
            }),
            ..eval.clone()
        };
        if let Some(at) = invocation {
            // Attributed to the invocation: its function, its line.
            cmd.call = at;
            cmd.span = model.call(at).span;
        }
        apply_words(model, spec, &words, model.call(eval.call), &mut cmd);
        out.push(cmd);
    }
}
