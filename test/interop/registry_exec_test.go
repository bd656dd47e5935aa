package interop_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/execlab/executor/internal/refbin"
)

// forEachExecutor runs fn against our `executor remote` (subtest "ours", ref nil) and
// against each released Rust `codex exec-server --remote` (subtests named by the version).
func forEachExecutor(t *testing.T, fn func(t *testing.T, ref *refbin.Release)) {
	t.Helper()
	t.Run("ours", func(t *testing.T) { fn(t, nil) })
	refbin.ForEachRelease(t, func(t *testing.T, r refbin.Release) { fn(t, &r) })
}

// TestRegistry_ExecHelloExit3: an executor registers with our registry (--registration-
// bearer-stdin), and `executor exec` runs sh -c 'echo hello; exit 3' through our rendezvous:
// it prints hello and exits 3.
func TestRegistry_ExecHelloExit3(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, ref *refbin.Release) {
		reg := startOurRegistry(t)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		startOnlineExecutor(t, ctx, ref, reg, "env-hello")
		var out strings.Builder
		stderr, code := runExec(t, ctx, reg, "env-hello", &out, "sh", "-c", "echo hello; exit 3")
		if out.String() != "hello\n" || code != 3 {
			t.Errorf("executor exec: got stdout %q exit %d (stderr %q), want %q exit 3", out.String(), code, stderr, "hello\n")
		}
	})
}

// TestRegistry_Exec64MiB pushes 64 MiB of stdout through registry + rendezvous + executor +
// `executor exec` and compares its SHA-256 with the file's.
func TestRegistry_Exec64MiB(t *testing.T) {
	const size = 64 << 20
	forEachExecutor(t, func(t *testing.T, ref *refbin.Release) {
		path := filepath.Join(t.TempDir(), "data.bin")
		data := make([]byte, size)
		_, _ = rand.Read(data)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		want := sha256.Sum256(data)
		data = nil
		reg := startOurRegistry(t)
		ctx, cancel := context.WithTimeout(context.Background(), 180*time.Second)
		defer cancel()
		startOnlineExecutor(t, ctx, ref, reg, "env-big")
		h := &countingHash{h: sha256.New()}
		start := time.Now()
		stderr, code := runExec(t, ctx, reg, "env-big", h, "cat", path)
		elapsed := time.Since(start)
		var got [32]byte
		copy(got[:], h.h.Sum(nil))
		if code != 0 || h.n != size || got != want {
			t.Fatalf("executor exec cat: got %d bytes, exit %d, sha256 match %v (stderr %q); want %d bytes, exit 0, matching", h.n, code, got == want, stderr, size)
		}
		t.Logf("64 MiB through %s executor in %v (%.1f MiB/s)", t.Name(), elapsed, float64(size)/(1<<20)/elapsed.Seconds())
	})
}

type countingHash struct {
	h interface {
		Write([]byte) (int, error)
		Sum([]byte) []byte
	}
	n int
}

func (c *countingHash) Write(p []byte) (int, error) {
	c.n += len(p)
	return c.h.Write(p)
}
