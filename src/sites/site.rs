//! What `sites` produces: lock sites, releases, their classes and the facts
//! the checks read for one file.

use serde::Serialize;

use super::effects;
use crate::catalog::{Catalog, Scope};
use crate::model::{CallId, Expr, FileModel, FuncId, Span};

/// What a double grant of this lock would cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Class {
    Correctness,
    Efficiency,
    Unclassified,
    /// A de-duplication marker (`SET seen:<id> 1 NX EX 600`): records that
    /// something happened; no owner, release or critical section to check.
    Marker,
}

impl Class {
    pub fn name(self) -> &'static str {
        match self {
            Class::Correctness => "correctness",
            Class::Efficiency => "efficiency",
            Class::Unclassified => "unclassified",
            Class::Marker => "marker",
        }
    }
}

/// The lock's expiry as the acquisition sets it.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub enum Ttl {
    /// Set atomically with the acquisition; the expression if one was written.
    Given(Option<Expr>),
    /// Nothing sets an expiry: the lock lives until released.
    Absent,
    /// Not written; the library's default lease applies (`10s`).
    Default(String),
    /// Kept alive while the holder lives (Redisson watchdog, etcd keep-alive).
    Renewed,
    /// Bound to a session, connection or transaction.
    Scoped(Scope),
}

impl Ttl {
    /// How the inventory shows it.
    pub fn describe(&self, ms: Option<i64>) -> String {
        match (self, ms) {
            (Ttl::Given(_), Some(ms)) => format!("{ms} ms"),
            (Ttl::Given(Some(e)), None) => e.peel().text.clone(),
            (Ttl::Given(None), None) => "set".into(),
            (Ttl::Absent, _) => "none".into(),
            (Ttl::Default(d), Some(ms)) => format!("{ms} ms (default {d})"),
            (Ttl::Default(d), None) => format!("default {d}"),
            (Ttl::Renewed, _) => "renewed".into(),
            (Ttl::Scoped(Scope::Session), _) => "session".into(),
            (Ttl::Scoped(Scope::Transaction), _) => "transaction".into(),
            (Ttl::Scoped(Scope::Row), _) => "until cleared".into(),
        }
    }
}

impl Wait {
    pub fn describe(&self) -> String {
        match self {
            Wait::Given(e) => e.peel().text.clone(),
            Wait::Default(d) => format!("default {d}"),
            Wait::Forever => "forever".into(),
            Wait::NoWait => "none".into(),
            Wait::NotApplicable => "-".into(),
        }
    }
}

/// How long an acquisition may block.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub enum Wait {
    /// A bound was written.
    Given(Expr),
    /// The library's default bound (`10s`, `32 tries`).
    Default(String),
    /// Blocks until granted.
    Forever,
    /// One attempt, returns at once.
    NoWait,
    /// Not a blocking API (a raw `SET NX`).
    NotApplicable,
}

