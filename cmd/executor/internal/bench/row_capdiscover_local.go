package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/execlab/executor/executor/protocol"
)

// capdiscover_local: capabilityRoots/discoverV1 of one root holding 100 plugins (manifest,
// .mcp.json, one skill with agents/openai.yaml each) and 100 more skills among filler
// directories of empty files, over a local WebSocket, in milliseconds per call. The tree has
// 19,990 walk entries (19,200 files, 790 directories), just under the reference's
// 20,000-entry walk limit, so the whole tree is scanned on both sides (--quick: 10 filler
// directories). A sample checks 200 skills (100 with metadata), 100 namespace manifests,
// no warnings and no error. Goal: ≤ 0.5× the reference.

// Tree shape of capdiscover_local (our choice; see spec/capabilities-0.171.0.md §4.2 for
// the 20,000-entry and 2,000-directory walk limits it stays under).
const (
	capdiscPlugins         = 100 // plugins/pNNN, each with one skill
	capdiscSkills          = 100 // skills/kNNN/SKILL.md
	capdiscFillerDirs      = 187 // filler/dNNN
	capdiscFillerDirsQuick = 10
	capdiscFilesPerDir     = 100 // empty files per filler directory
)

type capdiscTree struct {
	root string
}

// capdiscTrees holds each Run's tree (Env has no field for it, so that this row stays in
// its own file); guarded by capdiscMu, touched only by the measuring goroutine.
var (
	capdiscMu    sync.Mutex
	capdiscTrees = map[*Env]*capdiscTree{}
)

func (e *Env) capdiscTreeFor() (*capdiscTree, error) {
	capdiscMu.Lock()
	defer capdiscMu.Unlock()
	if t := capdiscTrees[e]; t != nil {
		return t, nil
	}
	root, err := os.MkdirTemp("/var/tmp", "executor-bench-capdiscover-")
	if err != nil {
		return nil, fmt.Errorf("creating capability tree: %w", err)
	}
	fail := func(err error) (*capdiscTree, error) {
		os.RemoveAll(root)
		return nil, fmt.Errorf("creating capability tree: %w", err)
	}
	write := func(rel, contents string) error {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		return os.WriteFile(p, []byte(contents), 0o644)
	}
	for i := range capdiscPlugins {
		p := fmt.Sprintf("plugins/p%03d", i)
		for rel, c := range map[string]string{
			".codex-plugin/plugin.json":   fmt.Sprintf(`{"name":"p%03d","version":"1.0.0","description":"bench plugin"}`, i),
			".mcp.json":                   `{"mcpServers":{"docs":{"command":"docs-mcp","args":["--stdio"]}}}`,
			"skills/s/SKILL.md":           fmt.Sprintf("---\nname: p%03d-skill\ndescription: a skill of plugin p%03d\n---\n\nDo the thing.\n", i, i),
			"skills/s/agents/openai.yaml": "interface:\n  display_name: Bench\npolicy:\n  allow_implicit_invocation: true\n",
		} {
			if err := write(filepath.Join(p, rel), c); err != nil {
				return fail(err)
			}
		}
	}
	for i := range capdiscSkills {
		if err := write(fmt.Sprintf("skills/k%03d/SKILL.md", i), fmt.Sprintf("---\nname: k%03d\ndescription: standalone skill\n---\n\nBody.\n", i)); err != nil {
			return fail(err)
		}
	}
	fillers := quick(e, capdiscFillerDirs, capdiscFillerDirsQuick)
	for d := range fillers {
		dir := filepath.Join(root, "filler", fmt.Sprintf("d%03d", d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fail(err)
		}
		for f := range capdiscFilesPerDir {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.txt", f)), nil, 0o644); err != nil {
				return fail(err)
			}
		}
	}
	t := &capdiscTree{root: root}
	capdiscTrees[e] = t
	e.onClose(func() {
		capdiscMu.Lock()
		delete(capdiscTrees, e)
		capdiscMu.Unlock()
		os.RemoveAll(root)
	})
	return t, nil
}

func measureCapDiscoverLocal(ctx context.Context, e *Env, side *Side) (float64, error) {
	t, sess, err := withShared(ctx, side, e.capdiscTreeFor)
	if err != nil {
		return 0, err
	}
	// The timer covers request → response received; decoding into Go structs is the
	// bench client's own cost and happens after it (as in walk_local).
	var raw json.RawMessage
	start := time.Now()
	err = sess.call(ctx, protocol.MethodCapabilityRootsDiscover, protocol.CapabilityRootsDiscoverParams{
		Roots: []protocol.CapabilityRootRequest{{ID: "bench", Path: protocol.FromNative(t.root)}},
	}, &raw)
	elapsed := time.Since(start)
	if err != nil {
		return 0, err
	}
	var res protocol.CapabilityRootsDiscoverResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return 0, fmt.Errorf("decoding %s result: %w", protocol.MethodCapabilityRootsDiscover, err)
	}
	if len(res.Roots) != 1 {
		return 0, fmt.Errorf("%w: got %d roots, want 1", errDataLoss, len(res.Roots))
	}
	r := res.Roots[0]
	withMeta := 0
	for _, s := range r.Skills {
		if s.Metadata != nil {
			withMeta++
		}
	}
	if r.Error != nil || len(r.Skills) != capdiscPlugins+capdiscSkills || withMeta != capdiscPlugins ||
		len(r.NamespaceManifests) != capdiscPlugins || len(r.Warnings) != 0 {
		return 0, fmt.Errorf("%w: discovery got error %v, %d skills (%d with metadata), %d namespace manifests, warnings %q; want none, %d (%d), %d, none",
			errDataLoss, r.Error, len(r.Skills), withMeta, len(r.NamespaceManifests), r.Warnings,
			capdiscPlugins+capdiscSkills, capdiscPlugins, capdiscPlugins)
	}
	return float64(elapsed) / float64(time.Millisecond), nil
}
