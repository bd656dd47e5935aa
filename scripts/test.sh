#!/usr/bin/env bash
# Runs the whole test suite: vet, the protobuf freshness check (when protoc is present),
# and every Go test with the race detector. This is the command README.md and .ci/run use.
#
# Tests that compare against the released reference binary find it through
# EXECUTOR_REFERENCE_BIN; this script sets it by running scripts/install-reference.sh
# (which needs npm) when it is unset. Under CI=true such tests fail rather than skip when
# the binary or bubblewrap is missing.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
if [ -z "${EXECUTOR_REFERENCE_BIN:-}" ] && command -v npm >/dev/null; then
  EXECUTOR_REFERENCE_BIN="$(scripts/install-reference.sh)" && export EXECUTOR_REFERENCE_BIN
fi
# Race-enabled binaries sleep 1 s at exit by default (ThreadSanitizer's atexit_sleep_ms);
# the sandbox, process and fs tests re-execute their test binary as sandbox stages and
# probes hundreds of times, so that sleep dominated the suite. A GORACE from the caller
# still wins (later options override earlier ones).
export GORACE="atexit_sleep_ms=0 ${GORACE:-}"
go vet ./...
if command -v protoc >/dev/null; then
  scripts/check-proto.sh
fi
go test -race -count=1 -timeout 20m "$@" ./...