/// One lock acquisition.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct LockSite {
    pub library: String,
    pub backend: String,
    pub api: String,
    pub call: CallId,
    /// The acquiring call (with its builder chain).
    pub span: Span,
    /// The command sent (`SET`, `SETNX`).
    pub command: String,
    pub key: Option<Expr>,
    pub key_text: String,
    pub owner: Option<Expr>,
    pub ttl: Ttl,
    /// The TTL in milliseconds when statically known.
    pub ttl_ms: Option<i64>,
    /// A later, separate `EXPIRE` on the same key (the non-atomic pattern).
    pub separate_expire: Option<Span>,
    pub wait: Wait,
    /// A try-acquire whose result says whether the lock was granted.
    pub try_acquire: bool,
    /// A wrapper call whose wrapper returns the acquisition's result (in Go
    /// or Rust its error): a caller dropping it goes on whether or not it
    /// holds the lock.
    #[serde(default)]
    pub returns_result: bool,
    /// A Redlock-family lock.
    pub redlock: bool,
    /// How the grant exposes a fencing token, if it does.
    pub fencing: Option<String>,
    pub func: Option<FuncId>,
    /// Why this call was recognised (receiver evidence).
    pub evidence: Vec<String>,
    pub class: Class,
    /// The class is the one the callers of the wrapper this site is in
    /// give it: what it guards is theirs, and so are the findings on it.
    #[serde(default)]
    pub classed_by_callers: bool,
    /// Indices into [`FileAnalysis::releases`].
    pub releases: Vec<usize>,
    pub kind: SiteKind,
    /// The acquisition guards a scope that releases on every path (`with`,
    /// a block or callback, a RAII guard).
    pub guarded: bool,
    /// The call whose value is the acquisition's result (the end of a chain:
    /// `rdb.SetNX(..).Result()`, `cmd("SET")..query(..)`).
    pub result_call: CallId,
    /// The critical section: the guarded body, or from the acquisition to the
    /// first release in the same function (else the function's end).
    pub section: Span,
    /// The lock is meant to be released explicitly (a library lock object, a
    /// session-level SQL lock): never releasing it is a finding.
    pub expects_release: bool,
    /// The variable holding the lock object or handle, when there is one.
    pub handle: Option<String>,
    /// Contention comes back as an error (library locks, go-redis `SetArgs`):
    /// reading the error checks the result.
    pub contention_error: bool,
    /// Why the class was chosen.
    pub class_evidence: Vec<String>,
    /// The lease is renewed during the work (`extend`, `refresh` on the handle).
    pub renews: bool,
    /// What the critical section does (writes and their protection).
    pub effects: Vec<effects::Effect>,
    /// For a call of an in-house wrapper: where the wrapped acquisition is
    /// (`locks.py:12`). Findings about the acquisition itself are reported
    /// there, once; the call carries only its own key, class and result use.
    pub via: Option<String>,
    /// The class this kind of lock has by its purpose (catalog `usual`),
    /// applied when nothing else decides; carried to a wrapper's callers.
    pub usual: Option<crate::catalog::raw::RawUsual>,
    /// A lock declared in a class body is held around this method of the
    /// class (catalog `held-around`): its body is the critical section.
    pub held_over: Option<FuncId>,
    /// A callback registration's lock (`around_action :lock_order, only:
    /// [:update]`) is held around these methods of the class: their bodies
    /// are the critical section.
    #[serde(default)]
    pub runs_around: Vec<FuncId>,
    /// For a wrapper call that forwards its own function's arguments
    /// (`TaskManager(context, *args, **kwargs)`): the wrapper's parameter that
    /// turns the lock off (index, name, whether a true value does), which
    /// the enclosing function's callers then decide.
    pub switch: Option<(usize, String, bool)>,
    /// The locking statement writes too (`WITH locked AS (SELECT .. FOR
    /// UPDATE) UPDATE ..`): on a connection that commits each statement alone,
    /// its row locks end with that write.
    #[serde(default)]
    pub statement_writes: bool,
    /// The locking statement claims rows for its caller: it only tries (`SKIP
    /// LOCKED`, `pg_try_advisory_xact_lock`) or is a lock-table claim, and
    /// the caller goes on as the holder of whatever it got.
    #[serde(default)]
    pub statement_claims: bool,
    /// A transaction-scoped lock taken by a statement run on a connection
    /// pool (`s.db.QueryRowContext(..)` with `db *sqlx.DB`, `pool.query(..)`):
    /// the statement commits alone, so its lock ends with it and binds no
    /// write that follows.
    #[serde(default)]
    pub autocommit: bool,
    /// The statement is one the method's class hands its base class's
    /// constructor (`super(.., SELECT_FOR_LOCK, ..)`): the base takes its
    /// lock by calling this method, which is therefore its lock helper.
    #[serde(default)]
    pub handed: bool,
    /// The write that marks a locked row claimed (`update({lockedAt: ..})`):
    /// part of the acquisition, not work under the claim.
    #[serde(default)]
    pub mark: Option<Span>,
    /// The claim's mark is tested only for being there, never for its age
    /// (see [`super::marked_claim`]): nothing ever frees a holder that died.
    #[serde(default)]
    pub never_stale: bool,
    /// The enclosing function's parameter the wait bound is given as, when
    /// it defaults to null (`timeout=None`): the wait is the library's
    /// default because the parameter was left out, which a wrapper's caller
    /// decides.
    #[serde(default)]
    pub wait_param: Option<String>,
    /// The wait was decided at this wrapper call (its wait parameter left
    /// out or null), not inside the wrapper: LA105 is this call's.
    #[serde(default)]
    pub wait_at_call: bool,
}

