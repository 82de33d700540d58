//! The catalog: knowledge of lock APIs, loaded from `rules/*.yaml`.
//!
//! Input: YAML sources (the built-in ones embedded in the binary, plus user
//! folders from `--rules`). Output: a validated, indexed [`Catalog`] that
//! `sites` matches calls against. No rule logic lives here, only facts.

mod compile;
pub mod duration_text;
mod gates;
pub mod raw;
mod raw_durations;
mod raw_sql;
mod raw_vocabulary;
mod raw_words;

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

pub use compile::CatalogError;
pub use raw::{
    Acquires, ArgRole, CommandRole, RawAcquireMethod as AcquireMethod, RawArgIs as ArgIs,
    RawCheckThenSet as CheckThenSet, RawDuration as DurationSlot, RawLock as LockSpec,
    RawSlot as Slot, Scope, SqlRole,
};

use crate::model::Language;

/// The JSON Schema of a catalog file, generated from the types in [`raw`]
/// (kept as `docs/catalog.schema.json`; the YAML files point editors at it).
pub fn schema() -> String {
    let mut schema = schemars::schema_for!(raw::RawFile);
    schema.insert(
        "title".into(),
        "lock-audit catalog file (rules/*.yaml)".into(),
    );
    let mut text = serde_json::to_string_pretty(&schema).unwrap_or_default();
    text.push('\n');
    text
}

// The catalog files compiled into the binary, so an installed tool works anywhere.
include!(concat!(env!("OUT_DIR"), "/builtin_rules.rs"));

