//! What a critical section does: writes (SQL, ORM, payments, object stores,
//! HTTP, queues, files), cache sets, slow calls; and whether each write is
//! protected against a stale holder (fencing token, conditional write,
//! idempotency key). The spellings come from `rules/classification.yaml`.

use super::effect_calls::{in_memory, matches_effect};
use super::writers::Writers;
use super::{resolve, FileAnalysis, LockSite, Ttl};
use crate::catalog::raw::{ClassName, EffectKind, RawEffect};
use crate::catalog::{Catalog, Scope};
use crate::model::{mentions, Call, ExitKind, FileModel, Span};

/// A call in a critical section with a catalogued effect.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Effect {
    pub kind: EffectKind,
    pub span: Span,
    /// Where in the section it happens: `span`, or the call of the same-file
    /// function whose body makes it.
    pub reached: Span,
    pub write: bool,
    /// `correctness` / `efficiency` evidence and its weight.
    pub class: Option<ClassName>,
    pub weight: i32,
    /// How the write is protected, if it is.
    pub protection: Option<Protection>,
    pub text: String,
    /// The catalog's remedy for this kind of write, with its table named.
    pub remedy: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Protection {
    Fencing,
    ConditionalWrite,
    IdempotencyKey,
}

impl Protection {
    pub fn name(self) -> &'static str {
        match self {
            Protection::Fencing => "fencing",
            Protection::ConditionalWrite => "conditional-write",
            Protection::IdempotencyKey => "idempotency-key",
        }
    }
}

/// The SQL statement a call runs, uppercased, if one of its arguments is SQL.
pub(super) fn sql_of(model: &FileModel, call: &Call) -> Option<String> {
    call.args.iter().find_map(|a| {
        let v = resolve::resolve(model, &a.value, call.func);
        let text = match v.as_str() {
            Some(s) => s.to_string(),
            None if matches!(v.kind, crate::model::ExprKind::Template) => {
                v.text.trim_matches(['f', '"', '\'', '`']).to_string()
            }
            None => return None,
        };
        let up = text.trim_start().to_ascii_uppercase();
        let first = up.split_whitespace().next()?.to_string();
        // A write names what it writes with its own clause words: prose that
        // starts with the verb ("update default branch failed: %w") does not.
        let has = |w: &str| up.split_whitespace().any(|x| x == w);
        let shaped = match first.as_str() {
            "SELECT" | "WITH" => true,
            "UPDATE" => has("SET"),
            "INSERT" => has("INTO") || has("VALUES"),
            "DELETE" => has("FROM") || has("WHERE"),
            "MERGE" | "UPSERT" | "REPLACE" => has("INTO"),
            _ => false,
        };
        shaped.then_some(up)
    })
}

