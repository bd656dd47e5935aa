package policy

import (
	"fmt"

	"github.com/execlab/executor/jsonwire"
)

// Error is a sandbox decode or preparation failure with its JSON-RPC code. Message is
// the exact wire text; callers answer with Code and Message unchanged.
type Error struct {
	Code    int
	Message string
	// Kind is the machine-readable failure class a process/start error carries in
	// error.data.kind (codex 0.171.0, shared/spec/changes-0.171.0.md); "" means none.
	// fs/* errors never send it. Sandbox failures use jsonwire.KindSandboxPreparation
	// ("failed to prepare process sandbox: …") and jsonwire.KindSandboxUnavailable (the
	// requested confinement cannot be had on this executor: "native MXC is
	// unavailable…", and our "sandbox intent cannot be enforced…").
	Kind jsonwire.ErrorKind
}

func (e *Error) Error() string { return e.Message }

// WireCode returns the JSON-RPC error code for e.
func (e *Error) WireCode() int { return e.Code }

func invalidParams(format string, args ...any) *Error {
	return &Error{Code: jsonwire.CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

// prepareError is the reference's "failed to prepare process sandbox: …" wrapper
// (spec/sandbox.md §1.6).
func prepareError(format string, args ...any) *Error {
	return &Error{Code: jsonwire.CodeInvalidParams, Message: "failed to prepare process sandbox: " + fmt.Sprintf(format, args...),
		Kind: jsonwire.KindSandboxPreparation}
}

// errDynamicNeedsCwd is returned for fs/* contexts without cwd whose entries need one
// (spec/sandbox.md §1.6, observed from codex 0.169.0).
var errDynamicNeedsCwd = &Error{Code: jsonwire.CodeInvalidParams,
	Message: "file system sandbox context with dynamic permissions requires cwd"}

// errUnknownDeny is our stricter handling of `unknown` special paths with deny access
// (spec/sandbox.md §1.4, deviation).
var errUnknownDeny = &Error{Code: jsonwire.CodeInvalidParams, Message: "unsupported special path in deny entry"}

// errMXC is the reference's answer to windowsSandboxLevel "mxc" (observed).
var errMXC = &Error{Code: jsonwire.CodeInvalidParams, Message: "native MXC is unavailable on this executor", Kind: jsonwire.KindSandboxUnavailable}
