//! Ledger jobs: end-of-day settlement and the balance cache warmer.

pub mod settle;
pub mod warmer;

/// One ledger account's settled balance, in minor units.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Balance {
    pub account_id: u64,
    pub cents: i64,
    pub currency: String,
}
