#!/usr/bin/env python3
"""Generated files that stress per-file analysis (issue: scale).

  dense.py     N small functions, each `SET ... NX PX` then `DEL` (default 20,000)
  pairs.py     one function with M sequential SET NX / DEL pairs (default 5,000)
  ordinary.py  a 100,000-line file of ordinary code with one lock (so the prefilter parses it)
  typed.go     K methods locking one struct field typed *redsync.Mutex (default 5,000):
               a typed lock object's sites and releases paired file-wide

Usage: gen_dense.py OUTDIR [--functions N] [--pairs M] [--lines L]
"""
import argparse
import os


def dense(n: int) -> str:
    out = ["import redis\n", "r = redis.Redis()\n\n"]
    for i in range(n):
        out.append(
            f"def job_{i}(token):\n"
            f"    if r.set('lock:job:{i}', token, nx=True, px=30000):\n"
            f"        r.delete('lock:job:{i}')\n\n"
        )
    return "".join(out)


def pairs(m: int) -> str:
    out = ["import redis\n", "r = redis.Redis()\n\n", "def sweep(token):\n"]
    for i in range(m):
        out.append(
            f"    r.set('lock:sweep:{i}', token, nx=True, px=30000)\n"
            f"    r.delete('lock:sweep:{i}')\n"
        )
    return "".join(out)


def ordinary(lines: int) -> str:
    out = [
        "import redis  # the cache client\n",
        "cache = redis.Redis()\n\n",
        "def warm(token):\n    return cache.set('lock:warm', token, nx=True, px=30000)\n\n",
    ]
    i = 0
    while sum(1 for _ in out) < lines:
        out.append(
            f"def handler_{i}(request, items):\n"
            f"    total = 0\n"
            f"    for item in items:\n"
            f"        if item.price > {i % 97}:\n"
            f"            total += item.price * item.quantity\n"
            f"    request.log.info('total %s', total)\n"
            f"    return {{'id': {i}, 'total': total}}\n\n"
        )
        i += 1
    return "".join(out)


def typed(k: int) -> str:
    out = [
        "package jobs\n\n",
        'import (\n\t"context"\n\n\t"github.com/go-redsync/redsync/v4"\n)\n\n',
        "type Worker struct {\n\tmutex *redsync.Mutex\n}\n\n",
    ]
    for i in range(k):
        out.append(
            f"func (w *Worker) Job{i}(ctx context.Context) error {{\n"
            f"\tif err := w.mutex.LockContext(ctx); err != nil {{\n\t\treturn err\n\t}}\n"
            f"\tdefer w.mutex.UnlockContext(ctx)\n"
            f"\treturn nil\n}}\n\n"
        )
    return "".join(out)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--functions", type=int, default=20_000)
    ap.add_argument("--pairs", type=int, default=5_000)
    ap.add_argument("--lines", type=int, default=100_000)
    ap.add_argument("--methods", type=int, default=5_000)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    for name, text in [
        ("dense.py", dense(a.functions)),
        ("pairs.py", pairs(a.pairs)),
        ("ordinary.py", ordinary(a.lines // 8)),
        ("typed.go", typed(a.methods)),
    ]:
        with open(os.path.join(a.out, name), "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
