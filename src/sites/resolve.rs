//! Same-file name resolution: a variable or constant → the expression bound to it.

use crate::model::{Call, ExitKind, Expr, ExprKind, FileModel, FuncId};

/// How many `a = b` hops to follow before giving up (cycles, long chains).
const MAX_HOPS: usize = 4;

/// Follows names to the expression they were last bound to, locally or at
/// module level. Returns the input when the name is not bound in this file.
pub fn resolve<'m>(model: &'m FileModel, e: &'m Expr, func: Option<FuncId>) -> &'m Expr {
    let mut cur = e.peel();
    for _ in 0..MAX_HOPS {
        cur = match &cur.kind {
            ExprKind::Name(name) => match model.lookup(name, func, cur.span.start) {
                Some(a) => a.value.peel(),
                None => break,
            },
            // `"x".freeze`, `"x".to_string()`: the same constant.
            ExprKind::Call(id) => {
                let call = model.call(*id);
                let same = [
                    "freeze",
                    "dup",
                    "to_s",
                    "to_string",
                    "to_owned",
                    "into",
                    "intern",
                    "to_sym",
                ];
                match call.receiver.as_deref() {
                    Some(r) if call.args.is_empty() && same.contains(&call.name.as_str()) => {
                        r.peel()
                    }
                    _ => break,
                }
            }
            _ => break,
        };
    }
    cur
}

/// Does `name` stand for the object a method of `func` runs on: `self`,
/// `this`, `@`, or Go's receiver parameter (`r` of `func (r *Repo) ..`)?
/// Does `call` build a value of a type named by it (`new LeaseDao(handle)`,
/// `EnvelopeResponse<>(..)`, Python `Lease(..)`): no receiver, a capitalised name?
pub fn builds_type(call: &Call) -> bool {
    call.receiver.is_none() && call.name.starts_with(|c: char| c.is_ascii_uppercase())
}

pub fn is_self(model: &FileModel, func: Option<FuncId>, name: &str) -> bool {
    crate::lang::profile::profile(model.language)
        .self_names
        .contains(&name)
        || func.is_some_and(|f| {
            let f = &model.functions[f];
            f.receiver && f.params.first().is_some_and(|p| p.name == name)
        })
}

/// What a key built by a helper of this file spells: the value text of the
/// helper's only `return` (`formatKey(key)` -> `String.format(IDEMPOTENT, key)`),
/// for the words a key is judged by. `None` for anything else.
pub fn helper_text<'m>(model: &'m FileModel, e: &'m Expr, func: Option<FuncId>) -> Option<&'m str> {
    let helper = key_helper(model, e, func)?;
    let mut returns = model
        .exits_in(Some(helper.id))
        .filter(|x| x.kind == ExitKind::Return);
    match (returns.next(), returns.next()) {
        (Some(only), None) if !only.value.is_empty() => Some(only.value.as_str()),
        _ => None,
    }
}

/// The function of this file that builds the key (`_job_lock_id(q, ds.id)`).
pub fn key_helper<'m>(
    model: &'m FileModel,
    e: &'m Expr,
    func: Option<FuncId>,
) -> Option<&'m crate::model::Function> {
    helper_call(model, e, func).map(|(_, f)| f)
}

/// [`key_helper`] when its arguments are only values (names, fields): two such
/// calls name the same family of keys however the values are spelled. A text
/// argument picks the family itself (`_key(f"seen:{id}")` vs `_key(f"processing:{id}")`).
pub fn key_family<'m>(
    model: &'m FileModel,
    e: &'m Expr,
    func: Option<FuncId>,
) -> Option<&'m crate::model::Function> {
    let (call, helper) = helper_call(model, e, func)?;
    let texts = call.args.iter().any(|a| {
        matches!(
            a.value.peel().kind,
            ExprKind::Str(_) | ExprKind::Template | ExprKind::Binary { .. }
        )
    });
    (!texts).then_some(helper)
}

/// The call building the key and the same-file function it calls.
fn helper_call<'m>(
    model: &'m FileModel,
    e: &'m Expr,
    func: Option<FuncId>,
) -> Option<(&'m crate::model::Call, &'m crate::model::Function)> {
    let ExprKind::Call(id) = resolve(model, e, func).kind else {
        return None;
    };
    let call = model.call(id);
    Some((call, model.function_named(&call.name)?))
}

