"""Nightly billing run for the payments service.

Started by cron on every replica at 02:00 UTC; a Redis lock makes sure only
one replica actually charges customers.
"""
import logging
import os
import socket
import time
from datetime import date

import redis

from payments import db, gateway

log = logging.getLogger("payments.billing")

r = redis.Redis.from_url(os.environ.get("REDIS_URL", "redis://localhost:6379/0"))

LOCK_TTL_SECONDS = 15 * 60


def lock_key_for(run_date):
    return f"billing:run:{run_date.isoformat()}"


def charge_due_subscriptions(run_date):
    charged = 0
    for sub in db.subscriptions_due(run_date):
        receipt = gateway.charge(sub.customer_id, sub.amount_cents, currency=sub.currency)
        db.record_payment(sub.id, receipt.id, sub.amount_cents)
        charged += 1
    return charged


def run(run_date=None):
    run_date = run_date or date.today()
    key = lock_key_for(run_date)
    owner = f"{socket.gethostname()}:{os.getpid()}"

    # Acquire, then set the expiry in a second round trip.
    if not r.setnx(key, owner):
        log.info("billing run for %s already owned by %s", run_date, r.get(key))
        return 0
    r.expire(key, LOCK_TTL_SECONDS)

    started = time.monotonic()
    try:
        charged = charge_due_subscriptions(run_date)
        log.info("charged %d subscriptions in %.1fs", charged, time.monotonic() - started)
        return charged
    finally:
        r.delete(key)


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    run()
