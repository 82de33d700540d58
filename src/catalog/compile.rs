//! Raw YAML → validated, indexed [`Catalog`].

use std::collections::HashSet;
use std::path::Path;

use walkdir::WalkDir;

use super::raw::{RawApi, RawFile};
use super::{gates, Api, ApiKind, Catalog, Clients, CommandSpec, Library, SqlLock};
use crate::error::YamlError;

pub type CatalogError = Box<YamlError>;

/// Reads every `*.yaml` / `*.yml` below `dir`, sorted by path for stable output.
pub fn read_dir(dir: &Path) -> Result<Vec<(String, String)>, CatalogError> {
    if !dir.is_dir() {
        return Err(Box::new(YamlError::Io {
            path: dir.display().to_string(),
            reason: "not a directory".into(),
        }));
    }
    let mut out = Vec::new();
    for entry in WalkDir::new(dir).sort_by_file_name() {
        let entry = entry.map_err(|e| {
            Box::new(YamlError::Io {
                path: dir.display().to_string(),
                reason: e.to_string(),
            })
        })?;
        let path = entry.path();
        let is_yaml = path.extension().is_some_and(|e| e == "yaml" || e == "yml");
        if !entry.file_type().is_file() || !is_yaml {
            continue;
        }
        let text = std::fs::read_to_string(path).map_err(|e| {
            Box::new(YamlError::Io {
                path: path.display().to_string(),
                reason: e.to_string(),
            })
        })?;
        out.push((path.display().to_string(), text));
    }
    Ok(out)
}

