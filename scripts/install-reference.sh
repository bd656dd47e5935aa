#!/usr/bin/env bash
# Installs the reference executor — the released Rust `codex` binary from the npm package
# @openai/codex, which contains `codex exec-server` — into a cache folder once per release,
# and prints the absolute path of each binary on stdout. Used by the differential/interop
# tests (internal/refbin) and by `executor bench --reference`.
#
#   BIN=$(scripts/install-reference.sh)            # the newest release (or $REFERENCE_CODEX_VERSION)
#   scripts/install-reference.sh --all             # every supported release, one path a line, newest first
#   scripts/install-reference.sh --list            # the supported releases, newest first (no install)
#   CODEX_HOME=$(mktemp -d -p /var/tmp) "$BIN" exec-server --listen ws://127.0.0.1:0
#
# The executor is wire-compatible with every supported release and behaves as the newest;
# the list must match Versions in internal/refbin (a test checks). scripts/test.sh and
# .ci/run export the --all paths as EXECUTOR_REFERENCE_BINS (separated by ':') and the
# newest as EXECUTOR_REFERENCE_BIN.
#
# Give the binary a CODEX_HOME outside /tmp and $TMPDIR: there it refuses to create the
# helper aliases its sandbox re-enters through.
#
# Pin one: REFERENCE_CODEX_VERSION (default: the newest, 0.171.0). The list:
# REFERENCE_CODEX_VERSIONS (default "0.171.0 0.169.0"). Cache: REFERENCE_CODEX_DIR (one
# release only; default $XDG_CACHE_HOME or ~/.cache, then reference-codex/<version>).
set -euo pipefail
versions="${REFERENCE_CODEX_VERSIONS:-0.171.0 0.169.0}"
newest="${versions%% *}"

install_one() {
  local version="$1" dir bin
  dir="${REFERENCE_CODEX_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/reference-codex/$version}"
  find_bin() {
    { find "$dir/node_modules/@openai" -path '*/bin/codex' -type f 2>/dev/null || true; } | head -n 1
  }
  bin="$(find_bin)"
  if [ -z "$bin" ]; then
    command -v npm >/dev/null || { echo "install-reference: npm is required to install codex $version (apt-get install -y npm)" >&2; return 2; }
    mkdir -p "$dir"
    npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "@openai/codex@$version" >&2
    bin="$(find_bin)"
  fi
  [ -n "$bin" ] && [ -x "$bin" ] || { echo "install-reference: codex $version binary not found under $dir" >&2; return 1; }
  echo "$bin"
}

case "${1:-}" in
  --list)
    tr ' ' '\n' <<<"$versions"
    ;;
  --all)
    [ -z "${REFERENCE_CODEX_DIR:-}" ] || { echo "install-reference: REFERENCE_CODEX_DIR names one release's cache; unset it for --all" >&2; exit 2; }
    for v in $versions; do
      install_one "$v"
    done
    ;;
  "")
    install_one "${REFERENCE_CODEX_VERSION:-$newest}"
    ;;
  *)
    echo "usage: $0 [--all | --list]" >&2
    exit 2
    ;;
esac
