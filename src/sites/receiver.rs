//! Is this call really the library's? Receiver evidence.
//!
//! `set`, `delete` and `lock` are everywhere. A method call counts only when
//! its receiver is plausibly the library's client: bound to one of its
//! constructors, annotated with one of its types, or named like one in a file
//! that imports the library. A free function counts when its path matches,
//! directly or through an import. The returned string is the evidence shown
//! to the user.

use super::resolve;
use crate::catalog::Library;
use crate::lang::profile::profile;
use crate::model::{Call, CallId, Expr, ExprKind, FileModel, FuncId, Usage};

/// Wrapper calls that hand back their receiver's client (`.unwrap()`, `.clone()`).
const PASS_THROUGH: &[&str] = &[
    "unwrap",
    "expect",
    "clone",
    "as_mut",
    "borrow_mut",
    "lock",
    "get_mut",
];

fn canon(path: &str) -> String {
    path.replace("::", ".").replace(' ', "")
}

/// Does `callee` (as written) name the function at full path `full`, given the file's imports?
pub fn path_matches(model: &FileModel, callee: &str, full: &str) -> bool {
    let (callee, full) = (canon(callee), canon(full));
    if callee == full {
        return true;
    }
    // A bare name in the catalog (`get_connection`) matches any call of that name.
    if !full.contains('.') {
        return callee.rsplit('.').next() == Some(full.as_str());
    }
    let Some(prefix) = full.strip_suffix(&callee).and_then(|p| p.strip_suffix('.')) else {
        // `aioredis.from_url` where `import redis.asyncio as aioredis`.
        return alias_matches(model, &callee, &full);
    };
    let first = callee.split('.').next().unwrap_or("");
    model.imports.iter().any(|i| {
        let p = canon(&i.path);
        (p == format!("{prefix}.{first}") && i.alias.is_none())
            || p == format!("{prefix}.*")
            || (i.alias.as_deref() == Some(first) && full.starts_with(&p))
    })
}

fn alias_matches(model: &FileModel, callee: &str, full: &str) -> bool {
    let (first, rest) = callee.split_once('.').unwrap_or((callee, ""));
    model.imports.iter().any(|i| {
        i.alias.as_deref() == Some(first) && {
            let real = if rest.is_empty() {
                canon(&i.path)
            } else {
                format!("{}.{rest}", canon(&i.path))
            };
            real == full
                || full.ends_with(&format!(".{}", rest)) && full.starts_with(&canon(&i.path))
        }
    })
}

/// Does the file import one of the library's modules?
pub fn imported(model: &FileModel, lib: &Library) -> bool {
    lib.clients
        .imports
        .iter()
        .any(|m| model.imports_module(m) || model.imports_module(&m.replace('.', "::")))
}

/// A catalog type name in an annotation: `Connection` matches `&mut redis::Connection`,
/// `redis.Client` matches `*redis.Client`, never a part of a longer name.
fn type_matches(lib: &Library, ty: &str) -> Option<String> {
    let paths: Vec<String> = ty
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.' || c == ':'))
        .filter(|p| !p.is_empty())
        .map(canon)
        .collect();
    lib.clients
        .types
        .iter()
        .find(|t| {
            let t = canon(t);
            paths
                .iter()
                .any(|p| *p == t || p.ends_with(&format!(".{t}")))
        })
        .cloned()
}

fn is_constructor(model: &FileModel, lib: &Library, e: &Expr) -> Option<String> {
    constructor_call(model, lib, e.as_call()?)
}

/// The catalog constructor call `id` is, through `.unwrap()`-like wrappers.
fn constructor_call(model: &FileModel, lib: &Library, mut id: CallId) -> Option<String> {
    loop {
        let call = model.call(id);
        if let Some(c) = lib
            .clients
            .constructors
            .iter()
            .find(|c| path_matches(model, &call.callee, c))
        {
            return Some(c.clone());
        }
        // `client.get_connection().unwrap()`: look through the wrapper.
        match call.receiver_call() {
            Some(inner) if PASS_THROUGH.contains(&call.name.as_str()) => id = inner,
            _ => return None,
        }
    }
}

/// Evidence that `call`'s receiver is `lib`'s client, or `None`.
pub fn evidence(model: &FileModel, lib: &Library, call: &Call) -> Option<String> {
    let recv = call.receiver.as_deref()?;
    expr_evidence(model, lib, call, recv, 0)
}

/// How deep `x = client.accessor(); x.y = x; ...` chains are followed.
const MAX_DEPTH: u8 = 4;