/// The table an SQL write targets: `UPDATE t`, `INSERT INTO t`, `DELETE FROM t`,
/// `MERGE INTO t`, `REPLACE INTO t` (`sql` uppercased; the name as written there).
fn sql_table(sql: &str) -> Option<String> {
    let mut words = sql.split_whitespace();
    let first = words.next()?;
    let mut next = words.next()?;
    if matches!(first, "INSERT" | "DELETE" | "MERGE" | "REPLACE" | "UPSERT")
        && matches!(next, "INTO" | "FROM")
    {
        next = words.next()?;
    }
    let name = next.trim_matches(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'));
    (!name.is_empty() && first != "WITH" && first != "SELECT").then(|| name.to_ascii_lowercase())
}

/// `e`'s remedy for `call`, its `{table}` filled from the call's SQL.
fn remedy(model: &FileModel, call: &Call, e: &RawEffect) -> Option<String> {
    let text = e.remedy.as_deref()?;
    if !text.contains("{table}") {
        return Some(text.to_string());
    }
    let table = sql_of(model, call).and_then(|s| sql_table(&s));
    Some(match table {
        Some(t) => text.replace("{table}", &format!("`{t}`")),
        None => text.replace("{table}", "the table"),
    })
}

/// Names carrying the grant: the handle, the acquisition's result, and one
/// assignment derived from them (`fence := m.Header().Revision`), plus Redis
/// `INCR` counters read in the same function.
fn token_names(fa: &FileAnalysis, site: &LockSite) -> Vec<String> {
    let model = fa.model;
    // A wrapper that runs a callback under the lock (`const { expense,
    // transaction } = await lockExpense(id, async () => { .. })`) hands back
    // what the callback returned: no part of the grant.
    let call = model.call(site.result_call);
    // (Its section is then the callback, inside the call.)
    let callback_result = site.via.is_some()
        && site.guarded
        && call.span.contains(site.section)
        && site.section.start > call.span.start;
    let mut names: Vec<String> = if callback_result {
        Vec::new()
    } else {
        (call.usage.bound_names().into_iter())
            .map(str::to_string)
            .collect()
    };
    names.extend(site.handle.clone());
    let derived: Vec<String> = model
        .assigns
        .iter()
        .filter(|a| a.func == site.func && names.iter().any(|n| mentions(&a.value.text, n)))
        .map(|a| a.target.clone())
        .collect();
    names.extend(derived);
    names.extend(counters(fa, site));
    names.retain(|n| n != "_" && !n.is_empty());
    names
}

/// `fence = r.incr("fence:orders")` / `fence := rdb.Incr(ctx, k).Val()`: Redis
/// counters incremented in the site's function, which writes can carry as a
/// fencing token.
pub fn counters(fa: &FileAnalysis, site: &LockSite) -> Vec<String> {
    fa.model
        .assigns
        .iter()
        .filter(|a| {
            a.func == site.func && {
                let v = a.value.text.to_ascii_lowercase();
                v.contains(".incr(") || v.starts_with("incr(")
            }
        })
        .map(|a| a.target.clone())
        .collect()
}

/// An `UPDATE` that tests in its WHERE a column it sets (`SET status =
/// 'EXPIRED' WHERE status = 'PENDING'`): a compare-and-set on that column, so
/// a stale holder's repeat finds nothing to change. `sql` is uppercased.
fn state_transition(sql: &str) -> bool {
    let sql = sql.split_whitespace().collect::<Vec<_>>().join(" ");
    let Some(rest) = sql.strip_prefix("UPDATE ") else {
        return false;
    };
    let (Some(set), Some(whr)) = (rest.find(" SET "), rest.find(" WHERE ")) else {
        return false;
    };
    // `UPDATE t SET WHERE ..`: the two may share a space.
    let Some(assignments) = rest.get(set + 5..whr) else {
        return false;
    };
    let assignments = assignments.split(" FROM ").next().unwrap_or(assignments);
    let condition = rest.get(whr + 7..).unwrap_or_default();
    let column = |part: &str| {
        let name = part.split('=').next()?.trim();
        let name = name.rsplit('.').next()?.trim_matches(['"', '`', '[', ']']);
        (!name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_'))
            .then(|| name.to_string())
    };
    assignments
        .split(',')
        .filter(|a| a.contains('='))
        .filter_map(column)
        .any(|name| compares(condition, &name))
}

/// Does `condition` compare column `name` with something (`name = x`,
/// `"name" IN (..)`, `t.name IS NULL`, `name <> x`)? `updated_at = NOW()` in
/// the SET and `created_at < x` in the WHERE are no such pair.
fn compares(condition: &str, name: &str) -> bool {
    condition.match_indices(name).any(|(at, _)| {
        let before = condition[..at].chars().next_back();
        let boundary = before.is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
        let after = condition[at + name.len()..].trim_start_matches(['"', '`', ']']);
        let op = after.trim_start();
        boundary
            && !after.starts_with(|c: char| c.is_alphanumeric() || c == '_')
            && ["=", "IN ", "IN(", "IS ", "<>", "!="]
                .iter()
                .any(|o| op.starts_with(o))
    })
}

fn protection_of(
    catalog: &Catalog,
    model: &FileModel,
    call: &Call,
    tokens: &[String],
) -> Option<Protection> {
    let p = &catalog.protection;
    // Keyword names count: `if_generation_match=gen`, `idempotency_key=k`.
    let text = call
        .args
        .iter()
        .map(|a| format!("{} {}", a.name.as_deref().unwrap_or(""), a.value.text))
        .collect::<Vec<_>>()
        .join(" ");
    if tokens.iter().any(|t| mentions(&text, t)) {
        return Some(Protection::Fencing);
    }
    // A builder chain states the condition before the write: `setData().withVersion(v).forPath(..)`;
    // a method may name it (`UpdateOptLock`: a version-checked update).
    let chain = call.receiver.as_deref().map_or("", |r| r.text.as_str());
    let up = format!("{text} {chain} {}", call.name).to_ascii_uppercase();
    let sql = sql_of(model, call);
    let conditional_sql = sql.as_deref().is_some_and(|s| {
        let after_where = s.find(" WHERE ").map_or("", |i| &s[i..]);
        let anywhere = ["ON CONFLICT DO NOTHING", "ON CONFLICT (", "IF NOT EXISTS"];
        p.conditional_sql
            .iter()
            .any(|c| after_where.contains(c.as_str()))
            || anywhere.iter().any(|c| s.contains(c))
            || state_transition(s)
    });
    if conditional_sql || p.conditional_call.iter().any(|c| up.contains(c.as_str())) {
        return Some(Protection::ConditionalWrite);
    }
    let named = call
        .args
        .iter()
        .filter_map(|a| a.name.as_deref())
        .map(str::to_ascii_uppercase)
        .collect::<Vec<_>>()
        .join(" ");
    if p.idempotency
        .iter()
        .any(|c| up.contains(c.as_str()) || named.contains(c.as_str()))
    {
        return Some(Protection::IdempotencyKey);
    }
    None
}

/// The catalogued effect of `call` (run in a section at `reached`), with its
/// protection given the grant's `tokens`; none for an in-memory collection.
/// `locked`: the object the lock is taken through, if any.
pub fn effect_of(
    fa: &FileAnalysis,
    call: &Call,
    (reached, locked): (Span, Option<&str>),
    tokens: &[String],
) -> Option<Effect> {
    let model = fa.model;
    let e = fa
        .catalog
        .effects
        .iter()
        .find(|e| matches_effect(model, call, e, locked))?;
    if in_memory(fa.catalog, model, call) {
        return None;
    }
    let protection = e
        .write
        .then(|| protection_of(fa.catalog, model, call, tokens))
        .flatten();
    Some(Effect {
        kind: e.kind,
        span: call.span,
        reached,
        write: e.write,
        class: e.class,
        weight: e.weight,
        protection,
        text: call.callee.clone(),
        remedy: remedy(model, call, e),
    })
}

/// The effects of `site`'s critical section, each write with its protection;
/// a call of another file's function reaches that function's effect through `writers`.
pub fn of_section(fa: &FileAnalysis, site: &LockSite, writers: &Writers) -> Vec<Effect> {
    let tokens = token_names(fa, site);
    let claim_commit = claim_commit(fa.model, site);
    // What the site's own release runs is giving the lock back, not work under it.
    let released: Vec<Span> = (site.releases.iter())
        .filter_map(|&i| fa.releases.get(i).map(|r| r.span))
        .chain(
            super::wrapper::paired_releases(fa.model, site)
                .iter()
                .map(|c| c.span),
        )
        .collect();
    // A lock helper called on a record (`order.lock(..)`): the record itself;
    // else a record the lock is keyed by (`OrderMutex.with_lock!(@order)`,
    // Rails' `around_action :lock_order` keyed `@order`).
    let own = fa.model.call(site.call).receiver.as_deref();
    // A class (`OrderMutex.with_lock!(..)`, `run_with_advisory_lock(Email, ..)`) is no record.
    let class = |text: &str| {
        (text.rsplit(['.', ':']).next())
            .is_some_and(|l| l.starts_with(|c: char| c.is_ascii_uppercase()))
    };
    let record = |r: &&crate::model::Expr| {
        !class(&r.text) && !resolve::is_self(fa.model, site.func, &r.text)
    };
    let locked = (own.filter(|r| site.via.is_some() && record(r)))
        .map(|r| r.text.as_str())
        .or_else(|| {
            // Carried from a wrapper, the key keeps only its text (`@order`).
            let key = site.key.as_ref()?.peel().text.as_str();
            let name = key.trim_start_matches('@');
            let plain = !name.is_empty()
                && (name.chars()).all(|c| c.is_alphanumeric() || c == '_' || c == '.');
            (plain && !class(name)).then_some(key)
        });
    let calls = super::section::section_calls(fa.model, site).into_iter();
    calls
        .filter(|(call, reached)| !claim_commit(call) && !released.contains(reached))
        .filter_map(|(call, reached)| {
            effect_of(fa, call, (reached, locked), &tokens).or_else(|| {
                // A block form's own acquiring call is the lock, not work under it.
                if call.span.contains(site.span) {
                    return None;
                }
                let w = writers.reached(fa.model, call, call.func)?;
                let fenced = call
                    .args
                    .iter()
                    .any(|a| tokens.iter().any(|t| mentions(&a.value.text, t)));
                Some(super::writers::effect_through(w, call, fenced))
            })
        })
        .chain(hook_write(fa, site))
        .collect()
}

/// The write a framework makes after the hook the lock is taken in, when the
/// hook hands the lock on (`held-past-hooks`): OneUptime's `onBeforeCreate`
/// returns its mutex in `carryForward` for `onCreateSuccess` to release, so
/// the insert runs under it. Handed on: the acquisition's result or its lock
/// object is named in a `return` after it.
fn hook_write(fa: &FileAnalysis, site: &LockSite) -> Option<Effect> {
    let model = fa.model;
    let (hook, _) = super::writers::split_name(model, site.func?);
    let e = (fa.catalog.effects.iter()).find(|e| e.held_past_hooks.iter().any(|h| h == hook))?;
    let mut held = model.call(site.result_call).usage.bound_names();
    held.extend(site.handle.as_deref());
    let handed = model.exits_in(site.func).any(|x| {
        x.kind == ExitKind::Return
            && x.span.start > site.span.end
            && held.iter().any(|n| mentions(&x.value, n))
    });
    // Given back in the hook itself (not only when it fails): the write that
    // follows the hook runs after the release.
    let released = (site.releases.iter())
        .filter_map(|&r| fa.releases.get(r))
        .any(|r| r.func == site.func && !model.on_failure(model.call(r.call)));
    (handed && !released).then(|| Effect {
        kind: e.kind,
        span: site.span,
        reached: site.span,
        write: e.write,
        class: e.class,
        weight: e.weight,
        protection: None,
        text: format!("the write `{hook}` runs before, with the lock still held"),
        remedy: e.remedy.clone(),
    })
}

/// The write that weighs most (the first of equals; one with class evidence
/// before one without). Writes only: a helper that fills a cache
/// (`getFxRate` -> `cache.set`) does not make its caller's section cache work.
pub fn strongest_write(effects: impl Iterator<Item = Effect>) -> Option<Effect> {
    effects
        .filter(|e| e.write)
        .max_by_key(|e| (e.class.is_some(), e.weight, std::cmp::Reverse(e.span.start)))
}

/// A row claim's own writes, not work under it: its commit (`session.execute(
/// claim)` then `session.flush()` or `conn.commit()`, a call with no arguments
/// on the claim's receiver), and the mark a row lock's transaction writes
/// (`update({lockedAt: ..})`).
fn claim_commit<'a>(model: &'a FileModel, site: &LockSite) -> impl Fn(&Call) -> bool + 'a {
    let claimed_on = (matches!(site.ttl, Ttl::Scoped(Scope::Row)) && site.via.is_none())
        .then(|| model.call(site.call).receiver.as_deref())
        .flatten()
        .map(|r| r.text.as_str());
    let mark = site.mark;
    move |call: &Call| {
        mark == Some(call.span)
            || call.args.is_empty()
                && claimed_on
                    .is_some_and(|on| call.receiver.as_deref().is_some_and(|r| r.text == on))
    }
}

