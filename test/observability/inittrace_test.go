//go:build linux

package observability_test

import (
	"bufio"
	"bytes"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/execlab/executor/internal/refbin"
)

// Init-time heap bounds of the executor binary (GODEBUG=inittrace=1, summed over every
// package init): rss_idle in docs/bench.md. Every package linked into the binary runs its
// init in every executor process, telemetry off or on, so a package-level buffer or
// table built at init is resident in each of them. Measured at 41315a2: 227 package
// inits, 572 kB (the upstream OTLP/HTTP exporter linked gRPC and grpc-gateway); with our
// own exporter (telemetry/otlp.go): 174 inits, 389 kB (Prometheus procfs 97 kB,
// client_golang 64 kB).
const (
	// maxInitHeapBytes bounds all package inits together. 480 KiB until the direct
	// transport (issue 30) linked the AWS SDK's config package (its sts, sso, ssooidc and
	// signin clients' endpoint tables and schemas: ~590 KB at init, rss_idle 20.3 MiB);
	// 1152 KiB while it did. registry/direct now builds the credential chain from the SDK's
	// narrow credential packages and calls STS and SSO itself: 563 KiB measured
	// (rss_idle 18.6 MiB), bound with a small margin.
	maxInitHeapBytes    = 608 << 10
	maxPackageInitBytes = 112 << 10 // any one package's init (procfs: 97 kB)
)

// unwantedInits are package path prefixes that must not be linked into the executor:
// gRPC came in through the upstream OTLP exporter's configuration package (rss_idle
// 21.1 MiB, goal 20), and tracing is OTLP/HTTP only.
var unwantedInits = []string{"google.golang.org/grpc", "github.com/grpc-ecosystem/"}

// TestInitHeap starts the built executor with GODEBUG=inittrace=1 and bounds the heap its
// package inits allocate: a regression guard for rss_idle that counts bytes, not time.
func TestInitHeap(t *testing.T) {
	cmd := exec.Command(refbin.Executor(t), "--help")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir(), "GODEBUG=inittrace=1"}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	_ = cmd.Run() // the usage's exit status does not matter; the inits ran before main
	type pkg struct {
		name  string
		bytes int
	}
	var pkgs []pkg
	total := 0
	sc := bufio.NewScanner(&stderr)
	for sc.Scan() {
		// init PKG @T ms, C ms clock, B bytes, A allocs
		f := strings.Fields(sc.Text())
		if len(f) != 11 || f[0] != "init" || f[8] != "bytes," {
			continue
		}
		n, err := strconv.Atoi(f[7])
		if err != nil {
			t.Fatalf("parsing %q: %v", sc.Text(), err)
		}
		pkgs = append(pkgs, pkg{f[1], n})
		for _, u := range unwantedInits {
			if strings.HasPrefix(f[1], u) {
				t.Errorf("%s is linked into the executor (its init runs in every process): see rss_idle in docs/bench.md", f[1])
			}
		}
		total += n
	}
	if len(pkgs) == 0 {
		t.Fatalf("no inittrace lines on stderr:\n%s", stderr.String())
	}
	sort.Slice(pkgs, func(i, j int) bool { return pkgs[i].bytes > pkgs[j].bytes })
	t.Logf("%d package inits, %d bytes; largest: %v", len(pkgs), total, pkgs[:min(5, len(pkgs))])
	if total > maxInitHeapBytes {
		t.Errorf("package inits allocate %d bytes, bound %d: a new package-level allocation or dependency (see rss_idle in docs/bench.md)", total, maxInitHeapBytes)
	}
	for _, p := range pkgs {
		if p.bytes > maxPackageInitBytes {
			t.Errorf("init of %s allocates %d bytes, bound %d per package: build it on first use (sync.OnceValue) instead", p.name, p.bytes, maxPackageInitBytes)
		}
	}
}
