/*
 * Customer wallets: store credit that checkout can spend and support can top up.
 * Every balance change runs under the per-wallet Redisson lock "lock:wallet:{id}".
 * topUp has moved to the fenced flavour of that lock (same name, so the two still
 * exclude each other); spend has not yet.
 */
package com.example.wallets;

import java.util.concurrent.TimeUnit;

import org.redisson.api.RFencedLock;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Service;

@Service
public class WalletService {
    private final RedissonClient redisson;
    private final JdbcTemplate jdbc;

    public WalletService(RedissonClient redisson, JdbcTemplate jdbc) {
        this.redisson = redisson;
        this.jdbc = jdbc;
    }

    /**
     * Spends store credit at checkout. If this thread stalls past the 10 s lease, a second
     * checkout takes the lock and both UPDATEs land: the credit is spent twice.
     */
    public boolean spend(long walletId, long cents) throws InterruptedException {
        RLock lock = redisson.getLock("lock:wallet:" + walletId);
        if (!lock.tryLock(2, 10, TimeUnit.SECONDS)) {
            return false;
        }
        try {
            int rows = jdbc.update(
                "UPDATE wallets SET balance_cents = balance_cents - ? WHERE id = ? AND balance_cents >= ?",
                cents, walletId, cents);
            return rows == 1;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Tops up store credit. The fenced lock hands out a token that grows with every grant;
     * the row keeps the highest token it has seen, so a stale holder's UPDATE matches no row.
     */
    public boolean topUp(long walletId, long cents) throws InterruptedException {
        RFencedLock lock = redisson.getFencedLock("lock:wallet:" + walletId);
        Long fence = lock.tryLockAndGetToken(2, 10, TimeUnit.SECONDS);
        if (fence == null) {
            return false;
        }
        try {
            int rows = jdbc.update(
                "UPDATE wallets SET balance_cents = balance_cents + ?, fence = ? WHERE id = ? AND fence < ?",
                cents, fence, walletId, fence);
            return rows == 1;
        } finally {
            lock.unlock();
        }
    }
}
