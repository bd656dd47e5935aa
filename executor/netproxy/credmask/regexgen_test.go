package credmask_test

import (
	"regexp"
	"testing"

	"github.com/execlab/executor/executor/netproxy/credmask"
)

func TestGenerate_MatchesPattern(t *testing.T) {
	patterns := []string{
		`tok_[a-z]{8}`, `tok_[a-z]{4}[0-9]?[a-h]+`, `sk-[A-Za-z0-9]{48}`, `ghp_[A-Za-z0-9]{36}`,
		`xox[baprs]-[0-9]{10,13}-[0-9a-zA-Z-]{24,}`, `AKIA[0-9A-Z]{16}`, `(?i)key_[a-f0-9]{32}`,
		`(foo|bar|baz)_\d{3,5}`, `[^\s]{12}`, `\w{10}\.\w{5}`, `a(b|c)*d+e?`, `glpat-[\w-]{20}`,
		`[[:upper:]]{3}-[[:digit:]]{4}`, `\btok_[A-Z]{2}\b`, `^abc[0-9]{3}$`, `x{0,3}y{2}z+`,
		`(?:ab){2,4}c`, `[\x{4e00}-\x{4e10}]{3}q`, `.{5}z`, `npm_[A-Za-z0-9]{36}`,
	}
	const seeds = 40
	for _, p := range patterns {
		re := regexp.MustCompile(`^(?:` + p + `)$`)
		for seed := range uint64(seeds) {
			r := credmask.RandFromSeed(seed)
			s, err := credmask.GenerateForTest(p, r)
			if err != nil {
				t.Fatalf("Generate(%q, seed %d): %v", p, seed, err)
			}
			if !re.MatchString(s) {
				t.Fatalf("Generate(%q, seed %d) = %q, does not match", p, seed, s)
			}
		}
	}
}

func TestGenerate_DeterministicPerSeed(t *testing.T) {
	a, err1 := credmask.GenerateForTest(`tok_[a-z]{8}`, credmask.RandFromSeed(7))
	b, err2 := credmask.GenerateForTest(`tok_[a-z]{8}`, credmask.RandFromSeed(7))
	c, _ := credmask.GenerateForTest(`tok_[a-z]{8}`, credmask.RandFromSeed(8))
	if err1 != nil || err2 != nil || a != b {
		t.Fatalf("same seed gave %q, %q (%v %v)", a, b, err1, err2)
	}
	if a == c {
		t.Fatalf("seeds 7 and 8 both gave %q", a)
	}
}

func TestGenerate_Impossible(t *testing.T) {
	if s, err := credmask.GenerateForTest(`a\bb`, credmask.RandFromSeed(1)); err == nil {
		t.Fatalf("Generate(a\\bb) = %q, want an error", s)
	}
}

// FuzzGenerate: for any pattern Go accepts, Generate returns a full match or an error,
// within its bounds.
func FuzzGenerate(f *testing.F) {
	for _, p := range []string{`tok_[a-z]{8}`, `(a|b)*c{2,}`, `\bx\B`, `[^a-z]{3}`, `(?i)k[0-9]+`, `a{1000}`, `(?s).{4}`, `[\p{Greek}]{2}`} {
		f.Add(p, uint64(1))
	}
	f.Fuzz(func(t *testing.T, pattern string, seed uint64) {
		if len(pattern) > credmask.MaxPatternLen {
			return
		}
		re, err := regexp.Compile(`^(?:` + pattern + `)$`)
		if err != nil {
			return
		}
		s, err := credmask.GenerateForTest(pattern, credmask.RandFromSeed(seed))
		if err != nil {
			return
		}
		if !re.MatchString(s) {
			t.Fatalf("Generate(%q) = %q, not a match", pattern, s)
		}
	})
}
