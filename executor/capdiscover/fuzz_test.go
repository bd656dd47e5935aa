package capdiscover_test

import (
	"strings"
	"testing"

	"github.com/execlab/executor/executor/capdiscover"
	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/jsonwire"
)

// FuzzDecodeParams: any params either decode, with every root path a canonical PathUri,
// or fail with a -32602 error; decoding never panics.
func FuzzDecodeParams(f *testing.F) {
	for _, s := range []string{
		`null`, `{}`, `[]`, `[[]]`, `{"roots":[]}`, `{"roots":5}`, `{"roots":[{"id":"a"}]}`,
		`{"roots":[{"id":"a","path":"file:///tmp/../tmp","sandbox":null}]}`,
		`{"roots":[["a","file:///x",null]]}`, `{"roots":[["a"]]}`,
		`{"roots":[{"id":"a","path":"file:///x","sandbox":{}}]}`,
		`{"roots":[{"id":"a","path":"file:///x","sandbox":{"permissions":{"type":"disabled"}}}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var p protocol.CapabilityRootsDiscoverParams
		if !decodeParams(t, raw, &p) {
			return
		}
		for _, r := range p.Roots {
			if c, err := protocol.ParsePathURI(string(r.Path)); err != nil || c != r.Path {
				t.Fatalf("%q: root path %q is not canonical (%q, %v)", raw, r.Path, c, err)
			}
		}
	})
}

// decodeParams decodes raw into p as the server does (jsonwire.UnmarshalParams) and
// reports whether it decoded; a failure other than a -32602 *jsonwire.Error with a
// message fails t.
func decodeParams(t *testing.T, raw []byte, p any) bool {
	t.Helper()
	err := jsonwire.UnmarshalParams(raw, p)
	if err == nil {
		return true
	}
	if e, ok := err.(*jsonwire.Error); !ok || e.Code != jsonwire.CodeInvalidParams || e.Message == "" {
		t.Fatalf("%q: error %#v, want a -32602 *jsonwire.Error", raw, err)
	}
	return false
}

// FuzzManifest: manifest parsing never panics, and a declared path that relativePath
// accepts stays below the root (no "..", not absolute, not empty).
func FuzzManifest(f *testing.F) {
	for _, s := range []string{
		`{"mcpServers":"./m.json","apps":"./a.json"}`, `{"mcpServers":{"x":{}}}`, `not json`, `[]`,
		`{"mcpServers":"./"}`, `{"apps":"./a/../b"}`, `{"apps":".\\..\\b"}`, `{"mcpServers":5,"apps":null}`,
		`{"mcpServers":".//etc/passwd"}`, `"./x"`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, contents string) {
		mk, mp, ak, ap := capdiscover.ManifestDecls(contents)
		for _, d := range []struct {
			kind int
			path string
		}{{mk, mp}, {ak, ap}} {
			if d.kind != 1 {
				continue
			}
			rel, problem := capdiscover.RelativePath(d.path)
			if problem != "" {
				continue
			}
			if rel == "" || strings.HasPrefix(rel, "/") || strings.HasPrefix(rel, `\`) || "./"+rel != d.path {
				t.Fatalf("%q: accepted %q as %q", contents, d.path, rel)
			}
			for _, c := range strings.FieldsFunc(rel, func(r rune) bool { return r == '/' || r == '\\' }) {
				if c == ".." {
					t.Fatalf("%q: accepted %q with a .. component", contents, d.path)
				}
			}
		}
	})
}
