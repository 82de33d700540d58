#!/usr/bin/env bash
# The pre-commit hook, driven by the real pre-commit: the manifest validates;
# a staged file with a lock bug blocks the commit; the fixed file passes.
# Usage: tests/integration/pre-commit.sh PATH_TO_LOCK_AUDIT_BINARY
set -euo pipefail
bin=$(realpath "$1")
root=$(cd "$(dirname "$0")/../.." && pwd)
venv=${PRE_COMMIT_VENV:-/tmp/lock-audit-pre-commit-venv}
if [ ! -x "$venv/bin/pre-commit" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet pre-commit
fi
pc="$venv/bin/pre-commit"
(cd "$root" && "$pc" validate-manifest .pre-commit-hooks.yaml)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
git init -q .
git config user.email ci@example.invalid
git config user.name ci
cat > .pre-commit-config.yaml <<YAML
repos:
  - repo: local
    hooks:
      - id: lock-audit
        name: lock-audit
        entry: $bin check --force-exclude --format concise
        language: system
        types_or: [python, rust, go, java, javascript, ts, ruby]
        require_serial: true
YAML
"$pc" install >/dev/null
printf 'import redis\nr = redis.Redis()\n\ndef claim(t):\n    if r.set("lock:billing", t, nx=True):\n        return True\n' > job.py
git add .pre-commit-config.yaml job.py
if git commit -q -m "add a lock without a TTL" 2>/dev/null; then
  echo "pre-commit let a lock with no TTL through" >&2
  exit 1
fi
printf 'import redis\nr = redis.Redis()\n\ndef claim(t):\n    if r.set("lock:billing", t, nx=True, px=30000):\n        return True\n' > job.py
git add job.py
git commit -q -m "add a lock with a TTL"
echo "pre-commit hook: bad commit blocked, fixed commit passed"
