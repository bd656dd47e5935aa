package capdiscover_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/execlab/executor/executor/capdiscover"
	"github.com/execlab/executor/executor/protocol"
)

// FuzzDiscoverV2Params: any params either decode, with a canonical cwd, or fail with a
// -32602 error; decoding never panics.
func FuzzDiscoverV2Params(f *testing.F) {
	for _, s := range []string{
		`null`, `{}`, `[]`, `["file:///tmp"]`, `["file:///tmp",null,3]`, `{"cwd":"/tmp"}`, `{"cwd":5}`,
		`{"cwd":"file:///tmp","sandbox":{}}`, `{"cwd":"file:///tmp","sandbox":[]}`,
		`{"cwd":"file:///tmp","sandbox":{"permissions":{"type":"disabled"}}}`,
		`{"cwd":"file:///tmp","sandbox":{"permissions":{"type":"disabled"},"windowsSandboxLevel":"disabled","cwd":"file:///tmp"}}`,
		`{"cwd":"file:///tmp","sandbox":{"permissions":5}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var p protocol.DiscoverV2Params
		if !decodeParams(t, raw, &p) {
			return
		}
		if c, err := protocol.ParsePathURI(string(p.Cwd)); err != nil || c != p.Cwd {
			t.Fatalf("%q: cwd %q is not canonical (%q, %v)", raw, p.Cwd, c, err)
		}
	})
}

// FuzzSkillFrontMatter: parsing never panics; an accepted skill has a non-empty
// single-line name of at most 64 characters, a non-empty single-line description and a
// short description that is null or non-empty and single-line.
func FuzzSkillFrontMatter(f *testing.F) {
	for _, s := range []string{
		"---\nname: a\ndescription: d\n---\n", "---\ndescription: Build for AWS: ECS\n---\n",
		"---\nname: [a]\ndescription: d\n---\n", "---\nmetadata:\n  short-description: s\ndescription: d\n---\n",
		"---\nname: &x a\ndescription: *x\n---\n", "---\ndescription: |\n  a\n  b\n---\n", "---\n---\n", "x",
		"---\r\ndescription: d\r\n---\r\n", "---\ndescription: `x\nname: {a\n---\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, contents string) {
		name, desc, short, hasShort, ok := capdiscover.FrontMatter(contents, "dir")
		if !ok {
			return
		}
		single := func(s string) bool { return s != "" && strings.Join(strings.Fields(s), " ") == s }
		if !single(name) || utf8.RuneCountInString(name) > capdiscover.MaxSkillNameChars || !single(desc) || hasShort && !single(short) {
			t.Fatalf("%q: accepted name %q desc %q short %q", contents, name, desc, short)
		}
	})
}

// FuzzSidecar: parsing never panics; products are known and lower case, every tool has
// a type and a value, and a dependencies member is never empty.
func FuzzSidecar(f *testing.F) {
	for _, s := range []string{
		"policy: {allow_implicit_invocation: true, products: [codex, CHATGPT]}",
		"dependencies: {tools: [{type: mcp, value: x, url: u}]}", "not: [valid", "- a", "",
		"interface: {display_name: X}\npolicy: ~", "dependencies: {tools: [{type: t}]}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, contents string) {
		pol, deps := capdiscover.Sidecar(contents)
		if pol != nil {
			for _, p := range pol.Products {
				if p != "codex" && p != "chatgpt" && p != "atlas" {
					t.Fatalf("%q: product %q", contents, p)
				}
			}
		}
		if deps != nil {
			if len(deps.Tools) == 0 {
				t.Fatalf("%q: empty dependencies", contents)
			}
			for _, tool := range deps.Tools {
				if tool.Type == "" || tool.Value == "" || tool.OAuthCallbackPort != nil {
					t.Fatalf("%q: tool %+v", contents, tool)
				}
			}
		}
	})
}

// FuzzCompareVersions: the comparison is antisymmetric and reflexive.
func FuzzCompareVersions(f *testing.F) {
	for _, p := range [][2]string{{"1.0.0", "2.0.0"}, {"1.0.0-rc.1", "1.0.0"}, {"9", "10"}, {"1.0.0+b", "1.0.0"}, {"local", "1.0.0"}} {
		f.Add(p[0], p[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		ab, ba := capdiscover.CompareVersions(a, b), capdiscover.CompareVersions(b, a)
		if sign(ab) != -sign(ba) || capdiscover.CompareVersions(a, a) != 0 {
			t.Fatalf("%q vs %q: %d and %d", a, b, ab, ba)
		}
	})
}

func sign(n int) int {
	switch {
	case n < 0:
		return -1
	case n > 0:
		return 1
	}
	return 0
}
