package capdiscover_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/execlab/executor/executor/capdiscover"
	"github.com/execlab/executor/executor/fs"
	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/internal/refbin"
	"github.com/execlab/executor/jsonwire"
)

// TestReference_RandomParams sends a seeded stream of random capabilityRoots/discoverV1
// params to every reference release and requires ours to give the same answer: the same
// -32602/-32600 text, or the same result (roots under a small tree, missing paths and
// foreign URIs, so that results are cheap and deterministic). Seed: CAPDISCOVER_REF_SEED.
func TestReference_RandomParams(t *testing.T) {
	refbin.ForEachRelease(t, func(t *testing.T, r refbin.Release) {
		srv := refbin.Start(t, r.Path)
		dir := tree(t, map[string]string{
			"p/.claude-plugin/plugin.json": `{"mcpServers":"./m.json"}`,
			"p/m.json":                     `{}`,
			"p/s/SKILL.md":                 "---\nname: s\n---\n",
		})
		seed := uint64(11)
		if v, err := strconv.ParseUint(os.Getenv("CAPDISCOVER_REF_SEED"), 10, 64); err == nil {
			seed = v
		}
		t.Logf("seed %d", seed)
		rng := rand.New(rand.NewPCG(seed, ^seed))
		g := &paramsGen{rng: rng, dir: string(protocol.FromNative(dir))}
		svc := capdiscover.New(fs.New(nil))
		n := 400
		if testing.Short() {
			n = 100
		}
		for range n {
			raw := g.params()
			res, rerr := srv.Call(protocol.MethodCapabilityRootsDiscover, json.RawMessage(raw))
			want := renderReply(res, rerr)
			got := ours(svc, raw)
			if got != want {
				t.Errorf("params %.400s:\n got  %.400s\n want %.400s", raw, got, want)
			}
		}
	})
}

// ours answers raw as the executor would, rendered like renderReply.
func ours(svc *capdiscover.Service, raw []byte) string {
	var p protocol.CapabilityRootsDiscoverParams
	if err := jsonwire.UnmarshalParams(raw, &p); err != nil {
		return renderError(err)
	}
	res, err := svc.Discover(context.Background(), &p)
	if err != nil {
		return renderError(err)
	}
	b, _ := json.Marshal(res)
	return renderReply(b, nil)
}

func renderError(err error) string {
	var e *jsonwire.Error
	if !errors.As(err, &e) {
		return "non-wire error: " + err.Error()
	}
	return fmt.Sprintf("error %d %s", e.Code, e.Message)
}

// renderReply normalizes a result (key order) or error into one comparable line.
func renderReply(res json.RawMessage, rerr *refbin.RPCError) string {
	if rerr != nil {
		return fmt.Sprintf("error %d %s", rerr.Code, rerr.Message)
	}
	var v any
	if err := json.Unmarshal(res, &v); err != nil {
		return "bad result: " + string(res)
	}
	b, _ := json.Marshal(v) // maps marshal with sorted keys
	return "result " + string(b)
}

// paramsGen generates random params around the WireCapabilityRootsDiscoverParams shape.
type paramsGen struct {
	rng *rand.Rand
	dir string // URI of a small tree
}

func (g *paramsGen) pick(xs ...string) string { return xs[g.rng.IntN(len(xs))] }

func (g *paramsGen) scalar() string {
	return g.pick(`null`, `0`, `-1`, `1.5`, `true`, `"s"`, `""`, `[]`, `{}`, `{"a":1}`)
}

func (g *paramsGen) path() string {
	return g.pick(strconv.Quote(g.dir+"/p"), strconv.Quote(g.dir+"/p/s"), strconv.Quote(g.dir+"/p/../p"),
		strconv.Quote(g.dir+"/missing"), strconv.Quote(g.dir+"/p/m.json"), `"file:///C:/x"`, `"file://host/share"`,
		`"/tmp"`, `"rel"`, `"http://x/y"`, `"file:///x?q"`, g.scalar())
}

func (g *paramsGen) sandbox() string {
	// Non-empty sequences are left out: see protocol.CapabilitySandbox.
	return g.pick(`null`, `{}`, `5`, `"x"`, `[]`, `{"permissions":{"type":"disabled"}}`, `{"permissions":5}`, `{"permissions":-1}`, `{"permissions":1.5}`, `{"permissions":1e2}`, `{"permissions":18446744073709551616}`, `{"permissions":1.0}`, `{"permissions":-0}`,
		`{"permissions":-9223372036854775809}`, `{"permissions":340282366920938463463374607431768211456}`, `{"permissions":0.1}`, `{"permissions":1.50}`, `{"permissions":-2.5E-3}`, `{"permissions":1e400}`, `{"permissions":1e16}`, `{"permissions":1.5e-7}`, `{"permissions":0.0001}`,
		`{"permissions":100.0}`, `{"permissions":-0.0}`,
		`{"permissions":{"type":"bogus"}}`, `{"permissions":{"type":"managed"}}`,
		`{"permissions":{"type":"disabled"},"windowsSandboxLevel":"bogus"}`,
		`{"permissions":{"type":"disabled"},"windowsSandboxLevel":"mxc"}`,
		`{"permissions":{"type":"nope"}}`, `{"permissions":null}`, `{"permissions":{"type":"disabled"},"windowsSandboxLevel":"disabled"}`,
		`{"permissions":{"type":"disabled"},"windowsSandboxLevel":"disabled","cwd":"rel"}`, g.scalar())
}

func (g *paramsGen) root() string {
	if g.rng.IntN(8) == 0 {
		return g.scalar()
	}
	if g.rng.IntN(8) == 0 { // sequence form
		n := g.rng.IntN(5)
		var xs []string
		for i := range n {
			switch i {
			case 0:
				xs = append(xs, g.pick(`"a"`, `""`, `5`))
			case 1:
				xs = append(xs, g.path())
			default:
				xs = append(xs, g.sandbox())
			}
		}
		return "[" + strings.Join(xs, ",") + "]"
	}
	var m []string
	if g.rng.IntN(6) > 0 {
		m = append(m, `"id":`+g.pick(`"a"`, `""`, `"dup"`, `5`, `null`))
	}
	if g.rng.IntN(6) > 0 {
		m = append(m, `"path":`+g.path())
	}
	if g.rng.IntN(3) == 0 {
		m = append(m, `"sandbox":`+g.sandbox())
	}
	if g.rng.IntN(6) == 0 {
		m = append(m, `"extra":`+g.scalar())
	}
	g.rng.Shuffle(len(m), func(i, j int) { m[i], m[j] = m[j], m[i] })
	return "{" + strings.Join(m, ",") + "}"
}

func (g *paramsGen) params() []byte {
	var b bytes.Buffer
	switch g.rng.IntN(10) {
	case 0:
		b.WriteString(g.scalar())
	case 1:
		b.WriteString("[" + g.pick("", g.rootsValue(), g.rootsValue()+",1") + "]")
	default:
		b.WriteString(`{"roots":` + g.rootsValue())
		if g.rng.IntN(5) == 0 {
			b.WriteString(`,"other":` + g.scalar())
		}
		b.WriteString("}")
	}
	return b.Bytes()
}

func (g *paramsGen) rootsValue() string {
	if g.rng.IntN(8) == 0 {
		return g.scalar()
	}
	n := g.rng.IntN(4)
	if g.rng.IntN(40) == 0 {
		n = capdiscover.MaxRoots + g.rng.IntN(2)
	}
	xs := make([]string, n)
	for i := range xs {
		xs[i] = g.root()
	}
	return "[" + strings.Join(xs, ",") + "]"
}
