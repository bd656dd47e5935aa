package fs

import (
	"bytes"
	"encoding/json"

	"github.com/execlab/executor/executor/jsonrpc"
)

// errSandboxUnenforced is returned for a sandbox this package cannot enforce yet.
var errSandboxUnenforced = jsonrpc.InvalidRequest("sandbox intent cannot be enforced on this executor")

// sandboxGate decides whether a request's sandbox (spec/jsonrpc.md §6) needs enforcement.
// Absent or null: none. A managed profile with a restricted file_system needs the
// sandboxed helper, which is not wired in yet: fail closed with -32600. Disabled and
// external profiles, and managed ones with an unrestricted file system, run directly.
//
// Only the shape needed for that decision is checked here; full decoding and resolution
// belong to sandbox/policy once the helper lands (then replace this one function).
func sandboxGate(raw json.RawMessage) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var ctx struct {
		Permissions *struct {
			Type       *string `json:"type"`
			FileSystem *struct {
				Type *string `json:"type"`
			} `json:"file_system"`
		} `json:"permissions"`
		WindowsSandboxLevel *string `json:"windowsSandboxLevel"`
	}
	if err := json.Unmarshal(raw, &ctx); err != nil {
		return jsonrpc.InvalidParams("%s", err.Error())
	}
	switch {
	case ctx.Permissions == nil:
		return jsonrpc.InvalidParams("missing field `permissions`")
	case ctx.WindowsSandboxLevel == nil:
		return jsonrpc.InvalidParams("missing field `windowsSandboxLevel`")
	case ctx.Permissions.Type == nil:
		return jsonrpc.InvalidParams("missing field `type`")
	}
	switch *ctx.Permissions.Type {
	case "disabled", "external":
		return nil
	case "managed":
		fsys := ctx.Permissions.FileSystem
		if fsys != nil && fsys.Type != nil && *fsys.Type == "unrestricted" {
			return nil
		}
		return errSandboxUnenforced
	}
	return jsonrpc.InvalidParams("unknown variant `%s`, expected one of `managed`, `disabled`, `external`", *ctx.Permissions.Type)
}
