package shellsnap

import (
	"encoding/json"

	"github.com/execlab/executor/jsonwire"
)

// Request is the decoded process/start shellSnapshot member (§3.1):
//
//	"shellSnapshot": {"scopeId": "<thread-id>:<environment-id>",
//	                  "shell": {"name": "bash", "path": "/bin/bash"}}
//
// Both fields are required; unknown keys are ignored; the serde sequence form
// ["scope", {"name": …, "path": …}] is accepted, as in the reference.
type Request struct {
	ScopeID string    `json:"scopeId"`
	Shell   ShellInfo `json:"shell"`
}

// RustName is the reference's type name, as in `invalid type: string "s", expected
// struct ShellSnapshotRequest` (observed from codex 0.171.0).
func (Request) RustName() string { return "ShellSnapshotRequest" }

// ShellInfo names the shell the client expects: name selects the capture dialect,
// path must equal argv[0] for the snapshot to apply.
type ShellInfo struct {
	Name string `json:"name"`
	Path string `json:"path"`
}

// RustName is the reference's type name (observed: `expected struct ShellInfo`).
func (ShellInfo) RustName() string { return "ShellInfo" }

// Kind is a supported shell dialect.
type Kind uint8

// The dialects the reference supports (§3.1).
const (
	KindBash Kind = iota + 1
	KindZsh
	KindSh
)

func (k Kind) String() string {
	switch k {
	case KindBash:
		return "bash"
	case KindZsh:
		return "zsh"
	case KindSh:
		return "sh"
	}
	return "unknown"
}

// Decode decodes a raw shellSnapshot member with the reference's serde texts
// (-32602 *jsonwire.Error). Absent or null is (nil, nil): a normal start.
func Decode(raw json.RawMessage) (*Request, error) {
	if isNull(raw) {
		return nil, nil
	}
	var r Request
	if err := jsonwire.UnmarshalParams(raw, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

func isNull(raw json.RawMessage) bool {
	i, j := 0, len(raw)
	for i < j && isSpace(raw[i]) {
		i++
	}
	for j > i && isSpace(raw[j-1]) {
		j--
	}
	return i == j || string(raw[i:j]) == "null"
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// errScope is the reference's scope check (§3.1, PROBED).
var errScope = jsonwire.InvalidParams("shell snapshot scope must be non-empty and at most 256 bytes")

// Plan runs the checks process/start makes after its own argv and cwd checks, in the
// reference's order (§3.1): the scope (always), whether the snapshot applies to argv
// (silently not, unless argv is [shell.path, "-lc", script, …]), then the shell name.
// It returns apply=false with a nil error when the command runs as requested.
func (r *Request) Plan(argv []string) (kind Kind, apply bool, err error) {
	if r.ScopeID == "" || len(r.ScopeID) > MaxScopeBytes {
		return 0, false, errScope
	}
	if len(argv) < 3 || argv[0] != r.Shell.Path || argv[1] != "-lc" {
		return 0, false, nil
	}
	switch r.Shell.Name {
	case "bash":
		kind = KindBash
	case "zsh":
		kind = KindZsh
	case "sh":
		kind = KindSh
	default:
		return 0, false, jsonwire.InvalidParams("shell snapshots are unsupported for shell `%s`", r.Shell.Name)
	}
	return kind, true, nil
}