/// Parses and validates all sources into one catalog.
pub fn compile(sources: &[(String, String)]) -> Result<Catalog, CatalogError> {
    let mut cat = Catalog::default();
    let texts: Vec<&[u8]> = sources
        .iter()
        .flat_map(|(path, src)| [path.as_bytes(), src.as_bytes()])
        .collect();
    cat.fingerprint = crate::digest::hash(&texts);
    let mut files = Vec::new();
    for (path, src) in sources {
        let raw: RawFile = match serde_yaml::from_str(src) {
            Ok(raw) => raw,
            // An empty file deserialises as unit; treat it as having no entries.
            Err(_) if src.trim().is_empty() => continue,
            Err(e) => return Err(Box::new(YamlError::from_serde(path, src, &e))),
        };
        for (name, c) in &raw.commands {
            cat.commands.insert(
                name.to_ascii_uppercase(),
                CommandSpec {
                    role: c.role,
                    args: c.args.clone(),
                    flags: c.flags.clone(),
                    valued: c.valued.clone(),
                    acquire_when: c.acquire_when.clone(),
                    expiry: c.expiry.clone(),
                    owner_checked_when: c.owner_checked_when.clone(),
                },
            );
        }
        for q in &raw.sql {
            let needle = match (&q.function, &q.clause, q.row_claim) {
                (Some(f), None, false) => format!("{}(", f.to_ascii_uppercase()),
                (None, Some(c), false) => c.to_ascii_uppercase(),
                (None, None, true) if !q.claimants.is_empty() => String::new(),
                (None, None, true) => {
                    let msg = format!("row claim `{}` needs `claimants`", q.id);
                    return Err(Box::new(YamlError::about(path, src, &q.id, msg)));
                }
                _ => {
                    let msg = format!(
                        "sql entry `{}` needs exactly one of `function`, `clause` or `row-claim`",
                        q.id
                    );
                    return Err(Box::new(YamlError::about(path, src, &q.id, msg)));
                }
            };
            cat.sql.push(SqlLock {
                id: q.id.clone(),
                library: raw.library.clone().unwrap_or_else(|| "sql".into()),
                backend: raw.backend.clone().unwrap_or_else(|| "database".into()),
                needle,
                row_claim: q.row_claim,
                claimants: lowercase(&q.claimants),
                update_methods: q.update_methods.clone(),
                lock_tables: lowercase(&q.lock_tables),
                version_columns: lowercase(&q.version_columns),
                insert_methods: q.insert_methods.clone(),
                unique_errors: q.unique_errors.clone(),
                delete_methods: q.delete_methods.clone(),
                mark_methods: q.mark_methods.clone(),
                mark_claimants: lowercase(&q.mark_claimants),
                releases: q.releases.clone(),
                role: q.role,
                scope: q.scope,
                try_acquire: q.try_acquire,
                wait: q.wait,
                usual: q.usual.clone(),
            });
            cat.triggers.extend(raw.triggers.iter().cloned());
        }
        if let Some((q, id)) = raw.sql.iter().find_map(|q| {
            let known = |id: &String| raw.sql.iter().any(|a| &a.id == id);
            q.releases.iter().find(|id| !known(id)).map(|id| (q, id))
        }) {
            let msg = format!(
                "`{}` releases `{id}`, which this file does not define",
                q.id
            );
            return Err(Box::new(YamlError::about(path, src, &q.id, msg)));
        }
        if !raw.sql.is_empty() {
            let locks = &cat.sql[cat.sql.len() - raw.sql.len()..];
            let library = raw.library.as_deref().unwrap_or("sql");
            cat.gates
                .extend(gates::sql_gates(library, &raw.triggers, locks));
        }
        if let Some(c) = &raw.classification {
            if let Some(t) = c.threshold {
                cat.threshold = t;
            }
            cat.correctness_words.extend(
                c.correctness_words
                    .iter()
                    .map(|(w, n)| (w.to_lowercase(), n.scoped())),
            );
            cat.efficiency_words.extend(
                c.efficiency_words
                    .iter()
                    .map(|(w, n)| (w.to_lowercase(), n.scoped())),
            );
        }
        cat.effects.extend(raw.effects.iter().cloned());
        if let Some(p) = &raw.protection {
            let up = |v: &Vec<String>| v.iter().map(|s| s.to_ascii_uppercase()).collect::<Vec<_>>();
            cat.protection
                .conditional_sql
                .extend(up(&p.conditional_sql));
            cat.protection
                .conditional_call
                .extend(up(&p.conditional_call));
            cat.protection.idempotency.extend(up(&p.idempotency));
            cat.protection
                .recheck_methods
                .extend(p.recheck_methods.iter().cloned());
        }
        if let Some(v) = &raw.vocabulary {
            cat.lock_words
                .extend(v.lock_words.iter().map(|w| w.to_ascii_lowercase()));
            cat.helper_words
                .extend(v.helper_words.iter().map(|w| w.to_ascii_lowercase()));
            cat.marker_words
                .extend(v.marker_words.iter().map(|w| w.to_ascii_lowercase()));
            cat.value_words
                .extend(v.value_words.iter().map(|w| w.to_ascii_lowercase()));
            cat.window_words
                .extend(v.window_words.iter().map(|w| w.to_ascii_lowercase()));
            cat.break_words
                .extend(v.break_words.iter().map(|w| w.to_ascii_lowercase()));
            cat.scheduler_words
                .extend(v.scheduler_words.iter().map(|w| w.to_ascii_lowercase()));
            cat.in_memory_constructors
                .extend(v.in_memory_constructors.iter().cloned());
            cat.watch_methods.extend(v.watch_methods.iter().cloned());
            cat.log_methods.extend(v.log_methods.iter().cloned());
            if let Some(c) = &v.check_then_set {
                let into = &mut cat.check_then_set;
                into.test_methods.extend(c.test_methods.iter().cloned());
                into.set_methods.extend(c.set_methods.iter().cloned());
                into.delete_methods.extend(c.delete_methods.iter().cloned());
                into.expiry_keywords
                    .extend(c.expiry_keywords.iter().cloned());
            }
            cat.session_close_methods
                .extend(v.session_close_methods.iter().cloned());
            cat.transaction_methods
                .extend(v.transaction_methods.iter().cloned());
            cat.pool_types.extend(v.pool_types.iter().cloned());
            cat.callback_registrations
                .extend(v.callback_registrations.iter().cloned());
            cat.callback_actions
                .extend(v.callback_actions.iter().cloned());
            cat.file_reads.extend(v.file_reads.iter().cloned());
            cat.clock_reads.extend(v.clock_reads.iter().cloned());
            cat.retry_bounds
                .extend(v.retry_bounds.iter().map(|w| w.to_ascii_lowercase()));
        }
        files.push((path, src, raw));
    }
    // APIs are checked after every file's commands are known.
    let mut ids = HashSet::new();
    for (path, src, raw) in files {
        if raw.apis.is_empty() {
            continue;
        }
        let (Some(name), Some(language), Some(backend)) =
            (raw.library.clone(), raw.language, raw.backend.clone())
        else {
            let msg = "a file with `apis` needs `library`, `language` and `backend`".to_string();
            return Err(Box::new(YamlError::about(path, src, "apis", msg)));
        };
        let c = raw.clients.unwrap_or_default();
        let library = cat.libraries.len();
        cat.libraries.push(Library {
            package: raw.package.clone().unwrap_or_else(|| name.clone()),
            name,
            language,
            backend,
            fixes: raw.fixes.clone().unwrap_or_default(),
            clients: Clients {
                imports: c.imports,
                constructors: c.constructors,
                types: c.types,
                names: c.names,
                accessors: c.accessors,
                yielders: c.yielders,
            },
        });
        cat.triggers.extend(raw.triggers.iter().cloned());
        for api in raw.apis {
            validate_api(path, src, &api, &cat, &mut ids)?;
            let index = cat.apis.len();
            for name in api.methods.iter().chain(&api.functions) {
                let last = last_segment(name).to_string();
                cat.index.entry((language, last)).or_default().push(index);
            }
            let api_is_lock = api.lock.is_some();
            let kind = match (api.command, api.lock) {
                (Some(c), None) => ApiKind::Command((c != "*").then(|| c.to_ascii_uppercase())),
                (None, Some(lock)) => ApiKind::Lock(Box::new(lock)),
                _ => unreachable!("validate_api checks exactly one of command / lock"),
            };
            cat.apis.push(Api {
                id: api.id,
                library,
                methods: api.methods,
                any_receiver: api.any_receiver,
                max_args: api.max_args,
                arity: api.arity,
                arg_is: api.arg_is,
                functions: api.functions,
                kind,
                fixed_flags: api
                    .fixed_flags
                    .iter()
                    .map(|f| f.to_ascii_uppercase())
                    .collect(),
                option_aliases: api.option_aliases,
                contention_error: api.contention_error.unwrap_or(api_is_lock),
                args: api.args,
                flags: api.flags,
                chain: api.chain,
                invoke: api.invoke,
                defines: api.defines,
            });
        }
        let apis: Vec<&Api> = cat.apis.iter().filter(|a| a.library == library).collect();
        let name = &cat.libraries[library].name;
        let gate = gates::library_gate(
            name,
            language,
            &raw.triggers,
            &apis,
            (&cat.commands, &cat.watch_methods),
        );
        cat.gates.push(gate);
    }
    cat.triggers.sort();
    cat.triggers.dedup();
    Ok(cat)
}

