//! Indexes over a file's model, built on first use so that questions about
//! one name, one function or one span cost in proportion to the answer, not
//! to the file (a generated file of 20,000 functions stays linear).

use std::collections::HashMap;

use super::{Assign, Block, Call, Conditional, Exit, FileModel, FuncId, Function, GuardKind, Span};

/// Assignments by target name, then by enclosing function (`None`: module
/// level), in source order: a lookup reads only its own scope's.
pub type AssignIndex = HashMap<String, HashMap<Option<FuncId>, Vec<usize>>>;

/// Indices of a file's statements by enclosing function (slot 0: outside
/// any function, slot `f + 1`: function `f`).
#[derive(Debug, Clone, Default)]
pub struct ByFunction {
    calls: Vec<Vec<usize>>,
    /// Each function's calls by where they start (a section of one function
    /// with 5,000 locks is found by binary search, not a pass over all).
    calls_by_start: Vec<Vec<usize>>,
    exits: Vec<Vec<usize>>,
    conditionals: Vec<Vec<usize>>,
    assigns: Vec<Vec<usize>>,
}

impl ByFunction {
    pub(super) fn build(model: &FileModel) -> ByFunction {
        let slots = model.functions.len() + 1;
        let group = |funcs: &mut dyn Iterator<Item = Option<FuncId>>| {
            let mut out = vec![Vec::new(); slots];
            for (i, f) in funcs.enumerate() {
                if let Some(slot) = out.get_mut(f.map_or(0, |f| f + 1)) {
                    slot.push(i);
                }
            }
            out
        };
        let calls = group(&mut model.calls.iter().map(|c| c.func));
        let mut calls_by_start = calls.clone();
        for slot in &mut calls_by_start {
            slot.sort_by_key(|&i| model.calls[i].span.start);
        }
        ByFunction {
            calls,
            calls_by_start,
            exits: group(&mut model.exits.iter().map(|e| e.func)),
            conditionals: group(&mut model.conditionals.iter().map(|c| c.func)),
            assigns: group(&mut model.assigns.iter().map(|a| a.func)),
        }
    }
}

/// The items of `items` at the indices of `slot`, in order.
fn pick<'a, T>(items: &'a [T], slot: &'a [usize]) -> impl Iterator<Item = &'a T> {
    slot.iter().map(move |&i| &items[i])
}

impl FileModel {
    fn by_function(&self) -> &ByFunction {
        self.by_function.get_or_init(|| ByFunction::build(self))
    }

    fn slot(list: &[Vec<usize>], func: Option<FuncId>) -> &[usize] {
        list.get(func.map_or(0, |f| f + 1))
            .map_or(&[], Vec::as_slice)
    }

    /// The calls whose enclosing function is `func` (`None`: top level).
    pub fn calls_in(&self, func: Option<FuncId>) -> impl Iterator<Item = &Call> {
        pick(&self.calls, Self::slot(&self.by_function().calls, func))
    }

    /// The calls of `func` that start inside `span`, in the order of
    /// [`FileModel::calls_in`].
    pub fn calls_starting_in(&self, func: Option<FuncId>, span: Span) -> Vec<&Call> {
        let slot = Self::slot(&self.by_function().calls_by_start, func);
        let from = slot.partition_point(|&i| self.calls[i].span.start < span.start);
        let to = slot.partition_point(|&i| self.calls[i].span.start < span.end);
        let mut found: Vec<usize> = slot[from..to.max(from)].to_vec();
        found.sort_unstable();
        found.into_iter().map(|i| &self.calls[i]).collect()
    }

    pub fn exits_in(&self, func: Option<FuncId>) -> impl Iterator<Item = &Exit> {
        pick(&self.exits, Self::slot(&self.by_function().exits, func))
    }

    /// Does `call`'s function return its result itself (`return r.lock(k)`,
    /// `return new Mutex(..)`, or `l = r.lock(k)` ... `return l` / `return
    /// l, nil`)? Not `return l.locked()`, `return [r.lock(n) for n in ns]`
    /// or `return describe(r.lock(k))`.
    pub fn is_returned(&self, call: &Call) -> bool {
        let Some(func) = call.func else { return false };
        let bound = call.usage.bound_names();
        self.exits_in(Some(func)).any(|e| {
            let value = e.value.trim();
            let value = value.strip_prefix("await ").unwrap_or(value).trim_start();
            let value = value.strip_prefix("new ").unwrap_or(value);
            let itself = e.span.contains(call.span)
                && value.starts_with(call.callee.as_str())
                && !self.calls_in(Some(func)).any(|c| {
                    c.id != call.id && c.span.contains(call.span) && e.span.contains(c.span)
                });
            let named = value.split(',').any(|v| bound.contains(&v.trim()));
            e.kind == super::ExitKind::Return && (itself || named)
        })
    }

