//! The YAML schema of `rules/*.yaml`, exactly as written by people.
//!
//! Every struct denies unknown fields so that a typo is an error pointing at
//! its line instead of a silently ignored key. `compile.rs` turns these into
//! the indexed [`super::Catalog`].

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::model::Language;

pub use super::raw_durations::{DurationDefault, DurationUnit, RawBefore, RawDuration};
pub use super::raw_sql::{RawSql, SqlRole, SqlWait};
pub use super::raw_vocabulary::{RawCheckThenSet, RawVocabulary};
pub use super::raw_words::{RawClassification, RawWord, WordScope};

/// One catalog file: a library's API shapes, Redis command grammar, or vocabulary.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawFile {
    /// The library this file describes (`redis-py`, `redis-rs`).
    pub library: Option<String>,
    pub language: Option<Language>,
    /// The backend the library talks to (`redis`, `etcd`, `postgres`).
    pub backend: Option<String>,
    /// Literal byte strings whose presence makes a file worth parsing.
    #[serde(default)]
    pub triggers: Vec<String>,
    /// The name the library is installed by, as dependency manifests spell it
    /// (PyPI, npm, RubyGems, Go module, Maven artifactId, crate); default: `library`.
    pub package: Option<String>,
    /// How to tell that a receiver is this library's client.
    pub clients: Option<RawClients>,
    #[serde(default)]
    pub apis: Vec<RawApi>,
    /// Canonical Redis commands: their argument order, flags and role in a lock.
    #[serde(default)]
    pub commands: BTreeMap<String, RawCommand>,
    pub vocabulary: Option<RawVocabulary>,
    /// Lock functions and clauses inside SQL strings.
    #[serde(default)]
    pub sql: Vec<RawSql>,
    pub classification: Option<RawClassification>,
    /// What calls in a critical section do.
    #[serde(default)]
    pub effects: Vec<RawEffect>,
    pub protection: Option<RawProtection>,
    /// Source rewrites offered for this library's findings.
    pub fixes: Option<RawFixes>,
}

/// Templates of the fixes a library's calls can take. Placeholders:
/// `{receiver}` (the client as written), `{key}`, `{value}` / `{owner}` (the
/// lock's owner value) and `{script}` (the compare-and-delete Lua script).
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawFixes {
    /// A `SET NX` / `SETNX` with no expiry, rebuilt with one (LA101).
    pub expiry: Option<String>,
    /// A plain `DEL` release, rewritten as a compare-and-delete (LA201).
    pub owner_checked_release: Option<String>,
}

/// One kind of effect a call can have.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawEffect {
    pub kind: EffectKind,
    #[serde(default)]
    pub methods: Vec<String>,
    /// Methods named verb-first with one of these and more after it
    /// (`updateFragment`, `put_kind`, `PutKind`; never a bare `update`).
    #[serde(default)]
    pub method_verbs: Vec<String>,
    /// Not a `method-verbs` method whose last word is one of these
    /// (`createQueryBuilder` makes a builder, not a row).
    #[serde(default)]
    pub except_nouns: Vec<String>,
    /// Only a `method-verbs` method whose last word is one of these
    /// (`recordTransaction`, `create_refund_transaction`).
    #[serde(default)]
    pub method_nouns: Vec<String>,
    /// Only on receivers with one of these as a whole word of their name.
    #[serde(default)]
    pub receivers: Vec<String>,
    /// Only on receivers named verb-first with one of these: a service object
    /// named for what it does (`Payments::CreateService.call!(..)`,
    /// `CreateOrderService.new(..).call`; the last segment counts).
    #[serde(default)]
    pub receiver_verbs: Vec<String>,
    /// Only on the object the lock is taken through: a lock helper of a
    /// model's class called on a record (`order.lock(() => order.update(..))`).
    #[serde(default)]
    pub locked_object: bool,
    /// Also any method whose name ends in `!` (Ruby's persisting or raising
    /// form: `save!`, a state machine's `complete!`); with `locked-object`,
    /// on the locked record only (`String#strip!` is no write).
    #[serde(default)]
    pub bang_methods: bool,
    /// Only on an object reached through the locked record: its association
    /// or collaborator (`@order.contents.add(..)`, `order.lines.create(..)`),
    /// or one built around it (`CouponHandler.new(@order).apply`).
    #[serde(default)]
    pub locked_collaborator: bool,
    /// Not on receivers whose last segment is one of these (`@order.errors.add(..)`
    /// records a validation message in memory).
    #[serde(default)]
    pub except_receivers: Vec<String>,
    /// Matches no call: a lock taken in a function of one of these names and
    /// handed out of it (`onBeforeCreate` returning its mutex for
    /// `onCreateSuccess` to release) is held over the write the hook precedes.
    #[serde(default)]
    pub held_past_hooks: Vec<String>,
    /// SQL statements (first keyword) in string arguments.
    #[serde(default)]
    pub sql: Vec<String>,
    /// Only in files of these languages (`javascript` covers TypeScript).
    #[serde(default)]
    pub languages: Vec<String>,
    /// Only when the first argument is an object / map literal (an ORM
    /// record's `update({ status: 'PAID' })`, not `hash.update(chunk)`).
    #[serde(default)]
    pub first_arg_map: bool,
    /// A write that must be protected in a correctness lock (LA301).
    #[serde(default)]
    pub write: bool,
    /// Classification evidence.
    pub class: Option<ClassName>,
    #[serde(default)]
    pub weight: i32,
    /// What makes this write safe against a stale holder, said for this kind
    /// of write (the `help:` of LA301–LA304); `{table}` is the SQL statement's table.
    pub remedy: Option<String>,
}

