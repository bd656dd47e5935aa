#!/usr/bin/env bash
# Regenerates the golden frames in this directory: binary RelayMessageFrames written by the
# released reference executor (codex exec-server 0.169.0) during test/interop's
# TestNoiseRelay_GoHarnessAgainstReferenceExecutor — message 2 (handshake), the encrypted
# JSON-RPC data records under 8 KiB plus one full 61440-byte record (61508-byte frame), and the
# reset for an unknown stream. Files are <index>-<kind>-<size>.bin. Ciphertexts differ on every run
# (ephemeral keys); the frame layout does not.
#
# Needs the reference binary (see test/interop: EXECUTOR_REFERENCE_BIN or
# scripts/install-reference.sh).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../../.." && pwd)"
cd "$root"
EXECUTOR_INTEROP_GOLDEN_DIR="$here" CI=true go test -count=1 -run '^TestNoiseRelay_GoHarnessAgainstReferenceExecutor$' -v ./test/interop/ | grep -E 'golden|^(ok|FAIL|---)'
ls -l "$here"
