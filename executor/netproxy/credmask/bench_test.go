package credmask_test

import (
	"testing"

	"github.com/execlab/executor/executor/netproxy/credmask"
)

// BenchmarkRewriteLines is the per-request cost for a request to a bound host with
// the dummy in Authorization (the proxy's hot path when masking is on).
func BenchmarkRewriteLines(b *testing.B) {
	f := newFixture(b)
	req := credmask.Request{Scheme: "https", Host: "api.github.com", Path: "/repos/a/b"}
	lines := []credmask.HeaderLine{{Name: "Host", Value: "api.github.com"}, {Name: "User-Agent", Value: "git/2"}, {Name: "Authorization", Value: ""}}
	b.ReportAllocs()
	for b.Loop() {
		lines[2].Value = "Bearer " + f.gh
		lines, _ = f.b.RewriteLines(req, lines)
	}
}

// BenchmarkRewriteLines_Unbound is the cost for a request no credential is bound to.
func BenchmarkRewriteLines_Unbound(b *testing.B) {
	f := newFixture(b)
	req := credmask.Request{Scheme: "https", Host: "example.com", Path: "/"}
	lines := []credmask.HeaderLine{{Name: "Host", Value: "example.com"}, {Name: "Authorization", Value: "Bearer " + f.gh}}
	b.ReportAllocs()
	for b.Loop() {
		lines, _ = f.b.RewriteLines(req, lines)
	}
}