/// Spellings of protected writes.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawProtection {
    #[serde(default)]
    pub conditional_sql: Vec<String>,
    #[serde(default)]
    pub conditional_call: Vec<String>,
    #[serde(default)]
    pub idempotency: Vec<String>,
    #[serde(default)]
    pub recheck_methods: Vec<String>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawClients {
    /// Module paths whose import makes the library present in a file.
    #[serde(default)]
    pub imports: Vec<String>,
    /// Calls whose result is a client (`redis.Redis`, `get_connection`).
    #[serde(default)]
    pub constructors: Vec<String>,
    /// Type names that mark an annotated variable or parameter as a client.
    #[serde(default)]
    pub types: Vec<String>,
    /// Receiver names that count as a client when the library is imported.
    #[serde(default)]
    pub names: Vec<String>,
    /// Methods on a client that return a client-like object (`opsForValue`, `getResource`).
    #[serde(default)]
    pub accessors: Vec<String>,
    /// Calls whose block parameter is a client (Sidekiq's `Sidekiq.redis { |conn| .. }`).
    #[serde(default)]
    pub yielders: Vec<String>,
}

/// One surface form of a call.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawApi {
    pub id: String,
    /// Method names (`r.set(..)`); the receiver must be a client.
    #[serde(default)]
    pub methods: Vec<String>,
    /// The method name is this library's alone (`select_for_update`,
    /// `with_for_update`, `setLock`): any receiver counts, as ORM querysets
    /// and records reach the call through models, not clients.
    #[serde(default)]
    pub any_receiver: bool,
    /// Calls with more positional arguments are not this API (ActiveRecord
    /// `with_lock` takes at most a lock clause; an in-house `with_lock(key, ttl)` is not it).
    pub max_args: Option<usize>,
    /// Only calls with exactly this many arguments: picks a library version's
    /// signature (go-redis v8+ `SetNX(ctx, k, v, ttl)`, v6/v7 `SetNX(k, v, ttl)`).
    pub arity: Option<usize>,
    /// Only calls whose argument at this place is absent or one of these
    /// words (a symbol, string, boolean or name): `unique :until_executed` is
    /// activejob-uniqueness, a model's own `unique :email` is not.
    pub arg_is: Option<RawArgIs>,
    /// Free functions by full path (`redis::cmd`); matched by path or import.
    #[serde(default)]
    pub functions: Vec<String>,
    /// The canonical command sent, or `"*"` when the first argument names it.
    /// Exactly one of `command`, `lock` or `release` is given.
    pub command: Option<String>,
    /// Flags the call always sends (`SetNX` in go-redis is `SET ... NX`).
    #[serde(default)]
    pub fixed_flags: Vec<String>,
    /// Option-object keys that mean a command option (`TTL: PX` for go-redis `SetArgs`).
    #[serde(default)]
    pub option_aliases: BTreeMap<String, String>,
    /// A library lock: this call creates or takes one.
    pub lock: Option<RawLock>,
    /// A try-acquire reports contention as an error, not a value (go-redis
    /// `SetArgs`/`Do` return `redis.Nil`; most lock libraries): checking the
    /// error is checking it. Default: true for `lock` APIs, false for commands
    /// (redlock-rs `lock` returns `Ok(None)`: set `false`).
    pub contention_error: Option<bool>,
    /// Where the command's named arguments sit in the call.
    #[serde(default)]
    pub args: BTreeMap<ArgRole, RawSlot>,
    /// Where command flags sit (`NX: {kw: nx}`).
    #[serde(default)]
    pub flags: BTreeMap<String, RawSlot>,
    /// Arguments added by chained builder methods (`.arg(x)`, `.key(k)`).
    #[serde(default)]
    pub chain: BTreeMap<String, ArgRole>,
    /// For calls returning a callable script object (`register_script`):
    /// where keys and args sit when that object is called.
    #[serde(default)]
    pub invoke: BTreeMap<ArgRole, RawSlot>,
    /// The call defines a client method named by this argument (ioredis
    /// `defineCommand("claim", {numberOfKeys: 1, lua})`): the script runs
    /// where `client.claim(key, ...args)` is called, with the first
    /// `numberOfKeys` arguments as its keys, and nowhere else.
    pub defines: Option<RawSlot>,
}

