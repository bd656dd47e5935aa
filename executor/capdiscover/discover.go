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

// helperParams is the helper's request document for one root.
type helperParams struct {
	Path protocol.PathURI `json:"path"`
}

func init() {
	fs.RegisterHelperMethod(helperMethod, runInHelper)
}

// runInHelper is the helper side: it scans one root inside the sandbox.
func runInHelper(ctx context.Context, raw json.RawMessage, denyGlobs []string) (any, error) {
	var p helperParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, jsonwire.InvalidRequest("failed to encode or decode fs sandbox helper message: %s", err.Error())
	}
	return scanRoot(ctx, fs.New(nil), p.Path, denyGlobs), nil
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

// Discover scans every root of p and returns their results in request order. The only
// request-level errors are -32600 for more than MaxRoots roots; everything else is
// reported per root. Up to MaxConcurrentRoots roots are scanned at once, by goroutines
// that end before Discover returns. ctx cancellation stops walks early and kills helpers.
func (s *Service) Discover(ctx context.Context, p *protocol.CapabilityRootsDiscoverParams) (*protocol.CapabilityRootsDiscoverResult, error) {
	if len(p.Roots) > MaxRoots {
		return nil, jsonwire.InvalidRequest("capability root discovery accepts at most %d roots", MaxRoots)
	}
	out := &protocol.CapabilityRootsDiscoverResult{Roots: make([]protocol.CapabilityRootDiscovery, len(p.Roots))}
	sem := make(chan struct{}, MaxConcurrentRoots)
	var wg sync.WaitGroup
	for i := range p.Roots {
		r := &p.Roots[i]
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			sc := s.scanOne(ctx, r)
			out.Roots[i] = protocol.CapabilityRootDiscovery{ID: r.ID, Path: r.Path, Plugin: sc.Plugin,
				Skills: sc.Skills, NamespaceManifests: sc.NamespaceManifests, Warnings: sc.Warnings, Error: sc.Error}
		})
	}
	wg.Wait()
	return out, nil
}

// scanOne scans one root in-process, or in the sandboxed helper when its sandbox restricts
// the filesystem (spec/capabilities-0.171.0.md §4.3). A sandbox that cannot be resolved
// or enforced, or a helper that fails, makes the root's error.
func (s *Service) scanOne(ctx context.Context, r *protocol.CapabilityRootRequest) *rootScan {
	if r.Sandbox != nil {
		c := r.Sandbox.Context
		// The reference ignores the Windows sandbox level here (PROBED: "mxc" is no
		// error on Linux).
		c.WindowsSandboxLevel = policy.WindowsSandboxLevel("disabled")
		raw, err := s.fs.RunSandboxed(ctx, &c, true, helperMethod, &helperParams{Path: r.Path})
		switch {
		case err == nil:
			var sc rootScan
			if err := json.Unmarshal(raw, &sc); err != nil {
				return failedScan("failed to inspect capability root " + string(r.Path) + ": failed to encode or decode fs sandbox helper message: " + err.Error())
			}
			return &sc
		case !errors.Is(err, fs.ErrNotSandboxed):
			return failedScan("failed to inspect capability root " + string(r.Path) + ": " + errorText(err))
		}
	}
	return scanRoot(ctx, s.fs, r.Path, nil)
}

// errorText is the message of a wire error, or the error's text.
func errorText(err error) string {
	var rpc *jsonwire.Error
	if errors.As(err, &rpc) {
		return rpc.Message
	}
	return err.Error()
}
