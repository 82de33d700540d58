#!/usr/bin/env python3
"""Generate a deterministic synthetic source tree for benchmarking lock-audit.

    python3 bench/gen_corpus.py OUT_DIR [--lines 200000] [--seed 1]
                                [--langs python,rust] [--lock-ratio 0.03] [--force]

The tree looks like a monorepo of small services (``svc_N/<package>/...py``,
``svc_N/<crate>/src/...rs``). Most files are ordinary application code:
dataclasses and structs, HTTP-style handlers, dict/HashMap work, logging,
retry helpers, in-process ``threading.Lock`` / ``std::sync::Mutex``. They never
mention redis. About ``--lock-ratio`` of the files (3% by default; at least one per
language unless the ratio is 0) also import redis and contain one to three Redis lock shapes,
some correct and some wrong. The shapes are the same ones as in
``fixtures/python`` and ``fixtures/rust``.

The usual target is ``bench/corpus`` (git-ignored). OUT_DIR must be empty or
missing; ``--force`` replaces it, but only if it holds a corpus-manifest.json,
that is, a corpus this script wrote earlier.

Each language gets roughly an equal share of ``--lines``. File sizes are drawn
log-uniformly between 50 and 1500 lines. The same ``--seed``, ``--lines``,
``--langs`` and ``--lock-ratio`` always produce byte-identical output: only
``random.Random(seed)`` is used, never ``hash()`` or set ordering.

Besides the sources, ``OUT_DIR/corpus-manifest.json`` lists every planted lock
shape and every finding the first engine version (LA101, LA102, LA201) should
report for it, as ``{"path", "line", "code"}`` with paths relative to OUT_DIR.
That lets a benchmark check recall and false positives as well as speed.

To add a language, write a generator class with ``name``, ``ext``,
``path_for(...)``, ``ordinary(...)`` and ``with_locks(...)`` (see
PythonGen / RustGen), then register it in LANGS and its lock shapes in
LOCK_SHAPES.

Standard library only.
"""

import argparse
import json
import math
import os
import random
import re
import shutil
import sys
from string import Template

MANIFEST = "corpus-manifest.json"
MIN_FILE_LINES = 50
MAX_FILE_LINES = 1500

NOUNS = [
    "order", "invoice", "customer", "account", "shipment", "product", "cart",
    "payment", "user", "session", "report", "ticket", "subscription", "coupon",
    "warehouse", "vendor", "review", "notification", "profile", "address",
    "refund", "catalog", "message", "upload", "device", "team", "project",
    "task", "comment", "event", "booking", "quote", "contract", "survey",
    "asset", "policy", "claim", "route", "parcel", "tenant",
]
FIELDS = [
    "name", "email", "status", "created_at", "updated_at", "amount", "currency",
    "quantity", "price", "sku", "region", "priority", "owner_id", "tags",
    "notes", "score", "retries", "version", "country", "locale", "label",
    "kind", "source", "due_date", "total", "reference", "channel", "weight",
]
VERBS = [
    "load", "fetch", "build", "render", "validate", "normalize", "apply",
    "merge", "compute", "resolve", "export", "ingest", "sync", "index",
    "archive", "enrich", "classify", "dispatch", "schedule", "summarize",
    "reconcile", "publish", "prune", "rebuild", "settle", "refresh",
]
STATES = [
    "pending", "active", "paused", "failed", "done", "cancelled", "expired",
    "queued", "running", "review", "approved", "rejected",
]
PACKAGES = [
    "api", "core", "domain", "handlers", "jobs", "models", "services",
    "storage", "utils", "workers", "adapters", "reporting", "billing",
    "accounts", "catalog", "shipping", "notifications", "search",
]
CRATES = [
    "api", "core", "domain", "worker", "store", "gateway", "ledger", "events",
    "search", "billing", "shipping", "auth", "catalog", "metrics",
]
HOSTS = ["redis", "redis.internal", "cache-0.svc", "127.0.0.1", "localhost"]

MARKER = re.compile(r"\s*(?:#|//)@(LA\d+(?:,LA\d+)*)\s*$")


def camel(*parts):
    return "".join(p[:1].upper() + p[1:] for part in parts for p in part.split("_"))


def plural(noun):
    if noun.endswith("y") and noun[-2:-1] not in "aeiou":
        return noun[:-1] + "ies"
    if noun.endswith(("s", "x", "ch", "sh")):
        return noun + "es"
    return noun + "s"


SUMMARIES = [
    "Part of the $where. Keep handlers thin; the logic lives in plain functions.",
    "Part of the $where. Errors are logged and returned, never swallowed.",
    "Owned by the $noun team ($where).",
    "Used by the $noun pipeline in the $where.",
    "Shared models and helpers for the $where.",
]


def summary_line(rng, where):
    return Template(rng.choice(SUMMARIES)).substitute(where=where, noun=rng.choice(NOUNS))


def render(template, **values):
    """Substitute ``$names`` and split into lines, collecting ``#@LA101`` markers.

    Returns (lines, marks) where marks is a list of (line_index, [codes]).
    """
    text = Template(template).substitute(**values).lstrip("\n")
    lines, marks = [], []
    for i, line in enumerate(text.split("\n")):
        m = MARKER.search(line)
        if m:
            marks.append((i, m.group(1).split(",")))
            line = line[: m.start()]
        lines.append(line.rstrip())
    while lines and lines[-1] == "":
        lines.pop()
    return lines, marks


class Names:
    """Hands out identifiers that are unique within one file."""

    def __init__(self):
        self.used = {}

    def unique(self, base):
        n = self.used.get(base, 0)
        self.used[base] = n + 1
        return base if n == 0 else f"{base}_{n + 1}" if base[:1].islower() else f"{base}{n + 1}"


class FileBuilder:
    """Accumulates lines of one file plus the expected findings in it."""

    def __init__(self):
        self.lines = []
        self.findings = []  # (line_number_1_based, code)
        self.shapes = []  # (line_number_1_based, shape_name)

    def add(self, lines, marks=(), shape=None):
        base = len(self.lines)
        if shape is not None:
            self.shapes.append((base + 1, shape))
        for idx, codes in marks:
            for code in codes:
                self.findings.append((base + idx + 1, code))
        self.lines.extend(lines)

    def blank(self, n=2):
        self.lines.extend([""] * n)

    def text(self):
        return "\n".join(self.lines) + "\n"


# --------------------------------------------------------------------------
# Python
# --------------------------------------------------------------------------

PY_HEADER = '''"""$title

$summary
"""
import json
import logging
import re
import threading
import time$std_extra
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Dict, Iterable, List, Optional$extra_imports

logger = logging.getLogger(__name__)
'''

PY_RELEASE = '''
RELEASE_SCRIPT = """
if redis.call("get", KEYS[1]) == ARGV[1] then
    return redis.call("del", KEYS[1])
else
    return 0
end
"""'''

