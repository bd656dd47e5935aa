package policy

// Differential fuzz of issue 27: the policy's PathUri on internal/whatwg against the
// implementation it replaced (pathuri_legacy_test.go). Deleted with that copy once it ran;
// the seeds stay as testdata/fuzz/FuzzPathURI.

import (
	"go/scanner"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func diffSeeds(t testing.TB, goFiles []string, corpora []string) []string {
	var out []string
	for _, name := range goFiles {
		src, err := os.ReadFile(name)
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
	for _, dir := range corpora {
		files, _ := filepath.Glob(filepath.Join(dir, "*"))
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
	}
	return out
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func FuzzPolicyPathURIDifferential(f *testing.F) {
	for _, s := range diffSeeds(f,
		[]string{"decode_test.go", "resolve_test.go", "fuzz_test.go", "../../executor/protocol/pathuri_test.go", "../../executor/protocol/pathuri_reference_test.go"},
		[]string{"testdata/fuzz/FuzzPathURI", "../../executor/protocol/testdata/fuzz/FuzzPathURI"}) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, gerr := ParsePathURI(s)
		want, werr := legacyParsePathURI(s)
		if errString(gerr) != errString(werr) || got.String() != want.String() || got.IsZero() != want.IsZero() {
			t.Fatalf("ParsePathURI(%q) = %q, %v; legacy %q, %v", s, got.String(), gerr, want.String(), werr)
		}
		gn, gerr := got.Native()
		wn, werr := want.Native()
		if gn != wn || errString(gerr) != errString(werr) {
			t.Fatalf("Native(%q) = %q, %v; legacy %q, %v", s, gn, gerr, wn, werr)
		}
		if g, w := FromNative(s).String(), legacyFromNative(s).String(); g != w {
			t.Fatalf("FromNative(%q) = %q; legacy %q", s, g, w)
		}
	})
}
