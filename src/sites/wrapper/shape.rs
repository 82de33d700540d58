//! What makes a function's lock a helper's: its name, a callback or `yield`
//! under the lock, a returned handle, a parameter switching the lock off.

use super::simple_name;
use crate::lang::profile::profile;
use crate::model::{
    falsy, mentions, Conditional, Exit, ExitKind, Function, GuardKind, Language, Param, Span,
    NULL_WORDS, TRUE_WORDS,
};
use crate::sites::{resolve, FileAnalysis, LockSite};

/// The parameters a caller passes (not `self` / `cls`).
pub(super) fn passed_params(f: &Function, language: Language) -> impl Iterator<Item = &Param> {
    let own = profile(language).self_params;
    (f.params.iter().skip(usize::from(f.receiver))).filter(|p| !own.contains(&p.name.as_str()))
}

/// The names of the parameters a caller passes.
pub(super) fn params_without_self(f: &Function, language: Language) -> Vec<&str> {
    passed_params(f, language)
        .map(|p| p.name.as_str())
        .collect()
}

/// Methods that run a function value (`fn.call()`, `task.run()`,
/// `action.apply(x)`, Ruby `block.call`).
const INVOKE_METHODS: &[&str] = &["call", "run", "apply", "accept", "invoke", "execute"];

/// Words of parameter types that hold a function (`Supplier<T>`,
/// `Callable<T>`, `() => Promise<T>`, Go `func() error`, `Callback`).
const FUNCTION_TYPES: &[&str] = &[
    "Supplier",
    "Callable",
    "Runnable",
    "Function",
    "BiFunction",
    "Consumer",
    "BiConsumer",
    "Callback",
    "Action",
    "Fn",
    "FnOnce",
    "FnMut",
    "Proc",
    "func",
    "Func",
];

/// Does `recv.method(..)` run parameter `recv` of `f` as a callback? A
/// method that invokes a function value, or any method of a parameter typed
/// as one (`supplier.get()`); `order.getId()` on a data parameter does not.
fn runs_callback(f: &Function, recv: &str, method: &str) -> bool {
    let Some(param) = f.params.iter().find(|p| p.name == recv) else {
        return false;
    };
    INVOKE_METHODS.contains(&method)
        || param.ty.as_deref().is_some_and(|t| {
            t.contains("=>")
                || t.split(|c: char| !c.is_alphanumeric())
                    .any(|w| FUNCTION_TYPES.contains(&w))
        })
}

/// What a function does that makes its locks a helper's: computed once per
/// function with a lock site, so that a file of many sites stays linear.
pub(super) struct Shape<'f> {
    params: Vec<&'f str>,
    /// The parameters' default values (`shared=False`), as `params`.
    defaults: Vec<Option<&'f str>>,
    /// The last call of a parameter (a callback run under the lock).
    last_param_call: Option<usize>,
    /// The entry of an options parameter that call runs (`run` of
    /// `data.run()`), which callers pass the callback in.
    pub(super) callback_entry: Option<&'f str>,
    /// The last `yield` (Python, Ruby, JavaScript generators).
    last_yield: Option<usize>,
    exits: Vec<&'f Exit>,
    conditionals: Vec<&'f Conditional>,
    pub(super) named: bool,
    /// A declaration without a body (a Java interface's `@Lock(..) Optional<T>
    /// findOneById(..);`): the query it stands for runs at its callers.
    declared: bool,
    /// Declared to return a lock (`-> Result<Lock, LockError>`, `RLock
    /// obtain(..)`): a type whose name ends in a lock word.
    pub(super) returns_lock: bool,
}