/// A `&'static str` field: spelled as an alias so that serde does not try to
/// borrow it from the input (it is looked up in a fixed set instead).
pub type Name = &'static str;

/// A site's protection name (`&'static str`), one of the known ones.
pub mod protection {
    use serde::{Deserialize, Deserializer, Serializer};

    use super::Protection;

    pub fn serialize<S: Serializer>(name: &&'static str, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(name)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<&'static str, D::Error> {
        let name = String::deserialize(d)?;
        [
            Protection::Fencing,
            Protection::ConditionalWrite,
            Protection::IdempotencyKey,
        ]
        .map(Protection::name)
        .into_iter()
        .chain(["none"])
        .find(|n| *n == name)
        .ok_or_else(|| serde::de::Error::custom(format!("unknown protection {name}")))
    }
}

#[cfg(test)]
mod tests {
    use super::state_transition;

    #[test]
    fn an_update_that_tests_what_it_sets_is_a_compare_and_set() {
        let cas = |sql: &str| state_transition(&sql.to_ascii_uppercase());
        assert!(cas(
            "UPDATE orders SET status = 'EXPIRED' WHERE status = 'PENDING'"
        ));
        assert!(cas(
            "UPDATE \"Orders\"\n  SET \"status\" = 'EXPIRED', \"updatedAt\" = NOW()\n  FROM \"Collectives\"\n  WHERE \"Orders\".\"status\" = 'PENDING'"
        ));
        assert!(cas(
            "UPDATE jobs SET owner = $1 WHERE id = $2 AND owner IS NULL"
        ));
        assert!(cas("UPDATE t SET state = 'done' WHERE state IN ('a', 'b')"));
        // Near misses: the set column is not compared, or only a longer name is.
        assert!(!cas(
            "UPDATE accounts SET balance = balance - 10 WHERE id = 1"
        ));
        assert!(!cas("UPDATE t SET id = 2 WHERE order_id = 1"));
        assert!(!cas(
            "UPDATE t SET updated_at = NOW() WHERE updated_at_old = 1"
        ));
        assert!(!cas(
            "UPDATE t SET ts = NOW() WHERE ts < NOW() - INTERVAL '1 day' AND k = 1"
        ));
        assert!(!cas("DELETE FROM t WHERE status = 'x'"));
        // Malformed text found by the fuzzer: no panic.
        assert!(!cas("UPDATE t SET WHERE x = 1"));
        assert!(!cas("UPDATE t SET a = 1 WHERE"));
    }
}