/// Where a lock site comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
pub enum SiteKind {
    /// A raw command (`SET NX`, `SETNX`), possibly inside a Lua script.
    Command,
    /// A library lock API.
    Library,
    /// A lock inside SQL text.
    Sql,
}

impl LockSite {
    /// The catalog's remedy for the first write in the critical section that
    /// nothing protects: what would make *this* section safe (LA301–LA304).
    pub fn remedy(&self) -> Option<&str> {
        self.effects
            .iter()
            .find(|e| e.write && e.protection.is_none())
            .and_then(|e| e.remedy.as_deref())
    }

    /// Does the lock end with its database connection or transaction, together
    /// with the writes on it (SQL locks' library forms: ORM row locks,
    /// django-pglocks)? Then no lease can expire under its holder.
    pub fn database_bound(&self) -> bool {
        matches!(self.ttl, Ttl::Scoped(Scope::Session | Scope::Transaction))
            && matches!(self.backend.as_str(), "postgres" | "mysql" | "database")
    }

    /// Do the section's writes end together with the lock: a database-bound
    /// lock whose statement did not commit alone on a pool?
    pub fn ends_with_writes(&self) -> bool {
        self.database_bound() && !self.autocommit
    }

    /// A site with the facts every source knows; the rest at their defaults.
    pub fn base(call: CallId, span: Span, func: Option<FuncId>, kind: SiteKind) -> Self {
        LockSite {
            library: String::new(),
            backend: String::new(),
            api: String::new(),
            call,
            span,
            command: String::new(),
            key: None,
            key_text: String::new(),
            owner: None,
            ttl: Ttl::Absent,
            ttl_ms: None,
            separate_expire: None,
            wait: Wait::NotApplicable,
            try_acquire: false,
            returns_result: false,
            redlock: false,
            fencing: None,
            func,
            evidence: Vec::new(),
            class: Class::Unclassified,
            classed_by_callers: false,
            releases: Vec::new(),
            kind,
            guarded: false,
            result_call: call,
            section: span,
            expects_release: false,
            handle: None,
            contention_error: false,
            via: None,
            usual: None,
            class_evidence: Vec::new(),
            effects: Vec::new(),
            renews: false,
            held_over: None,
            runs_around: Vec::new(),
            switch: None,
            statement_writes: false,
            statement_claims: false,
            autocommit: false,
            handed: false,
            mark: None,
            never_stale: false,
            wait_param: None,
            wait_at_call: false,
        }
    }
}

/// A lock object a function makes and returns without taking it (`return
/// r.lock(name, timeout=ttl)`): its callers take it (`with get_lock(..)`,
/// `get_lock(..).acquire()`), so the function is a lock factory for them.
#[derive(Debug, Clone)]
pub struct LockObject {
    /// The acquisition as its callers will make it: the factory call's key,
    /// lease and wait, at the factory call.
    pub site: LockSite,
    pub methods: ObjectMethods,
}

/// What takes and gives back a lock object (the catalog's `acquire-methods`
/// and `release-methods`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct ObjectMethods {
    pub acquire: Vec<String>,
    /// The acquire methods that may return without the lock (`acquire()` of
    /// etcd3gw, `tryLock`).
    pub trying: Vec<String>,
    pub release: Vec<String>,
    /// The object is SQL text a statement builder returns: a caller takes
    /// the lock by running it (`db.query(lockSql(id))`), not by a method.
    #[serde(default)]
    pub statement: bool,
}

