//! Functions that build a lock statement for their callers to run:
//! `function advisoryLock(key) { return \`SELECT pg_advisory_xact_lock(..)\` }`,
//! `def _claim_sql(self): return "SELECT .. FOR UPDATE SKIP LOCKED"`,
//! `return { text: sql, values }` over a local query.
//!
//! Nothing is locked where the text is written: the lock is taken where a
//! caller runs it (`db.executeSql(plans.fetchNextJob(..).text)`). Such a
//! function is a lock object its callers take by running it (see
//! [`ObjectMethods::statement`]), so the wrapper pass follows it through
//! other builders (`locked(schema, sql)` → `transaction([advisoryLock(..), sql])`)
//! and across files to the query call.

use super::sql::{acquired, defines_routine, inline_key, site, sql_text, takes};
use super::sql_text::{literals, squeeze};
use super::{LockObject, LockSite, ObjectMethods, SiteKind};
use crate::catalog::Catalog;
use crate::model::{ExitKind, ExprKind, FileModel, Language, Span};
use std::collections::HashSet;

/// The statement builders of a file: every function that returns SQL text
/// taking a lock, none of whose own calls already runs it.
pub(super) fn analyze(
    model: &FileModel,
    source: &str,
    catalog: &Catalog,
    sites: &[LockSite],
    objects: &mut Vec<LockObject>,
) {
    if catalog.sql.is_empty() {
        return;
    }
    let prose_ok = model.language == Language::Sql;
    let mut done = HashSet::new();
    // The sites by where they start, to find those inside a `return` by bisection.
    let mut starts: Vec<Span> = sites.iter().map(|s| s.span).collect();
    starts.sort_by_key(|s| s.start);
    let holds_site = |at: Span| {
        let first = starts.partition_point(|s| s.start < at.start);
        starts[first..]
            .iter()
            .take_while(|s| s.start < at.end)
            .any(|s| at.contains(*s))
    };
    for exit in &model.exits {
        let Some(func) = exit.func.filter(|_| exit.kind == ExitKind::Return) else {
            continue;
        };
        // `return db.query("SELECT .. FOR UPDATE")`: a lock the function takes itself.
        if done.contains(&func) || holds_site(exit.span) {
            continue;
        }
        // The statement's own text: a model's expression text is cut short.
        let returned = source
            .get(exit.span.start..exit.span.end)
            .unwrap_or(&exit.value);
        let Some(text) = returned_text(model, func, exit, returned, source) else {
            continue;
        };
        let sql = squeeze(&text);
        // A routine's definition (`CREATE FUNCTION .. pg_advisory_lock(..)`) takes nothing.
        let Some(lock) =
            acquired(catalog, &sql, prose_ok).filter(|lock| !defines_routine(&sql, &lock.needle))
        else {
            continue;
        };
        // No call of this file runs the text: each caller's site gets the
        // call that does (the wrapper pass never looks this one up).
        let mut built = site(
            lock,
            &sql,
            inline_key(returned, exit.span, &lock.needle),
            LockSite::base(0, exit.span, Some(func), SiteKind::Sql),
        );
        built.evidence = vec![format!("returns SQL text that {}", takes(lock))];
        done.insert(func);
        objects.push(LockObject {
            site: built,
            methods: ObjectMethods {
                statement: true,
                ..ObjectMethods::default()
            },
        });
    }
}

/// The SQL text a `return` hands back (uppercased): its own literal, and the
/// text of the names it reads, and of the names those read in turn
/// (`return { text: sql, values }` over ``sql = `SELECT .. ${lockClause}` ``).
fn returned_text<'s>(
    model: &'s FileModel,
    func: usize,
    exit: &crate::model::Exit,
    returned: &'s str,
    source: &'s str,
) -> Option<String> {
    /// How many names deep a returned text is followed.
    const DEPTH: usize = 3;
    let mut text = literals(returned);
    let mut seen: HashSet<&'s str> = HashSet::new();
    let mut reading = vec![(returned, 0)];
    while let Some((value, depth)) = reading.pop() {
        let names = value
            .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
            .filter(|w| w.starts_with(|c: char| c.is_alphabetic() || c == '_'));
        for name in names {
            if !seen.insert(name) {
                continue;
            }
            let Some(a) = model.lookup(name, Some(func), exit.span.start) else {
                // ``${lockedChildrenCte(schema)}``: a fragment another function of
                // this file returns, spliced into this text.
                for fragment in fragments(model, value, name, source) {
                    text.push(' ');
                    text.push_str(&literals(fragment));
                    if depth + 1 < DEPTH {
                        reading.push((fragment, depth + 1));
                    }
                }
                continue;
            };
            // A local's whole source (a model's expression text is cut short); a
            // module-level value may be another file's constant, bound here.
            let value = match a.func {
                Some(_) => source
                    .get(a.value.span.start..a.value.span.end)
                    .unwrap_or(&a.value.text),
                None => &a.value.text,
            };
            // A string as it resolves; otherwise every literal of the value, in any
            // expression (`noSkipLocked ? '' : 'FOR UPDATE SKIP LOCKED'`).
            let string = matches!(a.value.peel().kind, ExprKind::Str(_));
            let literal = Some(literals(value)).filter(|t| !string && !t.is_empty());
            if let Some(t) = literal.or_else(|| sql_text(model, &a.value, Some(func))) {
                text.push(' ');
                text.push_str(&t);
            }
            if depth + 1 < DEPTH {
                reading.push((value, depth + 1));
            }
        }
    }
    (!text.is_empty()).then_some(text)
}

/// The returned texts of the same-file function `name` when `text`
/// interpolates a call of it (`${name(..)}`, `#{name(..)}`, `{name(..)}`):
/// each `return` of a function of that simple name. (A call passed as an
/// argument, `transaction([advisoryLock(schema, key), ..])`, is a lock object
/// handed on, whose key the wrapper pass maps through the parameters.)
fn fragments<'s>(
    model: &'s FileModel,
    text: &str,
    name: &str,
    source: &'s str,
) -> impl Iterator<Item = &'s str> + 's {
    let called = text.match_indices(name).any(|(i, _)| {
        text[..i].trim_end().ends_with('{') && text[i + name.len()..].trim_start().starts_with('(')
    });
    let defined = called.then(|| model.function_named(name)).flatten();
    defined
        .into_iter()
        .flat_map(move |f| model.exits_in(Some(f.id)))
        .filter(|x| x.kind == ExitKind::Return)
        .filter_map(move |x| source.get(x.span.start..x.span.end))
}
