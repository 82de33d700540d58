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
    library: &str,
    language: Language,
    triggers: &[String],
    apis: &[&Api],
    (commands, watch): (&HashMap<String, CommandSpec>, &[String]),
) -> Gate {
    let mut operations = Vec::new();
    for api in apis {
        let names = api
            .methods
            .iter()
            .chain(&api.functions)
            .map(|n| call_name(n));
        match &api.kind {
            // A lock object's type names it where it is used (`RLock lock`,
            // `m *redsync.Mutex`): a package-qualified type as written, since
            // its bare name (`Mutex`) is every in-process mutex's.
            ApiKind::Lock(spec) => {
                // A call that is the lock only with a required argument
                // (`findOne({lock: t.LOCK.UPDATE})`, `setLock("pessimistic_write")`)
                // is named by that argument: its keyword, else its words.
                match api.arg_is.as_ref().filter(|a| a.required) {
                    Some(a) => match &a.kw {
                        Some(kw) => operations.push(kw.clone()),
                        None => operations.extend(a.one_of.iter().cloned()),
                    },
                    None => operations.extend(names),
                }
                let types = spec.handle_types.iter();
                operations.extend(types.map(|t| match t.matches('.').count() {
                    1 => t.clone(),
                    _ => super::compile::last_segment(t).to_string(),
                }));
            }
            ApiKind::Command(Some(command)) => {
                let Some(spec) = commands.get(command) else {
                    continue;
                };
                match (spec.role, &spec.acquire_when) {
                    // `set(k, v, nx=True)`, `Rails.cache.write(k, v, unless_exist: true)`:
                    // the flag, as a word or as its keyword; `setIfAbsent` names it itself.
                    // A SET whose key was WATCHed is a check-and-set without the flag:
                    // the word `watch` itself, not the helpers that may watch
                    // (`transaction`, `TxPipelined` name far more files than WATCH does).
                    (CommandRole::Acquire, Some(flag)) if !api.fixed_flags.contains(flag) => {
                        operations.push(flag.clone());
                        operations.extend(api.flags.get(flag).and_then(|s| s.kw.clone()));
                        let watches = watch.iter().filter(|w| w.eq_ignore_ascii_case("watch"));
                        operations.extend(watches.cloned());
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
    Gate::new(library, Some(language), triggers, operations)
}

/// How a column set to a value given at run time is spelled (`= ?`, `= $1`,
/// `= %s`).
const PLACEHOLDERS: &[&str] = &["= ?", "=?", "= $", "=$", "= %s", "=%s"];

/// The rows of SQL text (any language): its functions and clauses; a row
/// claim is an `UPDATE` that also names a claimant column, or a guarded insert
/// (`ON CONFLICT`, `INSERT IGNORE`) near a lock table's name.
pub(super) fn sql_gates(library: &str, triggers: &[String], locks: &[SqlLock]) -> Vec<Gate> {
    let (claims, others): (Vec<&SqlLock>, Vec<&SqlLock>) = locks.iter().partition(|l| l.row_claim);
    let needles = others
        .iter()
        .map(|l| l.needle.trim_end_matches('(').to_string());
    let mut gates = vec![Gate::new(library, None, triggers, needles.collect())];
    for claim in claims {
        let updates = std::iter::once("UPDATE".to_string()).chain(claim.update_methods.clone());
        let mut gate = Gate::new(library, None, triggers, updates.collect());
        gate.claimants = claim.claimants.clone();
        // Who and when of a claim written together (`locked_by = ?, locked_at = ?`):
        // the `_by` of a claimant stem.
        let mut pair = gate.clone();
        pair.triggers = vec!["_by".to_string()];
        gates.push(gate);
        gates.push(pair);
        // A unique-index claim: the error it rescues names it.
        if !claim.unique_errors.is_empty() {
            let ops = claim.insert_methods.clone();
            gates.push(Gate::new(library, None, &claim.unique_errors, ops));
        }
        // A compare-and-set of the claimant: a claimant set to a placeholder
        // (`current_epoch_owner = ?`, also spelled `OWNER + " =?"`).
        if !claim.version_columns.is_empty() {
            let placeholders: Vec<String> = PLACEHOLDERS.iter().map(|p| p.to_string()).collect();
            let updates = std::iter::once("UPDATE".to_string()).chain(claim.update_methods.clone());
            let mut gate = Gate::new(library, None, &placeholders, updates.collect());
            gate.claimants = claim.claimants.clone();
            gates.push(gate);
        }
        if claim.lock_tables.is_empty() {
            continue;
        }
        let guards: Vec<String> = super::INSERT_GUARDS.iter().map(|g| g.to_string()).collect();
        let mut gate = Gate::new(library, None, &guards, Vec::new());
        gate.claimants = claim.lock_tables.clone();
        gate.claimant_in_statement = true;
        gates.push(gate);
    }
    gates
}

/// How a call of `path` is spelled in code: its last segment (`redis.NewScript` →
/// `NewScript`), with its type when that segment alone is a common word
/// (`redis::Script::new` → `Script::new`, `RedisScript.of` → `RedisScript.of`).
fn call_name(path: &str) -> String {
    let last = super::compile::last_segment(path);
    let head = &path[..path.len() - last.len()];
    let separator = if head.ends_with("::") { "::" } else { "." };
    let owner = super::compile::last_segment(head.trim_end_matches([':', '.']));
    let static_fn = last.starts_with(|c: char| c.is_ascii_lowercase())
        && owner.starts_with(|c: char| c.is_ascii_uppercase());
    match static_fn && !head.is_empty() {
        true => format!("{owner}{separator}{last}"),
        false => last.to_string(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn call_names() {
        use super::call_name;
        assert_eq!(call_name("redis::Script::new"), "Script::new");
        assert_eq!(call_name("org.x.RedisScript.of"), "RedisScript.of");
        assert_eq!(call_name("redis.NewScript"), "NewScript");
        assert_eq!(call_name("pottery.Redlock"), "Redlock");
        assert_eq!(call_name("lock"), "lock");
        assert_eq!(call_name("redis::cmd"), "cmd");
    }
}
