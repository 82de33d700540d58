//! The prefilter: Aho–Corasick automata over literals, run on raw bytes. A
//! file the prefilter rejects is never decoded or parsed, which keeps a
//! monorepo scan near the cost of reading it.
//!
//! The catalog's table ([`Gate`]) asks for two literals of one library: one
//! of its names (`redis`) and one of its operations as a whole word (`nx`,
//! `lock`, `eval`). Literals in comments count: the prefilter never
//! tokenizes, it may only pass too much.

use std::sync::Arc;

use aho_corasick::AhoCorasick;

use crate::catalog::Gate;
use crate::model::Language;

#[derive(Clone)]
pub struct Prefilter {
    automata: Vec<AhoCorasick>,
    table: Option<Arc<Table>>,
}

/// The catalog's gates compiled into one automaton.
struct Table {
    /// The triggers alone, by the language whose rows they name (`None`:
    /// the rows of every language): most files name no library of their
    /// language, and a plain search rejects them faster than the
    /// overlapping one below (`concurrency`, etcd's Go package, is in
    /// thousands of TypeScript files).
    names: Vec<(Option<Language>, AhoCorasick)>,
    automaton: AhoCorasick,
    /// The literal each pattern of the automaton finds.
    literal_of: Vec<usize>,
    /// Per literal: the rows it names a library of, and those it names an operation of.
    literals: Vec<Literal>,
    rows: Vec<Row>,
}

#[derive(Default)]
struct Literal {
    triggers: Vec<usize>,
    operations: Vec<usize>,
    /// The words after the first of a phrase (`FOR UPDATE`, `LOCK TABLE`): the
    /// automaton finds the first, these must follow it past any whitespace
    /// (`LOCK\n  TABLE` in a migration is the same clause).
    rest: Vec<String>,
}

struct Row {
    language: Option<Language>,
    needs_operation: bool,
    /// Claimant column stems (lowercase): when not empty, a trigger counts only
    /// right after such a column (`owner IS NULL`, `"locked_by" IS NULL`).
    claimants: Vec<String>,
}

impl Table {
    fn new(gates: &[Gate]) -> Option<Table> {
        let mut words: Vec<String> = Vec::new();
        let mut literals: Vec<Literal> = Vec::new();
        let mut index = |word: &str, words: &mut Vec<String>| -> usize {
            let word = word.to_ascii_lowercase();
            match words.iter().position(|w| *w == word) {
                Some(i) => i,
                None => {
                    let rest = word.split_whitespace().skip(1).map(str::to_string);
                    literals.push(Literal {
                        rest: rest.collect(),
                        ..Literal::default()
                    });
                    words.push(word);
                    words.len() - 1
                }
            }
        };
        let mut roles: Vec<(usize, usize, bool)> = Vec::new();
        for (row, gate) in gates.iter().enumerate() {
            for t in &gate.triggers {
                roles.push((index(t, &mut words), row, false));
            }
            for o in &gate.operations {
                roles.push((index(o, &mut words), row, true));
            }
        }
        for (literal, row, operation) in roles {
            let l = &mut literals[literal];
            match operation {
                true => l.operations.push(row),
                false => l.triggers.push(row),
            }
        }
        let build = |words: &[String]| {
            AhoCorasick::builder()
                .kind(Some(aho_corasick::AhoCorasickKind::DFA))
                .ascii_case_insensitive(true)
                .build(words)
                .ok()
                .filter(|_| !words.is_empty())
        };
        let (firsts, literal_of) = first_words(&words);
        let automaton = build(&firsts)?;
        let mut languages: Vec<Option<Language>> = gates.iter().map(|g| g.language).collect();
        languages.sort_unstable_by_key(|l| l.map(|l| l as u8));
        languages.dedup();
        let names = languages
            .into_iter()
            .filter_map(|language| {
                let triggers: Vec<String> = gates
                    .iter()
                    .filter(|g| g.language.is_none() || g.language == language)
                    .flat_map(|g| g.triggers.clone())
                    .collect();
                Some((language, build(&first_words(&triggers).0)?))
            })
            .collect();
        let rows = gates
            .iter()
            .map(|g| Row {
                language: g.language,
                needs_operation: !g.operations.is_empty(),
                claimants: g.claimants.iter().map(|c| c.to_ascii_lowercase()).collect(),
            })
            .collect();
        Some(Table {
            names,
            automaton,
            literal_of,
            literals,
            rows,
        })
    }

