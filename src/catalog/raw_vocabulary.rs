//! The catalog's shared vocabulary as written in `rules/vocabulary.yaml`
//! (split from `raw.rs`, which re-exports these).

use schemars::JsonSchema;
use serde::Deserialize;

/// The calls of a check-then-set lock on any cache or key-value client.
#[derive(Debug, Default, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawCheckThenSet {
    /// Reads that test whether the key is there (`get`, `has`, `exists`).
    #[serde(default)]
    pub test_methods: Vec<String>,
    /// Plain writes of a key (`set`, `write`): key, value, expiry.
    #[serde(default)]
    pub set_methods: Vec<String>,
    /// Deletes of a key (`delete`, `del`): the release.
    #[serde(default)]
    pub delete_methods: Vec<String>,
    /// Keyword names of the set's expiry (`timeout`, `ttl`, `expires_in`).
    #[serde(default)]
    pub expiry_keywords: Vec<String>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawVocabulary {
    /// Words that mark a key or variable as a lock (`lock`, `mutex`, `leader`).
    #[serde(default)]
    pub lock_words: Vec<String>,
    /// Words beside `lock-words` that make a function above a lock its helper
    /// (`acquire`, `reserve`, kylin's `tryUpdateEpoch` over an epoch claim).
    #[serde(default)]
    pub helper_words: Vec<String>,
    /// Constructors of in-memory collections (`ArrayList`, `set`, `Vec`): calls
    /// on what they build are not critical-section effects.
    #[serde(default)]
    pub in_memory_constructors: Vec<String>,
    /// Words that mark a `SET NX` key as a de-duplication marker (`seen`,
    /// `dedupe`, `idempotent`), unless a lock word is there too.
    #[serde(default)]
    pub marker_words: Vec<String>,
    /// Words that mark a `SET NX` as a put-if-absent write of a value (a
    /// cache entry, a counter's start value) when the key or the function
    /// says so and no lock word does: not a lock.
    #[serde(default)]
    pub value_words: Vec<String>,
    /// Words that mark a `SET NX` as a throttle window (`cooldown`,
    /// `interval`) when its key or its TTL says so and no lock word does.
    #[serde(default)]
    pub window_words: Vec<String>,
    /// Words that name a function breaking a lock on purpose (tooz
    /// `break_()`, `steal_lock`): its unchecked delete is the override.
    #[serde(default)]
    pub break_words: Vec<String>,
    /// Words that mark a lock as a scheduled job's overlap guard (`cron`,
    /// `periodic`) when they name its wrapper, function, class or folder:
    /// efficiency when nothing else decides.
    #[serde(default)]
    pub scheduler_words: Vec<String>,
    /// Methods that start an optimistic transaction on a key (`watch`): a
    /// GET-compare-DEL after one is checked by the server at EXEC.
    #[serde(default)]
    pub watch_methods: Vec<String>,
    /// Logging / printing calls: passing a value to one does not check it.
    #[serde(default)]
    pub log_methods: Vec<String>,
    /// The plain cache calls a check-then-set lock is made of (`if
    /// cache.get(k): return`, `cache.set(k, 1, timeout)`, `cache.delete(k)`).
    #[serde(default)]
    pub check_then_set: Option<RawCheckThenSet>,
    /// Methods that end a connection or session (`conn.close()`, Go
    /// `session.Close()`, node-postgres `client.end()`): a session-bound lock
    /// taken on it is released with it.
    #[serde(default)]
    pub session_close_methods: Vec<String>,
    /// Calls that run a callback or block in a database transaction
    /// (`sequelize.transaction(async t => ..)`, `prisma.$transaction(..)`):
    /// a row lock taken inside ends when it returns.
    #[serde(default)]
    pub transaction_methods: Vec<String>,
    /// Types of a connection pool (Go `*sql.DB`, `*sqlx.DB`): a statement run
    /// on one commits alone, so a row lock it takes ends with it. A type
    /// named for a pool (`PgPool`, `pgxpool.Pool`) is one without a listing.
    #[serde(default)]
    pub pool_types: Vec<String>,
    /// Class-body calls that register a method by name to run around the
    /// class's work (Rails `around_action :lock_order`): the registration is a
    /// call of that method.
    #[serde(default)]
    pub callback_registrations: Vec<String>,
    /// The registrations among those that run the class's actions inside the
    /// method (`around_action :lock_order, only: [:update]`): the actions'
    /// bodies are its critical section.
    #[serde(default)]
    pub callback_actions: Vec<String>,
    /// Calls whose value is the text of the file their argument names
    /// (`File.read(..)`, `fs.readFileSync(..)`, `new ClassPathResource(..)`).
    #[serde(default)]
    pub file_reads: Vec<String>,
    /// Calls that read a clock and cannot fail (`time.monotonic()`, `Date.now()`).
    #[serde(default)]
    pub clock_reads: Vec<String>,
    /// Words that bound a loop retrying an acquisition when its head, a
    /// condition in it or a call in it names one (`time.monotonic() < deadline`,
    /// `attempt < 5`, `<-ctx.Done()`): whole words of an identifier
    /// (`maxRetries` is `max` and `retries`), case-insensitive.
    #[serde(default)]
    pub retry_bounds: Vec<String>,
}
