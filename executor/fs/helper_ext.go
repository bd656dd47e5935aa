package fs

// Helper operations of packages above fs (spec/capabilities-0.171.0.md §4.3): a package
// whose whole operation must run inside a request's sandbox (capability discovery)
// registers it here from init(), so that the helper, this same binary re-entered, can
// run it; ResolveSandbox resolves the sandbox exactly as the fs/* methods do and RunHelper
// runs the operation in one helper.

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sync"

	"github.com/execlab/executor/jsonwire"
	"github.com/execlab/executor/sandbox/policy"
)

// HelperMethod is a helper operation registered by a package above fs. It runs inside the
// sandbox with params as sent to RunHelper; denyGlobs are the policy's deny patterns,
// which the operation must re-check on every file it reads (DeniedByGlobs), because the
// sandbox masks matching files only as they existed when it was built. Errors should be
// *jsonwire.Error; others become -32603.
type HelperMethod func(ctx context.Context, params json.RawMessage, denyGlobs []string) (any, error)

// helperMethodsMu guards helperMethods: registration happens in init() functions, lookups
// in the helper and in RunHelper.
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

// ResolveSandbox resolves the sandbox context c as fs/* does (readOnly as for
// fs/readFile, fs/getMetadata and fs/open) and returns the policy the helper must enforce,
// or nil when the operation runs in-process (c nil, or a profile that needs no helper).
// Errors are *jsonwire.Error with the fs/* codes and texts.
func (s *Service) ResolveSandbox(c *policy.Context, readOnly bool) (*policy.Policy, error) {
	return s.sandboxFor(c, readOnly)
}

// RunHelper runs the registered method with params in one fresh helper enforcing pol
// (from ResolveSandbox, non-nil) and returns its raw result. Errors are *jsonwire.Error,
// as for fs/* in the helper. ctx cancellation kills the helper.
func (s *Service) RunHelper(ctx context.Context, pol *policy.Policy, method string, params any) (json.RawMessage, error) {
	if registeredHelperMethod(method) == nil {
		return nil, jsonwire.Internal("fs: helper method %q is not registered", method)
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
