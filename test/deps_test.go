// Package test holds repository-wide checks; see also its subdirectories.
package test

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/execlab/executor/internal/refbin"
)

const mod = "github.com/execlab/executor/"

// pkg is one package of the module: its direct and transitive non-test imports, and the
// first sentence of its package comment.
type pkg struct {
	imports, deps []string
	doc           string
}

// pkgDeps lists every package of the module.
func pkgDeps(t *testing.T) map[string]pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports,Deps,Doc", "./...")
	cmd.Dir = refbin.RepoRoot()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	pkgs := map[string]pkg{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p struct {
			ImportPath, Doc string
			Imports, Deps   []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs[strings.TrimPrefix(p.ImportPath, mod)] = pkg{imports: p.Imports, deps: p.Deps, doc: p.Doc}
	}
	return pkgs
}

func under(pkg, prefix string) bool { return pkg == prefix || strings.HasPrefix(pkg, prefix+"/") }

// TestDependencyDirection enforces the layering of the team's STYLE.md (not in this
// repository: it lives in /work/shared/STYLE.md, outside every worktree): which packages
// may depend on which. Module and third-party packages are checked transitively;
// standard-library packages (no dot in the first path element) only as direct imports, since e.g. log/slog
// itself uses encoding/json. A violation names the package and the dependency.
func TestDependencyDirection(t *testing.T) {
	rules := []struct {
		from      string   // package prefix (module-relative)
		forbidden []string // module-relative prefixes or full import paths
		except    []string // packages under from that are exempt
		direct    bool     // check direct imports only, also for third-party packages
	}{
		{from: "relay", forbidden: []string{mod + "noise", mod + "executor", mod + "registry", mod + "sandbox", "encoding/json"}},
		{from: "relay", forbidden: []string{"github.com/coder/websocket"}, except: []string{"relay/wsconn"}},
		{from: "noise", forbidden: []string{mod + "relay", mod + "executor", mod + "registry", "net/http", "github.com/coder/websocket", "google.golang.org/protobuf"}},
		{from: "noise", forbidden: []string{"net"}, except: []string{"noise/channel"}},
		{from: "executor", forbidden: []string{mod + "relay", mod + "noise", mod + "registry", "github.com/coder/websocket", "google.golang.org/protobuf"}},
		{from: "sandbox", forbidden: []string{mod + "executor", mod + "relay", mod + "noise", mod + "registry", mod + "harness"}},
		{from: "registry", forbidden: []string{mod + "executor", mod + "noise", mod + "sandbox"}},
		// The harness links no relay driver of its own (issue 27): its relay side is
		// relay/initiator (frames, per-frame rules, ARQ and its timer driver); the harness
		// dials the socket (relay/wsconn) and hands it over.
		{from: "harness", forbidden: []string{mod + "relay/arq", mod + "relay/frame", mod + "relay/mux"}, direct: true},
		{from: "", forbidden: []string{mod + "cmd", mod + "test"}, except: []string{"cmd", "test"}},
		{from: "", forbidden: []string{mod + "relay/relaytest", mod + "executor/executortest", mod + "registry/registrytest"}, except: []string{"relay/relaytest", "executor/executortest", "registry/registrytest"}},
		{from: "", forbidden: []string{mod + "proto/relayv1"}, except: []string{"relay/frame", "proto/relayv1"}},
		// jsonwire is the leaf under every JSON-RPC speaker (server, harness, sandbox policy).
		{from: "jsonwire", forbidden: []string{strings.TrimSuffix(mod, "/")}},
		// Metrics and tracing libraries only in telemetry and cmd/: the layers below
		// report through their own Observer interfaces (docs/observability.md).
		{from: "", forbidden: []string{"github.com/prometheus", "go.opentelemetry.io"}, except: []string{"telemetry", "cmd", "test"}},
		// circl (X25519, ML-KEM-768) and curve25519-voi (X25519 key generation) are noise's
		// primitive seam (noise/primitives.go) and nobody else's: every other package
		// reaches them through noise only.
		{from: "", forbidden: []string{"github.com/cloudflare/circl", "github.com/oasisprotocol/curve25519-voi"}, except: []string{"noise"}, direct: true},
		// The AWS SDK (SigV4 signer, credential chain) is the direct transport's alone
		// (registry/direct doc.go says why).
		{from: "", forbidden: []string{"github.com/aws/aws-sdk-go-v2", "github.com/aws/smithy-go"}, except: []string{"registry/direct"}, direct: true},
	}
	pkgs := pkgDeps(t)
	if len(pkgs) < 10 {
		t.Fatalf("go list found %d packages, want the whole module", len(pkgs))
	}
	// The data is real: a known edge is present (otherwise every rule passes vacuously).
	if !contains(pkgs["executor"].deps, mod+"executor/jsonrpc") || !contains(pkgs["relay/mux"].imports, "log/slog") {
		t.Fatalf("dependency data looks empty: %v", pkgs["executor"])
	}
	for pkg, p := range pkgs {
		for _, r := range rules {
			if r.from != "" && !under(pkg, r.from) {
				continue
			}
			exempt := false
			for _, e := range r.except {
				if under(pkg, e) {
					exempt = true
				}
			}
			if exempt {
				continue
			}
			for _, f := range r.forbidden {
				ds := p.deps
				if r.direct || !strings.Contains(strings.SplitN(f, "/", 2)[0], ".") {
					ds = p.imports // standard library: direct imports only
				}
				for _, d := range ds {
					if d == f || strings.HasPrefix(d, f+"/") {
						t.Errorf("%s imports %s (forbidden by the layering rules)", pkg, d)
					}
				}
			}
		}
	}
}

// TestInternalHoldsLeaves: internal/ holds leaves only (issue 27). A package under
// internal/ depends, of the module, only on other internal/ packages and on jsonwire
// (itself a leaf); a package that imports the layers above — as telemetry, which observes
// executor, registry and relay, does — lives at the top of the tree instead.
func TestInternalHoldsLeaves(t *testing.T) {
	pkgs := pkgDeps(t)
	checked := 0
	for name, p := range pkgs {
		if !under(name, "internal") {
			continue
		}
		checked++
		for _, d := range p.deps {
			rel, ok := strings.CutPrefix(d, mod)
			if !ok || under(rel, "internal") || rel == "jsonwire" {
				continue
			}
			t.Errorf("%s depends on %s: internal/ holds leaves only (move the package up, or the dependency down)", name, rel)
		}
	}
	if checked < 5 {
		t.Fatalf("found %d packages under internal/, want the module's (the dependency data looks wrong)", checked)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestHarnessLinksNoServer: the harness SDK and the wire types it shares with the server
// (executor/protocol) link no server code. Of the executor tree only executor/protocol may
// appear among their dependencies; the JSON vocabulary comes from jsonwire.
func TestHarnessLinksNoServer(t *testing.T) {
	pkgs := pkgDeps(t)
	for _, name := range []string{"harness", "executor/protocol"} {
		p, ok := pkgs[name]
		if !ok {
			t.Fatalf("go list did not report %s", name)
		}
		if !contains(p.deps, mod+"jsonwire") {
			t.Errorf("%s does not depend on jsonwire; the dependency data looks wrong", name)
		}
		for _, d := range p.deps {
			if (d == mod+"executor" || strings.HasPrefix(d, mod+"executor/")) && d != mod+"executor/protocol" {
				t.Errorf("%s links %s: the SDK must not carry the server's dispatcher or methods", name, d)
			}
		}
	}
}
