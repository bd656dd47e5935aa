package policy_test

import (
	"testing"

	"github.com/execlab/executor/sandbox/policy"
)

func TestMatchGlob(t *testing.T) {
	tests := []struct {
		pat, name string
		want      bool
	}{
		{"/a/*.pem", "/a/x.pem", true},
		{"/a/*.pem", "/a/b/x.pem", false},
		{"/a/**/*.pem", "/a/x.pem", true},
		{"/a/**/*.pem", "/a/b/c/x.pem", true},
		{"/a/**", "/a/b/c", true},
		{"/a/**", "/a", false},
		{"/a/?", "/a/b", true},
		{"/a/?", "/a/bc", false},
		{"/a/?", "/a//", false},
		{"/a/[bc]", "/a/c", true},
		{"/a/[!bc]", "/a/c", false},
		{"/a/[a-c]x", "/a/bx", true},
		{"/a/[b", "/a/[b", true},
		{`/a/\*`, "/a/*", true},
		{`/a/\*`, "/a/x", false},
		{"/a/x**y", "/a/xzzy", true},
		{"/a/x**y", "/a/xz/y", false},
		{"/**/secret", "/deep/dir/secret", true},
		{"/**/secret", "/secret", true},
	}
	for _, tt := range tests {
		if got := policy.MatchGlob(tt.pat, tt.name); got != tt.want {
			t.Errorf("MatchGlob(%q, %q): got %v, want %v", tt.pat, tt.name, got, tt.want)
		}
	}
}

func TestGlobStaticPrefix(t *testing.T) {
	tests := []struct {
		pat, dir string
		ok       bool
	}{
		{"/a/b/*.pem", "/a/b", true},
		{"/**/x", "", true},
		{"/*", "", true},
		{"/a/[b", "/a/[b", false},
		{`/a\*b/*`, "/a*b", true},
		{"/a/b", "/a/b", false},
	}
	for _, tt := range tests {
		dir, ok := policy.GlobStaticPrefix(tt.pat)
		if dir != tt.dir || ok != tt.ok {
			t.Errorf("GlobStaticPrefix(%q): got (%q, %v), want (%q, %v)", tt.pat, dir, ok, tt.dir, tt.ok)
		}
	}
}