impl<'f> Shape<'f> {
    pub(super) fn new(fa: &'f FileAnalysis, f: &'f Function) -> Shape<'f> {
        let model = fa.model;
        let params = params_without_self(f, model.language);
        let defaults = params
            .iter()
            .map(|n| {
                let p = f.params.iter().find(|p| p.name == *n);
                p.and_then(|p| p.default.as_deref())
            })
            .collect();
        let last_param_call = model
            .calls_in(Some(f.id))
            .filter(|c| {
                params.contains(&c.callee.as_str())
                    || c.receiver
                        .as_deref()
                        .and_then(|r| r.as_name())
                        .is_some_and(|r| runs_callback(f, r, &c.name))
            })
            .max_by_key(|c| c.span.start);
        // `data.run()` on an options parameter: the callback is its `run` entry
        // (a function value's `task.run()` names no entry a caller writes).
        let callback_entry = (last_param_call)
            .filter(|c| c.receiver.is_some())
            .map(|c| c.name.as_str());
        let last_param_call = last_param_call.map(|c| c.span.start);
        let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        let last_yield = fa.text.get(f.span.start..f.span.end).and_then(|t| {
            t.match_indices("yield")
                .filter(|(i, w)| {
                    !word(t[..*i].chars().next_back()) && !word(t[i + w.len()..].chars().next())
                })
                .map(|(i, _)| f.span.start + i)
                // "writers yield instead of waiting" in a comment yields nothing.
                .filter(|&at| {
                    let i = model.comments.partition_point(|c| c.span.end <= at);
                    model.comments.get(i).is_none_or(|c| c.span.start > at)
                })
                .last()
        });
        // The method's own name: every method of a `LeaseManager` is not a lock helper.
        // A row-lock helper says so (`FindForUpdate`, `get_for_share`): its lock
        // outlives it in the caller's transaction.
        let words = resolve::words(simple_name(&f.name));
        let named = words
            .iter()
            .any(|w| fa.catalog.lock_words.contains(w) || fa.catalog.helper_words.contains(w))
            || words
                .windows(2)
                .any(|w| w[0] == "for" && matches!(w[1].as_str(), "update" | "share"));
        let declared = profile(model.language).declared_types
            && (fa.text.get(f.span.start..f.span.end)).is_some_and(|t| t.trim_end().ends_with(';'));
        let returns_lock = f.returns.as_deref().is_some_and(|ty| {
            let lock = |name: &str| {
                (resolve::words(name).pop()).is_some_and(|w| fa.catalog.lock_words.contains(&w))
            };
            // A one-letter prefix is the library's (Redisson's `RLock`).
            let prefixed = |name: &str| {
                let b = name.as_bytes();
                b.len() > 2
                    && b[0].is_ascii_uppercase()
                    && b[1].is_ascii_uppercase()
                    && lock(&name[1..])
            };
            ty.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .any(|name| lock(name) || prefixed(name))
        });
        Shape {
            declared,
            returns_lock,
            params,
            defaults,
            last_param_call,
            callback_entry,
            last_yield,
            exits: model.exits_in(Some(f.id)).collect(),
            conditionals: model.conditionals_in(Some(f.id)).collect(),
            named,
        }
    }

    /// Does the function look like a lock helper for `site`, beyond merely
    /// containing a lock? (helper, runs a callback / yields under it, returns
    /// the handle or result, keeps it in its object).
    pub(super) fn helper(&self, fa: &FileAnalysis, site: &LockSite) -> (bool, bool, bool, bool) {
        let calls_param = self.last_param_call.is_some_and(|at| at > site.span.start);
        // A Ruby block is part of its call: `with_advisory_lock!(k) do yield end`.
        let yields = self.last_yield.is_some_and(|at| at > site.span.start);
        let guard = calls_param || yields;
        let result = fa.model.call(site.result_call).usage.bound_names();
        // An ORM query's site is the call that runs it (`result = await
        // session.execute(query)`): what that call's result is bound to.
        let runner = (fa.model.calls_starting_in(site.func, site.span).into_iter())
            .find(|c| c.span == site.span && c.id != site.result_call)
            .map(|c| c.usage.bound_names())
            .unwrap_or_default();
        let direct: Vec<&str> = result.iter().chain(&runner).copied().collect();
        // Values read out of the locked rows: `err := row.Scan(&evicted)`
        // then `return evicted, err`.
        let read_out = (fa.model.calls_in(site.func))
            .filter(|c| c.span.start >= site.span.end)
            .filter(|c| {
                (c.receiver.as_deref().and_then(|r| r.as_name()))
                    .is_some_and(|r| direct.contains(&r))
            })
            .flat_map(|c| {
                let written = (c.args.iter()).filter_map(|a| a.value.text.strip_prefix('&'));
                c.usage.bound_names().into_iter().chain(written)
            });
        // A name bound to an expression around the acquisition (Rust `let guard =
        // match lock.try_acquire(conn).await? { Left(g) => Some(g), .. }`); not a
        // call chain run on it (`ref = query.with_for_update().one()`: the row).
        let around = (fa.model.assigns_in(site.func))
            .filter(|a| a.value.span.contains(site.span) && a.value.span != site.span)
            .filter(|a| {
                let on_site = |id| {
                    let receiver = fa.model.call(id).receiver.as_deref();
                    receiver.is_some_and(|r| r.span.contains(site.span))
                };
                !a.value.as_call().is_some_and(on_site)
            })
            .map(|a| a.target.as_str());
        let names: Vec<&str> = (direct.iter().copied())
            .chain(read_out)
            .chain(around)
            .chain(site.handle.as_deref())
            .collect();
        let returns = self.declared
            || self.returns_lock
            || self
                .exits
                .iter()
                .any(|e| e.span.contains(site.span) || names.iter().any(|n| mentions(&e.value, n)));
        // Kept in the object for its other methods (`l.workerLeases =
        // append(l.workerLeases, lease...)`): the object holds the lock.
        let kept = (fa.model.assigns_in(site.func))
            .filter(|a| a.span.start >= site.span.end)
            .any(|a| {
                let root = a.target.split(['.', ':']).next().unwrap_or_default();
                a.target.contains('.')
                    && resolve::is_self(fa.model, site.func, root.trim_start_matches('@'))
                    && direct.iter().any(|n| mentions(&a.value.text, n))
            });
        // One that raises when refused hands back nothing to test.
        let raises = self.raises_if_refused(fa, site, &direct);
        let helper = self.named || guard || returns || kept || site.handed || raises;
        (helper, guard, returns && !raises, kept)
    }

    /// Does the function hand back nothing when the try-acquire `site` is
    /// refused (a bare `return`, `return nil`, `return false` where its result
    /// is tested) and a value otherwise (a later `return` of one, or Ruby's
    /// last statement: sidekiq-unique-jobs' `Locksmith#lock` ends `job_id`)?
    /// With the lock still held when it returns, its value says whether the
    /// caller holds it.
    fn refusal_returns_nothing(&self, fa: &FileAnalysis, site: &LockSite) -> bool {
        let model = fa.model;
        // Go and Rust report refusal as an error value, and `nil` is success.
        if !site.try_acquire || !profile(model.language).calls_may_raise {
            return false;
        }
        let direct = model.call(site.result_call).usage.bound_names();
        let nothing = |e: &Exit| {
            e.kind == ExitKind::Return
                && (e.value.trim().is_empty()
                    || falsy(e.value.trim())
                    || NULL_WORDS.contains(&e.value.trim()))
        };
        let refused = self.conditionals.iter().find(|c| {
            tests_grant(c, site, &direct)
                && self
                    .exits
                    .iter()
                    .any(|e| c.stmt.contains(e.span) && nothing(e))
        });
        let Some(refused) = refused else {
            return false;
        };
        // Released in a `finally` on the way out (`try { .. } finally {
        // releaseLease(..) }`): what it returns is the work's, not the lock.
        let Some(f) = site.func.and_then(|id| model.functions.get(id)) else {
            return false;
        };
        let finally = (model.blocks.iter()).any(|b| {
            b.kind == GuardKind::Finally && b.span.start > site.span.end && f.span.contains(b.span)
        });
        !finally
            && (profile(model.language).last_statement_returns
                || (self.exits.iter()).any(|e| {
                    e.kind == ExitKind::Return && e.span.start > refused.stmt.end && !nothing(e)
                }))
    }

    /// Does what the function returns say whether `site` granted the lock?
    pub(super) fn answers(&self, fa: &FileAnalysis, site: &LockSite) -> bool {
        self.refusal_returns_nothing(fa, site) || self.answers_grant(fa, site)
    }

    /// Does the function answer with `True` / `False` under a test of what
    /// `site` acquired (pulp's `are_resources_available`: `if not blocked:
    /// return True` ... `return False`)? With the lock still held, the answer
    /// says whether the caller holds it.
    fn answers_grant(&self, fa: &FileAnalysis, site: &LockSite) -> bool {
        let direct = fa.model.call(site.result_call).usage.bound_names();
        let literal = |e: &Exit, yes: bool| {
            let v = e.value.trim();
            e.kind == ExitKind::Return
                && if yes {
                    TRUE_WORDS.contains(&v)
                } else {
                    falsy(v)
                }
        };
        self.conditionals.iter().any(|c| {
            tests_grant(c, site, &direct)
                && (self.exits.iter()).any(|e| c.stmt.contains(e.span) && literal(e, true))
                && (self.exits.iter()).any(|e| e.span.start > site.span.end && literal(e, false))
        })
    }

    /// Does the function raise when the try-acquire `site` (its result bound
    /// to `direct`) is refused: a test of the result or of the acquisition
    /// itself around a `throw` (`if (affectedRow == 0) throw ..`, `if
    /// (!lock.tryLock(..)) throw ..`), or the result handed to a function of
    /// this file that throws (`checkBatchResult(affectedRows, n)`)? Its callers
    /// then go on only as holders.
    fn raises_if_refused(&self, fa: &FileAnalysis, site: &LockSite, direct: &[&str]) -> bool {
        let model = fa.model;
        let reads = |text: &str| direct.iter().any(|n| mentions(text, n));
        let raise = |e: &Exit, within: Span| e.kind == ExitKind::Raise && within.contains(e.span);
        // `if (!lock.tryLock(..)) throw ..` tests the acquisition in place.
        let tested = (self.conditionals.iter()).any(|c| {
            (c.cond.contains(site.span) || !direct.is_empty() && reads(&c.text))
                && self.exits.iter().any(|e| raise(e, c.stmt))
        });
        let checked = || {
            (model.calls_in(site.func))
                .filter(|c| {
                    c.span.start >= site.span.end && c.args.iter().any(|a| reads(&a.value.text))
                })
                .filter_map(|c| model.function_named(&c.name))
                .any(|g| (model.exits_in(Some(g.id))).any(|e| e.kind == ExitKind::Raise))
        };
        site.try_acquire && (tested || !direct.is_empty() && checked())
    }

    /// A parameter that turns the lock off before it is taken (`if not
    /// global_scope: return local_lock(..)`): its index among the caller's
    /// arguments, its name, and whether a true value (else a false one) skips.
    pub(super) fn switch(&self, site: &LockSite) -> Option<(usize, String, bool)> {
        self.conditionals.iter().find_map(|c| {
            let before = c.stmt.end <= site.span.start;
            let leaves = self
                .exits
                .iter()
                .any(|e| e.kind == crate::model::ExitKind::Return && c.stmt.contains(e.span));
            if !before || !leaves {
                return None;
            }
            let cond = c
                .text
                .trim()
                .trim_start_matches('(')
                .trim_end_matches(')')
                .trim();
            let (name, on) = match cond.strip_prefix("not ").or(cond.strip_prefix('!')) {
                Some(name) => (name.trim(), false),
                None => (cond, true),
            };
            let i = self.params.iter().position(|p| *p == name)?;
            Some((i, name.to_string(), on))
        })
    }

    /// A wrapper call's switch set from one of this function's parameters
    /// (`acquire(ctx, node, shared=shared_task)`): that parameter is now the
    /// switch (index, name, whether a true value turns the lock off), and
    /// whether its default value already does.
    pub(super) fn handed_on(&self, site: &LockSite) -> Option<((usize, String, bool), bool)> {
        let (_, name, on) = site.switch.as_ref()?;
        let i = self.params.iter().position(|p| p == name)?;
        let off = self.defaults[i].is_some_and(|d| {
            let d = d.trim();
            if *on {
                TRUE_WORDS.contains(&d)
            } else {
                falsy(d)
            }
        });
        Some(((i, name.clone(), *on), off))
    }

    /// `if not self.shared: self._lock()` with `shared=False` by default, or
    /// `if (condition) return this.lock(..)` with no default: the lock is
    /// taken unless a caller passes the other value, so the test is a switch
    /// its callers turn off (index, name, whether a true value does).
    pub(super) fn default_switch(&self, site: &LockSite) -> Option<(usize, String, bool)> {
        let c = self
            .conditionals
            .iter()
            .filter(|c| c.stmt.contains(site.span) && !c.cond.contains(site.span))
            .min_by_key(|c| c.stmt.end - c.stmt.start)?;
        let cond = c.text.trim().trim_start_matches('(').trim_end_matches(')');
        let (tested, negated) = match cond.strip_prefix("not ").or(cond.strip_prefix('!')) {
            Some(rest) => (rest.trim(), true),
            None => (cond.trim(), false),
        };
        // `lockName != null`: taken when a value is given, as a true flag is.
        let tested = given(tested).unwrap_or(tested);
        // The parameter itself or the field it was stored in (`self.shared`).
        let name = tested.rsplit(['.', ':', '@']).next()?;
        let i = self.params.iter().position(|p| *p == name)?;
        let taken = match self.defaults.get(i).copied().flatten().map(str::trim) {
            // No default (`lockIf(condition, name, ..)`): every caller says, and
            // what it passes decides ([`super::objects::switched_off`]).
            None => true,
            Some(default) if negated => falsy(default),
            Some(default) => TRUE_WORDS.contains(&default),
        };
        // Taken when the test holds: the other value turns it off.
        taken.then(|| (i, name.to_string(), negated))
    }

    /// Is the acquisition taken only when a parameter says so
    /// (`if for_update: q = q.with_for_update()`)? Then a call locks nothing
    /// unless its caller asks, which the call's arguments decide, not the helper.
    /// The lock clause counts where it is written, not only where the query
    /// runs (`if for_update: q = q.with_for_update()` then `session.execute(q)`).
    pub(super) fn on_request(&self, fa: &FileAnalysis, site: &LockSite) -> bool {
        let written = fa.model.call(site.call).span;
        self.conditionals.iter().any(|c| {
            [site.span, written]
                .iter()
                .any(|&at| c.stmt.contains(at) && !c.cond.contains(at))
                && self.params.iter().any(|p| tests_itself(&c.text, p))
        })
    }
}

