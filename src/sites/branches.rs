//! How a branch relates to the acquisition: which names carry its result,
//! whether a condition tests it, and so whether an exit or a release lies on
//! the path where the lock was not granted.

use super::LockSite;
use crate::lang::profile::profile;
use crate::model::{mentions, Conditional, FileModel, Span};

/// Names that carry the acquisition's result: what it is bound to
/// (`ok, err := ...`) and out-parameters of its chain (Go `.Scan(&ok)`).
pub fn acquisition_names(model: &FileModel, site: &LockSite) -> Vec<String> {
    let end = model.call(site.result_call);
    let mut names: Vec<String> = end
        .usage
        .bound_names()
        .into_iter()
        .map(str::to_string)
        .collect();
    names.extend(
        end.args
            .iter()
            .filter(|a| a.value.text.starts_with('&'))
            .filter_map(|a| a.value.peel().as_name().map(str::to_string)),
    );
    // The result of a call the acquisition runs inside (`const ok = await
    // sequelize.transaction(async t => { ..claim.. })`) says whether it was taken.
    names.extend(
        (model.calls_in(site.func))
            .filter(|c| c.span.contains(site.span) && c.span != end.span)
            .flat_map(|c| c.usage.bound_names())
            .map(str::to_string),
    );
    // One hop: `acquired = row.get(0)` after `row = query_one(..)`.
    let derived: Vec<String> = model
        .assigns_in(site.func)
        .filter(|a| a.span.start > site.span.start)
        .filter(|a| names.iter().any(|n| mentions(&a.value.text, n)))
        .map(|a| a.target.clone())
        .collect();
    names.extend(derived);
    names
}

/// A branch that tests the acquisition: its condition contains the acquiring
/// call (`if not r.set(..):`, Go `if err := ..; err != nil`) or reads its
/// result, not a later value of the same name (`items, err := load(..)`).
fn tests_acquisition(
    model: &FileModel,
    site: &LockSite,
    names: &[String],
    c: &Conditional,
) -> bool {
    let rebound = |n: &str| {
        model.calls_in(site.func).any(|call| {
            call.span.start > site.span.end
                // Before the branch or in its own initializer (Go `if err :=
                // book(); err != nil`: a new `err`, the booking's).
                && call.span.end <= c.cond.start
                && call.usage.bound_names().contains(&n)
                // `acquired = row.get(0)` reads the acquisition's answer.
                && !names.iter().any(|m| {
                    m != n
                        && (call.receiver.iter().map(|r| &r.text))
                            .chain(call.args.iter().map(|a| &a.value.text))
                            .any(|t| mentions(t, m))
                })
        })
    };
    // In the branch's head (its condition, or Go's initializer before it), not
    // its body: `if (!cacheExists) { ..acquire.. }` tests something else.
    let in_head = c.stmt.contains(site.span) && site.span.start < c.cond.end;
    in_head || names.iter().any(|n| mentions(&c.text, n) && !rebound(n))
}

/// Is the exit at `span` on the not-acquired path? It is inside a branch that
/// tests the acquisition, and the release is not inside that branch.
pub fn on_failure_path(
    model: &FileModel,
    site: &LockSite,
    names: &[String],
    span: Span,
    release: Span,
) -> bool {
    model.conditionals_in(site.func).any(|c| {
        c.stmt.contains(span)
            && !c.stmt.contains(release)
            && tests_acquisition(model, site, names, c)
    })
}

/// The branch that tests the acquisition for failure and holds `span` in
/// its body (`if not acquired:`). A release there (a takeover, a cleanup) runs
/// when the lock was *not* granted (LA203); a read there (`log(.., r.get(k))`)
/// asks who holds it (LA304).
pub fn refusal_branch<'m>(
    model: &'m FileModel,
    site: &LockSite,
    names: &[String],
    span: Span,
) -> Option<&'m Conditional> {
    let language = profile(model.language);
    model.conditionals_in(site.func).find(|c| {
        c.stmt.contains(span)
            && !c.cond.contains(span)
            && tests_acquisition(model, site, names, c)
            && language.is_negative(&c.text)
    })
}
