// Checkout: reserves stock for a cart under a per-SKU Redis lock (ioredis).
// The acquisition is right (SET ... PX ... NX with a random token); the
// release is not: a plain DEL can delete the lock of the next holder when
// the reservation took longer than the 5 s lease.
const Redis = require('ioredis');
const { randomUUID } = require('crypto');

const redis = new Redis(process.env.REDIS_URL);

async function reserve(sku, quantity, inventory) {
  const lockKey = `lock:stock:${sku}`;
  const token = randomUUID();
  const ok = await redis.set(lockKey, token, 'PX', 5000, 'NX');
  if (ok !== 'OK') {
    throw new Error(`stock for ${sku} is being updated, retry`);
  }
  try {
    await inventory.decrement(sku, quantity);
  } finally {
    await redis.del(lockKey);
  }
}

module.exports = { reserve };