/// How to recognise a library's client object.
#[derive(Debug, Clone, Default)]
pub struct Clients {
    pub imports: Vec<String>,
    pub constructors: Vec<String>,
    pub types: Vec<String>,
    pub names: Vec<String>,
    pub accessors: Vec<String>,
    pub yielders: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct Library {
    pub name: String,
    /// What dependency manifests call it (`package:`, default the name).
    pub package: String,
    pub language: Language,
    pub backend: String,
    pub fixes: raw::RawFixes,
    pub clients: Clients,
}

/// One API shape: which calls it matches and where its arguments are.
#[derive(Debug, Clone)]
pub struct Api {
    pub id: String,
    pub library: usize,
    pub methods: Vec<String>,
    /// See [`raw::RawApi::any_receiver`].
    pub any_receiver: bool,
    pub max_args: Option<usize>,
    pub arity: Option<usize>,
    pub arg_is: Option<ArgIs>,
    pub functions: Vec<String>,
    pub kind: ApiKind,
    pub args: BTreeMap<ArgRole, Slot>,
    pub flags: BTreeMap<String, Slot>,
    pub chain: BTreeMap<String, ArgRole>,
    pub invoke: BTreeMap<ArgRole, Slot>,
    pub defines: Option<Slot>,
    pub fixed_flags: Vec<String>,
    pub option_aliases: BTreeMap<String, String>,
    pub contention_error: bool,
}

/// What a call of an API does.
#[derive(Debug, Clone)]
pub enum ApiKind {
    /// Sends a canonical Redis command; `None` when the first word argument names it.
    Command(Option<String>),
    /// Creates or takes a library lock.
    Lock(Box<LockSpec>),
}

/// A lock inside SQL text.
#[derive(Debug, Clone)]
pub struct SqlLock {
    pub id: String,
    pub library: String,
    pub backend: String,
    /// The text to find, uppercase: `PG_ADVISORY_LOCK(` or `FOR UPDATE`;
    /// empty for a row claim.
    pub needle: String,
    pub row_claim: bool,
    /// Claimant column stems (lowercase), for a row claim.
    pub claimants: Vec<String>,
    /// ORM calls that write columns, for a row claim spelled with an ORM.
    pub update_methods: Vec<String>,
    /// Lock-table name stems (lowercase), for a row claim written as a
    /// guarded insert.
    pub lock_tables: Vec<String>,
    /// Row-version column stems (lowercase), for a row claim written as a
    /// compare-and-set of the claimant.
    pub version_columns: Vec<String>,
    /// A unique-index claim spelled with an ORM: its inserts, the errors the
    /// index raises, and the deletes that release it.
    pub insert_methods: Vec<String>,
    pub unique_errors: Vec<String>,
    pub delete_methods: Vec<String>,
    /// ORM writes that mark a locked row claimed (or clear the mark).
    pub mark_methods: Vec<String>,
    /// Claimant stems (lowercase) a mark writes.
    pub mark_claimants: Vec<String>,
    /// For a release, the ids of the acquisitions it ends (empty: any).
    pub releases: Vec<String>,
    pub role: SqlRole,
    pub scope: Option<Scope>,
    pub try_acquire: bool,
    pub wait: Option<raw::SqlWait>,
    pub usual: Option<raw::RawUsual>,
}

/// One row of the prefilter's table: a file is parsed when it holds one of
/// `triggers` (names of the library) and one of `operations` (names of its
/// lock operations, whole words); with no operations, a trigger alone.
/// Both are matched ignoring ASCII case.
#[derive(Debug, Clone)]
pub struct Gate {
    pub library: String,
    /// `None`: every language (SQL text).
    pub language: Option<Language>,
    pub triggers: Vec<String>,
    pub operations: Vec<String>,
    /// When not empty, a trigger counts only right after a column name one of
    /// these starts (or one of its `_` parts): a row claim's `owner IS NULL`.
    pub claimants: Vec<String>,
    /// The claimant may be any name of the statement around the trigger (an
    /// insert's table or columns before its `ON CONFLICT`, after its `INSERT
    /// IGNORE`), not only the one right before it.
    pub claimant_in_statement: bool,
}

/// The spellings of an insert that does not overwrite a row already there
/// (PostgreSQL and SQLite `ON CONFLICT`, MySQL `INSERT IGNORE`, SQLite
/// `INSERT OR IGNORE`): with a lock table, the insert is a claim.
pub const INSERT_GUARDS: &[&str] = &["ON CONFLICT", "INSERT IGNORE", "INSERT OR IGNORE"];

impl Gate {
    fn new(
        library: &str,
        language: Option<Language>,
        triggers: &[String],
        mut operations: Vec<String>,
    ) -> Gate {
        operations.sort_by_key(|o| o.to_ascii_lowercase());
        operations.dedup_by(|a, b| a.eq_ignore_ascii_case(b));
        Gate {
            library: library.to_string(),
            language,
            triggers: triggers.to_vec(),
            operations,
            claimants: Vec::new(),
            claimant_in_statement: false,
        }
    }
}

/// A canonical Redis command's grammar and role.
#[derive(Debug, Clone)]
pub struct CommandSpec {
    pub role: CommandRole,
    pub args: Vec<String>,
    pub flags: Vec<String>,
    pub valued: Vec<String>,
    pub acquire_when: Option<String>,
    pub expiry: Vec<String>,
    pub owner_checked_when: Vec<String>,
}

impl CommandSpec {
    /// Does the command's first argument hold a script (`EVAL`, `EVALSHA`)?
    pub fn runs_script(&self) -> bool {
        self.args.first().is_some_and(|a| a == "script")
    }

