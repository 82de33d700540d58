#!/usr/bin/env bash
# `cargo lock-audit`, installed with `cargo install` into a temporary root and
# run by cargo on a two-member workspace: it scans every member by default,
# `-p` narrows it to one, and `[workspace.metadata.lock-audit]` configures it.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
CARGO_TARGET_DIR="$root/target" cargo install --quiet --locked --path "$root" --root "$tmp/install" --bins
export PATH="$tmp/install/bin:$PATH"

ws="$tmp/ws"
mkdir -p "$ws/billing/src" "$ws/reports/src"
cat > "$ws/Cargo.toml" <<'TOML'
[workspace]
members = ["billing", "reports"]
resolver = "2"

[workspace.metadata.lock-audit]
ignore = ["LA104"]
TOML
for m in billing reports; do
  printf '[package]\nname = "%s"\nversion = "0.1.0"\nedition = "2021"\n' "$m" > "$ws/$m/Cargo.toml"
  cat > "$ws/$m/src/lib.rs" <<'RS'
use redis::Commands;

pub fn claim(con: &mut redis::Connection, key: &str) -> redis::RedisResult<()> {
    let _: () = redis::cmd("SET").arg(key).arg("x").arg("NX").query(con)?;
    Ok(())
}
RS
done
cd "$ws"
out=$(cargo lock-audit --format concise || true)
echo "$out"
grep -q "billing/src/lib.rs:4" <<<"$out"
grep -q "reports/src/lib.rs:4" <<<"$out"
if grep -q "LA104" <<<"$out"; then echo "workspace metadata config was not applied" >&2; exit 1; fi
only=$(cargo lock-audit -p billing --format concise || true)
grep -q "billing/src/lib.rs" <<<"$only"
if grep -q "reports/" <<<"$only"; then echo "-p did not narrow the scan" >&2; exit 1; fi
echo "cargo lock-audit: workspace members scanned, -p honoured, metadata config applied"