fn validate_api(
    path: &str,
    src: &str,
    api: &RawApi,
    cat: &Catalog,
    ids: &mut HashSet<String>,
) -> Result<(), CatalogError> {
    let needle = format!("id: {}", api.id);
    let fail = |msg: String| Err(Box::new(YamlError::about(path, src, &needle, msg)));
    if !ids.insert(api.id.clone()) {
        return fail(format!("duplicate api id `{}`", api.id));
    }
    if api.methods.is_empty() && api.functions.is_empty() {
        return fail(format!("api `{}` needs `methods` or `functions`", api.id));
    }
    match (&api.command, &api.lock) {
        (Some(c), None) if c != "*" && cat.command(c).is_none() => {
            return fail(format!(
                "api `{}` sends unknown command `{c}` (add it under `commands:`)",
                api.id
            ));
        }
        (Some(_), Some(_)) | (None, None) => {
            return fail(format!(
                "api `{}` needs exactly one of `command` or `lock`",
                api.id
            ));
        }
        _ => {}
    }
    for slot in api
        .args
        .values()
        .chain(api.flags.values())
        .chain(api.invoke.values())
    {
        if slot.pos.is_none() && slot.kw.is_none() {
            return fail(format!("api `{}`: every slot needs `pos` or `kw`", api.id));
        }
    }
    Ok(())
}

/// `redis::Script::new` → `new`; `redis.from_url` → `from_url`.
pub fn last_segment(path: &str) -> &str {
    path.rsplit(['.', ':']).next().unwrap_or(path)
}

/// Name stems as the model compares them: lowercase.
fn lowercase(stems: &[String]) -> Vec<String> {
    stems.iter().map(|s| s.to_ascii_lowercase()).collect()
}
