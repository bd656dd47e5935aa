package policy_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/execlab/executor/jsonwire"
	"github.com/execlab/executor/sandbox/policy"
)

// FuzzContextDecode: the decoder never panics, every error is a -32602 *Error, and a
// decoded context re-encodes to something that decodes to the same encoding.
func FuzzContextDecode(f *testing.F) {
	f.Add([]byte(specExample))
	f.Add([]byte(restrictedWith(entry(special("root"), "read"))))
	f.Add([]byte(`{"permissions":{"type":"disabled"},"windowsSandboxLevel":"disabled"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var c policy.Context
		err := json.Unmarshal(data, &c)
		if err != nil {
			if pe, ok := err.(*policy.Error); ok && pe.Code != jsonwire.CodeInvalidParams {
				t.Fatalf("got code %d, want -32602", pe.Code)
			}
			return
		}
		wantRoundTrip(t, &c)
	})
}

// wantRoundTrip checks that c encodes to JSON that decodes to a context with the same
// encoding.
func wantRoundTrip(t *testing.T, c *policy.Context) {
	t.Helper()
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatalf("encoding: %v", err)
	}
	var c2 policy.Context
	if err := json.Unmarshal(b, &c2); err != nil {
		t.Fatalf("re-decoding %s: %v", b, err)
	}
	if b2, _ := json.Marshal(&c2); string(b) != string(b2) {
		t.Fatalf("round trip differs:\n got %s\nwant %s", b2, b)
	}
}

// FuzzResolveAccess: resolution never grants more than the entries. For any decoded
// context and any path: a write result needs a write entry containing the path, a read
// result a read or write entry, and a deny glob match always wins.
func FuzzResolveAccess(f *testing.F) {
	f.Add([]byte(specExample), "/srv/work/app/x")
	f.Add([]byte(ctxFull(entry(lit("/repo"), "write")+","+entry(lit("/repo/a"), "deny")+","+entry(lit("/repo/a/b"), "write"), "")), "/repo/a/b/.git/x")
	f.Add([]byte(ctxFull(entry(special("root"), "write")+","+entry(glob("/x/**/*.pem"), "deny"), "")), "/x/y/z.pem")
	f.Fuzz(func(t *testing.T, data []byte, candidate string) {
		var c policy.Context
		if json.Unmarshal(data, &c) != nil {
			return
		}
		p, err := policy.Resolve(&c, &policy.ResolveOptions{CommandCwd: "/cwd", Home: "/home/u", TmpDir: "/tmp/t"})
		if err != nil {
			return
		}
		got := p.Access(candidate)
		if !p.Restricted {
			if got != policy.AccessWrite {
				t.Fatalf("unrestricted: got %v, want write", got)
			}
			return
		}
		abs := p.Abs(candidate)
		var maxGrant policy.Access
		for _, e := range p.Entries {
			if policy.IsWithin(abs, e.Path) && e.Access != policy.AccessDeny {
				maxGrant = max(maxGrant, e.Access)
			}
		}
		if got == policy.AccessWrite && maxGrant != policy.AccessWrite ||
			got == policy.AccessRead && maxGrant == 0 {
			t.Fatalf("Access(%q) = %v exceeds entries %+v", abs, got, p.Entries)
		}
		for _, g := range p.DenyGlobs {
			if policy.MatchGlob(g, abs) && got != policy.AccessDeny {
				t.Fatalf("Access(%q) = %v despite deny glob %q", abs, got, g)
			}
		}
		for _, n := range policy.ProtectedMetadataNames {
			if got == policy.AccessWrite && !p.FullWrite() && strings.Contains(abs+"/", "/"+n+"/") {
				// Writable only via an explicit write entry at or inside some W/N.
				ok := false
				for _, e := range p.Entries {
					if e.Access == policy.AccessWrite && strings.Contains(e.Path+"/", "/"+n+"/") && policy.IsWithin(abs, e.Path) {
						ok = true
					}
				}
				if !ok {
					t.Fatalf("Access(%q) = write inside protected %s without an explicit entry: %+v", abs, n, p.Entries)
				}
			}
		}
	})
}

// FuzzMatchGlob: no panics, and a pattern without metacharacters matches only itself.
func FuzzMatchGlob(f *testing.F) {
	f.Add("/a/**/*.pem", "/a/b/c.pem")
	f.Add("/a/[!b-d]x", "/a/ex")
	f.Add(`/a/\[b`, "/a/[b")
	f.Fuzz(func(t *testing.T, pat, name string) {
		got := policy.MatchGlob(pat, name)
		if !strings.ContainsAny(pat, `*?[\`) && got != (pat == name) {
			t.Fatalf("MatchGlob(%q, %q) = %v for a literal pattern", pat, name, got)
		}
		policy.GlobStaticPrefix(pat)
	})
}

// FuzzPathURI: parsing never panics; a parsed URI re-renders to a string that parses
// to the same native path.
func FuzzPathURI(f *testing.F) {
	for _, s := range []string{"file:///a/b", "file://server/share", "file:///C:/x", "file:///%00", "file:x/../y", "http://x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := policy.ParsePathURI(s)
		if err != nil {
			return
		}
		n1, err1 := u.Native()
		u2, err := policy.ParsePathURI(u.String())
		if err != nil {
			t.Fatalf("re-parsing %q (from %q): %v", u.String(), s, err)
		}
		n2, err2 := u2.Native()
		if n1 != n2 || (err1 == nil) != (err2 == nil) {
			t.Fatalf("%q: native %q/%v, re-parsed %q/%v", s, n1, err1, n2, err2)
		}
	})
}
