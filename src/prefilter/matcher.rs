//! An exact multi-literal search that skips ahead: every occurrence, as an
//! overlapping Aho–Corasick search finds them, at the cost of a leftmost one.

use aho_corasick::AhoCorasick;

/// A literal of several words, found by the one [`anchor`] picks.
#[derive(Default)]
pub(super) struct Phrase {
    /// The words before the one searched for, last first.
    pub before: Vec<String>,
    /// The words after it, in order.
    pub after: Vec<String>,
}

/// Finds every occurrence of some literals, as an overlapping search would,
/// but skipping ahead like a leftmost one (an overlapping search visits every
/// byte, and was a seventh of a scan's time): it restarts one byte after each
/// match's start, and reports with each match the shorter patterns that
/// start there too, the prefixes of the longest.
pub(super) struct Matcher {
    automaton: AhoCorasick,
    /// Per pattern: the literals it finds (a phrase by one of its words).
    literals_of: Vec<Vec<usize>>,
    /// Per pattern: its length and the other patterns that are its prefixes.
    prefixes: Vec<(usize, Vec<usize>)>,
}

impl Matcher {
    /// A matcher for the literals `which` of `words` (lowercase), each by
    /// the word [`anchor`] picks.
    pub fn new(words: &[String], which: &[usize]) -> Option<Matcher> {
        let mut patterns: Vec<String> = Vec::new();
        let mut literals_of: Vec<Vec<usize>> = Vec::new();
        for &literal in which {
            let spelled: Vec<&str> = words[literal].split_whitespace().collect();
            let Some(word) = spelled.get(anchor(&spelled)) else {
                continue;
            };
            match patterns.iter().position(|p| p == word) {
                Some(i) => literals_of[i].push(literal),
                None => {
                    patterns.push(word.to_string());
                    literals_of.push(vec![literal]);
                }
            }
        }
        let automaton = AhoCorasick::builder()
            .kind(Some(aho_corasick::AhoCorasickKind::DFA))
            .match_kind(aho_corasick::MatchKind::LeftmostLongest)
            .build(&patterns)
            .ok()
            .filter(|_| !patterns.is_empty())?;
        let prefixes = patterns
            .iter()
            .map(|p| {
                let shorter = patterns.iter().enumerate();
                let shorter =
                    shorter.filter(|(_, q)| q.len() < p.len() && p.starts_with(q.as_str()));
                (p.len(), shorter.map(|(i, _)| i).collect())
            })
            .collect();
        Some(Matcher {
            automaton,
            literals_of,
            prefixes,
        })
    }

    /// Calls `found(literal, start, end)` for every occurrence of a literal's
    /// searched word in `lower` (lowercase text), in order of start, until it
    /// returns true; returns whether it did.
    pub fn any(&self, lower: &[u8], mut found: impl FnMut(usize, usize, usize) -> bool) -> bool {
        let mut at = 0;
        while let Some(m) = self
            .automaton
            .find(aho_corasick::Input::new(lower).range(at..))
        {
            let pattern = m.pattern().as_usize();
            let shorter = self.prefixes[pattern].1.iter();
            let ends = std::iter::once((pattern, m.end()))
                .chain(shorter.map(|&p| (p, m.start() + self.prefixes[p].0)));
            for (p, end) in ends {
                if self.literals_of[p]
                    .iter()
                    .any(|&l| found(l, m.start(), end))
                {
                    return true;
                }
            }
            at = m.start() + 1;
        }
        false
    }
}

/// Which word of a phrase to search for: the longest (the first of equals).
pub(super) fn anchor(words: &[&str]) -> usize {
    let longest = words.iter().map(|w| w.len()).max().unwrap_or(0);
    words.iter().position(|w| w.len() == longest).unwrap_or(0)
}

impl Phrase {
    /// Where the phrase whose searched word is at `start..end` begins and
    /// ends, when its other words stand around it, each past a run of blanks.
    pub fn around(&self, bytes: &[u8], mut start: usize, mut end: usize) -> Option<(usize, usize)> {
        for word in &self.before {
            let blanks = bytes[..start]
                .iter()
                .rev()
                .take_while(|b| b.is_ascii_whitespace())
                .count();
            let at = (start - blanks)
                .checked_sub(word.len())
                .filter(|_| blanks > 0)?;
            if !bytes[at..start - blanks].eq_ignore_ascii_case(word.as_bytes()) {
                return None;
            }
            start = at;
        }
        for word in &self.after {
            let blanks = bytes[end..]
                .iter()
                .take_while(|b| b.is_ascii_whitespace())
                .count();
            let at = end + blanks;
            let next = bytes.get(at..at + word.len()).filter(|_| blanks > 0)?;
            if !next.eq_ignore_ascii_case(word.as_bytes()) {
                return None;
            }
            end = at + word.len();
        }
        Some((start, end))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_occurrence_is_found_as_an_overlapping_search_would() {
        let words: Vec<String> = ["redis", "redislock", "lock", "is null"]
            .map(String::from)
            .to_vec();
        let m = Matcher::new(&words, &[0, 1, 2, 3]).expect("builds");
        let found = |text: &str| {
            let mut all = Vec::new();
            m.any(text.as_bytes(), |literal, start, end| {
                all.push((literal, start, end));
                false
            });
            all.sort_unstable();
            all
        };
        // A shorter pattern at the same start, one inside a longer match.
        assert_eq!(found("redislock"), [(0, 0, 5), (1, 0, 9), (2, 5, 9)]);
        // A phrase by its longest word; its other words are checked after.
        assert_eq!(found("x is null"), [(3, 5, 9)]);
        let phrase = &Phrase {
            before: vec!["is".into()],
            after: Vec::new(),
        };
        assert_eq!(phrase.around(b"owner IS\n  NULL", 11, 15), Some((6, 15)));
        assert_eq!(phrase.around(b"owner ISNULL", 8, 12), None);
        assert_eq!(phrase.around(b"NULL", 0, 4), None);
    }
}
