package protocol_test

import (
	"github.com/execlab/executor/internal/refbin"

	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/execlab/executor/executor/protocol"
)

// TestPathURI_MatchesReference sends odd PathUri spellings to the reference's
// fs/canonicalize and checks that ParsePathURI/Native agree: same -32602 decode text, same
// -32600 host-applicability text, or a native path that canonicalizes to the same URI.
// Runs against each reference release.
func TestPathURI_MatchesReference(t *testing.T) {
	refbin.ForEachRelease(t, testPathURIMatches)
}

func testPathURIMatches(t *testing.T, r refbin.Release) {
	ref := refbin.Start(t, r.Path)
	base, err := os.MkdirTemp("/var/tmp", "pathuri-probe-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(base)
	for _, d := range []string{"a/x", "tmp", "u/x", "sp ace/%41", "C|/x"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	b := "file://" + base
	inputs := []string{
		b + "/a/x", "file:" + base + "/a/x", "FILE://" + base + "/a/x", "file://LOCALHOST" + base + "/a/x",
		"file://localhost" + base + "/a/x", "file://%6Cocalhost" + base + "/a/x",
		b + "/a/b/../x", b + "/a/./x", b + "/a//x", b + "/a/%2e/x", b + "/a/x/%2E%2e/x", b + `/\tmp`,
		b + "/u%2Fx", b + "/sp ace/%41", b + "/sp%20ace/%2541", b + "/a/x?q", b + "/a/x#f", b + "/a/x?", b + "/a/x#",
		b + "/a/x?q#f",
		"file:", "file://", "file:///", "file:///%2F", "file:////", "file:.", "file:..", "file:/..",
		"file:///%00/bad/path/YQ", "file:///%00/bad/path/L3RtcA", "file:///%00/bad/path/L3Rtc", "file:///%00/bad/path/",
		"file:///%00", "file:///a%00b", "file:///%00/bad/path/L3Rtcy9h/x",
		"file://user@host/x", "file://user:pw@host/x", "file://host:80/x", "file://:80/x", "file://@/x",
		"file://127.0.0.1/x", "file://0x7f.1/x", "file://999.1.1.1/x", "file://1.2.3.4.5/x", "file://[::1]/x",
		"file://[::ffff:1.2.3.4]/x", "file://[1:0:0:2:0:0:0:3]/x", "file://[::1/x", "file://[zz]/x", "file://Server/Share/x",
		"file://server/C:/x", "file://C:/x", "file://C|/x", "file:///C|/x", "file:///c:/x", "file:///C:/x", "file:////c:/x",
		"file:///c:", "file:///c:/../..", "file:c:/x", `file:\\server\share`, `file:\\\server\share`, "file:/C:/x",
		"file:///%43%3A/x", "file://ü.example/x", "file://xn--tda.example/x", "file://a b/x", "file://a%20b/x", "file://a^b/x",
		"/tmp/x", "C:\\x", "", "  ", "x", "./x", "../x", "http://example.com/x", "http:", "http://", "https://a:99999/",
		"http://a:b/", "mailto:x", "foo://[x]/", "1http://x", "file\t:///x", " file:///x ", "file:///a\tb\nc",
		"file:///é", "file:///a`b{c}d|e^f", "file:///a\"b<c>d", "file:///%zz%4", "file:///a%2fb",
	}
	for _, in := range inputs {
		res, rerr := ref.Call("fs/canonicalize", map[string]any{"path": in, "sandbox": nil})
		got, gerr := protocol.ParsePathURI(in)
		var native string
		var nerr error
		if gerr == nil {
			native, nerr = got.Native()
		}
		switch {
		case rerr != nil && rerr.Code == -32602:
			if gerr == nil || gerr.Error() != rerr.Message {
				t.Errorf("%q: got parse err %v, want %q", in, gerr, rerr.Message)
			}
		case rerr != nil && rerr.Code == -32600 && strings.Contains(rerr.Message, "is invalid on"):
			if gerr != nil {
				t.Errorf("%q: got parse err %v, want native err %q", in, gerr, rerr.Message)
			} else if nerr == nil || nerr.Error() != rerr.Message {
				t.Errorf("%q: got native %q err %v, want %q", in, native, nerr, rerr.Message)
			}
		case rerr != nil && rerr.Code == -32004:
			if gerr != nil || nerr != nil {
				t.Errorf("%q: got err %v/%v, want a path (reference: %s)", in, gerr, nerr, rerr.Message)
			} else if _, err := os.Stat(native); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%q: native %q exists (stat err %v), reference says missing", in, native, err)
			}
		case rerr != nil:
			t.Errorf("%q: unexpected reference error %+v (ours: %v %v)", in, rerr, gerr, nerr)
		default:
			var r struct{ Path string }
			json.Unmarshal(res, &r)
			if gerr != nil || nerr != nil {
				t.Errorf("%q: got err %v/%v, want %s", in, gerr, nerr, r.Path)
				continue
			}
			real, err := filepath.EvalSymlinks(native)
			if err != nil {
				t.Errorf("%q: canonicalizing %q: %v (reference: %s)", in, native, err, r.Path)
			} else if g := protocol.FromNative(real); string(g) != r.Path {
				t.Errorf("%q: got %s, want %s", in, g, r.Path)
			}
		}
		t.Logf("%q -> ours %q %q %v %v | ref %s %+v", in, got, native, gerr, nerr, res, rerr)
	}
}

// TestFromNative_MatchesReference checks percent-encoding byte for byte: directories with
// every printable ASCII byte, controls, DEL, UTF-8 and invalid UTF-8 in their names are
// canonicalized by the reference, which re-encodes the resolved path. Runs against each
// reference release.
func TestFromNative_MatchesReference(t *testing.T) {
	refbin.ForEachRelease(t, testFromNativeMatches)
}

func testFromNativeMatches(t *testing.T, r refbin.Release) {
	ref := refbin.Start(t, r.Path)
	base, err := os.MkdirTemp("/var/tmp", "fromnative-probe-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(base)
	var names []string
	for c := 1; c < 256; c++ {
		if c == '/' || c == '.' {
			continue
		}
		names = append(names, "n"+string([]byte{byte(c)})+"x")
	}
	names = append(names, "é", "日本", "a b", "%41", "...", "..x", "C:", "\xff\xfe")
	for _, n := range names {
		p := filepath.Join(base, n)
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatalf("mkdir %q: %v", p, err)
		}
		uri := protocol.FromNative(p)
		res, rerr := ref.Call("fs/canonicalize", map[string]any{"path": string(uri), "sandbox": nil})
		if rerr != nil {
			t.Errorf("%q: reference error %+v for %s", n, rerr, uri)
			continue
		}
		var r struct{ Path string }
		json.Unmarshal(res, &r)
		if r.Path != string(uri) {
			t.Errorf("%q: got %s, want %s", n, uri, r.Path)
		}
		back, err := uri.Native()
		if err != nil || back != p {
			t.Errorf("%q: Native() = %q, %v; want %q", n, back, err, p)
		}
	}
}