/// The roles an argument can play in a canonical command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ArgRole {
    /// The lock key; for a multi-key command, every key.
    Key,
    /// The value stored: for a lock, its owner.
    Value,
    /// An expiry given as an argument (seconds or ms, per command).
    Ttl,
    /// A Lua script source.
    Script,
    /// Raw command words (`"SET", k, v, "NX"`), in order.
    Words,
    /// An options object or builder carrying flags (`SetOptions`, `SetParams`).
    Options,
    /// Keys passed to a script.
    ScriptKeys,
    /// Non-key arguments passed to a script.
    ScriptArgs,
}

/// An argument that must hold one of some words for a call to be the API.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawArgIs {
    pub pos: Option<usize>,
    pub kw: Option<String>,
    /// The words (a qualified value such as `t.LOCK.UPDATE` matches by its last segment).
    /// None: any value (with `required`, the argument must merely be there:
    /// `lock(resource: key, ttl: ms)`).
    #[serde(default)]
    pub one_of: Vec<String>,
    /// A value known only at run time (a variable, a call: `.lock(should_lock)`)
    /// passes too; a literal must still be one of the words (`.lock(false)` does not).
    #[serde(default)]
    pub or_runtime: bool,
    /// The argument must be there: an option that turns an ordinary call into
    /// the lock (Sequelize `findOne({lock: t.LOCK.UPDATE})`). Default: absent passes.
    #[serde(default)]
    pub required: bool,
}

/// Where an argument is: a positional index, a keyword, or all positionals from `pos`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawSlot {
    pub pos: Option<usize>,
    pub kw: Option<String>,
    /// Every positional argument from `pos` on.
    #[serde(default)]
    pub rest: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CommandRole {
    /// Takes a lock (always, or when `acquire-when` flag is present).
    Acquire,
    /// Sets an expiry on an existing key.
    Expire,
    /// Deletes keys.
    Release,
    /// Runs a script; the script's own commands are analysed.
    Script,
    Read,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawCommand {
    pub role: CommandRole,
    /// Positional arguments after the command word, by role; a role ending
    /// the list with `rest: true` semantics is spelled `keys...`.
    #[serde(default)]
    pub args: Vec<String>,
    /// Flags without a value (`NX`, `GET`).
    #[serde(default)]
    pub flags: Vec<String>,
    /// Options followed by one value (`PX 30000`).
    #[serde(default)]
    pub valued: Vec<String>,
    /// For `role: acquire`: the flag that makes the command an acquisition.
    pub acquire_when: Option<String>,
    /// Options that give the key an expiry.
    #[serde(default)]
    pub expiry: Vec<String>,
    /// For `role: release`: options that make the delete conditional on the owner.
    #[serde(default)]
    pub owner_checked_when: Vec<String>,
}

/// When a library lock call takes the lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Acquires {
    /// The call itself acquires (`Obtain`, `redlock.acquire`, `@SchedulerLock`).
    Now,
    /// The call returns a lock object; an `acquire-methods` call on it, or a
    /// guard (`with`, a block, `using`), takes the lock (`r.lock()`, `getLock()`).
    OnUse,
}

