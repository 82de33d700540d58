//! The catalog's gates as a table: which rows a file names, then whether it
//! holds one of a named row's operations.

use super::is_ident;
use super::matcher::{anchor, Matcher, Phrase};
use crate::catalog::Gate;
use crate::model::Language;

/// The catalog's gates compiled into automata: the rows' names by language,
/// then the operations of the rows a file names. Most files name no library
/// of their language, and most that do name one or two: a search for all
/// operations of all rows would find short words (`set`, `del`) everywhere.
pub(super) struct Table {
    /// The triggers, by the language whose rows they name (`None`: the rows
    /// of every language).
    names: Vec<(Option<Language>, Matcher)>,
    /// The rows' sets of operations (rows of one library share theirs).
    operations: Vec<Matcher>,
    literals: Vec<Literal>,
    rows: Vec<Row>,
}

#[derive(Default)]
struct Literal {
    /// The rows whose library it names.
    triggers: Vec<usize>,
    /// A phrase (`FOR UPDATE`, `LOCK TABLE`, `: null`) by its words: the
    /// automaton finds the longest (a short one such as `: ` is in every
    /// TypeScript line), the others must stand before and after it past any
    /// whitespace (`LOCK\n  TABLE` in a migration is the same clause).
    phrase: Phrase,
}

struct Row {
    language: Option<Language>,
    /// Its operations ([`Table::operations`]); `None`: the name is enough.
    operations: Option<usize>,
    /// Claimant column stems (lowercase): when not empty, a trigger counts only
    /// right after such a column (`owner IS NULL`, `"locked_by" IS NULL`).
    claimants: Vec<String>,
    /// The claimant may be any name of the statement around the trigger.
    in_statement: bool,
}

