//! The prefilter: Aho–Corasick automata over literals, run on raw bytes. A
//! file the prefilter rejects is never decoded or parsed, which keeps a
//! monorepo scan near the cost of reading it.
//!
//! The catalog's table ([`Gate`]) asks for two literals of one library: one
//! of its names (`redis`) and one of its operations as a whole word (`nx`,
//! `lock`, `eval`). Literals in comments count: the prefilter never
//! tokenizes, it may only pass too much.

mod matcher;
mod table;

use std::sync::Arc;

use aho_corasick::AhoCorasick;

use crate::catalog::Gate;
use crate::model::Language;
use table::Table;

#[derive(Clone)]
pub struct Prefilter {
    automata: Vec<AhoCorasick>,
    table: Option<Arc<Table>>,
}

/// Can `b` be part of an identifier?
fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

impl Prefilter {
    /// The catalog's table: a library's name and one of its operations.
    pub fn catalog(gates: &[Gate]) -> Self {
        Prefilter {
            automata: Vec::new(),
            table: Table::new(gates).map(Arc::new),
        }
    }

    /// Any of `words`, matched case-insensitively.
    pub fn new(words: &[String]) -> Self {
        Self::build(words, true)
    }

    /// Exact names (wrapper functions), case-sensitive.
    pub fn exact(names: &[String]) -> Self {
        Self::build(names, false)
    }

    fn build(words: &[String], ignore_case: bool) -> Self {
        // A DFA: more memory than the default, but the scan over every byte
        // of the tree is the hot path.
        // Leftmost-longest is exact for identifiers (see `words_in`).
        let kind = match words.iter().all(|w| w.bytes().all(is_ident)) {
            true => aho_corasick::MatchKind::LeftmostLongest,
            false => aho_corasick::MatchKind::Standard,
        };
        let automata = AhoCorasick::builder()
            .kind(Some(aho_corasick::AhoCorasickKind::DFA))
            .match_kind(kind)
            .ascii_case_insensitive(ignore_case)
            .build(words)
            .ok()
            .filter(|_| !words.is_empty())
            .into_iter()
            .collect();
        Prefilter {
            automata,
            table: None,
        }
    }

    /// Matches what either matches.
    pub fn either(a: &Prefilter, b: &Prefilter) -> Self {
        Prefilter {
            automata: a.automata.iter().chain(&b.automata).cloned().collect(),
            table: a.table.clone().or_else(|| b.table.clone()),
        }
    }

    /// Which patterns occur in `bytes` as whole identifiers (indices into
    /// the words given to `exact`): `withLock` is not found in `withLockRetry`.
    ///
    /// When every word is an identifier, leftmost-longest matches find them
    /// all: a whole word cannot start inside another match (an identifier
    /// byte precedes it), and of the words starting at one place only the
    /// longest can be whole (a shorter one ends before an identifier byte).
    /// That search skips ahead with a vectorised prefilter; the overlapping
    /// one visits every byte.
    pub fn words_in(&self, bytes: &[u8]) -> Vec<usize> {
        let ident = |b: Option<&u8>| b.is_some_and(|b| is_ident(*b));
        let whole = |m: &aho_corasick::Match| {
            let before = m.start().checked_sub(1).and_then(|i| bytes.get(i));
            !ident(before) && !ident(bytes.get(m.end()))
        };
        let mut found: Vec<usize> = self
            .automata
            .iter()
            .flat_map(|ac| {
                let matches: Box<dyn Iterator<Item = aho_corasick::Match>> = match ac.match_kind() {
                    aho_corasick::MatchKind::Standard => Box::new(ac.find_overlapping_iter(bytes)),
                    _ => Box::new(ac.find_iter(bytes)),
                };
                matches.filter(whole).map(|m| m.pattern().as_usize())
            })
            .collect();
        found.sort_unstable();
        found.dedup();
        found
    }

