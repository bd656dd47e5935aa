package fs

// Sandbox decision for fs/* (spec/sandbox.md §2.9, §4; spec/jsonrpc.md §6).
//
// A request's sandbox context is resolved with policy.ForFileSystem (policy cwd = the
// context's cwd, else the executor's own cwd; tmpdir = the executor's TMPDIR). The
// operation runs in the sandboxed helper iff the profile is restricted and not
// fullWrite, except that read-only operations (fs/readFile, fs/getMetadata, fs/open)
// under a fullRead profile stay in-process. Everything else runs in-process.

import (
	"context"
	"errors"

	"github.com/execlab/executor/jsonwire"
	"github.com/execlab/executor/sandbox/policy"
)

// errNoLauncher is returned when a request needs the sandboxed helper but the Service
// was built without a Launcher: fail closed, never run the operation unconfined.
var errNoLauncher = jsonwire.InvalidParams("sandbox intent cannot be enforced on this executor: sandbox support is not configured")

// sandboxFor resolves c and reports the policy the helper must enforce, or nil when
// the operation runs in-process (no context, or a profile that needs no helper for
// this operation). readOnly marks fs/readFile, fs/getMetadata and fs/open.
func (s *Service) sandboxFor(c *policy.Context, readOnly bool) (*policy.Policy, error) {
	if c == nil {
		return nil, nil
	}
	var grants []string
	if s.opts.Sandbox != nil {
		grants = append([]string{s.opts.Sandbox.Executable()}, s.opts.RuntimeReadGrants...)
	}
	p, err := policy.ResolveFS(c, &policy.ResolveOptions{
		Purpose:           policy.ForFileSystem,
		ExecutorCwd:       s.opts.Cwd,
		Home:              s.opts.Home,
		TmpDir:            s.opts.TmpDir,
		RuntimeReadGrants: grants,
	}, readOnly)
	if err != nil {
		return nil, wireError(err)
	}
	if p == nil {
		return nil, nil
	}
	if s.opts.Sandbox == nil {
		return nil, errNoLauncher
	}
	return p, nil
}

// routed runs one fs/* operation where p's sandbox context says: in a fresh sandboxed
// helper (sandboxFor returned a policy), given a copy of p whose sandbox member is cleared,
// or else in this process with local. sandbox returns the address of p's sandbox member;
// readOnly is sandboxFor's. It is the one place an fs/* method is routed to the helper;
// fs/open and the fs/writeBlock replace, which use the helper differently, call
// helperCall themselves.
func routed[P, R any](ctx context.Context, s *Service, method string, readOnly bool, p *P,
	sandbox func(*P) **policy.Context, local func(context.Context, *P) (*R, error)) (*R, error) {
	pol, err := s.sandboxFor(*sandbox(p), readOnly)
	if err != nil {
		return nil, err
	}
	if pol == nil {
		return local(ctx, p)
	}
	q := *p
	*sandbox(&q) = nil
	return helperCall[R](ctx, s, pol, method, &q)
}

// wireError turns a *policy.Error into the JSON-RPC error with the same code and text.
func wireError(err error) error {
	var pe *policy.Error
	if errors.As(err, &pe) {
		return &jsonwire.Error{Code: pe.Code, Message: pe.Message}
	}
	return jsonwire.Internal("%s", err.Error())
}