/// A delete of a lock key.
#[derive(Debug, Clone)]
pub struct Release {
    pub library: String,
    pub call: CallId,
    pub span: Span,
    pub command: String,
    pub key: Option<Expr>,
    pub key_text: String,
    /// The delete compares the stored owner atomically (Lua, `DELEX IFEQ`).
    pub owner_checked: bool,
    /// The acquisition with the same key, if it is in this file.
    pub site: Option<usize>,
    /// Why the deleted key is taken to be a lock.
    pub lock_evidence: String,
    pub func: Option<FuncId>,
    /// Sent from a Lua script whose source is bound to this name.
    pub script_name: Option<String>,
    /// A `GET` of the key, compared before this delete in a separate round trip.
    pub racy_get: Option<Span>,
}

/// How a key reads in a message: the expression written, plus what it
/// resolved to when that differs (`key` = `f"lock:{order_id}"`).
pub fn describe_key(key: Option<&Expr>, resolved: &str) -> String {
    let Some(key) = key else { return "?".into() };
    let written = key.peel().text.as_str();
    if resolved.is_empty() || resolved == written {
        quoted(written)
    } else {
        format!("{} (= {})", quoted(written), quoted(resolved))
    }
}

/// Code in backticks, unless it has its own (a JavaScript template literal
/// reads `lock:${id}`, not ``lock:${id}``).
fn quoted(code: &str) -> String {
    if code.contains('`') {
        code.to_string()
    } else {
        format!("`{code}`")
    }
}

impl LockSite {
    /// The key as written (and as resolved); a wrapper's call that passes
    /// none is named by its wrapper (`(taken by `LockOriginalTable`)`).
    pub fn key_display(&self) -> String {
        match (&self.key, self.wrapper_name()) {
            (None, Some(name)) => format!("(taken by `{name}`)"),
            _ => describe_key(self.key.as_ref(), &self.key_text),
        }
    }

    /// The in-house helper a wrapper call site goes through (`lockStorage`).
    pub fn wrapper_name(&self) -> Option<&str> {
        self.api.strip_prefix("wrapper ")
    }
}

impl Release {
    pub fn key_display(&self) -> String {
        describe_key(self.key.as_ref(), &self.key_text)
    }
}

/// Everything the checks see for one file.
pub struct FileAnalysis<'m> {
    pub model: &'m FileModel,
    /// The catalog's vocabularies (log methods, lock words) for the checks.
    pub catalog: &'m Catalog,
    /// The file's text, for the passes of `sites` (checks read facts only).
    pub text: &'m str,
    pub sites: Vec<LockSite>,
    pub releases: Vec<Release>,
    /// Lock objects returned untaken: the functions are lock factories.
    pub objects: Vec<LockObject>,
}

impl FileAnalysis<'_> {
    /// Does the file mention `lock_timeout` (`SET lock_timeout`, a connection
    /// option), a bound on every lock wait of its database sessions? Asked
    /// only for a blocking SQL lock, so no other file pays the scan.
    pub fn sets_lock_timeout(&self) -> bool {
        self.text
            .as_bytes()
            .windows(b"lock_timeout".len())
            .any(|w| w.eq_ignore_ascii_case(b"lock_timeout"))
    }

    /// Does function `func` set MySQL's `lock_wait_timeout` (`SET SESSION
    /// lock_wait_timeout := 6`), the bound of its session's `LOCK TABLES` wait?
    pub fn sets_lock_wait_timeout(&self, func: Option<FuncId>) -> bool {
        let Some(f) = func.and_then(|id| self.model.functions.get(id)) else {
            return false;
        };
        let text = self.text.get(f.span.start..f.span.end).unwrap_or("");
        text.to_ascii_lowercase().contains("lock_wait_timeout")
    }

    /// The sites that are locks: not de-duplication markers, to which the
    /// rules about owners, waits, releases and sections do not apply.
    pub fn locks(&self) -> impl Iterator<Item = &LockSite> {
        self.sites.iter().filter(|s| s.class != Class::Marker)
    }

    /// The releases, except deletes of a marker (expiring or evicting it).
    pub fn lock_releases(&self) -> impl Iterator<Item = &Release> {
        self.releases
            .iter()
            .filter(|r| r.site.is_none_or(|i| self.sites[i].class != Class::Marker))
    }
}
