package capdiscover_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

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
		err := jsonwire.UnmarshalParams(raw, &p)
		if err != nil {
			e, ok := err.(*jsonwire.Error)
			if !ok || e.Code != jsonwire.CodeInvalidParams || e.Message == "" {
				t.Fatalf("%q: error %#v, want a -32602 *jsonwire.Error", raw, err)
			}
			return
		}
		for _, r := range p.Roots {
			if c, err := protocol.ParsePathURI(string(r.Path)); err != nil || c != r.Path {
				t.Fatalf("%q: root path %q is not canonical (%q, %v)", raw, r.Path, c, err)
			}
		}
	})
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

var utf8Text = regexp.MustCompile(`^(?:invalid utf-8 sequence of ([123]) bytes|incomplete utf-8 byte sequence) from index (\d+)$`)

// FuzzUTF8ErrorText: the text reports an error exactly when Go finds the input invalid,
// at the first byte where Go's decoder fails, and "incomplete" only at the end.
func FuzzUTF8ErrorText(f *testing.F) {
	for _, s := range []string{"", "ok", "\xff", "a\xc3", "\xe2\x82x", "\xf0\x90\x80", "\xed\xa0\x80", "é中😀\xf4\x90"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		msg, bad := capdiscover.UTF8ErrorText(b)
		if bad != !utf8.Valid(b) {
			t.Fatalf("%q: bad=%v, utf8.Valid=%v", b, bad, utf8.Valid(b))
		}
		if !bad {
			return
		}
		m := utf8Text.FindStringSubmatch(msg)
		if m == nil {
			t.Fatalf("%q: text %q", b, msg)
		}
		idx, _ := strconv.Atoi(m[2])
		first := 0
		for first < len(b) {
			r, n := utf8.DecodeRune(b[first:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			first += n
		}
		if idx != first {
			t.Fatalf("%q: index %d, Go's first invalid byte is %d", b, idx, first)
		}
		if n, _ := strconv.Atoi(m[1]); m[1] != "" && idx+n > len(b) {
			t.Fatalf("%q: %q runs past the end", b, msg)
		}
	})
}