/// The text that identifies a key across calls: the resolved expression's text.
pub fn key_text(model: &FileModel, e: &Expr, func: Option<FuncId>) -> String {
    resolve(model, e, func).text.clone()
}

/// A string the expression certainly holds (a literal, or a name bound to one).
pub fn string<'m>(model: &'m FileModel, e: &'m Expr, func: Option<FuncId>) -> Option<&'m str> {
    resolve(model, e, func).as_str()
}

/// Every identifier-ish word in a text, lowercased: `billingLock`, `lock_key`
/// and `"lock:{id}"` all yield `lock`. Used for vocabulary matches.
pub fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    // The current word: its first byte and how many characters it has.
    let mut start = 0;
    let mut len = 0usize;
    let mut prev_lower = false;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c.is_alphanumeric() {
            // `billingLock` -> billing|lock; `getKVClient` -> get|kv|client:
            // an acronym ends before its last capital when a lowercase follows.
            let upper = c.is_uppercase();
            let acronym_end = upper
                && !prev_lower
                && len > 1
                && chars.peek().is_some_and(|(_, n)| n.is_lowercase());
            if upper && (prev_lower || acronym_end) && len > 0 {
                out.push(text[start..i].to_lowercase());
                len = 0;
            }
            if len == 0 {
                start = i;
            }
            prev_lower = c.is_lowercase() || c.is_ascii_digit();
            len += 1;
        } else {
            if len > 0 {
                out.push(text[start..i].to_lowercase());
                len = 0;
            }
            prev_lower = false;
        }
    }
    if len > 0 {
        out.push(text[start..].to_lowercase());
    }
    out
}

/// Is `name` named for giving a lock back (`release`, `unlockTables`,
/// `ReleaseLock`)?
pub fn gives_back(name: &str) -> bool {
    words(name)
        .iter()
        .any(|w| matches!(w.as_str(), "release" | "unlock"))
}

/// What a lock or release method names besides the taking and giving back:
/// `fragment` of `lockFragment` and `releaseFragment`; nothing for `unlock`.
pub(super) fn lock_object(name: &str) -> Vec<String> {
    words(name)
        .into_iter()
        .filter(|w| {
            !matches!(
                w.as_str(),
                "lock" | "unlock" | "release" | "acquire" | "try" | "obtain"
            )
        })
        .collect()
}

/// The site a release in `func` (its key the parameter `key`) gives back,
/// among the sites keyed by that name (`same_key`, with their functions): the
/// one taking the same parameter's key in a function named for taking what
/// `func` is named for giving back (`AcquireLock(conn, key,
/// id)` .. `ReleaseLock(conn, key, id)`, `acquire_lease(key)` ..
/// `release_lease(key)`). Helpers of one file named as a pair are one lock's.
pub(super) fn sibling_of(
    model: &FileModel,
    func: Option<FuncId>,
    key: &str,
    same_key: impl Iterator<Item = (usize, Option<FuncId>)>,
) -> Option<usize> {
    let name = |f: Option<FuncId>| {
        let f = model.functions.get(f?)?;
        let named = f.params.iter().any(|p| p.name == key);
        named.then(|| f.name.rsplit(['.', ':', '#']).next().unwrap_or(&f.name))
    };
    let gives = name(func)?;
    if !gives_back(gives) {
        return None;
    }
    let object = lock_object(gives);
    let mut found = same_key.filter(|(_, f)| {
        *f != func
            && name(*f).is_some_and(|takes| {
                words(takes).iter().any(|w| w == "acquire" || w == "lock")
                    && lock_object(takes) == object
            })
    });
    let (i, taker) = found.next()?;
    // Two helpers taking it: which one is meant is not this file's to say.
    found.all(|(_, f)| f == taker).then_some(i)
}

#[cfg(test)]
mod tests {
    use super::words;

    #[test]
    fn splits_identifiers_and_keys() {
        assert_eq!(words("billingLock"), ["billing", "lock"]);
        assert_eq!(words("getKVClient()"), ["get", "kv", "client"]);
        assert_eq!(words("HTTPServer"), ["http", "server"]);
        assert_eq!(words("KV"), ["kv"]);
        assert_eq!(words("f\"lock:{order_id}\""), ["f", "lock", "order", "id"]);
        assert!(!words("clock_skew").contains(&"lock".to_string()));
    }
}
