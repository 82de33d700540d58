#!/usr/bin/env bash
# Whole-corpus speed of lock-audit against its floor (ripgrep over the
# prefilter's literals) and, when installed, semgrep and ast-grep running the
# two-rule pack in bench/peers/. Prints wall time, CPU time, peak RSS, files/s,
# lines/s and the ratio to rg: medians of --runs runs after one warm-up.
# lock-audit runs twice: cold (--no-cache) and re-scanning with a warm cache
# (`la-cached`).
#
#   bench/compare.sh [--lines 1500000] [--runs 5] [--no-peers]
#   bench/compare.sh --field /tmp/field [--runs 3]
#   bench/compare.sh ... --bin /path/to/lock-audit   # another build (a before/after)
#
# --field runs over real code instead: every tree in the folder `field/score.py extract`
# fills (one folder per repository of field/repos.yaml), each checked as its own project
# as a user checks a repository, every tool once per tree; times are the sums over trees,
# peak RSS the largest tree's.
#
# The corpus (bench/gen_mixed.py) is generated once under $TMPDIR (or /tmp). rg comes
# from Debian's `ripgrep` package and is installed when missing (needs apt);
# semgrep (`pip install semgrep`) and ast-grep (`cargo install ast-grep` or
# `npm i -g @ast-grep/cli`) are measured only when on PATH.
set -euo pipefail
cd "$(dirname "$0")/.."

lines=1500000
runs=5
peers=1
while [ $# -gt 0 ]; do
  case "$1" in
    --lines) lines="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --no-peers) peers=0; shift ;;
    --field) field="$2"; shift 2 ;;
    --bin) bin="$2"; shift 2 ;;
    *) echo "usage: bench/compare.sh [--lines N] [--runs N] [--no-peers] [--field DIR] [--bin PATH]" >&2; exit 2 ;;
  esac
done

if [ -n "${field:-}" ]; then
  corpus="$(cd "$field" && pwd)"
  ls -d "$corpus"/*/ >/dev/null 2>&1 \
    || { echo "no trees in $field: run python3 field/score.py extract first" >&2; exit 2; }
else
  # Outside the repository: git-aware tools would skip a git-ignored target/.
  corpus="${TMPDIR:-/tmp}/lock-audit-bench-mixed-$lines"
  if [ ! -f "$corpus/.complete" ]; then
    echo "generating a $lines-line corpus in $corpus" >&2
    python3 bench/gen_mixed.py "$corpus" --lines "$lines"
    touch "$corpus/.complete"
  fi
fi
if [ -z "${bin:-}" ]; then
  cargo build --release --locked --quiet
  bin="$(pwd)/target/release/lock-audit"
fi

if ! command -v rg >/dev/null; then
  echo "installing ripgrep (Debian package)" >&2
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ripgrep) >/dev/null 2>&1 \
    || { echo "rg is missing and could not be installed: apt-get install ripgrep" >&2; exit 2; }
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$bin" libraries --triggers > "$tmp/triggers.txt"
# each CMD...: runs CMD once on the corpus, or once per tree in --field mode, with
# @CACHE@ standing for a cache folder of that tree's own.
cat > "$tmp/each" <<'EOS'
#!/usr/bin/env bash
corpus="$1"; field="$2"; cache="$3"; shift 3
if [ -z "$field" ]; then trees=("$corpus"); else trees=("$corpus"/*/); fi
for t in "${trees[@]}"; do
  args=()
  for a in "$@"; do
    if [ "$a" = @CACHE@ ]; then args+=("$cache/$(basename "$t")"); else args+=("$a"); fi
  done
  (cd "$t" && "${args[@]}" .) >/dev/null 2>&1 || true
done
EOS
chmod +x "$tmp/each"
each=("$tmp/each" "$corpus" "${field:-}" "$tmp/cache")
files=$(find "$corpus" -type f \( -name '*.py' -o -name '*.rs' -o -name '*.go' -o -name '*.java' \
  -o -name '*.js' -o -name '*.ts' -o -name '*.rb' \) | wc -l)
total_lines=$(find "$corpus" -type f \( -name '*.py' -o -name '*.rs' -o -name '*.go' -o -name '*.java' \
  -o -name '*.js' -o -name '*.ts' -o -name '*.rb' \) -print0 | xargs -0 cat | wc -l)
# The fraction of the files lock-audit reads that it parses (the prefilter's selectivity).
parsed=$(if [ -z "${field:-}" ]; then echo "$corpus"; else ls -d "$corpus"/*/; fi | while read -r t; do
  (cd "$t" && "$bin" check . --format json --exit-zero --no-cache 2>/dev/null) \
    | python3 -c 'import json,sys; s=json.load(sys.stdin)["summary"]; print(s["files_parsed"], s["files_scanned"])'
done | awk '{p+=$1; s+=$2} END {printf "%d of %d files parsed (%.1f%%)", p, s, s ? 100*p/s : 0}')

# measure NAME CMD...: warm-up, then $runs runs; one "wall cpu rss" line per run.
measure() {
  local name="$1"; shift
  "$@" >/dev/null 2>&1 || true
  for _ in $(seq "$runs"); do
    /usr/bin/time -f "%e %U %S %M" -o "$tmp/one" "$@" >/dev/null 2>&1 || true
    tail -n 1 "$tmp/one" >> "$tmp/$name"
  done
}

measure "rg" "${each[@]}" rg --no-config -i -F -l -f "$tmp/triggers.txt"
# Cold: no cache. Cached: the warm-up run fills a cache that the measured runs reuse.
measure "lock-audit" "${each[@]}" "$bin" check --format json --exit-zero --no-cache
measure "la-cached" "${each[@]}" "$bin" check --format json --exit-zero --cache-dir @CACHE@
if [ "$peers" = 1 ] && command -v semgrep >/dev/null; then
  # No network: no metrics, no version check.
  SEMGREP_ENABLE_VERSION_CHECK=0 measure "semgrep" "${each[@]}" semgrep scan --metrics=off \
    --disable-version-check --config bench/peers/semgrep.yaml --json
fi
if [ "$peers" = 1 ] && command -v ast-grep >/dev/null; then
  measure "ast-grep" "${each[@]}" ast-grep scan --config bench/peers/ast-grep/sgconfig.yml --json
fi

python3 - "$tmp" "$files" "$total_lines" "$runs" "$parsed" <<'PY'
import os, statistics, sys
tmp, files, lines, runs, parsed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
rows = {}
for name in ["rg", "lock-audit", "la-cached", "semgrep", "ast-grep"]:
    path = os.path.join(tmp, name)
    if not os.path.exists(path):
        continue
    samples = [list(map(float, l.split())) for l in open(path) if l.strip()]
    wall = statistics.median(s[0] for s in samples)
    cpu = statistics.median(s[1] + s[2] for s in samples)
    rss = max(s[3] for s in samples) / 1024
    rows[name] = (wall, cpu, rss)
print(f"corpus: {files} files, {lines} lines; median of {runs} runs; {os.cpu_count()} cores")
print(f"lock-audit: {parsed}")
print(f"{'tool':<11} {'wall s':>8} {'cpu s':>8} {'peak MB':>8} {'files/s':>10} {'lines/s':>12} {'x rg':>6}")
floor = rows.get("rg", (None,))[0]
for name, (wall, cpu, rss) in rows.items():
    w = max(wall, 0.001)
    ratio = f"{wall / floor:.2f}" if floor else "-"
    print(f"{name:<11} {wall:>8.3f} {cpu:>8.3f} {rss:>8.1f} {files / w:>10.0f} {lines / w:>12.0f} {ratio:>6}")
PY
