//! The prefilter: Aho–Corasick automata over literal triggers, run on raw
//! bytes. A file with no trigger is never decoded or parsed, which keeps a
//! monorepo scan near the cost of reading it.

use aho_corasick::AhoCorasick;

#[derive(Clone)]
pub struct Prefilter {
    automata: Vec<AhoCorasick>,
}

impl Prefilter {
    /// The catalog's triggers, matched case-insensitively.
    pub fn new(triggers: &[String]) -> Self {
        Self::build(triggers, true)
    }

    /// Exact names (wrapper functions), case-sensitive.
    pub fn exact(names: &[String]) -> Self {
        Self::build(names, false)
    }

    fn build(words: &[String], ignore_case: bool) -> Self {
        // A DFA: more memory than the default, but the scan over every byte
        // of the tree is the hot path.
        let automata = AhoCorasick::builder()
            .kind(Some(aho_corasick::AhoCorasickKind::DFA))
            .ascii_case_insensitive(ignore_case)
            .build(words)
            .ok()
            .filter(|_| !words.is_empty())
            .into_iter()
            .collect();
        Prefilter { automata }
    }

    /// Matches what either matches.
    pub fn either(a: &Prefilter, b: &Prefilter) -> Self {
        Prefilter {
            automata: a.automata.iter().chain(&b.automata).cloned().collect(),
        }
    }

    /// Which patterns occur in `bytes` as whole identifiers (indices into
    /// the words given to `exact`): `withLock` is not found in `withLockRetry`.
    pub fn words_in(&self, bytes: &[u8]) -> Vec<usize> {
        let ident = |b: Option<&u8>| b.is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_');
        let mut found: Vec<usize> = self
            .automata
            .iter()
            .flat_map(|ac| {
                ac.find_overlapping_iter(bytes)
                    .filter(|m| {
                        let before = m.start().checked_sub(1).and_then(|i| bytes.get(i));
                        !ident(before) && !ident(bytes.get(m.end()))
                    })
                    .map(|m| m.pattern().as_usize())
                    .collect::<Vec<_>>()
            })
            .collect();
        found.sort_unstable();
        found.dedup();
        found
    }

    /// Does the file mention anything worth parsing?
    pub fn matches(&self, bytes: &[u8]) -> bool {
        self.automata.iter().any(|ac| ac.is_match(bytes))
    }
}