# Lock shapes. $adef / $aw switch between sync and redis.asyncio code.
# A trailing "#@LA101" marks a line where the engine must report that code.
PY_SHAPES = {
    "py_good_px_eval": ('''
$adef $fn(${noun}_id):
    lock_key = f"lock:${noun}:{${noun}_id}"
    token = uuid.uuid4().hex
    if not ${aw}$client.set(lock_key, token, nx=True, px=$ttl_ms):
        logger.info("${noun} %s is busy", ${noun}_id)
        return False
    try:
        logger.info("${verb} ${noun} %s", ${noun}_id)
    finally:
        ${aw}$client.eval(RELEASE_SCRIPT, 1, lock_key, token)
    return True'''),
    "py_good_ex_script": ('''
$adef $fn(${noun}_id, payload):
    key = f"${noun}:{${noun}_id}:${verb}"
    token = uuid.uuid4().hex
    acquired = ${aw}$client.set(key, token, nx=True, ex=$ttl_s)
    if not acquired:
        return None
    try:
        result = {k: v for k, v in payload.items() if v is not None}
        logger.debug("${verb} ${noun} %s: %d fields", ${noun}_id, len(result))
        return result
    finally:
        ${aw}$client.register_script(RELEASE_SCRIPT)(keys=[key], args=[token])'''),
    "py_nx_no_ttl": ('''
$adef $fn(${noun}_id):
    lock_key = f"lock:${noun}:${verb}:{${noun}_id}"
    token = uuid.uuid4().hex
    if not ${aw}$client.set(lock_key, token, nx=True):  #@LA101
        return False
    try:
        logger.info("${verb} ${noun} %s", ${noun}_id)
    finally:
        ${aw}$client.eval(RELEASE_SCRIPT, 1, lock_key, token)
    return True'''),
    "py_setnx_no_ttl": ('''
$adef $fn(shard):
    token = uuid.uuid4().hex
    # Claim the shard for this worker.
    if ${aw}$client.setnx(f"mutex:${noun}:shard:{shard}", token):  #@LA101
        logger.info("claimed ${noun} shard %s", shard)
        return token
    return None'''),
    "py_setnx_expire": ('''
$adef $fn(name):
    key = "lock:${noun}:" + name
    token = str(uuid.uuid4())
    if ${aw}$client.setnx(key, token):  #@LA102
        ${aw}$client.expire(key, $ttl_s)
        return token
    return None'''),
    "py_set_nx_pexpire": ('''
$adef $fn(${noun}_id):
    lock_key = f"lock:${noun}:{${noun}_id}"
    token = uuid.uuid4().hex
    acquired = ${aw}$client.set(lock_key, token, nx=True)  #@LA102
    if not acquired:
        return None
    ${aw}$client.pexpire(lock_key, $ttl_ms)
    return token'''),
    "py_del_release": ('''
$adef $fn(${noun}_id):
    lock_key = f"lock:${noun}:{${noun}_id}"
    token = uuid.uuid4().hex
    if not ${aw}$client.set(lock_key, token, nx=True, px=$ttl_ms):
        return False
    try:
        logger.info("${verb} ${noun} %s", ${noun}_id)
    finally:
        ${aw}$client.delete(lock_key)  #@LA201
    return True'''),
    "py_setnx_expire_del": ('''
$adef $fn(run_date):
    key = f"${noun}:run:{run_date}"
    owner = uuid.uuid4().hex
    if not ${aw}$client.setnx(key, owner):  #@LA102
        logger.info("${noun} run for %s already claimed", run_date)
        return 0
    ${aw}$client.expire(key, $ttl_s)
    try:
        logger.info("${verb} ${noun} run %s", run_date)
        return 1
    finally:
        ${aw}$client.delete(key)  #@LA201'''),
    "py_blind_lua": ('''
$adef $fn(${noun}_id):
    lock_key = f"lock:${noun}:{${noun}_id}"
    token = uuid.uuid4().hex
    if not ${aw}$client.set(lock_key, token, nx=True, ex=$ttl_s):
        return False
    try:
        logger.info("${verb} ${noun} %s", ${noun}_id)
    finally:
        ${aw}$client.eval("return redis.call('del', KEYS[1])", 1, lock_key)  #@LA201
    return True'''),
    "py_exec_no_ttl": ('''
$adef $fn(job_name):
    token = uuid.uuid4().hex
    reply = ${aw}$client.execute_command("SET", f"lock:${noun}:{job_name}", token, "NX")  #@LA101
    return token if reply else None'''),
    "py_dedupe": ('''
$adef $fn(event_id):
    # Drop duplicate deliveries of the same ${noun} event.
    first = ${aw}$client.set(f"dedupe:${noun}:{event_id}", "1", nx=True, ex=86400)
    if not first:
        logger.debug("duplicate ${noun} event %s", event_id)
    return bool(first)'''),
    "py_cache_invalidate": ('''
$adef $fn(${noun}_ids):
    cache_keys = [f"cache:${noun}:{i}" for i in ${noun}_ids]
    if cache_keys:
        ${aw}$client.delete(*cache_keys)
    ${aw}$client.unlink(f"cache:${noun}:index")
    return len(cache_keys)'''),
    "py_class_no_ttl": ('''
class $cls:
    """Runs ${noun} ${verb} jobs, one worker at a time."""

    def __init__(self, url):
        self.redis = redis.from_url(url)

    $adef run(self, ${noun}_id):
        lock_key = f"lock:${noun}:job:{${noun}_id}"
        token = uuid.uuid4().hex
        if not ${aw}self.redis.set(lock_key, token, nx=True):  #@LA101
            return False
        try:
            logger.info("${verb} ${noun} %s", ${noun}_id)
        finally:
            ${aw}self.redis.unlink(lock_key)  #@LA201
        return True'''),
}