    pub fn is_option(&self, word: &str) -> bool {
        self.flags
            .iter()
            .chain(&self.valued)
            .any(|f| f.eq_ignore_ascii_case(word))
    }
    pub fn takes_value(&self, word: &str) -> bool {
        self.valued.iter().any(|f| f.eq_ignore_ascii_case(word))
    }
}

/// The compiled, indexed catalog.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    /// The hash of the YAML it was compiled from (part of the cache key).
    pub fingerprint: String,
    pub libraries: Vec<Library>,
    pub apis: Vec<Api>,
    pub commands: HashMap<String, CommandSpec>,
    pub lock_words: Vec<String>,
    pub helper_words: Vec<String>,
    pub marker_words: Vec<String>,
    pub value_words: Vec<String>,
    pub window_words: Vec<String>,
    /// Words of a function that breaks a lock on purpose (`break_`, `steal_lock`).
    pub break_words: Vec<String>,
    pub scheduler_words: Vec<String>,
    pub in_memory_constructors: Vec<String>,
    pub watch_methods: Vec<String>,
    pub log_methods: Vec<String>,
    /// The calls of a check-then-set lock (`cache.get` / `set` / `delete`).
    pub check_then_set: CheckThenSet,
    pub session_close_methods: Vec<String>,
    pub transaction_methods: Vec<String>,
    /// Connection-pool types beyond those named for a pool (`sql.DB`).
    pub pool_types: Vec<String>,
    /// Class-body calls that register a method by name to run around the
    /// class's work (Rails `around_action :lock_order`).
    pub callback_registrations: Vec<String>,
    /// The registrations that run the class's actions (`around_action`).
    pub callback_actions: Vec<String>,
    /// Calls that read the script or SQL file their argument names.
    pub file_reads: Vec<String>,
    /// Calls that read a clock and cannot fail.
    pub clock_reads: Vec<String>,
    /// Words that bound a retry loop (`deadline`, `attempts`, `ctx`).
    pub retry_bounds: Vec<String>,
    pub triggers: Vec<String>,
    /// The prefilter's table, one row per library.
    pub gates: Vec<Gate>,
    pub sql: Vec<SqlLock>,
    /// Classification word weights and threshold.
    pub threshold: i32,
    /// Word -> (weight, where it counts).
    pub correctness_words: HashMap<String, (i32, Vec<raw::WordScope>)>,
    pub efficiency_words: HashMap<String, (i32, Vec<raw::WordScope>)>,
    pub effects: Vec<raw::RawEffect>,
    pub protection: raw::RawProtection,
    /// (language, method or function last segment) -> API indices.
    index: HashMap<(Language, String), Vec<usize>>,
}

impl Catalog {
    /// The built-in catalog plus every `*.yaml`/`*.yml` under `extra_dirs`.
    pub fn load(extra_dirs: &[impl AsRef<Path>]) -> Result<Catalog, CatalogError> {
        let mut sources: Vec<(String, String)> = BUILTIN
            .iter()
            .map(|(n, s)| (n.to_string(), s.to_string()))
            .collect();
        for dir in extra_dirs {
            sources.extend(compile::read_dir(dir.as_ref())?);
        }
        compile::compile(&sources)
    }

    /// The built-in catalog plus YAML sources given as (name, text).
    pub fn with_sources(extra: &[(String, String)]) -> Result<Catalog, CatalogError> {
        let mut sources: Vec<(String, String)> = BUILTIN
            .iter()
            .map(|(n, s)| (n.to_string(), s.to_string()))
            .collect();
        sources.extend(extra.iter().cloned());
        compile::compile(&sources)
    }

    /// The built-in catalog only.
    pub fn builtin() -> Result<Catalog, CatalogError> {
        Catalog::load(&[] as &[&Path])
    }

