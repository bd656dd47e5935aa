package protocol

// Differential fuzz of issue 27: the PathUri parser on internal/whatwg against the
// implementation it replaced (the *_legacy_test.go copies). Deleted with those copies once
// it ran; the seeds stay as testdata/fuzz/FuzzPathURI.

import (
	"errors"
	"go/scanner"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// seedStrings returns every string literal of the given Go files and every string of the
// given fuzz corpus directories.
func seedStrings(t testing.TB, goFiles []string, corpora []string) []string {
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

func errText(err error) string {
	var pe *PathURIError
	var ie *InvalidPathError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &pe):
		return "PathURIError: " + pe.Msg
	case errors.As(err, &ie):
		return "InvalidPathError: " + ie.URI
	}
	return "other: " + err.Error()
}

func legacyErrText(err error) string {
	var pe *legacyPathURIError
	var ie *legacyInvalidPathError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &pe):
		return "PathURIError: " + pe.Msg
	case errors.As(err, &ie):
		return "InvalidPathError: " + ie.URI
	}
	return "other: " + err.Error()
}

func FuzzPathURIDifferential(f *testing.F) {
	for _, s := range seedStrings(f,
		[]string{"pathuri_test.go", "pathuri_reference_test.go", "../../sandbox/policy/decode_test.go", "../../sandbox/policy/resolve_test.go", "../../sandbox/policy/fuzz_test.go"},
		[]string{"testdata/fuzz/FuzzPathURI", "../../sandbox/policy/testdata/fuzz/FuzzPathURI"}) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, gerr := ParsePathURI(s)
		want, werr := legacyParsePathURI(s)
		if string(got) != string(want) || errText(gerr) != legacyErrText(werr) {
			t.Fatalf("ParsePathURI(%q) = %q, %s; legacy %q, %s", s, got, errText(gerr), want, legacyErrText(werr))
		}
		gn, gerr := PathURI(s).Native()
		wn, werr := legacyPathURI(s).Native()
		if gn != wn || errText(gerr) != legacyErrText(werr) {
			t.Fatalf("Native(%q) = %q, %s; legacy %q, %s", s, gn, errText(gerr), wn, legacyErrText(werr))
		}
		if g, w := FromNative(s), legacyFromNative(s); string(g) != string(w) {
			t.Fatalf("FromNative(%q) = %q; legacy %q", s, g, w)
		}
		if g, w := AppendNativeSegment(nil, s), legacyAppendNativeSegment(nil, s); string(g) != string(w) {
			t.Fatalf("AppendNativeSegment(%q) = %q; legacy %q", s, g, w)
		}
	})
}
