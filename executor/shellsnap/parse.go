package shellsnap

import (
	"bytes"
	"errors"
	"fmt"
)

// Snapshot is one captured shell state. It is immutable once built and shared by every
// start that hits its cache entry.
type Snapshot struct {
	Kind Kind
	// State is shell source restoring options, functions and aliases.
	State string
	// Env holds the exported variables, PWD, OLDPWD and "_" excluded.
	Env map[string]string
}

// Parse errors; a failed parse fails the capture (the command then runs unsnapshotted).
var (
	errNoMarker     = errors.New("shellsnap: capture output has no snapshot marker")
	errNoState      = errors.New("shellsnap: capture output has no state section")
	errStateTooBig  = errors.New("shellsnap: captured state exceeds its budget")
	errBadEnvEntry  = errors.New("shellsnap: captured environment entry without '='")
	errOutputTooBig = errors.New("shellsnap: capture output exceeds its budget")
)

// notRestored are exported variables a snapshot never carries: the working
// directories are the new command's own, "_" is the shell's.
var notRestored = map[string]bool{"PWD": true, "OLDPWD": true, "_": true}

// Parse parses a capture's stdout (layout in capture_script.go). Everything before the
// first marker is startup-file output and ignored. The state plus the environment must
// fit MaxStateBytes.
func Parse(k Kind, out []byte) (*Snapshot, error) {
	if len(out) > MaxCaptureOutput {
		return nil, errOutputTooBig
	}
	i := bytes.Index(out, []byte(captureMarker))
	if i < 0 {
		return nil, errNoMarker
	}
	rest := out[i+len(captureMarker):]
	if len(rest) > MaxStateBytes {
		return nil, errStateTooBig
	}
	state, envPart, ok := bytes.Cut(rest, []byte{0})
	if !ok {
		return nil, errNoState
	}
	s := &Snapshot{Kind: k, State: string(state), Env: make(map[string]string)}
	for len(envPart) > 0 {
		var entry []byte
		entry, envPart, _ = bytes.Cut(envPart, []byte{0})
		if len(entry) == 0 {
			continue
		}
		name, value, ok := bytes.Cut(entry, []byte{'='})
		if !ok || len(name) == 0 {
			return nil, fmt.Errorf("parsing entry %.40q: %w", entry, errBadEnvEntry)
		}
		n := string(name)
		if notRestored[n] || bytes.HasPrefix(name, []byte(envChunkPrefix)) {
			continue
		}
		s.Env[n] = string(value)
	}
	return s, nil
}