    /// Does one row find both its literals in `bytes`?
    fn matches(&self, bytes: &[u8], language: Language) -> bool {
        let language = language.catalog_language();
        let names = self
            .names
            .iter()
            .find(|(l, _)| *l == Some(language))
            .or_else(|| self.names.iter().find(|(l, _)| l.is_none()));
        if !names.is_some_and(|(_, ac)| ac.is_match(bytes)) {
            return false;
        }
        let applies = |row: &Row| row.language.is_none_or(|l| l == language);
        let mut named = vec![false; self.rows.len()];
        let mut operated = vec![false; self.rows.len()];
        for m in self.automaton.find_overlapping_iter(bytes) {
            let literal = &self.literals[self.literal_of[m.pattern().as_usize()]];
            let Some(end) = phrase_end(bytes, m.end(), &literal.rest) else {
                continue;
            };
            if !literal.triggers.is_empty() && name_ends(bytes, m.start(), end) {
                for &row in &literal.triggers {
                    let stems = &self.rows[row].claimants;
                    named[row] |= stems.is_empty() || claimant_before(bytes, m.start(), stems);
                }
            }
            if !literal.operations.is_empty() && whole_word(bytes, m.start(), end) {
                for &row in &literal.operations {
                    operated[row] = true;
                }
            }
            let done = |row: usize| {
                let r = &self.rows[row];
                named[row] && (operated[row] || !r.needs_operation) && applies(r)
            };
            if literal
                .triggers
                .iter()
                .chain(&literal.operations)
                .any(|&r| done(r))
            {
                return true;
            }
        }
        false
    }
}

/// The automaton's patterns for `words`, and the word each one finds: a word
/// itself, a phrase by its first word followed by a blank of any kind.
fn first_words(words: &[String]) -> (Vec<String>, Vec<usize>) {
    let mut patterns = Vec::new();
    let mut word_of = Vec::new();
    for (i, w) in words.iter().enumerate() {
        match w.split_once(' ') {
            Some((first, _)) => {
                for blank in [' ', '\n', '\t', '\r'] {
                    patterns.push(format!("{first}{blank}"));
                    word_of.push(i);
                }
            }
            None => {
                patterns.push(w.clone());
                word_of.push(i);
            }
        }
    }
    (patterns, word_of)
}

/// Where a phrase found by its first word (and one blank, ending at `at`)
/// ends: each of `rest` after any run of blanks, case-insensitively.
fn phrase_end(bytes: &[u8], mut at: usize, rest: &[String]) -> Option<usize> {
    if rest.is_empty() {
        return Some(at);
    }
    let blanks = |at: usize| {
        bytes[at.min(bytes.len())..]
            .iter()
            .take_while(|b| b.is_ascii_whitespace())
            .count()
    };
    for (i, word) in rest.iter().enumerate() {
        // The first word's blank is in the match; more may follow it.
        match blanks(at) {
            0 if i > 0 => return None,
            n => at += n,
        }
        let next = bytes.get(at..at + word.len())?;
        if !next.eq_ignore_ascii_case(word.as_bytes()) {
            return None;
        }
        at += word.len();
    }
    Some(at)
}

/// Does a library name end at `end`? Not when a lowercase word goes on:
/// `redistribute`, `consulting`; `redisClient`, `redis_url`, `ioredis` are names.
fn name_ends(bytes: &[u8], start: usize, end: usize) -> bool {
    let last = end
        .checked_sub(1)
        .filter(|&i| i >= start)
        .and_then(|i| bytes.get(i));
    !last.is_some_and(u8::is_ascii_alphanumeric)
        || !bytes.get(end).is_some_and(u8::is_ascii_lowercase)
}

/// Is the name just before `at` (past blanks and quotes) a claimant column:
/// does one of `stems` start its last `.` segment or one of its `_` parts?
fn claimant_before(bytes: &[u8], at: usize, stems: &[String]) -> bool {
    let head = &bytes[..at];
    let end = head
        .iter()
        .rposition(|b| !matches!(b, b' ' | b'\t' | b'"' | b'`' | b']' | b'\''))
        .map_or(0, |i| i + 1);
    let start = head[..end]
        .iter()
        .rposition(|b| !(b.is_ascii_alphanumeric() || *b == b'_'))
        .map_or(0, |i| i + 1);
    let name = String::from_utf8_lossy(&head[start..end]).to_ascii_lowercase();
    name.split('_')
        .any(|part| stems.iter().any(|s| part.starts_with(s.as_str())))
}

/// Can `b` be part of an identifier?
fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Is `bytes[start..end]` a whole identifier (nothing alphanumeric or `_` on either side)?
fn whole_word(bytes: &[u8], start: usize, end: usize) -> bool {
    let ident = |b: Option<&u8>| b.is_some_and(|b| is_ident(*b));
    let first = ident(bytes.get(start));
    let last = ident(end.checked_sub(1).and_then(|i| bytes.get(i)));
    // A literal that starts or ends with punctuation (`lock!`, `FOR UPDATE`) is bounded there.
    (!first || !ident(start.checked_sub(1).and_then(|i| bytes.get(i))))
        && (!last || !ident(bytes.get(end)))
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
