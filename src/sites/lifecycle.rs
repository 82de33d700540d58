//! The lock's life after the acquisition: the call whose value carries the
//! result, whether a guard releases it on every path, its critical section,
//! and deletes that check ownership in a separate round trip (`GET` then
//! compare then `DEL`).

use std::collections::{HashMap, HashSet};

use super::command::Command;
use super::{LockSite, Release};
use crate::catalog::{Catalog, CommandRole};
use crate::model::{mentions, CallId, FileModel, GuardKind, Span, Usage};

/// Fills in `result_call`, `guarded` and `section`, and marks racy releases;
/// `next` is the file's method-chain map ([`chain_successors`]).
pub fn complete(
    model: &FileModel,
    next: &HashMap<CallId, CallId>,
    catalog: &Catalog,
    cmds: &[Command],
    sites: &mut [LockSite],
    releases: &mut [Release],
) {
    let chain_end = |id: CallId| super::command::chain_end(next, id);
    let blocks = Blocks::new(model);
    let guard_spans: HashSet<Span> = model.guard_names.iter().map(|(_, sp)| *sp).collect();
    let reads = Reads::new(model, catalog, cmds);
    for site in sites.iter_mut() {
        site.result_call = chain_end(site.call);
        let call = model.call(site.call);
        // A wrapper call's callback was chosen where the call became a site:
        // the options entry it runs, or the function it names.
        let chosen = site.via.is_some()
            && (site.held_over.is_some()
                || (site.span.contains(site.section) && site.section != site.span));
        let guard_body = match chosen {
            true => Some(site.section),
            false => blocks.guard_body(model, site.call),
        };
        let named_guard = guard_spans.contains(&site.span);
        site.guarded |= call.usage == Usage::Guard || named_guard || guard_body.is_some();
        site.section = match guard_body {
            Some(body) => body,
            // A wrapper call's section was set where the call became a site:
            // up to the release through the same object, else the caller's end.
            None if site.via.is_some() => site.section,
            None if site.held_over.is_some() => site
                .held_over
                .map_or(site.span, |f| model.functions[f].span),
            None => {
                let end = site
                    .releases
                    .iter()
                    .map(|&r| &releases[r])
                    // A deferred release runs when the function returns: it ends nothing here.
                    .filter(|r| r.func == site.func && r.span.start > site.span.end)
                    .filter(|r| !model.inside(r.span, &[GuardKind::Defer]))
                    // Nor one on an early way out (`if (!other) { l.unlock(); return }`).
                    .filter(|r| !model.on_way_out(r.span, r.func, site.span))
                    .map(|r| r.span.start)
                    .min()
                    .or_else(|| site.func.map(|f| model.functions[f].span.end))
                    .unwrap_or(model.blocks[0].span.end);
                Span::new(site.span.end, end.max(site.span.end))
            }
        };
    }
    for rel in releases.iter_mut() {
        let Some(get) = guarding_get(model, &reads, rel, &chain_end) else {
            continue;
        };
        // Inside WATCH ... MULTI/EXEC the server aborts if the key changed:
        // the compare and the delete are atomic, an owner-checked release. A
        // delete sent on another connection than the watching one
        // (`pipe.watch(k)` .. `redis_connection.delete(k)`) is outside it.
        // The object at the root of the call's chain (`redis` of `redis.multi().del(k)`).
        let on = |id: CallId| {
            let mut recv = model.call(id).receiver.as_deref()?;
            while let Some(inner) = recv.as_call() {
                recv = model.call(inner).receiver.as_deref()?;
            }
            Some(recv.text.as_str())
        };
        let watched = model.calls.iter().any(|c| {
            c.func == rel.func
                && c.span.start < rel.span.start
                && catalog.watch_methods.contains(&c.name)
                && (c.receiver.is_none() || on(c.id) == on(rel.call))
        });
        if watched {
            rel.owner_checked = true;
        } else {
            rel.racy_get = Some(get);
        }
    }
}

/// The file's blocks indexed for [`Blocks::guard_body`]: closures by start,
/// `with` bodies by parent, so that each site looks at its own neighbours
/// only (a file of 20,000 sites stays linear).
struct Blocks {
    /// Closure blocks, sorted by start.
    closures: Vec<(usize, Span)>,
    /// `with` bodies by parent block, in source order.
    with_by_parent: HashMap<usize, Vec<Span>>,
}

