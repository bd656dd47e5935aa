package relayv1

// relay.pb.go is generated from proto/codex/exec_server/relay/v1/relay.proto; scripts/gen-proto.sh
// documents the protoc and protoc-gen-go versions it needs, scripts/check-proto.sh verifies it.
//go:generate bash ../../scripts/gen-proto.sh
