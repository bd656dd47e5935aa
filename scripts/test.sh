#!/usr/bin/env bash
# Runs the whole test suite: vet, the protobuf freshness check (when protoc is present),
# and every Go test with the race detector. This is the command README.md and .ci/run use.
#
# Tests that compare against the released reference binaries run against every supported
# release (0.171.0 and 0.169.0, newest first; see scripts/install-reference.sh --list),
# each in a subtest named by the version. They find the binaries through internal/refbin:
#   EXECUTOR_REFERENCE_BINS  the paths of all releases, separated by ':' (as PATH);
#   EXECUTOR_REFERENCE_BIN   the newest release alone (what `executor bench` measures against).
# This script sets both by running `scripts/install-reference.sh --all` (which needs npm
# unless the cache is warm) when EXECUTOR_REFERENCE_BINS is unset. Under CI=true such tests
# fail rather than skip when a release or bubblewrap is missing.
#
# EXECUTOR_TEST_SUMMARY names a file the reference-comparing tests append their outcome to,
# one line per test and release (internal/refbin.Record); this script points it at a
# temporary file when unset and prints a line per package and release at the end, because
# `go test` hides the output of passing tests — so a CI log shows that both releases ran.
set -euo pipefail
# go.mod names Go 1.27.3; the machine's Go (1.26.8, GOTOOLCHAIN=local) fetches it by name.
export GOTOOLCHAIN="${GOTOOLCHAIN:-go1.27.3}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
if [ -z "${EXECUTOR_REFERENCE_BINS:-}" ]; then
  if bins="$(scripts/install-reference.sh --all)"; then
    EXECUTOR_REFERENCE_BINS="$(tr '\n' ':' <<<"$bins")"
    EXECUTOR_REFERENCE_BINS="${EXECUTOR_REFERENCE_BINS%:}"
    export EXECUTOR_REFERENCE_BINS
  else
    echo "test.sh: reference releases unavailable; the tests comparing against them skip (fail under CI=true)" >&2
  fi
fi
if [ -z "${EXECUTOR_REFERENCE_BIN:-}" ] && [ -n "${EXECUTOR_REFERENCE_BINS:-}" ]; then
  EXECUTOR_REFERENCE_BIN="${EXECUTOR_REFERENCE_BINS%%:*}" && export EXECUTOR_REFERENCE_BIN
fi
if [ -z "${EXECUTOR_TEST_SUMMARY:-}" ]; then
  EXECUTOR_TEST_SUMMARY="$(mktemp "${TMPDIR:-/tmp}/executor-test-summary-XXXXXX")"
  trap 'rm -f "$EXECUTOR_TEST_SUMMARY"' EXIT
fi
export EXECUTOR_TEST_SUMMARY
# Race-enabled binaries sleep 1 s at exit by default (ThreadSanitizer's atexit_sleep_ms);
# the sandbox, process and fs tests re-execute their test binary as sandbox stages and
# probes hundreds of times, so that sleep dominated the suite. A GORACE from the caller
# still wins (later options override earlier ones).
export GORACE="atexit_sleep_ms=0 ${GORACE:-}"
# go.mod and go.sum must be tidy: scanners read go.mod, and a require the build does not
# use (or a missing one) is a finding (issue 13).
if ! untidy="$(go mod tidy -diff 2>&1)"; then
  echo "go.mod/go.sum are not tidy (run 'go mod tidy'):" >&2
  echo "$untidy" >&2
  exit 1
fi
# gofmt: every tracked Go file formatted (a merge of parallel work can leave one behind).
if unformatted="$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.git/*'))" && [ -n "$unformatted" ]; then
  echo "gofmt: these files are not formatted (run 'gofmt -w'):" >&2
  echo "$unformatted" >&2
  exit 1
fi
go vet ./...
# staticcheck, pinned, fetched through the Go module proxy (its settings: staticcheck.conf).
# Every finding fails the run; a check we disagree with is turned off there, with a reason.
staticcheck_version="v0.8.2"
if ! go run "honnef.co/go/tools/cmd/staticcheck@$staticcheck_version" ./...; then
  echo "staticcheck reports findings (or could not run): fix them or justify in staticcheck.conf" >&2
  exit 1
fi
if command -v protoc >/dev/null; then
  scripts/check-proto.sh
fi
status=0
go test -race -count=1 -timeout 20m "$@" ./... || status=$?
# deploy/kubernetes/validate is its own module, so the Kubernetes API types and kustomize
# stay out of the executor's go.mod: it renders every overlay and decodes each resource
# strictly (issue 17). No network beyond the Go module proxy; no cluster.
(cd deploy/kubernetes/validate && go mod tidy -diff && go vet ./... && go test -count=1 ./...) || status=$?

# One line per package and reference release: "test/interop 0.171.0: 5 passed", with the
# names of skipped and failed tests and any detail a test attached (conformance counts).
echo
echo "reference releases compared (package release: outcomes):"
if [ -s "$EXECUTOR_TEST_SUMMARY" ]; then
  sort -t "$(printf '\t')" -k1,1 -k2,2Vr -k3,3 "$EXECUTOR_TEST_SUMMARY" | awk -F '\t' '
    function flush() {
      if (key == "") return
      line = key ":"
      sep = " "
      for (i = 1; i <= ns; i++) {
        s = order[i]
        line = line sep cnt[s] " " s
        if (s != "passed") line = line " (" names[s] ")"
        sep = ", "
      }
      print line det
      delete cnt; delete names; delete order; ns = 0; det = ""
    }
    {
      k = $1 " " $2
      if (k != key) { flush(); key = k }
      if (!($4 in cnt)) order[++ns] = $4
      cnt[$4]++
      names[$4] = names[$4] (names[$4] == "" ? "" : ", ") $3
      if ($5 != "") det = det " | " $3 ": " $5
    }
    END { flush() }'
else
  echo "  (none recorded)"
fi
exit "$status"