    /// API shapes that may match a call named `name` in `language`.
    pub fn candidates(&self, language: Language, name: &str) -> &[usize] {
        self.index
            .get(&(language.catalog_language(), name.to_string()))
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    pub fn command(&self, name: &str) -> Option<&CommandSpec> {
        self.commands.get(&name.to_ascii_uppercase())
    }

    pub fn library_of(&self, api: &Api) -> &Library {
        &self.libraries[api.library]
    }

    /// A library by the name its sites and releases carry.
    /// The row-claim entry of `sql` that `has` a form (`update_methods` for an
    /// ORM claim, `unique_errors` for a unique-index insert).
    pub fn row_claim(&self, has: impl Fn(&SqlLock) -> bool) -> Option<&SqlLock> {
        self.sql.iter().find(|q| q.row_claim && has(q))
    }

    pub fn library(&self, name: &str) -> Option<&Library> {
        self.libraries.iter().find(|l| l.name == name)
    }

    /// The packages whose durations changed meaning between versions
    /// (`before:`), by language: only their manifests' versions matter.
    pub fn versioned_packages(&self) -> Vec<(Language, String)> {
        let mut out: Vec<(Language, String)> = Vec::new();
        for api in &self.apis {
            let ApiKind::Lock(spec) = &api.kind else {
                continue;
            };
            let methods = spec.acquire_methods.iter();
            let mut slots = [&spec.ttl, &spec.wait]
                .into_iter()
                .flatten()
                .chain(methods.flat_map(|m| m.ttl.iter().chain(&m.wait)));
            if slots.any(|s| !s.before.is_empty()) {
                let lib = self.library_of(api);
                let entry = (lib.language, lib.package.clone());
                if !out.contains(&entry) {
                    out.push(entry);
                }
            }
        }
        out
    }
}

impl Catalog {
    /// The prefilter's table, one line per library: what names it, and the
    /// operations one of which must be there too (`lock-audit libraries --prefilter`).
    pub fn prefilter_table(&self) -> String {
        let mut out = String::new();
        for g in &self.gates {
            let language = g.language.map_or("any", Language::name);
            let operations = match g.operations.is_empty() {
                true => "(none needed)".to_string(),
                false => g.operations.join(", "),
            };
            out.push_str(&format!(
                "{} ({language}): {}\n    with one of: {operations}\n",
                g.library,
                g.triggers.join(", "),
            ));
            if !g.claimants.is_empty() {
                let words: Vec<String> = g.claimants.iter().map(|c| format!("{c}…")).collect();
                let place = match g.claimant_in_statement {
                    true => "a name of the statement around it (table or column) starting",
                    false => "the name right after a column named",
                };
                out.push_str(&format!("    {place} {}\n", words.join(", ")));
            }
        }
        out
    }

    /// A markdown table of every library the catalog knows, for `lock-audit
    /// libraries` and the README (a test keeps the two in sync).
    pub fn libraries_markdown(&self) -> String {
        let mut rows: Vec<(String, String, String, String)> = Vec::new();
        for (i, lib) in self.libraries.iter().enumerate() {
            let mut calls: Vec<String> = self
                .apis
                .iter()
                .filter(|a| a.library == i)
                .flat_map(|a| a.methods.iter().chain(&a.functions))
                .map(|m| format!("`{}`", compile::last_segment(m)))
                .collect();
            let mut seen = std::collections::HashSet::new();
            calls.retain(|c| seen.insert(c.clone()));
            let lang = match lib.language {
                Language::JavaScript => "javascript, typescript".to_string(),
                l => l.name().to_string(),
            };
            rows.push((
                lang,
                lib.name.clone(),
                lib.backend.clone(),
                calls.join(", "),
            ));
        }
        let mut sql: Vec<String> = self
            .sql
            .iter()
            .map(|q| match q.row_claim {
                true if !q.lock_tables.is_empty() => {
                    "row claims (`UPDATE .. SET c = .. WHERE c IS NULL`, `INSERT INTO locks .. ON CONFLICT DO NOTHING`)".to_string()
                }
                true => "row claims (`UPDATE .. SET c = .. WHERE c IS NULL`)".to_string(),
                false => format!("`{}`", q.needle.trim_end_matches('(')),
            })
            .collect();
        let mut seen = std::collections::HashSet::new();
        sql.retain(|c| seen.insert(c.clone()));
        if !sql.is_empty() {
            rows.push((
                "any (SQL strings)".into(),
                self.sql[0].library.clone(),
                "database".into(),
                sql.join(", "),
            ));
        }
        rows.sort();
        let mut out = String::from(
            "| language | library | backend | recognised calls |\n|---|---|---|---|\n",
        );
        for (lang, lib, backend, calls) in rows {
            out.push_str(&format!("| {lang} | {lib} | {backend} | {calls} |\n"));
        }
        out
    }
}