    /// Is `span` in a branch that leaves the function after it, one that
    /// does not hold `from` (`if (!locked) { folock.unlock(); return; }`)?
    /// What happens there happens on that way out only, not on the way on.
    pub fn on_way_out(&self, span: Span, func: Option<FuncId>, from: Span) -> bool {
        let branch = (self.conditionals_in(func))
            .filter(|c| c.stmt.contains(span) && !c.cond.contains(span))
            .min_by_key(|c| c.stmt.end - c.stmt.start);
        let Some(branch) = branch.filter(|b| !b.stmt.contains(from)) else {
            return false;
        };
        self.exits_in(func).any(|e| {
            matches!(e.kind, super::ExitKind::Return | super::ExitKind::Raise)
                && branch.stmt.contains(e.span)
                // After it, or it is what the exit raises (`raise TimeoutError(key)`).
                && (e.span.start >= span.end || e.span.contains(span))
        })
    }

    pub fn conditionals_in(&self, func: Option<FuncId>) -> impl Iterator<Item = &Conditional> {
        pick(
            &self.conditionals,
            Self::slot(&self.by_function().conditionals, func),
        )
    }

    pub fn assigns_in(&self, func: Option<FuncId>) -> impl Iterator<Item = &Assign> {
        pick(&self.assigns, Self::slot(&self.by_function().assigns, func))
    }

    /// The names that imports bound to the alias `name` import (`AsyncLock` in
    /// `from redis.asyncio.lock import Lock as AsyncLock`: `Lock`).
    pub fn unaliased<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.imports
            .iter()
            .filter(move |i| i.alias.as_deref() == Some(name))
            .filter_map(|i| i.path.rsplit(['.', '/', ':']).next())
    }

    /// The first function whose last name segment is `name`.
    pub fn function_named(&self, name: &str) -> Option<&Function> {
        let index = self.functions_by_name.get_or_init(|| {
            let mut index = HashMap::new();
            for f in &self.functions {
                let simple = f.name.rsplit(['.', ':']).next().unwrap_or(&f.name);
                index.entry(simple.to_string()).or_insert(f.id);
            }
            index
        });
        index.get(name).map(|&id| &self.functions[id])
    }

    /// The closest assignment to `name` visible from `at` in function `func`:
    /// a local one before `at`, else a module-level one.
    pub fn lookup(&self, name: &str, func: Option<FuncId>, at: usize) -> Option<&Assign> {
        let index = self.assigns_by_name.get_or_init(|| {
            let mut index: AssignIndex = HashMap::new();
            for (i, a) in self.assigns.iter().enumerate() {
                index
                    .entry(a.target.clone())
                    .or_default()
                    .entry(a.func)
                    .or_default()
                    .push(i);
            }
            // In source order, for the binary search below: a generated
            // function assigns one name thousands of times.
            for scopes in index.values_mut() {
                for at in scopes.values_mut() {
                    at.sort_by_key(|&i| self.assigns[i].span.start);
                }
            }
            index
        });
        let scope = |f: Option<FuncId>| {
            index
                .get(name)
                .and_then(|by_func| by_func.get(&f))
                .map_or(&[][..], Vec::as_slice)
        };
        let local = func.and_then(|_| {
            let ids = scope(func);
            let before = ids.partition_point(|&i| self.assigns[i].span.start < at);
            before.checked_sub(1).map(|k| &self.assigns[ids[k]])
        });
        local.or_else(|| scope(None).first().map(|&i| &self.assigns[i]))
    }

    /// The functions whose bodies hold `span` (the one it is in, and those
    /// around that one).
    pub fn functions_around(&self, span: Span) -> impl Iterator<Item = &Function> {
        self.functions.iter().filter(move |f| f.span.contains(span))
    }

    /// The function whose decorators hold `span` (`@advisory_lock("k")` above
    /// `def create`).
    pub fn decorated_by(&self, span: Span) -> Option<FuncId> {
        let before = self
            .decorators
            .partition_point(|(sp, _)| sp.start <= span.start);
        let (decorators, f) = self.decorators.get(before.checked_sub(1)?)?;
        decorators.contains(span).then_some(*f)
    }

    /// Is `span` inside a block of one of these kinds (or one nested in it)?
    pub fn inside(&self, span: Span, kinds: &[GuardKind]) -> bool {
        self.enclosing(span, kinds).is_some()
    }

    /// The innermost block of one of these kinds that contains `span`.
    pub fn enclosing(&self, span: Span, kinds: &[GuardKind]) -> Option<&Block> {
        let ordered = *self.blocks_in_order.get_or_init(|| {
            self.blocks
                .windows(2)
                .all(|w| w[0].span.start <= w[1].span.start)
        });
        if !ordered {
            return self
                .blocks
                .iter()
                .filter(|b| kinds.contains(&b.kind) && b.span.contains(span))
                .min_by_key(|b| b.span.end - b.span.start);
        }
        // The blocks containing `span` are the innermost one and its
        // ancestors; in pre-order, the last block starting at or before
        // `span` is the innermost one or a descendant of it.
        let i = self.blocks.partition_point(|b| b.span.start <= span.start);
        let mut at = i.checked_sub(1);
        while let Some(b) = at.map(|i| &self.blocks[i]) {
            if b.span.contains(span) && kinds.contains(&b.kind) {
                return Some(b);
            }
            at = b.parent;
        }
        None
    }
}
