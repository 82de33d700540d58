//! The lock's life after the acquisition: the call whose value carries the
//! result, whether a guard releases it on every path, its critical section,
//! and deletes that check ownership in a separate round trip (`GET` then
//! compare then `DEL`).

use super::command::{chain_successors, Command};
use super::{LockSite, Release};
use crate::catalog::{Catalog, CommandRole};
use crate::model::{mentions, CallId, FileModel, GuardKind, Span, Usage};

/// Fills in `result_call`, `guarded` and `section`, and marks racy releases.
pub fn complete(
    model: &FileModel,
    _text: &str,
    catalog: &Catalog,
    cmds: &[Command],
    sites: &mut [LockSite],
    releases: &mut [Release],
) {
    let next = chain_successors(model);
    let chain_end = |id: CallId| super::command::chain_end(&next, id);
    for site in sites.iter_mut() {
        site.result_call = chain_end(site.call);
        let call = model.call(site.call);
        let guard_body = guard_body(model, site.call);
        let named_guard = model.guard_names.iter().any(|(_, sp)| *sp == site.span);
        site.guarded |= call.usage == Usage::Guard || named_guard || guard_body.is_some();
        site.section = match guard_body {
            Some(body) => body,
            None => {
                let end = site
                    .releases
                    .iter()
                    .map(|&r| &releases[r])
                    // A deferred release runs when the function returns: it ends nothing here.
                    .filter(|r| r.func == site.func && r.span.start > site.span.end)
                    .filter(|r| !model.inside(r.span, &[GuardKind::Defer]))
                    .map(|r| r.span.start)
                    .min()
                    .or_else(|| site.func.map(|f| model.functions[f].span.end))
                    .unwrap_or(model.blocks[0].span.end);
                Span::new(site.span.end, end.max(site.span.end))
            }
        };
    }
    for rel in releases.iter_mut() {
        let Some(get) = guarding_get(model, catalog, cmds, rel, &chain_end) else {
            continue;
        };
        // Inside WATCH ... MULTI/EXEC the server aborts if the key changed:
        // the compare and the delete are atomic, an owner-checked release.
        let watched = model.calls.iter().any(|c| {
            c.func == rel.func
                && c.span.start < rel.span.start
                && catalog.watch_methods.contains(&c.name)
        });
        if watched {
            rel.owner_checked = true;
        } else {
            rel.racy_get = Some(get);
        }
    }
}

/// The body a guard-style acquisition runs: the `with` block after it, or a
/// block / callback passed to it (Ruby `do ... end`, `using(.., async () => ..)`).
fn guard_body(model: &FileModel, id: CallId) -> Option<Span> {
    let call = model.call(id);
    let inside = model
        .blocks
        .iter()
        .find(|b| b.kind == GuardKind::Closure && call.span.contains(b.span))
        .map(|b| b.span);
    let with = (call.usage == Usage::Guard)
        .then(|| {
            model
                .blocks
                .iter()
                .find(|b| {
                    b.kind == GuardKind::With
                        && b.span.start >= call.span.end
                        && b.parent == Some(call.block)
                })
                .map(|b| b.span)
        })
        .flatten();
    inside.or(with)
}

/// `if r.get(key) == token: r.delete(key)`: the `GET` whose comparison decides
/// this delete.
fn guarding_get(
    model: &FileModel,
    catalog: &Catalog,
    cmds: &[Command],
    rel: &Release,
    chain_end: &dyn Fn(CallId) -> CallId,
) -> Option<Span> {
    if rel.owner_checked || rel.script_name.is_some() || rel.key_text.is_empty() {
        return None;
    }
    cmds.iter()
        .filter(|g| {
            catalog
                .command(&g.name)
                .is_some_and(|s| s.role == CommandRole::Read)
                && g.script.is_none()
        })
        .filter(|g| model.call(g.call).func == rel.func)
        .filter(|g| {
            g.keys
                .first()
                .is_some_and(|k| super::resolve::key_text(model, k, rel.func) == rel.key_text)
        })
        .find(|g| {
            let var = model
                .call(chain_end(g.call))
                .usage
                .bound()
                .map(str::to_string);
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
