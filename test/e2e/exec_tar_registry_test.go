package e2e_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestExecCLI_TarRoundTripThroughRegistry: `tar c | executor exec -i -- tar x` moves
// 64 MiB through the registry path (rendezvous relay + Noise) and ends by itself: the
// remote tar needs stdin EOF (process/closeStdin) to finish. The tree checks out
// byte-identical.
func TestExecCLI_TarRoundTripThroughRegistry(t *testing.T) {
	m := startDev(t)
	src, dst := t.TempDir(), t.TempDir()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	var key [32]byte
	binary.LittleEndian.PutUint64(key[:], seed)
	rng := rand.NewChaCha8(key)
	const total = 64 << 20
	sizes := []int{total / 2, total / 4, total/4 - 3, 1, 2} // sums to 64 MiB
	for i, n := range sizes {
		b := make([]byte, n)
		_, _ = rng.Read(b)
		sub := filepath.Join(src, "d"+strings.Repeat("x", i))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(sub, "f.bin"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	execArgs := []string{"exec", "-i", "--registry", m[1], "--environment-id", m[2], "--token-file", m[3], "--", "tar", "x", "-C", dst}
	tarC := exec.CommandContext(ctx, "tar", "c", "-C", src, ".")
	run := exec.CommandContext(ctx, remoteExecutorBin(t), execArgs...)
	pipe, err := tarC.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	run.Stdin = pipe
	var stderr bytes.Buffer
	run.Stderr = &stderr
	start := time.Now()
	if err := tarC.Start(); err != nil {
		t.Fatal(err)
	}
	if err := run.Run(); err != nil {
		t.Fatalf("tar c | executor exec -i -- tar x: %v (stderr %s)", err, stderr.String())
	}
	if err := tarC.Wait(); err != nil {
		t.Fatalf("tar c: %v", err)
	}
	t.Logf("64 MiB round trip in %v", time.Since(start))
	sum := func(root string) map[string][32]byte {
		out := map[string][32]byte{}
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			rel, _ := filepath.Rel(root, p)
			out[rel] = sha256.Sum256(b)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	want, got := sum(src), sum(dst)
	if len(got) != len(want) {
		t.Fatalf("extracted %d files, want %d", len(got), len(want))
	}
	for name, h := range want {
		if got[name] != h {
			t.Errorf("%s differs after the round trip", name)
		}
	}
}
