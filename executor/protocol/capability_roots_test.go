package protocol_test

import (
	"testing"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/jsonwire"
)

// TestCapabilityRootsParams_Texts pins the decode texts of capabilityRoots/discoverV1
// params that differ from the fs/* ones (observed from codex 0.171.0 and 0.169.0; the
// differential test in executor/capdiscover checks them against the releases).
func TestCapabilityRootsParams_Texts(t *testing.T) {
	tests := []struct{ params, want string }{
		{`null`, "invalid type: null, expected struct WireCapabilityRootsDiscoverParams"},
		{`[]`, "invalid length 0, expected struct WireCapabilityRootsDiscoverParams with 1 element"},
		{`{"roots":[["a","file:///x"]]}`, "invalid length 2, expected struct WireCapabilityRootDiscoverRequest with 3 elements"},
		{`{"roots":[{"id":"a","path":"file:///x","sandbox":5}]}`, "invalid type: number, expected struct WireFileSystemSandboxContext"},
		{`{"roots":[{"id":"a","path":"file:///x","sandbox":[]}]}`, "invalid length 0, expected struct WireFileSystemSandboxContext with 10 elements"},
		{`{"roots":[{"id":"a","path":"file:///x","sandbox":{}}]}`, "missing field `permissions`"},
		{`{"roots":[{"id":"a","path":"file:///x","sandbox":{"permissions":null}}]}`, "invalid type: null, expected internally tagged enum ExecPermissionProfile"},
		{`{"roots":[{"id":"a","path":"file:///x","sandbox":{"permissions":5}}]}`, "invalid type: integer `5`, expected internally tagged enum ExecPermissionProfile"},
		{`{"roots":[{"id":"a","path":"file:///x","sandbox":{"permissions":-1}}]}`, "invalid type: integer `-1`, expected internally tagged enum ExecPermissionProfile"},
		{`{"roots":[{"id":"a","path":"file:///x","sandbox":{"permissions":18446744073709551616}}]}`, "invalid type: integer `18446744073709551616` as u128, expected internally tagged enum ExecPermissionProfile"},
		{`{"roots":[{"id":"a","path":"file:///x","sandbox":{"permissions":1.0}}]}`, "invalid type: floating point `1.0`, expected internally tagged enum ExecPermissionProfile"},
		{`{"roots":[{"id":"a","path":"file:///x","sandbox":{"permissions":1e16}}]}`, "invalid type: floating point `1e+16`, expected internally tagged enum ExecPermissionProfile"},
		{`{"roots":[{"id":"a","path":"file:///x","sandbox":{"permissions":1e2}}]}`, "missing field `type`"},
		{`{"roots":[{"id":"a","path":"file:///x","sandbox":{"permissions":1.50}}]}`, "missing field `type`"},
	}
	for _, tt := range tests {
		var p protocol.CapabilityRootsDiscoverParams
		err := jsonwire.UnmarshalParams([]byte(tt.params), &p)
		e, ok := err.(*jsonwire.Error)
		if !ok || e.Code != jsonwire.CodeInvalidParams || e.Message != tt.want {
			t.Errorf("%s: got %v, want -32602 %q", tt.params, err, tt.want)
		}
	}
}