/// A library lock API (redis-py `Lock`, Redisson `RLock`, redsync, etcd...).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawLock {
    pub acquires: Acquires,
    /// Where the lock name / key is.
    pub key: Option<RawSlot>,
    /// The lease: where it is and what it is when absent.
    pub ttl: Option<RawDuration>,
    /// How long acquire may block, and its default.
    pub wait: Option<RawDuration>,
    /// A caller-chosen owner value (`token=`, `id=`); otherwise the library generates one.
    pub owner: Option<RawSlot>,
    /// Methods on the lock object that acquire it (for `acquires: on-use`).
    #[serde(default)]
    pub acquire_methods: Vec<RawAcquireMethod>,
    /// The lock object's types (`redsync.Mutex`, `RLock`): an acquire-methods
    /// call on a receiver declared with one (a field, a parameter, a local)
    /// acquires, wherever the object was made.
    #[serde(default)]
    pub handle_types: Vec<String>,
    /// Methods that release it: on the lock object or handle, or on the
    /// manager with the handle as an argument.
    #[serde(default)]
    pub release_methods: Vec<String>,
    /// Release methods that skip the owner check (Redisson `forceUnlock`).
    #[serde(default)]
    pub unchecked_release_methods: Vec<String>,
    /// Methods that renew the lease (`extend`, `Refresh`).
    #[serde(default)]
    pub renew_methods: Vec<String>,
    /// Does the library's release compare the owner? Default: true.
    #[serde(default = "yes")]
    pub owner_checked_release: bool,
    /// A try-acquire: returns a boolean / nil / error to be checked.
    #[serde(default)]
    pub try_acquire: bool,
    /// The acquisition returns a guard that releases when dropped (Rust RAII).
    #[serde(default)]
    pub releases_on_drop: bool,
    /// Does a `with` / block / Java resource around the returned object take
    /// it (`with r.lock(..):`)? Default: true; false when the object is a
    /// query that only a finder runs (ActiveRecord's relation `lock`).
    #[serde(default = "yes")]
    pub guard_acquires: bool,
    /// The call returns a future of the grant (jetcd `CompletableFuture<LockResponse>`):
    /// it waits where the future is awaited (`.get()`, `.join()`), and a future nobody
    /// awaits or reads leaves the code running whether or not the lock was granted.
    #[serde(default)]
    pub future: bool,
    /// A Redlock-family algorithm (quorum of independent nodes, no fencing token).
    #[serde(default)]
    pub redlock: bool,
    /// How the grant exposes a fencing token (`revision`, `token`), if it does.
    pub fencing: Option<String>,
    /// The lock's lifetime is bound to a session / connection / transaction.
    pub scope: Option<Scope>,
    /// What a lock of this kind usually guards, when nothing at the site decides.
    pub usual: Option<RawUsual>,
    /// For a lock declared in a class body (activejob-uniqueness `unique`):
    /// the methods of the class it is held around (`perform`), whose bodies
    /// are its critical section.
    #[serde(default)]
    pub held_around: Vec<String>,
}

/// The class a kind of lock has by its purpose (a `FOR UPDATE` row lock is
/// taken to change the rows it read; a scheduler's overlap guard saves a
/// repeated run), used only when the key, the names and the critical
/// section leave a site undecided; `because` is shown as the evidence.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawUsual {
    pub class: ClassName,
    pub because: String,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Scope {
    Session,
    Transaction,
    /// A claim written into a table row: committed with its transaction, it
    /// outlives it and is held until something clears the row's claimant column.
    Row,
}

/// One acquire method on a lock object; `arity` picks an overload.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawAcquireMethod {
    pub method: String,
    /// Only calls with exactly this many arguments (Java overloads).
    pub arity: Option<usize>,
    /// The key, where this method names it rather than the factory
    /// (ioredis-lock `createLock(client, opts).acquire(key)`).
    pub key: Option<RawSlot>,
    /// Overrides the factory's TTL / wait slots for this method.
    pub ttl: Option<RawDuration>,
    pub wait: Option<RawDuration>,
    #[serde(default)]
    pub try_acquire: bool,
    /// Returns false (instead of raising) when a bounded or non-blocking
    /// attempt gives up: a try-acquire only then (redis-py `acquire()`).
    #[serde(default)]
    pub try_when_bounded: bool,
    /// Only calls whose argument at this position is empty (`""`, its bytes,
    /// null): a compare-and-set from free to an owner is a claim (Curator
    /// `DistributedAtomicValue.compareAndSet("".getBytes(), id)`); from
    /// any other value it is an update of data.
    pub expects_free: Option<usize>,
}

/// What kind of effect a call in a critical section has (shown in evidence).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum EffectKind {
    SqlWrite,
    OrmWrite,
    /// A data store's own write method (`storage.updateFragment`).
    StoreWrite,
    Payment,
    ObjectStorePut,
    HttpWrite,
    QueuePublish,
    CacheSet,
    FileWrite,
    /// A service object named for the change it makes (`CreateService.call!`).
    ServiceCall,
    /// Slow work (sleeps, long calls): evidence for LA402.
    Slow,
}

impl EffectKind {
    /// The name as written in the catalog.
    pub fn name(self) -> &'static str {
        match self {
            EffectKind::SqlWrite => "sql-write",
            EffectKind::OrmWrite => "orm-write",
            EffectKind::Payment => "payment",
            EffectKind::ObjectStorePut => "object-store-put",
            EffectKind::StoreWrite => "store-write",
            EffectKind::HttpWrite => "http-write",
            EffectKind::QueuePublish => "queue-publish",
            EffectKind::CacheSet => "cache-set",
            EffectKind::FileWrite => "file-write",
            EffectKind::ServiceCall => "service-call",
            EffectKind::Slow => "slow",
        }
    }
}

/// A lock class as written in the catalog and `lock-audit.yaml`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ClassName {
    Correctness,
    Efficiency,
}