impl Table {
    pub fn new(gates: &[Gate]) -> Option<Table> {
        let mut words: Vec<String> = Vec::new();
        let mut literals: Vec<Literal> = Vec::new();
        let mut index = |word: &str, words: &mut Vec<String>| -> usize {
            let word = word.to_ascii_lowercase();
            match words.iter().position(|w| *w == word) {
                Some(i) => i,
                None => {
                    let spelled: Vec<&str> = word.split_whitespace().collect();
                    let at = anchor(&spelled);
                    let phrase = Phrase {
                        before: spelled
                            .iter()
                            .take(at)
                            .rev()
                            .map(|w| w.to_string())
                            .collect(),
                        after: spelled.iter().skip(at + 1).map(|w| w.to_string()).collect(),
                    };
                    literals.push(Literal {
                        phrase,
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
        for &(literal, row, operation) in &roles {
            if !operation {
                literals[literal].triggers.push(row);
            }
        }
        let mut languages: Vec<Option<Language>> = gates.iter().map(|g| g.language).collect();
        languages.sort_unstable_by_key(|l| l.map(|l| l as u8));
        languages.dedup();
        let names = languages
            .into_iter()
            .filter_map(|language| {
                let mut triggers: Vec<usize> = roles
                    .iter()
                    .filter(|(_, row, operation)| {
                        let of = gates[*row].language;
                        !operation && (of.is_none() || of == language)
                    })
                    .map(|(literal, ..)| *literal)
                    .collect();
                triggers.sort_unstable();
                triggers.dedup();
                Some((language, Matcher::new(&words, &triggers)?))
            })
            .collect();
        let mut sets: Vec<Vec<usize>> = Vec::new();
        let mut operations = Vec::new();
        let rows = gates
            .iter()
            .enumerate()
            .map(|(row, g)| {
                let mut set: Vec<usize> = roles
                    .iter()
                    .filter(|(_, r, operation)| *r == row && *operation)
                    .map(|(literal, ..)| *literal)
                    .collect();
                set.sort_unstable();
                set.dedup();
                let index = match sets.iter().position(|s| *s == set) {
                    Some(i) => Some(i),
                    None => Matcher::new(&words, &set).map(|m| {
                        operations.push(m);
                        sets.push(set);
                        sets.len() - 1
                    }),
                };
                Row {
                    language: g.language,
                    operations: index,
                    claimants: g.claimants.iter().map(|c| c.to_ascii_lowercase()).collect(),
                    in_statement: g.claimant_in_statement,
                }
            })
            .collect();
        Some(Table {
            names,
            operations,
            literals,
            rows,
        })
    }

    /// Does one row find both its literals in `bytes`? The search runs over
    /// a lowercase copy: a case-insensitive automaton cannot skip ahead with
    /// a vectorised search, a case-sensitive one over a few dozen patterns can.
    pub fn matches(&self, bytes: &[u8], language: Language) -> bool {
        thread_local! {
            static LOWER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        LOWER.with_borrow_mut(|lower| {
            lower.clear();
            lower.extend_from_slice(bytes);
            lower.make_ascii_lowercase();
            self.matches_lowered(bytes, lower, language)
        })
    }

    /// [`Table::matches`] with `lower`, `bytes` in lowercase, to search.
    fn matches_lowered(&self, bytes: &[u8], lower: &[u8], language: Language) -> bool {
        let language = language.catalog_language();
        let applies = |row: usize| self.rows[row].language.is_none_or(|l| l == language);
        // Does the trigger found from `start` to `end` name `row`'s library?
        let is_name = |start: usize, end: usize, row: usize| {
            let Row {
                claimants: stems,
                in_statement,
                ..
            } = &self.rows[row];
            name_ends(bytes, start, end)
                && (stems.is_empty()
                    || match in_statement {
                        true => claimant_in_statement(bytes, start, end, stems),
                        false => claimant_before(bytes, start, stems),
                    })
        };
        let Some((_, names)) = self
            .names
            .iter()
            .find(|(l, _)| *l == Some(language))
            .or_else(|| self.names.iter().find(|(l, _)| l.is_none()))
        else {
            return false;
        };
        // The rows named, and whether one needs no operation.
        let mut named = vec![false; self.rows.len()];
        let enough = names.any(lower, |literal, start, end| {
            let literal = &self.literals[literal];
            let Some((start, end)) = literal.phrase.around(bytes, start, end) else {
                return false;
            };
            let mut enough = false;
            for &row in &literal.triggers {
                if !named[row] && applies(row) && is_name(start, end, row) {
                    named[row] = true;
                    enough |= self.rows[row].operations.is_none();
                }
            }
            enough
        });
        if enough {
            return true;
        }
        // One operation of a named row, as a whole word.
        let mut searched = vec![false; self.operations.len()];
        (0..self.rows.len())
            .filter(|&row| named[row])
            .filter_map(|row| self.rows[row].operations)
            .any(|set| {
                !std::mem::replace(&mut searched[set], true)
                    && self.operations[set].any(lower, |literal, start, end| {
                        let literal = &self.literals[literal];
                        literal
                            .phrase
                            .around(bytes, start, end)
                            .is_some_and(|(start, end)| whole_word(bytes, start, end))
                    })
            })
    }
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
        .rposition(|b| !matches!(b, b' ' | b'\t' | b'"' | b'`' | b']' | b'\'' | b'+'))
        .map_or(0, |i| i + 1);
    let start = head[..end]
        .iter()
        .rposition(|b| !(b.is_ascii_alphanumeric() || *b == b'_'))
        .map_or(0, |i| i + 1);
    let name = String::from_utf8_lossy(&head[start..end]).to_ascii_lowercase();
    name.split('_')
        .any(|part| stems.iter().any(|s| part.starts_with(s.as_str())))
}

/// How far an insert's table and columns may stand from its `ON CONFLICT`
/// (a long column list, a `VALUES` or `SELECT` between) or its `INSERT IGNORE`.
const STATEMENT_REACH: usize = 800;

/// Does a name within [`STATEMENT_REACH`] bytes around the trigger at
/// `start..end` (the statement it belongs to) start with one of `stems`,
/// whole or after a `_`?
fn claimant_in_statement(bytes: &[u8], start: usize, end: usize, stems: &[String]) -> bool {
    let from = start.saturating_sub(STATEMENT_REACH);
    let to = (end + STATEMENT_REACH).min(bytes.len());
    bytes[from..to]
        .split(|b| !(b.is_ascii_alphanumeric() || *b == b'_'))
        .flat_map(|name| name.split(|b| *b == b'_'))
        .any(|part| {
            stems.iter().any(|s| {
                part.len() >= s.len() && part[..s.len()].eq_ignore_ascii_case(s.as_bytes())
            })
        })
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
