#!/usr/bin/env bash
# Regenerates the Go code for the relay protobuf schema.
#
#   scripts/gen-proto.sh [OUT_DIR]
#
# OUT_DIR defaults to proto/relayv1 in the repository; scripts/check-proto.sh passes a temp dir.
# Needs protoc (apt-get install -y protobuf-compiler) and protoc-gen-go at the version of
# google.golang.org/protobuf in go.mod:
#   go install google.golang.org/protobuf/cmd/protoc-gen-go@$(go list -m -f '{{.Version}}' google.golang.org/protobuf)
# This script installs nothing.
set -euo pipefail
# go.mod names Go 1.27.3; the machine's Go (1.26.8, GOTOOLCHAIN=local) fetches it by name.
export GOTOOLCHAIN="${GOTOOLCHAIN:-go1.27.3}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-$root/proto/relayv1}"
command -v protoc >/dev/null || { echo "gen-proto: protoc not found" >&2; exit 2; }
plugin="$(command -v protoc-gen-go || true)"
if [ -z "$plugin" ] && [ -x "$(go env GOPATH)/bin/protoc-gen-go" ]; then
  plugin="$(go env GOPATH)/bin/protoc-gen-go"
fi
[ -n "$plugin" ] || { echo "gen-proto: protoc-gen-go not found" >&2; exit 2; }
want="$(cd "$root" && go list -m -f '{{.Version}}' google.golang.org/protobuf)"
have="$("$plugin" --version | awk '{print $2}')"
[ "$have" = "$want" ] || { echo "gen-proto: protoc-gen-go $have, go.mod wants $want" >&2; exit 2; }
mkdir -p "$out"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
protoc --plugin=protoc-gen-go="$plugin" -I "$root/proto" --go_out="$tmp" --go_opt=paths=source_relative \
  codex/exec_server/relay/v1/relay.proto
cp "$tmp/codex/exec_server/relay/v1/relay.pb.go" "$out/relay.pb.go"