    /// Does a file in `language` mention anything worth parsing?
    pub fn matches(&self, bytes: &[u8], language: Language) -> bool {
        self.automata.iter().any(|ac| ac.is_match(bytes))
            || self
                .table
                .as_ref()
                .is_some_and(|t| t.matches(bytes, language))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Catalog;

    fn parsed(text: &str, language: Language) -> bool {
        let catalog = Catalog::builtin().expect("the built-in catalog compiles");
        Prefilter::catalog(&catalog.gates).matches(text.as_bytes(), language)
    }

    #[test]
    fn a_library_name_needs_one_of_its_operations() {
        use Language::*;
        // A name alone: an import, a config key, a comment.
        assert!(!parsed(
            "import redis\nr = redis.Redis()\nr.get('k')\n",
            Python
        ));
        assert!(!parsed("// uses the redis cache for sessions\n", Go));
        // A longer word is not the name: the GPL header's `redistribute` and a Java `delete`.
        assert!(!parsed(
            "// you can redistribute it\nrepo.delete(row);\n",
            Java
        ));
        assert!(parsed("redisTemplate.delete(key);\n", Java));
        // A name and an operation, as a word.
        assert!(parsed(
            "import redis\nr.set('lock:a', 1, nx=True)\n",
            Python
        ));
        assert!(parsed(
            "import redis\nwith r.lock('a'):\n    pass\n",
            Python
        ));
        assert!(parsed(
            "rdb := redis.NewClient(o)\nrdb.SetNX(ctx, k, 1, 0)\n",
            Go
        ));
        assert!(parsed(
            "const r = new Redis(); r.del('lock:a');\n",
            JavaScript
        ));
        assert!(parsed(
            "Rails.cache.write(k, 1, unless_exist: true)\n",
            Ruby
        ));
        // Near misses: the operation inside a longer word, or another language's library.
        assert!(!parsed(
            "import redis\nmodel = onnx.load(p)\nblocker = 1\n",
            Python
        ));
        assert!(!parsed("import redsync\nm = NewMutex()\n", Python));
        assert!(parsed(
            "import \"github.com/go-redsync/redsync/v4\"\nm := rs.NewMutex(k)\n",
            Go
        ));
    }

    #[test]
    fn a_lock_type_counts_as_written_with_its_package() {
        use Language::*;
        // `concurrency` in a comment and an in-process `sync.Mutex`: nothing to parse.
        assert!(!parsed(
            "// bounded concurrency for workers
var mu sync.Mutex
",
            Go
        ));
        // The etcd lock object, kept in a field.
        assert!(parsed(
            "import \"go.etcd.io/etcd/client/v3/concurrency\"\ntype s struct{ m *concurrency.Mutex }\n",
            Go
        ));
        // An unqualified type by its name.
        assert!(parsed("private final RLock lock; // redisson\n", Java));
        // Another language's library name is no trigger: etcd's Go package
        // and its operation, spelled in TypeScript.
        let etcd = "import { concurrency } from './pool';\nconst m = concurrency.NewMutex(s, 'jobs'); m.Lock();\n";
        assert!(!parsed(etcd, TypeScript));
        assert!(parsed(&etcd.replace("import {", "// {"), Go));
    }

    #[test]
    fn a_claim_phrase_needs_its_claimant_column() {
        use Language::*;
        let update = "await prisma.job.updateMany({ where: { id, lockedBy: null }, data: { lockedBy: me } });\n";
        assert!(parsed(update, TypeScript));
        // `: null` after another column is an ordinary filter.
        assert!(!parsed(
            &update.replace("lockedBy", "deletedAt"),
            TypeScript
        ));
        // A guarded insert names a claim near a lock table's name in its statement.
        let insert = "const elect = `INSERT INTO river_leader (leader_id, expires_at)\n  VALUES ($1, $2)\n  ON CONFLICT (name) DO NOTHING`\n";
        assert!(parsed(insert, Go));
        let data = insert
            .replace("river_leader", "events")
            .replace("leader_id", "body");
        assert!(!parsed(&data, Go));
        assert!(parsed(
            "sql = \"INSERT IGNORE INTO app_locks (name, owner) VALUES (?, ?)\"\n",
            Python
        ));
        // Who and when of a claim: the `_by` of a claimant stem, near an update.
        let reserve = "count = scope.update_all(locked_at: now, locked_by: worker.name)\n";
        assert!(parsed(reserve, Ruby));
        assert!(!parsed(&reserve.replace("locked_", "updated_"), Ruby));
    }

    #[test]
    fn sql_text_is_its_own_operation_except_a_bare_is_null() {
        use Language::*;
        assert!(parsed(
            "q = \"SELECT * FROM jobs FOR UPDATE SKIP LOCKED\"\n",
            Python
        ));
        assert!(parsed("db.Exec(\"SELECT pg_advisory_lock($1)\", id)\n", Go));
        // `IS NULL` names a row claim only next to an UPDATE.
        assert!(!parsed(
            "q = \"SELECT * FROM users WHERE deleted_at IS NULL\"\n",
            Java
        ));
        assert!(parsed(
            "q = \"UPDATE jobs SET owner = ? WHERE id = ? AND owner IS NULL\"\n",
            Java
        ));
        assert!(!parsed("// FOR UPDATES see the changelog\n", Go));
        // A clause spelled over lines is the same clause; its words still stand alone.
        assert!(parsed(
            "BEGIN\n  LOCK\nTABLE letters IN ACCESS EXCLUSIVE MODE;\n",
            Sql
        ));
        assert!(parsed(
            "q = \"\"\"SELECT id FROM jobs FOR\n    UPDATE SKIP LOCKED\"\"\"\n",
            Python
        ));
        assert!(!parsed("-- LOCK TABLES_TO_KEEP is a setting\n", Sql));
        assert!(!parsed("for\n  update_all(rows)\n", Python));
        // An UPDATE guarded by IS NULL without a claimant column is a backfill.
        assert!(!parsed(
            "q = \"UPDATE users SET role = 'member' WHERE role IS NULL\"\n",
            Python
        ));
        assert!(parsed(
            "q = \"UPDATE nodes SET task_reservation = ? WHERE task_reservation IS NULL\"\n",
            Python
        ));
    }
}
