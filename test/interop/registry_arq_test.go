//go:build linux

package interop_test

import (
	"context"
	"crypto/sha256"
	"net"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/execlab/executor/internal/refbin"
	"github.com/execlab/executor/registry/rendezvous/chaos"
)

// TestRegistry_ARQNegotiation: `executor exec` offers relay ARQ v1 (frame field 100 on its
// handshake frame, docs/reliability.md §8) to every executor, through our registry with the
// chaos proxy in front (no faults: it only counts frames). A released executor (0.171.0,
// 0.169.0) skips the field, answers with an unmarked message 2 and runs the command (4 MB
// of output, exit 3) as ever; and on that stream no frame, ours or theirs, carries an ack,
// ack_bits or an ack_frame: the only extra bytes are field 100 on message 1. Ours accepts:
// message 2 is marked and acks flow.
func TestRegistry_ARQNegotiation(t *testing.T) {
	argv := []string{"sh", "-c", "seq 1 600000; exit 3"}
	local, err := exec.Command(argv[0], argv[1:]...).Output()
	if err == nil || len(local) == 0 {
		t.Fatalf("local run: %d bytes, %v (want output and exit 3)", len(local), err)
	}
	want := sha256.Sum256(local)
	forEachExecutor(t, func(t *testing.T, ref *refbin.Release) {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		var (
			proxy *chaos.Proxy
			wg    sync.WaitGroup
		)
		reg := startOurRegistryBehind(t, func(addr string) string {
			var err error
			if proxy, err = chaos.New(&chaos.Options{Upstream: "http://" + addr}); err != nil {
				t.Fatal(err)
			}
			wg.Add(1)
			go func() { defer wg.Done(); _ = proxy.Serve(ctx, ln) }()
			return "http://" + ln.Addr().String()
		})
		t.Cleanup(func() { cancel(); wg.Wait() })
		startOnlineExecutor(t, ctx, ref, reg, "env-arq")
		h := sha256.New()
		stderr, code := runExec(t, ctx, reg, "env-arq", h, argv...)
		if got := h.Sum(nil); string(got) != string(want[:]) || code != 3 {
			t.Fatalf("exec: sha256 match %v, exit %d (stderr %q); want the local run's output and exit 3",
				string(got) == string(want[:]), code, strings.TrimSpace(stderr))
		}
		s := proxy.Stats()
		t.Logf("proxy: %+v", s)
		// Each frame crosses two links (harness's and executor's), so counts come in pairs.
		if ref != nil {
			if s.FeatureFrames != 2 || s.AckFrames != 0 || s.AckFields != 0 {
				t.Errorf("released executor: %d feature frames (want 2: message 1 on both links), %d ack_frames, %d frames with ack fields (want 0, 0)",
					s.FeatureFrames, s.AckFrames, s.AckFields)
			}
			return
		}
		if s.FeatureFrames != 4 || s.AckFields == 0 {
			t.Errorf("our executor: %d feature frames (want 4: messages 1 and 2 on both links), %d frames with ack fields (want some)",
				s.FeatureFrames, s.AckFields)
		}
	})
}