/// The name a test checks is given (`lockName != null`, `key is not None`).
fn given(test: &str) -> Option<&str> {
    [" !== ", " != ", " is not "].iter().find_map(|op| {
        let (name, null) = test.split_once(op)?;
        NULL_WORDS.contains(&null.trim()).then(|| name.trim())
    })
}

/// Does the condition `text` test `param` itself, not only pass it to a call
/// (`!isLockOwner(lockName)` asks about the lock; `for_update`, `lockName !=
/// null` request it)?
fn tests_itself(text: &str, param: &str) -> bool {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    // The open parentheses, each a call's argument list or not, and how many are.
    let (mut open, mut in_calls, mut prev) = (Vec::new(), 0usize, ' ');
    for (i, c) in text.char_indices() {
        let whole = text[i..].starts_with(param)
            && !text[..i].chars().next_back().is_some_and(word)
            && !text[i + param.len()..].chars().next().is_some_and(word);
        if whole && in_calls == 0 {
            return true;
        }
        match c {
            '(' => {
                open.push(word(prev));
                in_calls += usize::from(word(prev));
            }
            ')' => in_calls -= usize::from(open.pop().unwrap_or(false)),
            _ => {}
        }
        if !c.is_whitespace() {
            prev = c;
        }
    }
    false
}

/// Does `c` test what `site` acquired: the acquisition in its condition, or
/// a later test of a name the result is bound to (`direct`)?
fn tests_grant(c: &Conditional, site: &LockSite, direct: &[&str]) -> bool {
    c.cond.contains(site.span)
        || c.cond.start >= site.span.end && direct.iter().any(|n| mentions(&c.text, n))
}

#[cfg(test)]
mod tests {
    use super::{given, tests_itself};

    #[test]
    fn a_switch_tests_the_parameter_itself() {
        assert!(!tests_itself("!isLockOwner(lockName)", "lockName"));
        assert!(tests_itself("(lockName != null)", "lockName"));
        assert!(tests_itself("for_update and ok(x)", "for_update"));
        assert!(tests_itself("(ok(x) && (shared))", "shared"));
        assert!(!tests_itself("is_owner(key, (name))", "name"));
        assert!(!tests_itself("lockNames", "lockName"));
        assert_eq!(given("lockName != null"), Some("lockName"));
        assert_eq!(given("key is not None"), Some("key"));
        assert_eq!(given("a != b"), None);
    }
}
