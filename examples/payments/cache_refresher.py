"""Refreshes the exchange-rate cache every few minutes.

Several workers run this loop; the lock only saves duplicate work (if two
workers refresh at once, the cache simply gets written twice).
"""
import json
import logging
import time
import uuid

import redis

from payments import rates_api

log = logging.getLogger("payments.cache")

r = redis.Redis(host="redis", port=6379, db=1)

REFRESH_LOCK_KEY = "lock:fx-rates:refresh"
REFRESH_TTL_MS = 60_000

# Delete the key only if it still holds our token.
RELEASE_SCRIPT = """
if redis.call("get", KEYS[1]) == ARGV[1] then
    return redis.call("del", KEYS[1])
else
    return 0
end
"""
release_lock = r.register_script(RELEASE_SCRIPT)


def refresh_rates():
    token = uuid.uuid4().hex
    if not r.set(REFRESH_LOCK_KEY, token, nx=True, px=REFRESH_TTL_MS):
        log.debug("another worker is refreshing rates")
        return False
    try:
        rates = rates_api.fetch_all()
        r.set("cache:fx-rates", json.dumps(rates), ex=600)
        return True
    finally:
        release_lock(keys=[REFRESH_LOCK_KEY], args=[token])


def main():
    while True:
        try:
            refresh_rates()
        except redis.RedisError:
            log.exception("rate refresh failed")
        time.sleep(120)


if __name__ == "__main__":
    main()
