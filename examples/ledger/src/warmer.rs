//! Keeps the balance cache warm. Several replicas run this; the lock only
//! avoids duplicate work, and it is acquired and released correctly.

use std::time::Duration;

use redis::aio::ConnectionManager;
use redis::{AsyncCommands, ExistenceCheck, RedisResult, SetExpiry, SetOptions};
use uuid::Uuid;

const WARM_LOCK_KEY: &str = "lock:balance-cache:warm";
const WARM_TTL_MS: u64 = 30_000;

/// Delete the key only while it still holds our token.
const RELEASE: &str = r#"
if redis.call("get", KEYS[1]) == ARGV[1] then
    return redis.call("del", KEYS[1])
else
    return 0
end
"#;

pub async fn warm_once(con: &mut ConnectionManager, accounts: &[u64]) -> RedisResult<bool> {
    let token = Uuid::new_v4().to_string();
    let acquired: Option<String> = con
        .set_options(
            WARM_LOCK_KEY,
            &token,
            SetOptions::default()
                .conditional_set(ExistenceCheck::NX)
                .with_expiration(SetExpiry::PX(WARM_TTL_MS)),
        )
        .await?;
    if acquired.is_none() {
        return Ok(false);
    }

    let result = refresh(con, accounts).await;

    let _: i32 = redis::Script::new(RELEASE)
        .key(WARM_LOCK_KEY)
        .arg(&token)
        .invoke_async(con)
        .await?;
    result.map(|_| true)
}

async fn refresh(con: &mut ConnectionManager, accounts: &[u64]) -> RedisResult<()> {
    for id in accounts {
        let cents: i64 = 0; // would come from the ledger database
        let _: () = con
            .set_ex(format!("cache:balance:{id}"), cents, 300)
            .await?;
    }
    Ok(())
}

pub async fn run(mut con: ConnectionManager, accounts: Vec<u64>) {
    loop {
        if let Err(err) = warm_once(&mut con, &accounts).await {
            log::warn!("balance cache warm failed: {err}");
        }
        tokio::time::sleep(Duration::from_secs(60)).await;
    }
}
