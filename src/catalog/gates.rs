//! The prefilter's table, derived from the catalog: per library, the literals
//! that name it (its `triggers`) and the literals that name one of its lock
//! operations. A file is worth parsing only when it holds both for one
//! library: `redis` alone (a package name, a comment, a config key) is not a
//! lock, `redis` with `nx`, `setnx`, `lock` or `eval` may be. Releases count:
//! a blind `DEL` of a lock key is a finding even where the lock is taken
//! elsewhere.
//!
//! The operations are not written in the YAML: they are the names the
//! catalog already matches calls by, so a new library of a known shape gets
//! its row without anything else to keep in step.

use std::collections::HashMap;

use super::{Api, ApiKind, CommandSpec, Gate, SqlLock};
use crate::catalog::raw::CommandRole;
use crate::model::Language;

/// The row of one library with APIs.
pub(super) fn library_gate(
    language: Language,
    triggers: &[String],
    apis: &[&Api],
    commands: &HashMap<String, CommandSpec>,
) -> Gate {
    let mut operations = Vec::new();
    for api in apis {
        let names = api
            .methods
            .iter()
            .chain(&api.functions)
            .map(|n| super::compile::last_segment(n).to_string());
        match &api.kind {
            ApiKind::Lock(_) => operations.extend(names),
            ApiKind::Command(Some(command)) => {
                let Some(spec) = commands.get(command) else {
                    continue;
                };
                match (spec.role, &spec.acquire_when) {
                    // `set(k, v, nx=True)`, `Rails.cache.write(k, v, unless_exist: true)`:
                    // the flag, as a word or as its keyword; `setIfAbsent` names it itself.
                    (CommandRole::Acquire, Some(flag)) if !api.fixed_flags.contains(flag) => {
                        operations.push(flag.clone());
                        operations.extend(api.flags.get(flag).and_then(|s| s.kw.clone()));
                    }
                    (CommandRole::Acquire | CommandRole::Script | CommandRole::Release, _) => {
                        operations.extend(names)
                    }
                    _ => {}
                }
            }
            // `execute_command("SET", k, v, "NX")`, `Do("EVAL", ...)`: the command's words.
            ApiKind::Command(None) => {
                for (word, spec) in commands {
                    match (spec.role, &spec.acquire_when) {
                        (CommandRole::Acquire, Some(flag)) => operations.push(flag.clone()),
                        (CommandRole::Acquire | CommandRole::Script | CommandRole::Release, _) => {
                            operations.push(word.clone())
                        }
                        _ => {}
                    }
                }
            }
        }
    }
    Gate::new(Some(language), triggers, operations)
}

/// The row of SQL text (any language): its functions and clauses; a row
/// claim is an `UPDATE`.
pub(super) fn sql_gate(triggers: &[String], locks: &[SqlLock]) -> Gate {
    let operations = locks.iter().map(|l| {
        if l.row_claim {
            "UPDATE".to_string()
        } else {
            l.needle.trim_end_matches('(').to_string()
        }
    });
    Gate::new(None, triggers, operations.collect())
}