/// Evidence that the expression `recv` (seen from `call`) is a client.
fn expr_evidence(
    model: &FileModel,
    lib: &Library,
    call: &Call,
    recv: &Expr,
    depth: u8,
) -> Option<String> {
    if depth > MAX_DEPTH {
        return None;
    }
    let recv = recv.peel();
    if let Some(c) = is_constructor(model, lib, recv) {
        return Some(format!("receiver is built by `{c}`"));
    }
    match &recv.kind {
        ExprKind::Name(n) => name_evidence(model, lib, call, n, depth),
        ExprKind::Call(id) => {
            // `self.pool.get().unwrap().del(..)`, `template.opsForValue().setIfAbsent(..)`.
            let inner = model.call(*id);
            // A block parameter of `Sidekiq.redis do |conn|`: what that call yields.
            if lib.clients.yielders.contains(&inner.name) {
                return Some(format!("receiver is the client `{}` yields", inner.callee));
            }
            let accessor = lib.clients.accessors.contains(&inner.name);
            if !(PASS_THROUGH.contains(&inner.name.as_str()) || accessor) {
                let own = match inner.receiver.as_deref() {
                    None => true,
                    Some(r) => r
                        .as_name()
                        .is_some_and(|n| resolve::is_self(model, inner.func, n)),
                };
                return own
                    .then(|| factory_made(model, lib, &inner.name, inner.func))
                    .flatten();
            }
            expr_evidence(model, lib, call, inner.receiver.as_deref()?, depth + 1)
        }
        _ => None,
    }
}

/// `client(conn).lock(k, ttl)` where this file's `def client(conn)` returns
/// `Redlock::Client.new([conn], ..)`: a factory method's result is the client
/// its returned constructor builds. `name` is called from `from` on this
/// object (no receiver, `self.`), with or without parentheses (Ruby).
fn factory_made(
    model: &FileModel,
    lib: &Library,
    name: &str,
    from: Option<FuncId>,
) -> Option<String> {
    let factory = model.function_named(name)?;
    if from == Some(factory.id) {
        return None;
    }
    let calls: Vec<&Call> = model.calls_in(Some(factory.id)).collect();
    calls.iter().find_map(|c| {
        let made = constructor_call(model, lib, c.id)?;
        // Ruby's last statement is the method's value: the constructor is
        // that statement, inside no other call and followed by nothing.
        let last = profile(model.language).last_statement_returns
            && c.usage == Usage::Used
            && calls
                .iter()
                .all(|o| o.id == c.id || !(o.span.contains(c.span) || o.span.start > c.span.end));
        (last || model.is_returned(c))
            .then(|| format!("receiver is built by `{made}`, returned by `{name}`"))
    })
}

fn name_evidence(
    model: &FileModel,
    lib: &Library,
    call: &Call,
    name: &str,
    depth: u8,
) -> Option<String> {
    // Bound in this file: `r = redis.Redis(..)`, `self.redis = ..`, `let con: Connection = ..`.
    let binding = model.lookup(name, call.func, call.span.start).or_else(|| {
        // Attributes (`self.redis`, Ruby's `@redis`) are usually bound in another method.
        (name.contains('.') || name.starts_with('@'))
            .then(|| model.assigns.iter().find(|a| a.target == name))
            .flatten()
    });
    if let Some(a) = binding {
        if let Some(t) = a.ty.as_deref().and_then(|ty| type_matches(lib, ty)) {
            return Some(format!("`{name}` is declared as `{t}`"));
        }
        // `lock_client = client.lock_client()`: the value's own evidence.
        if let Some(e) = expr_evidence(model, lib, call, &a.value, depth + 1) {
            return Some(e);
        }
    }
    if let Some(p) = model.function_param(call.func, name) {
        if let Some(t) = p.ty.as_deref().and_then(|ty| type_matches(lib, ty)) {
            let qualified =
                p.ty.as_deref()
                    .is_some_and(|ty| lib.clients.imports.iter().any(|m| ty.contains(m.as_str())));
            if imported(model, lib) || qualified {
                return Some(format!("parameter `{name}` has type `{t}`"));
            }
        }
    }
    let last = name.rsplit(['.', ':']).next().unwrap_or(name);
    // A field declared with a client type (`private RedissonClient redisson;`,
    // Go `rdb *redis.Client`, `this.redis: Redis`).
    if let Some(t) = model.field_type(last).and_then(|ty| type_matches(lib, ty)) {
        return Some(format!("`{last}` is a field of type `{t}`"));
    }
    if lib.clients.names.iter().any(|n| n == last) && imported(model, lib) {
        return Some(format!(
            "{NAMED} `{last}` in a file that imports {}",
            lib.name
        ));
    }
    // Ruby calls a method without parentheses: `explicit_client.lock(..)`.
    let bare = binding.is_none()
        && model.function_param(call.func, name).is_none()
        && !name.contains(['.', ':']);
    bare.then(|| factory_made(model, lib, name, call.func))
        .flatten()
}

const NAMED: &str = "receiver is named";

/// Is `evidence` only the receiver's name? Weaker than a constructor or a
/// type: `etcd = etcd3.client()` in a file that imports etcd3gw too is
/// python-etcd3's client, though etcd3gw also calls its clients `etcd`.
pub fn name_only(evidence: &str) -> bool {
    evidence.starts_with(NAMED)
}