impl Blocks {
    fn new(model: &FileModel) -> Blocks {
        let mut closures: Vec<(usize, Span)> = model
            .blocks
            .iter()
            .filter(|b| b.kind == GuardKind::Closure)
            .map(|b| (b.span.start, b.span))
            .collect();
        closures.sort_by_key(|(start, _)| *start);
        let mut with_by_parent: HashMap<usize, Vec<Span>> = HashMap::new();
        for b in model.blocks.iter().filter(|b| b.kind == GuardKind::With) {
            if let Some(p) = b.parent {
                with_by_parent.entry(p).or_default().push(b.span);
            }
        }
        for spans in with_by_parent.values_mut() {
            spans.sort_by_key(|s| s.start);
        }
        Blocks {
            closures,
            with_by_parent,
        }
    }

    /// The body a guard-style acquisition runs: the `with` block after it, or
    /// a block / callback passed to it (Ruby `do ... end`, `using(.., async () => ..)`).
    fn guard_body(&self, model: &FileModel, id: CallId) -> Option<Span> {
        let call = model.call(id);
        let from = self
            .closures
            .partition_point(|(start, _)| *start < call.span.start);
        let inside = self.closures[from..]
            .iter()
            .take_while(|(start, _)| *start < call.span.end)
            .find(|(_, span)| call.span.contains(*span))
            .map(|(_, span)| *span);
        let with = (call.usage == Usage::Guard)
            .then(|| {
                let spans = self.with_by_parent.get(&call.block)?;
                let at = spans.partition_point(|s| s.start < call.span.end);
                spans.get(at).copied()
            })
            .flatten();
        inside.or(with)
    }
}

/// The file's `GET`s by function, each with its key as resolved.
struct Reads<'c> {
    by_func: HashMap<Option<usize>, Vec<(&'c Command, String)>>,
}

impl<'c> Reads<'c> {
    fn new(model: &FileModel, catalog: &Catalog, cmds: &'c [Command]) -> Reads<'c> {
        let mut by_func: HashMap<Option<usize>, Vec<(&Command, String)>> = HashMap::new();
        for g in cmds {
            let read = catalog
                .command(&g.name)
                .is_some_and(|s| s.role == CommandRole::Read);
            if !read || g.script.is_some() {
                continue;
            }
            let func = model.call(g.call).func;
            let key = g
                .keys
                .first()
                .map(|k| super::resolve::key_text(model, k, func))
                .unwrap_or_default();
            by_func.entry(func).or_default().push((g, key));
        }
        Reads { by_func }
    }
}

/// `if r.get(key) == token: r.delete(key)`: the `GET` whose comparison decides
/// this delete.
fn guarding_get(
    model: &FileModel,
    reads: &Reads,
    rel: &Release,
    chain_end: &dyn Fn(CallId) -> CallId,
) -> Option<Span> {
    if rel.owner_checked || rel.script_name.is_some() || rel.key_text.is_empty() {
        return None;
    }
    reads
        .by_func
        .get(&rel.func)?
        .iter()
        .filter(|(g, key)| !g.keys.is_empty() && *key == rel.key_text)
        .map(|(g, _)| *g)
        .find(|g| {
            let bound = |id: CallId| model.call(chain_end(id)).usage.bound().map(str::to_string);
            // Or the value a decoder made of it: `theID, err :=
            // redis.String(conn.Do("GET", key))`.
            let var = bound(g.call).or_else(|| {
                let func = model.call(g.call).func;
                (model.calls_in(func))
                    .filter(|c| c.id != g.call)
                    .find(|c| c.args.iter().any(|a| a.value.span.contains(g.span)))
                    .and_then(|c| bound(c.id))
            });
            // The GET is in the condition guarding the DEL (`del(k) if get(k) == t`
            // reads it first whatever the text order), or its value was kept and compared.
            let read_before = g.span.start < rel.span.start;
            model.conditionals.iter().any(|c| {
                c.stmt.contains(rel.span)
                    && !c.cond.contains(rel.span)
                    && (c.cond.contains(g.span)
                        || (read_before && var.as_deref().is_some_and(|v| mentions(&c.text, v))))
            })
        })
        .map(|g| g.span)
}
