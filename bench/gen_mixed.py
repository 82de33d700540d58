#!/usr/bin/env python3
"""Generate the mixed six-language corpus that bench/compare.sh measures.

    python3 bench/gen_mixed.py OUT_DIR [--lines 1500000] [--seed 1] [--lock-ratio 0.03]

Python and Rust come from gen_corpus.py (its realistic services and planted
lock shapes). Every language (JavaScript and TypeScript counted apart) gets
a seventh of the lines; Go, Java, JavaScript, TypeScript and Ruby get ordinary
service code from small templates (structs/classes, handlers, maps, logging,
in-process mutexes),
file sizes drawn log-uniformly between 50 and 1,500 lines, and about
--lock-ratio of the files copied from fixtures/<language>/ (every lock shape
the tests know, correct and wrong). Three minified JavaScript bundles of about
1.6 MB on one line each are added; one mentions redis, so it is parsed.

Deterministic: the same arguments give byte-identical output. Standard library only.
"""

import argparse
import math
import os
import random
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "fixtures")

NOUNS = ["order", "invoice", "customer", "account", "shipment", "product", "cart",
         "payment", "user", "session", "report", "ticket", "coupon", "vendor"]
VERBS = ["load", "fetch", "build", "render", "validate", "normalize", "apply",
         "merge", "compute", "resolve", "export", "sync", "index", "archive"]


def cap(s):
    return s[:1].upper() + s[1:]


def go_unit(rng, i):
    n, v = rng.choice(NOUNS), rng.choice(VERBS)
    return f"""type {cap(n)}{i} struct {{
	ID     int64
	Name   string
	Labels map[string]string
	mu     sync.Mutex
}}

func (x *{cap(n)}{i}) {cap(v)}(ctx context.Context, in []string) (int, error) {{
	x.mu.Lock()
	defer x.mu.Unlock()
	total := 0
	for _, s := range in {{
		if s == "" {{
			continue
		}}
		x.Labels[s] = fmt.Sprintf("%s-%d", s, x.ID)
		total += len(s)
	}}
	log.Printf("{v} {n}: %d", total)
	return total, nil
}}
"""


def java_unit(rng, i):
    n, v = rng.choice(NOUNS), rng.choice(VERBS)
    return f"""    private final Map<String, Integer> {n}Counts{i} = new HashMap<>();
    private final ReentrantLock {n}Lock{i} = new ReentrantLock();

    public int {v}{cap(n)}{i}(List<String> items) {{
        {n}Lock{i}.lock();
        try {{
            int total = 0;
            for (String item : items) {{
                if (item.isEmpty()) {{
                    continue;
                }}
                {n}Counts{i}.merge(item, 1, Integer::sum);
                total += item.length();
            }}
            LOG.info("{v} {n} {{}}", total);
            return total;
        }} finally {{
            {n}Lock{i}.unlock();
        }}
    }}
"""


def js_unit(rng, i, typed):
    n, v = rng.choice(NOUNS), rng.choice(VERBS)
    t = ": string[]" if typed else ""
    r = ": Promise<number>" if typed else ""
    return f"""export async function {v}{cap(n)}{i}(items{t}){r} {{
  const seen = new Map();
  let total = 0;
  for (const item of items) {{
    if (!item) continue;
    seen.set(item, (seen.get(item) || 0) + 1);
    total += item.length;
  }}
  logger.info(`{v} {n} ${{total}}`);
  return total;
}}
"""


def ruby_unit(rng, i):
    n, v = rng.choice(NOUNS), rng.choice(VERBS)
    return f"""  def {v}_{n}_{i}(items)
    @mutex.synchronize do
      total = 0
      items.each do |item|
        next if item.nil? || item.empty?
        @counts[item] += 1
        total += item.length
      end
      logger.info("{v} {n} #{{total}}")
      total
    end
  end
"""


LANGS = {
    "go": ("go", "package svc\n\nimport (\n\t\"context\"\n\t\"fmt\"\n\t\"log\"\n\t\"sync\"\n)\n\n",
           "", go_unit),
    "java": ("java", "package com.example.svc;\n\nimport java.util.*;\nimport java.util.concurrent.locks.ReentrantLock;\n\npublic class Svc$N {\n    private static final org.slf4j.Logger LOG = null;\n\n",
             "}\n", java_unit),
    "javascript": ("js", "import { logger } from './log.js';\n\n", "", lambda r, i: js_unit(r, i, False)),
    "typescript": ("ts", "import { logger } from './log';\n\n", "", lambda r, i: js_unit(r, i, True)),
    "ruby": ("rb", "class Svc$N\n  def initialize\n    @mutex = Mutex.new\n    @counts = Hash.new(0)\n  end\n\n",
             "end\n", ruby_unit),
}


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def fixture_files(lang, ext):
    root = os.path.join(FIXTURES, lang)
    out = []
    for dirpath, _, names in sorted(os.walk(root)):
        for name in sorted(names):
            if name.endswith("." + ext):
                out.append(os.path.join(dirpath, name))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--lines", type=int, default=1_500_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--lock-ratio", type=float, default=0.03)
    args = ap.parse_args()
    if os.path.exists(args.out):
        shutil.rmtree(args.out)
    rng = random.Random(args.seed)
    # Seven shares: Python, Rust (from gen_corpus.py), Go, Java, JS, TS, Ruby.
    share = args.lines // 7
    subprocess.run([sys.executable, os.path.join(HERE, "gen_corpus.py"), args.out,
                    "--lines", str(2 * share), "--seed", str(args.seed),
                    "--lock-ratio", str(args.lock_ratio)], check=True, stdout=subprocess.DEVNULL)
    for lang, (ext, head, tail, unit) in LANGS.items():
        locks = fixture_files(lang, ext)
        written, n = 0, 0
        while written < share:
            n += 1
            path = os.path.join(args.out, f"{lang}_svc_{n % 40}", f"mod_{n}.{ext}")
            if locks and rng.random() < args.lock_ratio:
                src = open(rng.choice(locks), encoding="utf-8").read()
            else:
                target = int(math.exp(rng.uniform(math.log(50), math.log(1500))))
                parts = [head.replace("$N", str(n))]
                i = 0
                while sum(p.count("\n") for p in parts) < target:
                    parts.append(unit(rng, i))
                    parts.append("\n")
                    i += 1
                parts.append(tail)
                src = "".join(parts)
            write(path, src)
            written += src.count("\n")
    # Minified bundles: one long line each; only the first mentions redis.
    for k in range(3):
        words = [f"function a{k}_{j}(b,c){{return b.map(function(d){{return d*c+{j}}}).filter(Boolean)}}"
                 for j in range(20000)]
        if k == 0:
            words.append("var q=require('ioredis');var r=new q();r.set('lock:bundle',t,'NX');")
        write(os.path.join(args.out, "web", "dist", f"bundle{k}.min.js"), ";".join(words) + "\n")


if __name__ == "__main__":
    main()
