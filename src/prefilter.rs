//! The prefilter: one Aho–Corasick automaton over the catalog's trigger
//! literals, run on raw bytes. A file with no trigger is never decoded or
//! parsed, which keeps a monorepo scan near the cost of reading it.

use aho_corasick::AhoCorasick;

pub struct Prefilter {
    automaton: Option<AhoCorasick>,
}

impl Prefilter {
    pub fn new(triggers: &[String]) -> Self {
        let automaton = AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(triggers)
            .ok()
            .filter(|_| !triggers.is_empty());
        Prefilter { automaton }
    }

    /// Does the file mention anything the catalog knows?
    pub fn matches(&self, bytes: &[u8]) -> bool {
        self.automaton.as_ref().is_some_and(|ac| ac.is_match(bytes))
    }
}
