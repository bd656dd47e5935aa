package capdiscover

import (
	"context"
	"encoding/json"
	"errors"
	"sync"

	"github.com/execlab/executor/executor/fs"
	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/jsonwire"
	"github.com/execlab/executor/sandbox/policy"
)

// helperMethod is the internal name under which one root's scan runs in the sandboxed fs
// helper; it never appears on the wire.
const helperMethod = "capabilityRoots/scanRoot"

// helperParams is the helper's request document for one root (or one V2 location).
type helperParams struct {
	Path protocol.PathURI `json:"path"`
}

func init() {
	fs.RegisterHelperMethod(helperMethod, helperScan(scanRoot))
}

// helperScan is the helper side of a scan (one root here, one location in v2.go): it
// decodes the request's path and runs scan on it inside the sandbox.
func helperScan(scan func(ctx context.Context, walker *fs.Service, uri protocol.PathURI, denyGlobs []string) *rootScan) fs.HelperMethod {
	return func(ctx context.Context, raw json.RawMessage, denyGlobs []string) (any, error) {
		var p helperParams
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, jsonwire.InvalidRequest("failed to encode or decode fs sandbox helper message: %s", err.Error())
		}
		return scan(ctx, fs.New(nil), p.Path, denyGlobs), nil
	}
}

// Service implements capabilityRoots/discoverV1. It is stateless and safe for concurrent
// use.
type Service struct {
	fs *fs.Service // never nil: the walk engine and the sandboxed helper
}

// New returns a Service that walks with, and sandboxes through, fsSvc. It starts nothing.
func New(fsSvc *fs.Service) *Service {
	return &Service{fs: fsSvc}
}

// Discover scans every root of p and returns their results in request order. Request
// errors: -32600 for more than MaxRoots roots, and a root sandbox that fails to resolve
// with -32602 (e.g. "file system sandbox context with dynamic permissions requires cwd",
// observed from codex 0.171.0), checked for every root before any is scanned. Everything
// else is reported per root. Up to MaxConcurrentRoots roots are scanned at once, by
// goroutines that end before Discover returns. ctx cancellation stops walks early and
// kills helpers.
func (s *Service) Discover(ctx context.Context, p *protocol.CapabilityRootsDiscoverParams) (*protocol.CapabilityRootsDiscoverResult, error) {
	if len(p.Roots) > MaxRoots {
		return nil, jsonwire.InvalidRequest("capability root discovery accepts at most %d roots", MaxRoots)
	}
	plans := make([]rootPlan, len(p.Roots))
	for i := range p.Roots {
		var err error
		if plans[i], err = s.plan(&p.Roots[i]); err != nil {
			return nil, err
		}
	}
	out := &protocol.CapabilityRootsDiscoverResult{Roots: make([]protocol.CapabilityRootDiscovery, len(p.Roots))}
	sem := make(chan struct{}, MaxConcurrentRoots)
	var wg sync.WaitGroup
	for i := range p.Roots {
		r := &p.Roots[i]
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			sc := s.scanOne(ctx, r, plans[i])
			out.Roots[i] = protocol.CapabilityRootDiscovery{ID: r.ID, Path: r.Path, Plugin: sc.Plugin,
				Skills: sc.Skills, NamespaceManifests: sc.NamespaceManifests, Warnings: sc.Warnings, Error: sc.Error}
		})
	}
	wg.Wait()
	return out, nil
}

// rootPlan says how one root is scanned: in-process (pol and rootErr empty), in the
// helper under pol, or not at all (rootErr, the root's error text).
type rootPlan struct {
	pol     *policy.Policy
	rootErr string
}

// mxcUnavailable is the root error for windowsSandboxLevel "mxc" with a profile that
// needs a sandbox (observed from codex 0.171.0 and 0.169.0; a disabled or full-access
// profile ignores the level).
const mxcUnavailable = "failed to prepare fs sandbox: failed to prepare MXC sandbox: native MXC is unavailable on this executor"

// plan resolves a root's sandbox as fs/* read operations do (spec/capabilities-0.171.0.md
// §4.3). A -32602 resolution error fails the request; other resolution errors (e.g.
// "invalid sandbox permission path URI: …", -32600) become the root's error.
func (s *Service) plan(r *protocol.CapabilityRootRequest) (rootPlan, error) {
	if r.Sandbox == nil {
		return rootPlan{}, nil
	}
	c := r.Sandbox.Context
	mxc := c.WindowsSandboxLevel == policy.WindowsSandboxLevel("mxc")
	if mxc {
		c.WindowsSandboxLevel = policy.WindowsSandboxLevel("disabled")
	}
	pol, err := s.fs.ResolveSandbox(&c, true)
	var rpc *jsonwire.Error
	switch {
	case err == nil && pol != nil && mxc:
		return rootPlan{rootErr: rootErrText(r.Path, mxcUnavailable)}, nil
	case err == nil:
		return rootPlan{pol: pol}, nil
	case errors.As(err, &rpc) && rpc.Code == jsonwire.CodeInvalidParams:
		return rootPlan{}, err
	}
	return rootPlan{rootErr: rootErrText(r.Path, errorText(err))}, nil
}

func rootErrText(uri protocol.PathURI, msg string) string {
	return "failed to inspect capability root " + string(uri) + ": " + msg
}

// scanOne scans one root as planned. A helper that fails makes the root's error.
func (s *Service) scanOne(ctx context.Context, r *protocol.CapabilityRootRequest, pl rootPlan) *rootScan {
	switch {
	case pl.rootErr != "":
		return failedScan(pl.rootErr)
	case pl.pol == nil:
		return scanRoot(ctx, s.fs, r.Path, nil)
	}
	raw, err := s.fs.RunHelper(ctx, pl.pol, helperMethod, &helperParams{Path: r.Path})
	if err != nil {
		return failedScan(rootErrText(r.Path, errorText(err)))
	}
	var sc rootScan
	if err := json.Unmarshal(raw, &sc); err != nil {
		return failedScan(rootErrText(r.Path, "failed to encode or decode fs sandbox helper message: "+err.Error()))
	}
	return &sc
}

// errorText is the message of a wire error, or the error's text.
func errorText(err error) string {
	var rpc *jsonwire.Error
	if errors.As(err, &rpc) {
		return rpc.Message
	}
	return err.Error()
}
