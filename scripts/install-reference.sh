#!/usr/bin/env bash
# Installs the reference executor — the released Rust `codex` binary from the npm package
# @openai/codex, which contains `codex exec-server` — into a cache folder once, and prints
# the absolute path of the binary on stdout. Used by the differential/interop tests and by
# `executor bench --reference`.
#
#   BIN=$(scripts/install-reference.sh)
#   CODEX_HOME=$(mktemp -d -p /var/tmp) "$BIN" exec-server --listen ws://127.0.0.1:0
#
# Give the binary a CODEX_HOME outside /tmp and $TMPDIR: there it refuses to create the
# helper aliases its sandbox re-enters through.
#
# Pin: REFERENCE_CODEX_VERSION (default 0.169.0). Cache: REFERENCE_CODEX_DIR.
set -euo pipefail
version="${REFERENCE_CODEX_VERSION:-0.169.0}"
dir="${REFERENCE_CODEX_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/reference-codex/$version}"
find_bin() {
  { find "$dir/node_modules/@openai" -path '*/bin/codex' -type f 2>/dev/null || true; } | head -n 1
}
bin="$(find_bin)"
if [ -z "$bin" ]; then
  command -v npm >/dev/null || { echo "install-reference: npm is required (apt-get install -y npm)" >&2; exit 2; }
  mkdir -p "$dir"
  npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "@openai/codex@$version" >&2
  bin="$(find_bin)"
fi
[ -n "$bin" ] && [ -x "$bin" ] || { echo "install-reference: codex binary not found under $dir" >&2; exit 1; }
echo "$bin"
