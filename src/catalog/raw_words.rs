//! Classification words as the catalog writes them: their weights and where
//! they count (split from `raw.rs`, which re-exports these).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;

/// Heuristic classification: word weights.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawClassification {
    pub threshold: Option<i32>,
    #[serde(default)]
    pub correctness_words: BTreeMap<String, RawWord>,
    #[serde(default)]
    pub efficiency_words: BTreeMap<String, RawWord>,
}

/// A vocabulary word: its weight, or its weight and where it counts.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum RawWord {
    /// Counts in the key, the function's own name and a wrapper's name.
    Weight(i32),
    Scoped {
        weight: i32,
        /// Where the word counts.
        scopes: Vec<WordScope>,
    },
}

/// Where a vocabulary word is looked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum WordScope {
    /// The lock's key (and what the helper building it returns).
    Key,
    /// The own name of the function taking the lock (`render_tiles`, not its class).
    Function,
    /// The name of the in-house wrapper called (`with_billing_lock`).
    Wrapper,
    /// The class of the function taking the lock (`BatchProjectCleaner`).
    Class,
    /// The folders and file name of the file (`cron/daily/clean-orders.js`).
    Path,
}

impl RawWord {
    /// The weight and the scopes, the default ones for a plain weight.
    pub fn scoped(&self) -> (i32, Vec<WordScope>) {
        match self {
            RawWord::Weight(n) => (
                *n,
                vec![WordScope::Key, WordScope::Function, WordScope::Wrapper],
            ),
            RawWord::Scoped { weight, scopes } => (*weight, scopes.clone()),
        }
    }
}