class PythonGen:
    name = "python"
    ext = ".py"

    def __init__(self, rng):
        self.rng = rng

    def path_for(self, svc, index):
        rng = self.rng
        depth = rng.choice([1, 1, 2, 2, 3])
        parts = [f"svc_{svc}"] + rng.sample(PACKAGES, depth)
        module = f"{rng.choice(NOUNS)}_{rng.choice(['service', 'handlers', 'models', 'utils', 'jobs', 'views', 'store', 'tasks', 'helpers'])}"
        return os.path.join(*parts, f"{module}_{index}{self.ext}")

    # ---- ordinary units -------------------------------------------------

    def _fields(self, n):
        return self.rng.sample(FIELDS, n)

    def unit_dataclass(self, names):
        rng = self.rng
        noun = rng.choice(NOUNS)
        cls = names.unique(camel(noun, rng.choice(["", "record", "summary", "view", "row"])) or camel(noun))
        fields = self._fields(rng.randint(3, 7))
        required = rng.randint(1, len(fields))
        kinds = ["str", "int", "float", "bool"]
        lines = ["@dataclass", f"class {cls}:", f'    """A {noun} as the service stores it."""', "", "    id: int"]
        types = {}
        for i, f in enumerate(fields):
            t = rng.choice(kinds)
            types[f] = t
            if i < required:
                lines.append(f"    {f}: {t}")
            else:
                default = {"str": '""', "int": "0", "float": "0.0", "bool": "False"}[t]
                lines.append(f"    {f}: Optional[{t}] = {default}" if rng.random() < 0.3 else f"    {f}: {t} = {default}")
        lines.append("    tags: List[str] = field(default_factory=list)")
        lines += ["", "    def to_dict(self) -> Dict[str, Any]:", "        return {", '            "id": self.id,']
        lines += [f'            "{f}": self.{f},' for f in fields]
        lines += ['            "tags": list(self.tags),', "        }", "", "    @classmethod",
                  f'    def from_dict(cls, data: Dict[str, Any]) -> "{cls}":', "        return cls(",
                  '            id=int(data["id"]),']
        for i, f in enumerate(fields):
            if i < required:
                lines.append(f'            {f}={types[f]}(data["{f}"]),')
            else:
                lines.append(f'            {f}=data.get("{f}"),')
        lines += ['            tags=list(data.get("tags", [])),', "        )"]
        if rng.random() < 0.6:
            f = rng.choice(fields)
            lines += ["", f"    def describe(self) -> str:",
                      f'        return f"{cls}(id={{self.id}}, {f}={{self.{f}!r}})"']
        return lines

    def unit_repository(self, names):
        rng = self.rng
        noun = rng.choice(NOUNS)
        cls = names.unique(camel(noun, rng.choice(["repository", "store", "registry", "index"])))
        f = rng.choice(FIELDS)
        lines = [
            f"class {cls}:",
            f'    """In-memory {noun} store, safe to share between threads."""',
            "",
            "    def __init__(self):",
            "        self._lock = threading.Lock()",
            "        self._items: Dict[int, Dict[str, Any]] = {}",
            "        self._next_id = 1",
            "",
            "    def add(self, data: Dict[str, Any]) -> int:",
            "        with self._lock:",
            "            item_id = self._next_id",
            "            self._next_id += 1",
            "            self._items[item_id] = dict(data, id=item_id)",
            f'        logger.debug("added {noun} %s", item_id)',
            "        return item_id",
            "",
            "    def get(self, item_id: int) -> Optional[Dict[str, Any]]:",
            "        with self._lock:",
            "            item = self._items.get(item_id)",
            "            return dict(item) if item is not None else None",
        ]
        if rng.random() < 0.8:
            lines += ["", "    def remove(self, item_id: int) -> bool:", "        with self._lock:",
                      "            return self._items.pop(item_id, None) is not None"]
        if rng.random() < 0.8:
            lines += ["", f"    def find_by_{f}(self, value) -> List[Dict[str, Any]]:", "        with self._lock:",
                      f'            return [dict(i) for i in self._items.values() if i.get("{f}") == value]']
        if rng.random() < 0.6:
            lines += ["", "    def update(self, item_id: int, **changes) -> bool:", "        with self._lock:",
                      "            item = self._items.get(item_id)", "            if item is None:",
                      "                return False", "            item.update(changes)",
                      '            item["version"] = item.get("version", 0) + 1', "            return True"]
        lines += ["", "    def __len__(self) -> int:", "        with self._lock:", "            return len(self._items)"]
        return lines

    def unit_handler(self, names):
        rng = self.rng
        noun, verb = rng.choice(NOUNS), rng.choice(VERBS)
        fn = names.unique(f"handle_{verb}_{noun}")
        fields = self._fields(rng.randint(2, 5))
        tup = "(" + ", ".join(f'"{f}"' for f in fields) + ("," if len(fields) == 1 else "") + ")"
        status = rng.choice([200, 201, 202])
        lines = [
            f"def {fn}(request: Dict[str, Any]):",
            f'    """POST /api/v{rng.randint(1, 3)}/{plural(noun)}/<id>/{verb}"""',
            "    try:",
            '        payload = json.loads(request.get("body") or "{}")',
            "    except ValueError:",
            '        return 400, {"error": "invalid json"}',
            f"    missing = [name for name in {tup} if name not in payload]",
            "    if missing:",
            '        return 422, {"error": "missing fields", "fields": missing}',
        ]
        if rng.random() < 0.5:
            f = rng.choice(fields)
            lines += [f'    if not str(payload["{f}"]).strip():',
                      f'        return 422, {{"error": "{f} must not be empty"}}']
        lines += [
            f'    logger.info("{verb} {noun} %s", request.get("path"))',
            f"    result = {{k: payload[k] for k in {tup}}}",
            f'    result["status"] = "{rng.choice(STATES)}"',
            f"    return {status}, result",
        ]
        return lines

    def unit_summarize(self, names):
        rng = self.rng
        noun, verb = rng.choice(NOUNS), rng.choice(VERBS)
        f1, f2 = self._fields(2)
        fn = names.unique(f"{verb}_{plural(noun)}_by_{f1}")
        return [
            f"def {fn}(items: Iterable[Dict[str, Any]], threshold: int = {rng.randint(0, 50)}) -> Dict[str, Dict[str, int]]:",
            f'    """Group {plural(noun)} by {f1} and total their {f2}."""',
            "    grouped = defaultdict(list)",
            "    for item in items:",
            f'        grouped[str(item.get("{f1}", "unknown"))].append(item)',
            "    summary = {}",
            "    for key, group in sorted(grouped.items()):",
            f'        total = sum(int(entry.get("{f2}") or 0) for entry in group)',
            "        if total < threshold:",
            "            continue",
            '        summary[key] = {"count": len(group), "total": total}',
            f'    logger.debug("{verb}: %d groups over threshold", len(summary))',
            "    return summary",
        ]

    def unit_retry(self, names):
        rng = self.rng
        fn = names.unique(f"with_retries")
        return [
            f"def {fn}(fn, attempts: int = {rng.randint(2, 6)}, delay: float = {rng.choice(['0.05', '0.1', '0.25', '0.5'])}):",
            '    """Call fn, retrying transient I/O errors with linear backoff."""',
            "    last_error = None",
            "    for attempt in range(1, attempts + 1):",
            "        try:",
            "            return fn()",
            "        except (IOError, TimeoutError) as exc:",
            "            last_error = exc",
            '            logger.warning("attempt %d/%d failed: %s", attempt, attempts, exc)',
            "            time.sleep(delay * attempt)",
            '    raise RuntimeError("gave up after %d attempts" % attempts) from last_error',
        ]

    def unit_errors(self, names):
        rng = self.rng
        noun = rng.choice(NOUNS)
        base = names.unique(camel(noun, "error"))
        lines = [f"class {base}(Exception):", f'    """Base class for {noun} errors."""', ""]
        for suffix in rng.sample(["not_found", "conflict", "invalid", "expired", "forbidden", "unavailable"], rng.randint(1, 3)):
            sub = names.unique(camel(noun, suffix))
            lines += ["", f"class {sub}({base}):", "    def __init__(self, ident, detail=\"\"):",
                      f'        super().__init__(f"{noun} {{ident}}: {suffix.replace("_", " ")} {{detail}}".strip())',
                      "        self.ident = ident", ""]
        while lines and lines[-1] == "":
            lines.pop()
        return lines

    def unit_state_machine(self, names):
        rng = self.rng
        noun = rng.choice(NOUNS)
        cls = names.unique(camel(noun, "state"))
        states = rng.sample(STATES, rng.randint(3, 6))
        lines = [f"class {cls}(Enum):"] + [f'    {s.upper()} = "{s}"' for s in states]
        table = names.unique(f"_{noun.upper()}_TRANSITIONS")
        lines += ["", "", f"{table} = {{"]
        for i, s in enumerate(states):
            nxt = states[i + 1:i + 3] or [states[0]]
            lines.append(f"    {cls}.{s.upper()}: {{" + ", ".join(f"{cls}.{n.upper()}" for n in nxt) + "},")
        fn = names.unique(f"advance_{noun}")
        lines += ["}", "", "", f"def {fn}(current: {cls}, target: {cls}) -> {cls}:",
                  f"    allowed = {table}.get(current, set())",
                  "    if target not in allowed:",
                  f'        raise ValueError(f"cannot move {noun} from {{current.value}} to {{target.value}}")',
                  f'    logger.info("{noun} %s -> %s", current.value, target.value)',
                  "    return target"]
        return lines

    def unit_batches(self, names):
        rng = self.rng
        noun = rng.choice(NOUNS)
        fn = names.unique(f"batched_{plural(noun)}")
        return [
            f"def {fn}(items: Iterable[Any], size: int = {rng.choice([10, 25, 50, 100, 500])}):",
            '    """Yield lists of at most size items."""',
            "    batch = []",
            "    for item in items:",
            "        batch.append(item)",
            "        if len(batch) >= size:",
            "            yield batch",
            "            batch = []",
            "    if batch:",
            "        yield batch",
        ]

    def unit_stats(self, names):
        rng = self.rng
        noun = rng.choice(NOUNS)
        cls = names.unique(camel(noun, "stats"))
        return [
            f"class {cls}:",
            f'    """Thread-safe counters for {noun} processing."""',
            "",
            "    def __init__(self):",
            "        self._mutex = threading.Lock()",
            "        self._counts = Counter()",
            "        self._started = time.monotonic()",
            "",
            "    def incr(self, name: str, amount: int = 1) -> None:",
            "        with self._mutex:",
            "            self._counts[name] += amount",
            "",
            "    def snapshot(self) -> Dict[str, Any]:",
            "        with self._mutex:",
            "            counts = dict(self._counts)",
            '        counts["uptime_s"] = round(time.monotonic() - self._started, 3)',
            "        return counts",
            "",
            "    def top(self, n: int = 5) -> List[Any]:",
            "        with self._mutex:",
            "            return self._counts.most_common(n)",
        ]

    def unit_validate(self, names):
        rng = self.rng
        noun = rng.choice(NOUNS)
        fields = self._fields(rng.randint(2, 5))
        fn = names.unique(f"validate_{noun}")
        pat = names.unique(f"_{noun.upper()}_REF")
        lines = [f'{pat} = re.compile(r"^[A-Z]{{{rng.randint(2, 4)}}}-[0-9]{{{rng.randint(4, 8)}}}$")', "", "",
                 f"def {fn}(data: Dict[str, Any]) -> List[str]:",
                 f'    """Return a list of problems with a {noun} payload (empty if valid)."""',
                 "    problems = []"]
        for f in fields:
            check = rng.choice(["required", "ref", "positive", "length"])
            if check == "required":
                lines += [f'    if data.get("{f}") in (None, ""):', f'        problems.append("{f} is required")']
            elif check == "ref":
                lines += [f'    if "{f}" in data and not {pat}.match(str(data["{f}"])):',
                          f'        problems.append("{f} is not a valid reference")']
            elif check == "positive":
                lines += ["    try:", f'        if float(data.get("{f}", 0)) < 0:',
                          f'            problems.append("{f} must not be negative")', "    except (TypeError, ValueError):",
                          f'        problems.append("{f} must be a number")']
            else:
                lines += [f'    if len(str(data.get("{f}", ""))) > {rng.choice([32, 64, 128, 255])}:',
                          f'        problems.append("{f} is too long")']
        lines.append("    return problems")
        return lines

    def unit_config(self, names):
        rng = self.rng
        noun = rng.choice(NOUNS)
        name = names.unique(f"{noun.upper()}_DEFAULTS")
        lines = [f"{name} = {{"]
        for f in self._fields(rng.randint(3, 8)):
            v = rng.choice([repr(rng.choice(STATES)), str(rng.randint(0, 1000)), "True", "False", "None",
                            repr(f"{rng.choice(NOUNS)}-{rng.randint(1, 99)}")])
            lines.append(f'    "{f}": {v},')
        lines.append("}")
        return lines

    UNITS = ["unit_dataclass", "unit_repository", "unit_handler", "unit_handler", "unit_summarize",
             "unit_retry", "unit_errors", "unit_state_machine", "unit_batches", "unit_stats",
             "unit_validate", "unit_config"]

    def _header(self, b, title_noun, std_extra="", extra_imports=""):
        rng = self.rng
        lines, _ = render(PY_HEADER, title=f"{camel(title_noun)} {rng.choice(['service', 'helpers', 'handlers', 'models', 'jobs'])}.",
                          summary=summary_line(rng, rng.choice(PACKAGES) + " layer"),
                          std_extra=std_extra, extra_imports=extra_imports)
        b.add(lines)

    def _fill(self, b, names, target, reserve=0, min_lines=MIN_FILE_LINES):
        """Append ordinary units until the next one would pass target (keeping reserve free)."""
        while True:
            unit = getattr(self, self.rng.choice(self.UNITS))(names)
            if len(b.lines) + 2 + len(unit) + reserve > target and len(b.lines) + reserve >= min_lines:
                return
            b.blank()
            b.add(unit)

    def ordinary(self, size):
        b, names = FileBuilder(), Names()
        self._header(b, self.rng.choice(NOUNS))
        self._fill(b, names, size)
        return b

    def with_locks(self, size, shapes):
        rng = self.rng
        b, names = FileBuilder(), Names()
        is_async = rng.random() < 0.3
        client = rng.choice(["r", "rdb", "redis_client"])
        extra = "\n\n" + ("import redis.asyncio as redis" if is_async else "import redis")
        self._header(b, rng.choice(NOUNS), std_extra="\nimport uuid", extra_imports=extra)
        ctor = rng.choice([
            f'redis.Redis(host="{rng.choice(HOSTS)}", port=6379, db={rng.randint(0, 15)})',
            f'redis.from_url("redis://{rng.choice(HOSTS)}:6379/{rng.randint(0, 15)}")',
            f'redis.Redis.from_url("redis://{rng.choice(HOSTS)}:6379/0")',
        ] + ([] if is_async else [f'redis.StrictRedis(host="{rng.choice(HOSTS)}", port=6379)']))
        b.add(["", f"{client} = {ctor}", ""])
        b.add(render(PY_RELEASE)[0])
        rendered = []
        for shape in shapes:
            noun, verb = rng.choice(NOUNS), rng.choice(VERBS)
            lines, marks = render(
                PY_SHAPES[shape], fn=names.unique(f"{verb}_{noun}_{rng.choice(['locked', 'exclusive', 'once', 'guarded'])}"),
                cls=names.unique(camel(noun, verb, "worker")), noun=noun, verb=verb, client=client,
                adef="async def" if is_async else "def", aw="await " if is_async else "",
                ttl_ms=rng.choice([5000, 10000, 30000, 60000, 120000]), ttl_s=rng.choice([10, 30, 60, 300, 900]))
            rendered.append((shape, lines, marks))
        reserve = sum(len(l) + 2 for _, l, _ in rendered)
        # Spread the shapes through the file, with ordinary code between them.
        for k, (shape, lines, marks) in enumerate(rendered):
            portion = len(b.lines) + max(0, (size - reserve - len(b.lines)) // (len(rendered) + 1 - k))
            self._fill(b, names, portion, min_lines=0)
            b.blank()
            b.add(lines, marks, shape=shape)
            reserve -= len(lines) + 2
        self._fill(b, names, size, 0)
        return b


# --------------------------------------------------------------------------
# Rust
# --------------------------------------------------------------------------

RS_HEADER = '''//! $title
//!
//! $summary

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};
$extra_uses'''

RS_RELEASE = '''
/// Delete the key only while it still holds our token.
const RELEASE_SCRIPT: &str = r#"
if redis.call("get", KEYS[1]) == ARGV[1] then
    return redis.call("del", KEYS[1])
else
    return 0
end
"#;'''

# $afn = "fn" / "async fn", $conty = connection type, $aw = "" / ".await",
# $query = "query(con)" / "query_async(con).await", $invoke likewise.
RS_SHAPES = {
    "rs_good_options_px_script": ('''
pub $afn $fn(con: &mut $conty, id: u64) -> redis::RedisResult<bool> {
    let lock_key = format!("lock:${noun}:{id}");
    let token = uuid::Uuid::new_v4().to_string();
    let acquired: Option<String> = con.set_options(
        &lock_key,
        &token,
        redis::SetOptions::default()
            .conditional_set(redis::ExistenceCheck::NX)
            .with_expiration(redis::SetExpiry::PX($ttl_ms)),
    )$aw?;
    if acquired.is_none() {
        return Ok(false);
    }
    log::info!("${verb} ${noun} {id}");
    let _: i32 = redis::Script::new(RELEASE_SCRIPT).key(&lock_key).arg(&token).$invoke?;
    Ok(true)
}'''),
    "rs_good_cmd_px_script": ('''
pub $afn $fn(con: &mut $conty, name: &str) -> redis::RedisResult<bool> {
    let key = format!("lock:${noun}:{name}");
    let token = uuid::Uuid::new_v4().to_string();
    let acquired: bool = redis::cmd("SET")
        .arg(&key)
        .arg(&token)
        .arg("NX")
        .arg("PX")
        .arg($ttl_ms)
        .$query?;
    if !acquired {
        return Ok(false);
    }
    let outcome = ${step}(name);
    let _: i32 = redis::Script::new(RELEASE_SCRIPT).key(&key).arg(&token).$invoke?;
    Ok(outcome)
}

fn ${step}(name: &str) -> bool {
    !name.is_empty()
}'''),
    "rs_cmd_no_ttl_del": ('''
pub $afn $fn(con: &mut $conty, batch_id: u64) -> redis::RedisResult<bool> {
    let key = format!("${noun}:batch:{batch_id}");
    let token = uuid::Uuid::new_v4().to_string();
    let claimed: bool = redis::cmd("SET") //@LA101
        .arg(&key)
        .arg(&token)
        .arg("NX")
        .$query?;
    if !claimed {
        return Ok(false);
    }
    log::info!("${verb} ${noun} batch {batch_id}");
    let _: () = con.del(&key)$aw?; //@LA201
    Ok(true)
}'''),
    "rs_set_nx_expire": ('''
pub $afn $fn(con: &mut $conty, id: u64) -> redis::RedisResult<Option<String>> {
    let key = format!("lock:${noun}:{id}");
    let token = uuid::Uuid::new_v4().to_string();
    let ok: bool = con.set_nx(&key, &token)$aw?; //@LA102
    if !ok {
        return Ok(None);
    }
    let _: () = con.expire(&key, $ttl_s)$aw?;
    Ok(Some(token))
}'''),
    "rs_set_nx_no_ttl": ('''
pub $afn $fn(con: &mut $conty, id: u64) -> redis::RedisResult<Option<String>> {
    let lock_key = format!("lock:${noun}:${verb}:{id}");
    let token = uuid::Uuid::new_v4().to_string();
    let ok: bool = con.set_nx(&lock_key, &token)$aw?; //@LA101
    Ok(if ok { Some(token) } else { None })
}'''),
    "rs_options_no_ttl": ('''
pub $afn $fn(con: &mut $conty, name: &str) -> redis::RedisResult<bool> {
    let key = format!("lock:${noun}:{name}");
    let token = uuid::Uuid::new_v4().to_string();
    let reply: Option<String> = con.set_options( //@LA101
        &key,
        &token,
        redis::SetOptions::default().conditional_set(redis::ExistenceCheck::NX),
    )$aw?;
    if reply.is_none() {
        return Ok(false);
    }
    let _: i32 = redis::Script::new(RELEASE_SCRIPT).key(&key).arg(&token).$invoke?;
    Ok(true)
}'''),
    "rs_cmd_px_cmd_del": ('''
pub $afn $fn(con: &mut $conty, id: u64) -> redis::RedisResult<()> {
    let token = uuid::Uuid::new_v4().to_string();
    let acquired: bool = redis::cmd("SET")
        .arg(format!("${noun}:{id}:${verb}"))
        .arg(&token)
        .arg("NX")
        .arg("EX")
        .arg($ttl_s)
        .$query?;
    if !acquired {
        return Ok(());
    }
    log::debug!("${verb} ${noun} {id}");
    redis::cmd("DEL").arg(format!("${noun}:{id}:${verb}")).$query_unit?; //@LA201
    Ok(())
}'''),
    "rs_blind_script": ('''
pub $afn $fn(con: &mut $conty, name: &str) -> redis::RedisResult<i32> {
    redis::Script::new("return redis.call('DEL', KEYS[1])") //@LA201
        .key(format!("lock:${noun}:{name}"))
        .$invoke
}'''),
    "rs_cache_del": ('''
pub $afn $fn(con: &mut $conty, ids: &[u64]) -> redis::RedisResult<usize> {
    for id in ids {
        let _: () = con.del(format!("cache:${noun}:{id}"))$aw?;
    }
    let _: () = con.unlink("stats:${noun}:daily")$aw?;
    Ok(ids.len())
}'''),
    "rs_cmd_nx_cmd_expire": ('''
pub $afn $fn(con: &mut $conty, name: &str) -> redis::RedisResult<bool> {
    let key = format!("lock:${noun}:{name}");
    let token = uuid::Uuid::new_v4().to_string();
    let acquired: bool = redis::cmd("SET").arg(&key).arg(&token).arg("NX").$query_inline?; //@LA102
    if acquired {
        redis::cmd("PEXPIRE").arg(&key).arg($ttl_ms).$query_unit?;
    }
    Ok(acquired)
}'''),
}


class RustGen:
    name = "rust"
    ext = ".rs"

    def __init__(self, rng):
        self.rng = rng

    def path_for(self, svc, index):
        rng = self.rng
        crate = rng.choice(CRATES)
        sub = [] if rng.random() < 0.6 else [rng.choice(["handlers", "model", "jobs", "storage", "util"])]
        module = f"{rng.choice(NOUNS)}_{rng.choice(['service', 'handlers', 'model', 'store', 'jobs', 'types', 'ops'])}"
        return os.path.join(f"svc_{svc}", crate, "src", *sub, f"{module}_{index}{self.ext}")

    def _ty(self):
        return self.rng.choice(["String", "u64", "i64", "u32", "bool", "f64", "Option<String>", "Vec<String>"])

    def unit_struct(self, names):
        rng = self.rng
        noun = rng.choice(NOUNS)
        cls = names.unique(camel(noun, rng.choice(["", "record", "summary", "entry"])) or camel(noun))
        fields = [(f, self._ty()) for f in rng.sample(FIELDS, rng.randint(2, 6))]
        lines = ["#[derive(Debug, Clone, PartialEq)]", f"pub struct {cls} {{", "    pub id: u64,"]
        lines += [f"    pub {f}: {t}," for f, t in fields]
        lines += ["}", "", f"impl {cls} {{"]
        defaults = {"String": "String::new()", "u64": "0", "i64": "0", "u32": "0", "bool": "false", "f64": "0.0",
                    "Option<String>": "None", "Vec<String>": "Vec::new()"}
        lines += ["    pub fn new(id: u64) -> Self {", "        Self {", "            id,"]
        lines += [f"            {f}: {defaults[t]}," for f, t in fields]
        lines += ["        }", "    }"]
        for f, t in fields:
            if t == "bool" and rng.random() < 0.7:
                lines += ["", f"    pub fn is_{f}(&self) -> bool {{", f"        self.{f}", "    }"]
            elif t in ("u64", "i64", "u32") and rng.random() < 0.7:
                lines += ["", f"    pub fn with_{f}(mut self, value: {t}) -> Self {{", f"        self.{f} = value;",
                          "        self", "    }"]
            elif t == "Vec<String>" and rng.random() < 0.7:
                lines += ["", f"    pub fn push_{f}(&mut self, value: &str) {{",
                          f"        if !self.{f}.iter().any(|v| v == value) {{",
                          f"            self.{f}.push(value.to_string());", "        }", "    }"]
        lines.append("}")
        return lines

    def unit_enum(self, names):
        rng = self.rng
        noun = rng.choice(NOUNS)
        cls = names.unique(camel(noun, "status"))
        states = rng.sample(STATES, rng.randint(3, 6))
        variants = [camel(s) for s in states]
        lines = ["#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]", f"pub enum {cls} {{"]
        lines += [f"    {v}," for v in variants]
        lines += ["}", "", f"impl fmt::Display for {cls} {{",
                  "    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {", "        let s = match self {"]
        lines += [f'            {cls}::{v} => "{s}",' for v, s in zip(variants, states)]
        lines += ["        };", "        f.write_str(s)", "    }", "}", "",
                  f"impl std::str::FromStr for {cls} {{", "    type Err = String;", "",
                  "    fn from_str(s: &str) -> Result<Self, Self::Err> {", "        match s {"]
        lines += [f'            "{s}" => Ok({cls}::{v}),' for v, s in zip(variants, states)]
        lines += [f'            other => Err(format!("unknown {noun} status: {{}}", other)),', "        }", "    }", "}"]
        return lines

    def unit_error(self, names):
        rng = self.rng
        noun = rng.choice(NOUNS)
        cls = names.unique(camel(noun, "error"))
        kinds = rng.sample(["NotFound", "Conflict", "Invalid", "Expired", "Forbidden", "Unavailable"], rng.randint(2, 4))
        lines = ["#[derive(Debug)]", f"pub enum {cls} {{"]
        lines += [f"    {k}(String)," for k in kinds]
        lines += ["}", "", f"impl fmt::Display for {cls} {{",
                  "    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {", "        match self {"]
        lines += [f'            {cls}::{k}(detail) => write!(f, "{noun} {k.lower()}: {{}}", detail),' for k in kinds]
        lines += ["        }", "    }", "}", "", f"impl std::error::Error for {cls} {{}}"]
        return lines

    def unit_registry(self, names):
        rng = self.rng
        noun = rng.choice(NOUNS)
        cls = names.unique(camel(noun, rng.choice(["registry", "store", "cache", "index"])))
        return [
            "#[derive(Default)]",
            f"pub struct {cls} {{",
            "    items: Mutex<HashMap<u64, String>>,",
            "    hits: Mutex<u64>,",
            "}",
            "",
            f"impl {cls} {{",
            "    pub fn new() -> Self {",
            "        Self::default()",
            "    }",
            "",
            "    pub fn insert(&self, id: u64, value: String) -> Option<String> {",
            "        let mut items = self.items.lock().unwrap();",
            "        items.insert(id, value)",
            "    }",
            "",
            "    pub fn get(&self, id: u64) -> Option<String> {",
            "        *self.hits.lock().unwrap() += 1;",
            "        self.items.lock().unwrap().get(&id).cloned()",
            "    }",
            "",
            "    pub fn remove(&self, id: u64) -> bool {",
            "        self.items.lock().unwrap().remove(&id).is_some()",
            "    }",
            "",
            "    pub fn len(&self) -> usize {",
            "        self.items.lock().unwrap().len()",
            "    }",
            "",
            "    pub fn hit_count(&self) -> u64 {",
            "        *self.hits.lock().unwrap()",
            "    }",
            "}",
        ]

    def unit_summarize(self, names):
        rng = self.rng
        noun, verb = rng.choice(NOUNS), rng.choice(VERBS)
        fn = names.unique(f"{verb}_{plural(noun)}")
        return [
            f"pub fn {fn}(items: &[(String, i64)], threshold: i64) -> Vec<(String, i64)> {{",
            "    let mut totals: HashMap<&str, i64> = HashMap::new();",
            "    for (key, amount) in items {",
            "        *totals.entry(key.as_str()).or_insert(0) += amount;",
            "    }",
            "    let mut out: Vec<(String, i64)> = totals",
            "        .into_iter()",
            "        .filter(|(_, total)| *total >= threshold)",
            "        .map(|(k, v)| (k.to_string(), v))",
            "        .collect();",
            "    out.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));",
            f'    log::debug!("{verb}: {{}} groups over {{}}", out.len(), threshold);',
            "    out",
            "}",
        ]

    def unit_handler(self, names):
        rng = self.rng
        noun, verb = rng.choice(NOUNS), rng.choice(VERBS)
        fn = names.unique(f"handle_{verb}_{noun}")
        seg = rng.randint(2, 3)
        return [
            f"/// POST /api/v{rng.randint(1, 3)}/{plural(noun)}/{{id}}/{verb}",
            f"pub fn {fn}(path: &str, body: &str) -> (u16, String) {{",
            "    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();",
            f"    let id = match parts.get({seg}).and_then(|p| p.parse::<u64>().ok()) {{",
            "        Some(id) => id,",
            '        None => return (400, "bad id".to_string()),',
            "    };",
            "    if body.trim().is_empty() {",
            f'        return (422, format!("empty body for {noun} {{}}", id));',
            "    }",
            f'    log::info!("{verb} {noun} {{}}", id);',
            f'    ({rng.choice([200, 201, 202])}, format!("{{{{\\"id\\":{{}},\\"status\\":\\"{rng.choice(STATES)}\\"}}}}", id))',
            "}",
        ]

    def unit_trait(self, names):
        rng = self.rng
        noun = rng.choice(NOUNS)
        trait = names.unique(camel(noun, "source"))
        imp = names.unique(camel("static", noun, "source"))
        return [
            f"pub trait {trait} {{",
            f"    fn fetch(&self, id: u64) -> Option<String>;",
            "",
            "    fn fetch_many(&self, ids: &[u64]) -> Vec<String> {",
            "        ids.iter().filter_map(|id| self.fetch(*id)).collect()",
            "    }",
            "}",
            "",
            f"pub struct {imp} {{",
            "    data: RwLock<HashMap<u64, String>>,",
            "}",
            "",
            f"impl {trait} for {imp} {{",
            "    fn fetch(&self, id: u64) -> Option<String> {",
            "        self.data.read().unwrap().get(&id).cloned()",
            "    }",
            "}",
        ]

    def unit_retry(self, names):
        rng = self.rng
        fn = names.unique("retry")
        return [
            f"pub fn {fn}<T, E: fmt::Display>(mut op: impl FnMut() -> Result<T, E>, attempts: u32) -> Result<T, E> {{",
            "    let started = Instant::now();",
            "    let mut attempt = 0;",
            "    loop {",
            "        attempt += 1;",
            "        match op() {",
            "            Ok(value) => return Ok(value),",
            "            Err(err) if attempt < attempts => {",
            '                log::warn!("attempt {} failed after {:?}: {}", attempt, started.elapsed(), err);',
            f"                std::thread::sleep(Duration::from_millis({rng.choice([10, 25, 50, 100])} * u64::from(attempt)));",
            "            }",
            "            Err(err) => return Err(err),",
            "        }",
            "    }",
            "}",
        ]

    def unit_shared(self, names):
        rng = self.rng
        noun = rng.choice(NOUNS)
        cls = names.unique(camel(noun, "counter"))
        return [
            "#[derive(Clone, Default)]",
            f"pub struct {cls} {{",
            "    inner: Arc<Mutex<HashMap<String, u64>>>,",
            "}",
            "",
            f"impl {cls} {{",
            "    pub fn bump(&self, name: &str) -> u64 {",
            "        let mut guard = self.inner.lock().expect(\"counter mutex poisoned\");",
            "        let slot = guard.entry(name.to_string()).or_insert(0);",
            "        *slot += 1;",
            "        *slot",
            "    }",
            "",
            "    pub fn snapshot(&self) -> Vec<(String, u64)> {",
            "        let guard = self.inner.lock().expect(\"counter mutex poisoned\");",
            "        let mut out: Vec<_> = guard.iter().map(|(k, v)| (k.clone(), *v)).collect();",
            "        out.sort();",
            "        out",
            "    }",
            "}",
        ]

    def unit_consts(self, names):
        rng = self.rng
        noun = rng.choice(NOUNS).upper()
        lines = []
        for f in rng.sample(FIELDS, rng.randint(2, 5)):
            name = names.unique(f"{noun}_{f.upper()}")
            kind = rng.choice(["u64", "&str", "Duration"])
            if kind == "u64":
                lines.append(f"pub const {name}: u64 = {rng.randint(1, 100000)};")
            elif kind == "&str":
                lines.append(f'pub const {name}: &str = "{rng.choice(STATES)}";')
            else:
                lines.append(f"pub const {name}: Duration = Duration::from_secs({rng.randint(1, 3600)});")
        return lines

    UNITS = ["unit_struct", "unit_enum", "unit_error", "unit_registry", "unit_summarize", "unit_handler",
             "unit_handler", "unit_trait", "unit_retry", "unit_shared", "unit_consts"]

    def _header(self, b, extra_uses=""):
        rng = self.rng
        lines, _ = render(RS_HEADER, title=f"{camel(rng.choice(NOUNS))} {rng.choice(['service', 'handlers', 'model', 'jobs'])}.",
                          summary=summary_line(rng, rng.choice(CRATES) + " crate"),
                          extra_uses=extra_uses)
        b.add(lines)

    def _tests(self, names):
        rng = self.rng
        lines = ["#[cfg(test)]", "mod tests {", "    use super::*;"]
        for i in range(rng.randint(1, 3)):
            a, c = rng.randint(1, 50), rng.randint(1, 50)
            lines += ["", "    #[test]", f"    fn sums_{i}() {{",
                      "        let mut m: HashMap<&str, i64> = HashMap::new();",
                      f'        *m.entry("a").or_insert(0) += {a};', f'        *m.entry("a").or_insert(0) += {c};',
                      f'        assert_eq!(m["a"], {a + c});', "    }"]
        lines.append("}")
        return lines

    def _fill(self, b, names, target, reserve=0, min_lines=MIN_FILE_LINES):
        """Append ordinary items until the next one would pass target (keeping reserve free)."""
        while True:
            unit = getattr(self, self.rng.choice(self.UNITS))(names)
            if len(b.lines) + 1 + len(unit) + reserve > target and len(b.lines) + reserve >= min_lines:
                return
            b.blank(1)
            b.add(unit)

    def ordinary(self, size):
        b, names = FileBuilder(), Names()
        self._header(b)
        tests = self._tests(names) if self.rng.random() < 0.5 else []
        self._fill(b, names, size, reserve=len(tests) + 1 if tests else 0)
        if tests:
            b.blank(1)
            b.add(tests)
        return b

    def with_locks(self, size, shapes):
        rng = self.rng
        b, names = FileBuilder(), Names()
        is_async = rng.random() < 0.5
        b_uses = "\nuse redis::AsyncCommands;" if is_async else "\nuse redis::Commands;"
        self._header(b, extra_uses=b_uses)
        b.blank(1)
        b.add(render(RS_RELEASE)[0])
        conty = rng.choice(["redis::aio::MultiplexedConnection", "redis::aio::ConnectionManager"]) if is_async else "redis::Connection"
        rendered = []
        for shape in shapes:
            noun, verb = rng.choice(NOUNS), rng.choice(VERBS)
            lines, marks = render(
                RS_SHAPES[shape], fn=names.unique(f"{verb}_{noun}_{rng.choice(['locked', 'exclusive', 'once', 'guarded'])}"),
                noun=noun, verb=verb, step=names.unique(f"{verb}_step"), conty=conty,
                afn="async fn" if is_async else "fn", aw=".await" if is_async else "",
                query="query_async(con)\n        .await" if is_async else "query(con)",
                query_inline="query_async(con).await" if is_async else "query(con)",
                query_unit="query_async::<()>(con).await" if is_async else "query::<()>(con)",
                invoke="invoke_async(con).await" if is_async else "invoke(con)",
                ttl_ms=rng.choice(["5_000", "10_000", "30_000", "60_000"]), ttl_s=rng.choice([10, 30, 60, 300]))
            rendered.append((shape, lines, marks))
        reserve = sum(len(l) + 1 for _, l, _ in rendered)
        for k in range(len(rendered)):
            portion = len(b.lines) + max(0, (size - reserve - len(b.lines)) // (len(rendered) + 1 - k))
            self._fill(b, names, portion, min_lines=0)
            shape, lines, marks = rendered[k]
            b.blank(1)
            b.add(lines, marks, shape=shape)
            reserve -= len(lines) + 1
        self._fill(b, names, size, 0)
        return b


LANGS = {"python": PythonGen, "rust": RustGen}
LOCK_SHAPES = {"python": sorted(PY_SHAPES), "rust": sorted(RS_SHAPES)}


def plan_sizes(rng, budget):
    """Draw log-uniform file sizes in [MIN, MAX] until they cover the budget."""
    sizes, total = [], 0
    lo, hi = math.log(MIN_FILE_LINES), math.log(MAX_FILE_LINES)
    while total < budget:
        size = int(round(math.exp(rng.uniform(lo, hi))))
        left = budget - total
        if left < size:
            size = max(MIN_FILE_LINES, left)
        sizes.append(size)
        total += size
    return sizes


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out_dir", metavar="OUT_DIR")
    ap.add_argument("--lines", type=int, default=200_000, help="approximate total lines (default 200000)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--langs", default="python,rust", help="comma-separated, from: " + ",".join(sorted(LANGS)))
    ap.add_argument("--lock-ratio", type=float, default=0.03, help="fraction of files with redis locks (default 0.03)")
    ap.add_argument("--force", action="store_true",
                    help="replace OUT_DIR if it holds a corpus written by this script")
    args = ap.parse_args(argv)

    langs = [l.strip() for l in args.langs.split(",") if l.strip()]
    unknown = [l for l in langs if l not in LANGS]
    if not langs or unknown:
        ap.error(f"unsupported language(s): {', '.join(unknown) or '(none given)'}; supported: {', '.join(sorted(LANGS))}")
    if args.lines < MIN_FILE_LINES * len(langs):
        ap.error(f"--lines must be at least {MIN_FILE_LINES * len(langs)}")
    if not 0 <= args.lock_ratio <= 1:
        ap.error("--lock-ratio must be between 0 and 1")

    out = args.out_dir
    if os.path.exists(out) and os.listdir(out):
        if not args.force:
            ap.error(f"{out} is not empty (use --force to replace a corpus written by this script)")
        if not os.path.isfile(os.path.join(out, MANIFEST)):
            ap.error(f"{out} is not empty and has no {MANIFEST}; refusing to delete it")
        shutil.rmtree(out)
    os.makedirs(out, exist_ok=True)

    rng = random.Random(args.seed)
    budget = args.lines // len(langs)
    n_services = max(1, args.lines // 25_000)
    manifest = {"seed": args.seed, "lines_requested": args.lines, "langs": langs, "lock_ratio": args.lock_ratio,
                "files": 0, "lines": 0, "per_language": {}, "lock_files": [], "expected_findings": []}
    total_files = total_lines = 0
    for lang in langs:
        gen = LANGS[lang](rng)
        sizes = plan_sizes(rng, budget)
        n_lock = 0 if args.lock_ratio == 0 else max(1, round(len(sizes) * args.lock_ratio))
        lock_idx = sorted(rng.sample(range(len(sizes)), min(n_lock, len(sizes))))
        shape_cycle = list(LOCK_SHAPES[lang])
        rng.shuffle(shape_cycle)
        next_shape = 0
        lang_lines = 0
        used_paths = set()
        carry = 0  # lines a file came out short of its planned size, given to the next
        for i, planned in enumerate(sizes):
            size = max(MIN_FILE_LINES, min(MAX_FILE_LINES, planned + carry))
            path = gen.path_for(rng.randrange(n_services), i)
            while path in used_paths:
                path = gen.path_for(rng.randrange(n_services), i)
            used_paths.add(path)
            if lock_idx and i == lock_idx[0]:
                lock_idx.pop(0)
                k = rng.choice([1, 2, 2, 3])
                shapes = [shape_cycle[(next_shape + j) % len(shape_cycle)] for j in range(k)]
                next_shape += k
                b = gen.with_locks(size, shapes)
                rel = path.replace(os.sep, "/")
                manifest["lock_files"].append({"path": rel, "shapes": [{"line": l, "shape": s} for l, s in b.shapes]})
                manifest["expected_findings"] += [{"path": rel, "line": l, "code": c} for l, c in b.findings]
            else:
                b = gen.ordinary(size)
            full = os.path.join(out, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w", encoding="utf-8", newline="\n") as fh:
                fh.write(b.text())
            lang_lines += len(b.lines)
            carry = size - len(b.lines)
        manifest["per_language"][lang] = {"files": len(sizes), "lines": lang_lines}
        total_files += len(sizes)
        total_lines += lang_lines

    manifest["files"], manifest["lines"] = total_files, total_lines
    manifest["expected_findings"].sort(key=lambda f: (f["path"], f["line"], f["code"]))
    manifest["lock_files"].sort(key=lambda f: f["path"])
    with open(os.path.join(out, MANIFEST), "w", encoding="utf-8", newline="\n") as fh:
        json.dump(manifest, fh, indent=1, sort_keys=True)
        fh.write("\n")

    per = ", ".join(f"{l}: {v['files']} files / {v['lines']} lines" for l, v in manifest["per_language"].items())
    print(f"wrote {total_files} files, {total_lines} lines to {out} ({per}); "
          f"{len(manifest['lock_files'])} file(s) with redis locks, "
          f"{len(manifest['expected_findings'])} expected findings in {MANIFEST}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
