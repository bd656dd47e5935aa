package process

import (
	"errors"

	"github.com/execlab/executor/internal/oserr"
	"github.com/execlab/executor/jsonwire"
)

// process/start error classes (codex 0.171.0, shared/spec/changes-0.171.0.md): the
// reference attaches error.data {"kind":K} to spawn and sandbox failures, with code
// and message unchanged. Observed rows:
//
//	spawnNotFound           ENOENT: missing program, missing cwd, PTY absolute path missing
//	spawnPermissionDenied   EACCES/EPERM (io::ErrorKind::PermissionDenied), a directory on PATH
//	spawnFailed             every other spawn error: "missing program for … spawn", NUL
//	                        bytes, ENOTDIR cwd, the PTY "Unable to spawn …" texts
//	sandboxPreparation      -32602 "failed to prepare process sandbox: …" (jsonwire.KindSandboxPreparation)
//	sandboxUnavailable      -32602 "native MXC is unavailable on this executor"; also our
//	                        own "sandbox intent cannot be enforced on this executor: …"
//
// The kinds are jsonwire's (one table for server and harness). The sandbox kinds travel
// on *policy.Error (wireError); spawn kinds are derived here.
// No data on params-decode errors, "argv must not be empty", the duplicate-id -32600,
// or the transparent-TCP refusals. A 0.169.0 client ignores error.data.

// spawnError is a failed spawn; spawnWireError turns it into the -32603 wire error.
type spawnError struct{ err error }

func (e *spawnError) Error() string { return e.err.Error() }
func (e *spawnError) Unwrap() error { return e.err }

// withErrorKind turns a spawn failure into its -32603 wire error with error.data.kind;
// other errors pass unchanged.
func withErrorKind(err error) error {
	var se *spawnError
	if !errors.As(err, &se) {
		return err
	}
	e := jsonwire.Internal("%s", oserr.Text(se.err))
	switch oserr.KindOf(se.err) {
	case oserr.KindNotFound:
		return e.WithKind(jsonwire.KindSpawnNotFound)
	case oserr.KindPermissionDenied:
		return e.WithKind(jsonwire.KindSpawnPermissionDenied)
	}
	return e.WithKind(jsonwire.KindSpawnFailed)
}
