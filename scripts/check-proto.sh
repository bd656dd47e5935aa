#!/usr/bin/env bash
# Fails when proto/relayv1/relay.pb.go is not what scripts/gen-proto.sh generates from
# proto/codex/exec_server/relay/v1/relay.proto. Installs nothing: CI provides protoc and
# protoc-gen-go (see scripts/gen-proto.sh for the versions). The "// protoc vX" header line is
# ignored so that a different protoc patch release in CI does not fail the check.
set -euo pipefail
# go.mod names Go 1.27.3; the machine's Go (1.26.8, GOTOOLCHAIN=local) fetches it by name.
export GOTOOLCHAIN="${GOTOOLCHAIN:-go1.27.3}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$root/scripts/gen-proto.sh" "$tmp"
if ! diff -u -I $'^// \tprotoc ' "$root/proto/relayv1/relay.pb.go" "$tmp/relay.pb.go"; then
  echo "check-proto: proto/relayv1/relay.pb.go is stale; run scripts/gen-proto.sh" >&2
  exit 1
fi
echo "check-proto: up to date"
