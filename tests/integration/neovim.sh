#!/usr/bin/env bash
# End-to-end: Neovim's built-in LSP client starts `lock-audit lsp`, opens a
# Python file with an unexpiring lock and an unchecked release, and must
# receive both diagnostics. Usage: neovim.sh path/to/lock-audit
set -euo pipefail
bin="$(realpath "${1:?path to the lock-audit binary}")"
if ! command -v nvim >/dev/null; then
  echo "installing neovim (Debian package)"
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq neovim) >/dev/null
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cat > "$work/billing.py" <<'PY'
import redis
r = redis.Redis()

def charge(order, token):
    if r.set('lock:order', token, nx=True):
        r.delete('lock:order')
PY
cat > "$work/init.lua" <<LUA
-- Works with Neovim 0.7 (Debian bookworm) and later.
local out = "$work/diagnostics.txt"
vim.api.nvim_create_autocmd("FileType", {
  pattern = "python",
  callback = function(args)
    local id = vim.lsp.start_client({ name = "lock-audit", cmd = { "$bin", "lsp" }, root_dir = "$work" })
    vim.lsp.buf_attach_client(args.buf, id)
  end,
})
vim.api.nvim_create_autocmd("BufEnter", {
  pattern = "*.py",
  callback = function(args)
    vim.defer_fn(function()
      vim.wait(10000, function() return #vim.diagnostic.get(args.buf) >= 2 end, 50)
      local lines = {}
      for _, d in ipairs(vim.diagnostic.get(args.buf)) do
        local lsp = d.user_data and d.user_data.lsp or {}
        table.insert(lines, string.format("%d %s %s", d.lnum + 1, lsp.code or d.code or "?", d.source or "?"))
      end
      table.sort(lines)
      vim.fn.writefile(lines, out)
      vim.cmd("qa!")
    end, 10)
  end,
})
LUA
timeout 60 nvim --headless --clean -u "$work/init.lua" "$work/billing.py" >/dev/null 2>&1 || true
got="$(cat "$work/diagnostics.txt" 2>/dev/null || true)"
echo "$got"
grep -q "^5 LA101 lock-audit$" <<<"$got" || { echo "neovim: no LA101 on line 5" >&2; exit 1; }
grep -q "^6 LA201 lock-audit$" <<<"$got" || { echo "neovim: no LA201 on line 6" >&2; exit 1; }
echo "neovim received lock-audit diagnostics"
