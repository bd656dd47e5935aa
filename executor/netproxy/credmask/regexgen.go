package credmask

// A bounded generator of strings matching a regular expression, driven by the parse
// tree of regexp/syntax. It is used to mint same-shape dummies for custom providers
// (§9.2: `tok_[a-z]{8}` → `tok_urptawoh`).
//
// Rules: literals are copied (case-folded literals take a random case); a character
// class picks uniformly among its printable-ASCII members when it has any, else among
// all its runes; `.` picks an ASCII letter or digit; a repetition {m,n} repeats m to
// min(n, m+maxRepeatExtra) times (`*` and `+` are {0,} and {1,}); an alternation picks
// one branch; anchors and word boundaries emit nothing. The result is checked against
// the compiled pattern by the caller and regenerated on a miss (word boundaries and
// anchors in the middle can make a candidate fail), at most generateAttempts times.
// Deterministic for a given *rand.Rand.

import (
	"errors"
	"math/rand/v2"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode"
)

// errGenerate is returned when no matching string was produced within the bounds.
var errGenerate = errors.New("credmask: cannot generate a string matching the pattern")

// generator holds one parsed pattern, its compiled, fully anchored matcher and its
// unanchored finder (scan.go).
type generator struct {
	tree *syntax.Regexp
	full *regexp.Regexp
	find *regexp.Regexp
}

func newGenerator(pattern string) (*generator, error) {
	tree, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil, err
	}
	full, err := regexp.Compile(`^(?:` + pattern + `)$`)
	if err != nil {
		return nil, err
	}
	find, err := regexp.Compile(pattern)
	if err != nil {
		return nil, err
	}
	return &generator{tree: tree.Simplify(), full: full, find: find}, nil
}

// Generate returns a string that fully matches the pattern, or errGenerate.
func (g *generator) Generate(r *rand.Rand) (string, error) {
	for range generateAttempts {
		var b strings.Builder
		if !gen(&b, g.tree, r) {
			continue
		}
		if s := b.String(); g.full.MatchString(s) {
			return s, nil
		}
	}
	return "", errGenerate
}

var alnum = []rune("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")

// gen appends one expansion of re; false means the output grew past maxGeneratedLen
// or the tree cannot produce a string (an empty class).
func gen(b *strings.Builder, re *syntax.Regexp, r *rand.Rand) bool {
	if b.Len() > maxGeneratedLen {
		return false
	}
	switch re.Op {
	case syntax.OpNoMatch:
		return false
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText,
		syntax.OpEndText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return true
	case syntax.OpLiteral:
		for _, c := range re.Rune {
			if re.Flags&syntax.FoldCase != 0 && r.IntN(2) == 0 {
				c = unicode.SimpleFold(c)
			}
			b.WriteRune(c)
		}
		return true
	case syntax.OpCharClass:
		c, ok := pickFromClass(re.Rune, r)
		if ok {
			b.WriteRune(c)
		}
		return ok
	case syntax.OpAnyCharNotNL, syntax.OpAnyChar:
		b.WriteRune(alnum[r.IntN(len(alnum))])
		return true
	case syntax.OpCapture:
		return gen(b, re.Sub[0], r)
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		lo, hi := repeatBounds(re)
		n := lo + r.IntN(hi-lo+1)
		for range n {
			if !gen(b, re.Sub[0], r) {
				return false
			}
		}
		return true
	case syntax.OpConcat:
		for _, s := range re.Sub {
			if !gen(b, s, r) {
				return false
			}
		}
		return true
	case syntax.OpAlternate:
		return gen(b, re.Sub[r.IntN(len(re.Sub))], r)
	}
	return false
}

func repeatBounds(re *syntax.Regexp) (lo, hi int) {
	switch re.Op {
	case syntax.OpStar:
		lo, hi = 0, -1
	case syntax.OpPlus:
		lo, hi = 1, -1
	case syntax.OpQuest:
		lo, hi = 0, 1
	default:
		lo, hi = re.Min, re.Max
	}
	if hi < 0 || hi > lo+maxRepeatExtra {
		hi = lo + maxRepeatExtra
	}
	return lo, hi
}

// pickFromClass picks a rune from the class ranges (pairs lo, hi), preferring
// printable ASCII (0x21–0x7e) so that a dummy is a valid header value.
func pickFromClass(ranges []rune, r *rand.Rand) (rune, bool) {
	if c, ok := pickIn(ranges, 0x21, 0x7e, r); ok {
		return c, true
	}
	return pickIn(ranges, 0, unicode.MaxRune, r)
}

func pickIn(ranges []rune, min, max rune, r *rand.Rand) (rune, bool) {
	total := 0
	for i := 0; i+1 < len(ranges); i += 2 {
		lo, hi := clampRange(ranges[i], ranges[i+1], min, max)
		if lo <= hi {
			total += int(hi-lo) + 1
		}
	}
	if total == 0 {
		return 0, false
	}
	k := r.IntN(total)
	for i := 0; i+1 < len(ranges); i += 2 {
		lo, hi := clampRange(ranges[i], ranges[i+1], min, max)
		if lo > hi {
			continue
		}
		if n := int(hi-lo) + 1; k < n {
			return lo + rune(k), true
		} else {
			k -= n
		}
	}
	return 0, false
}

func clampRange(lo, hi, min, max rune) (rune, rune) {
	if lo < min {
		lo = min
	}
	if hi > max {
		hi = max
	}
	return lo, hi
}
