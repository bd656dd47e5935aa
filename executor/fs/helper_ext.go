package fs

// Helper operations of packages above fs (spec/capabilities-0.171.0.md §4.3): a package
// whose whole operation must run inside a request's sandbox (capability discovery)
// registers it here from init(), so that the helper, this same binary re-entered, can
// run it; RunSandboxed resolves the sandbox exactly as the fs/* methods do and runs the
// operation in one helper.

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"sync"

	"github.com/execlab/executor/jsonwire"
	"github.com/execlab/executor/sandbox/policy"
)

// HelperMethod is a helper operation registered by a package above fs. It runs inside the
// sandbox with params as sent to RunSandboxed; denyGlobs are the policy's deny patterns,
// which the operation must re-check on every file it reads (DeniedByGlobs), because the
// sandbox masks matching files only as they existed when it was built. Errors should be
// *jsonwire.Error; others become -32603.
type HelperMethod func(ctx context.Context, params json.RawMessage, denyGlobs []string) (any, error)

// helperMethodsMu guards helperMethods: registration happens in init() functions, lookups
// in the helper and in RunSandboxed.
var (
	helperMethodsMu sync.RWMutex
	helperMethods   = map[string]HelperMethod{}
)

// RegisterHelperMethod makes m runnable in the sandboxed helper under name. It is meant
// for init() functions; registering a name twice, or an fs/* method name, panics.
func RegisterHelperMethod(name string, m HelperMethod) {
	helperMethodsMu.Lock()
	defer helperMethodsMu.Unlock()
	if _, dup := helperMethods[name]; dup || len(name) > 3 && name[:3] == "fs/" {
		panic("fs: helper method registered twice or reserved: " + name)
	}
	helperMethods[name] = m
}

func registeredHelperMethod(name string) HelperMethod {
	helperMethodsMu.RLock()
	defer helperMethodsMu.RUnlock()
	return helperMethods[name]
}

// ErrNotSandboxed is returned by RunSandboxed when c needs no helper: the caller runs the
// operation in-process.
var ErrNotSandboxed = errors.New("fs: operation runs in-process")

// RunSandboxed resolves the sandbox context c as fs/* does (readOnly as for fs/readFile,
// fs/getMetadata and fs/open) and, when the profile needs the helper, runs the registered
// method with params in one fresh helper and returns its raw result. It returns
// ErrNotSandboxed when c is nil or needs no helper, and the wire error of a failed
// resolution, launch or operation otherwise (as helperCall does). ctx cancellation kills
// the helper.
func (s *Service) RunSandboxed(ctx context.Context, c *policy.Context, readOnly bool, method string, params any) (json.RawMessage, error) {
	if registeredHelperMethod(method) == nil {
		return nil, jsonwire.Internal("fs: helper method %q is not registered", method)
	}
	pol, err := s.sandboxFor(c, readOnly)
	if err != nil {
		return nil, err
	}
	if pol == nil {
		return nil, ErrNotSandboxed
	}
	return s.runHelper(ctx, pol, method, params)
}

// DeniedByGlobs reports whether the canonical target of native, or an ancestor of it,
// matches one of the deny globs; a path that does not resolve is not denied (the caller's
// own operation reports it). It is the check fs/* reads make in the helper.
func DeniedByGlobs(globs []string, native string) bool {
	if len(globs) == 0 {
		return false
	}
	canon, err := filepath.EvalSymlinks(native)
	return err == nil && deniedByGlob(globs, canon)
}
