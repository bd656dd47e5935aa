package sandbox

// Differential fuzz of issue 27: the proxy URL parser on internal/whatwg against the
// implementation it replaced (proxyurl_legacy_test.go). Deleted with that copy once it
// ran; the seeds stay as testdata/fuzz/FuzzParseProxyEndpoint.

import (
	"go/scanner"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/execlab/executor/internal/whatwg"
)

func proxyDiffSeeds(t testing.TB) []string {
	var out []string
	for _, name := range []string{"managed_test.go", "env_test.go", "managed_linux_test.go"} {
		src, err := os.ReadFile(name)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		var s scanner.Scanner
		fset := token.NewFileSet()
		s.Init(fset.AddFile(name, -1, len(src)), src, nil, 0)
		for {
			_, tok, lit := s.Scan()
			if tok == token.EOF {
				break
			}
			if tok == token.STRING {
				if v, err := strconv.Unquote(lit); err == nil {
					out = append(out, v)
				}
			}
		}
	}
	files, _ := filepath.Glob("testdata/fuzz/FuzzParseProxyEndpoint/*")
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(raw), "\n") {
			if inner, ok := strings.CutPrefix(line, "string("); ok {
				if v, err := strconv.Unquote(strings.TrimSuffix(inner, ")")); err == nil {
					out = append(out, v)
				}
			}
		}
	}
	return out
}

func FuzzParseProxyEndpointDifferential(f *testing.F) {
	for _, s := range proxyDiffSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		got, gok := parseProxyEndpoint(v)
		want, wok := legacyparseProxyEndpoint(v)
		if gok != wok || got.port != want.port || got.prefix != want.prefix || got.suffix != want.suffix {
			t.Fatalf("parseProxyEndpoint(%q) = %+v, %v; legacy %+v, %v", v, got, gok, want, wok)
		}
		if g, w := whatwgTrimEmpty(v), legacytrimURL(v) == ""; g != w {
			t.Fatalf("trim(%q) empty = %v; legacy %v", v, g, w)
		}
	})
}

func whatwgTrimEmpty(v string) bool { return trimmed(v) == "" }

func trimmed(v string) string { return whatwg.Trim(v) }
